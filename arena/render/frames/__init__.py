"""The frames a match viewer steps through (the web viewer's data, STYLE.md habit 20): a pure function of a match
record and a perspective, no I/O.

A *perspective* says whose eyes the frames are seen through:

* ``"public"`` (``PUBLIC``): what anyone may see: the table, the decisions as the table saw them, never a hand;
* ``"all"`` (``ALL``): every hand, every action as it was taken (for finished matches whose deals are public);
* ``"seat:K"`` (``seat_perspective(K)``): what seat K's own view held at each moment (its hand, its own actions,
  the table), never what it learnt later, nor another seat's hidden action.

Filtering happens here, on the server: a card a perspective may not see is never put into a frame. The game's
part lives in its frames module (``arena.render.frames.<game id>`` for a built-in game), which its renderer
(``arena.render.<game id>``) names as ``FRAMES``: a module with
``board(state, viewer) -> dict``, ``boards(steps, viewer) -> list[dict]`` and ``shown_action(state, seat, kind,
action) -> (bool, dict | None)``, and optionally ``action_text(action dict) -> str`` (an action as a person
reads it, from the dict the perspective is shown: Take 5 numbers rows from 1 as its board does) and ``held(state,
viewer) -> bool`` (True while ``state`` waits for the answer to a question the viewer may not know was asked: the
frames of the decisions since the last answered one wait for it, and show its effects when they come; so a board
never shows that a question is pending), found through the renderer lookup (``arena.render.renderer``); this module
names no game.

A frame is a JSON-ready dict::

    {"index": 0.., "decision": the last decision this perspective saw, counted among the decisions it sees (-1 at
     the start; for ``ALL`` the record's decision index; a decision hidden from the perspective is not counted,
     so the numbers never tell that one was asked),
     "hand": 0.., "turn": 0.., "round": "hand/turn" (frames of one round share it), "position": the same for
     a person ("hand 2 turn 5", "turn 12": ``arena.render.position_text``),
     "seat": seat that decided (None at the start), "kind": its decision kind, "action": the action as the
     perspective sees it (None when hidden), "action_text": the same for a person when the game's frames module
     words it (absent otherwise, and when the action is hidden), "source": "bot" | "default" | "forfeit" | "time_limit",
     "latency_ms": ms or None, "faults": [{"seat", "kind", "latency_ms", "detail"}], "forfeits": [{"seat",
     "reason", "detail"}], "board": the game's board}

and, when one decision draws several boards (a Take 5 reveal: the cards shown, each one placed, the table after),
"part": 0.. and "parts": how many, on each of them: the frames after the first show what the decision led to, and
the viewer says so ("after seat 2's ...").

A fault's ``detail`` (which may name the legal answers, so the hand) is given to ``ALL`` and to the faulting seat's
own perspective only, else "". A decision the perspective may not even know was asked (a game's hidden
out-of-turn question) makes no frame of its own: its effects show in the next frame that perspective sees, and the
frame of the decision that raised the question waits until it is answered (``held``): a live match waiting for
such an answer shows neither yet (nor counts the decision), a finished one shows both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeVar

from arena.match.record import MatchRecord
from arena.render import as_record, position_text, renderer
from arena.render.base import RenderError
from arena_sdk import wire
from arena_sdk.games import GAMES

PUBLIC = "public"
ALL = "all"
_SEAT = "seat:"
T = TypeVar("T")


class PerspectiveError(RenderError):
    """A perspective that is not ``"public"``, ``"all"`` or ``"seat:K"`` with K a seat of the match."""


def seat_perspective(seat: int) -> str:
    """The perspective of ``seat`` (0-based): ``"seat:K"``."""
    return f"{_SEAT}{seat}"


def parse_perspective(text: str, num_seats: int) -> int | str | None:
    """The viewer the game's frame module takes: ``None`` for ``"public"``, ``ALL`` for ``"all"``, the seat (int)
    for ``"seat:K"``. Raises ``PerspectiveError`` naming the accepted values."""
    if text == PUBLIC:
        return None
    if text == ALL:
        return ALL
    if isinstance(text, str) and text.startswith(_SEAT) and text[len(_SEAT):].isdigit():
        seat = int(text[len(_SEAT):])
        if seat < num_seats:
            return seat
    raise PerspectiveError(f"unknown perspective {text!r}: use public, all or seat:0..seat:{num_seats - 1}")


def perspectives(num_seats: int, *, hands: bool) -> list[str]:
    """The perspectives a viewer offers: public only, or (``hands``: the match's deals are public) also all hands
    and every seat's."""
    return [PUBLIC] + ([ALL] + [seat_perspective(s) for s in range(num_seats)] if hands else [])


@dataclass
class MatchFrames:
    """The frames of one match in one perspective.

    Attributes: game, match_id, perspective; seats: bot names in seat order; frames: see the module docstring;
    stopped: "" when every decision applied, else why the frames end early (a record that does not replay);
    result: the record's result (scores, ranks, faults, forfeits per seat); None for a match still being played
    (its live frames); applied: per frame, the record's index of the last decision applied (-1 at the start), for
    the server's own checks, never sent (``to_dict`` leaves it out: in another perspective than ``ALL`` it would
    count the hidden decisions); seen: the decisions the perspective saw; settled: how many frames (from the first)
    stay as they are when decisions are added to the record (a live match): every frame but those of decisions
    hidden from the perspective at the record's end, whose effects move into the frame of the next decision it
    sees.
    """

    game: str
    match_id: str
    perspective: str
    seats: list[str]
    frames: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""
    result: dict[str, Any] | None = None
    applied: list[int] = field(default_factory=list)
    seen: int = 0
    settled: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "match_id": self.match_id, "perspective": self.perspective, "seats": self.seats,
                "frames": self.frames, "stopped": self.stopped, "result": self.result}


@dataclass(frozen=True)
class Step:
    """One applied decision, for a game's ``boards``: the seat, its decision kind, the action (the game's typed
    action) and the engine states before and after it."""

    seat: int
    kind: str
    action: Any
    before: Any
    after: Any


def visible_hands(hands: Sequence[tuple[T, ...]], viewer: int | str | None,
                  show: Callable[[tuple[T, ...]], list[Any]] = list) -> dict[str, list[Any]]:
    """The hands ``viewer`` may see, for a game's board: every seat's (``ALL``), its own (a seat), none (None, the
    public); keyed by seat as text (JSON object keys), each shown by ``show``."""
    if viewer == ALL:
        return {str(s): show(h) for s, h in enumerate(hands)}
    if isinstance(viewer, int) and 0 <= viewer < len(hands):
        return {str(viewer): show(hands[viewer])}
    return {}


def frames_module(game: str) -> ModuleType:
    """The frames module of ``game`` (its renderer's ``FRAMES``). Raises ``RenderError`` when it has none."""
    module = getattr(renderer(game), "FRAMES", None)
    if module is None:
        raise RenderError(f"the renderer of game {game!r} draws no viewer frames")
    return module  # type: ignore[no-any-return]


def build_frames(record: MatchRecord | Mapping[str, Any], perspective: str = PUBLIC, *,
                 notes: bool = False) -> MatchFrames:
    """Every frame of ``record`` seen from ``perspective`` (see the module docstring), first the table before any
    decision, then one or more frames per decision the perspective sees (a game may split one decision into
    several boards, e.g. cards revealed together, then placed one by one).

    A record that stops replaying (a tampered one) gives the frames up to there and ``stopped`` says why. Raises
    ``RenderError`` for a record that is not a well-formed record or whose game draws no frames, and
    ``PerspectiveError`` for a bad perspective.

    ``notes``: give each decision's bot note (the record's ``note``, ``DecideResponse.note``) as the frame's
    ``note``, to ``PUBLIC`` and ``ALL`` for every seat and to a seat's perspective for its own only; callers pass
    True only for a match that is over and whose organiser shows notes."""
    rec = as_record(record)
    module = frames_module(rec.game)
    viewer = parse_perspective(perspective, len(rec.seats))
    engine = GAMES[rec.game]
    out = MatchFrames(rec.game, rec.match_id, perspective, [s.name for s in rec.seats])
    try:
        config = wire.config_from_dict(rec.game, rec.config)
        deals = tuple(engine.deal_from_dict(d) for d in rec.deals)
        state = engine.new_game(len(rec.seats), config, seed=rec.seed, deals=deals)
    except (ValueError, TypeError) as exc:
        raise RenderError(f"cannot rebuild the game from the record: {exc}") from exc
    framer = _Framer(rec, module, viewer, out, notes)
    hand, turn = engine.position(state)
    framer.add(-1, hand, turn, module.board(state, viewer), forfeits=framer.forfeits_upto(-1),
               faults=[_fault(f, viewer, None) for f in rec.faults if f.decision is None])
    last = -1  # the last decision applied
    for i, dec in enumerate(rec.decisions):
        seat, kind = dec.get("seat"), dec.get("kind")
        try:
            action = engine.action_from_dict(str(kind), dec.get("action"))
            if not isinstance(seat, int) or action not in engine.legal_actions(state, seat):
                raise ValueError(f"the action of decision {i} is not legal for seat {seat!r}")
            after = engine.apply(state, seat, action)
        except (ValueError, TypeError, KeyError) as exc:
            out.stopped = f"the record stops replaying at decision {i}: {exc}"
            break
        hand, turn = engine.position(state)
        framer.decision(i, dec, Step(seat, str(kind), action, state, after), hand, turn)
        state, last = after, i
    framer.finish(last, over=bool(rec.result.scores or out.stopped))
    if framer.hidden and not out.stopped:  # hidden decisions at the very end: their effects in one last frame
        hand, turn = engine.position(framer.hidden[0].before)
        for board in module.boards(framer.hidden, viewer):
            framer.add(len(rec.decisions) - 1, hand, turn, board, forfeits=framer.forfeits_upto(len(rec.decisions)))
    res = rec.result
    out.result = {"scores": list(res.scores), "ranks": list(res.ranks), "faults": list(res.faults),
                  "forfeits": list(res.forfeits) or [None] * len(rec.seats)}
    return out


class _Framer:
    """The frames of one record and perspective as ``build_frames`` replays it: each decision applied goes to
    ``decision``, which draws it at once, keeps it hidden (its effects go to the next frame) or, while the game's
    ``held`` says a hidden question waits for its answer, keeps it waiting with what follows."""

    def __init__(self, rec: MatchRecord, module: ModuleType, viewer: int | str | None, out: MatchFrames,
                 notes: bool) -> None:
        self.rec, self.module, self.viewer, self.out, self.notes = rec, module, viewer, out, notes
        self.engine = GAMES[rec.game]
        self.held = getattr(module, "held", None) if viewer != ALL else None
        self.hidden: list[Step] = []  # decisions this perspective does not see, since the last one it saw
        self.waiting: list[tuple[int, int, int, dict[str, Any], list[Step]]] = []  # seen, their frames waiting
        self.faults_at: dict[int, list[Any]] = {}
        for f in rec.faults:
            if f.decision is not None:
                self.faults_at.setdefault(f.decision, []).append(f)
        self.forfeits = sorted(((_forfeit_decision(rec, ff), k) for k, ff in enumerate(rec.forfeits)))
        self.shown_forfeits = 0

    def forfeits_upto(self, i: int) -> list[dict[str, Any]]:
        """The forfeits up to decision ``i`` not drawn yet."""
        found = []
        while self.shown_forfeits < len(self.forfeits) and self.forfeits[self.shown_forfeits][0] <= i:
            ff = self.rec.forfeits[self.forfeits[self.shown_forfeits][1]]
            found.append({"seat": ff.seat, "reason": ff.reason, "detail": ff.detail})
            self.shown_forfeits += 1
        return found

    def add(self, decision: int, hand: int, turn: int, board: dict[str, Any], counted: int | None = None,
            **fields: Any) -> None:
        """One frame: ``decision`` the record's index of the last decision applied, ``counted`` its number among
        the decisions this perspective sees (default: the last seen)."""
        out = self.out
        out.applied.append(decision)
        if counted is None:
            counted = decision if self.viewer == ALL else out.seen - 1
        out.frames.append({"index": len(out.frames), "decision": counted, "hand": hand, "turn": turn,
                           "round": f"{hand}/{turn}", "position": position_text(self.rec.game, hand, turn),
                           "seat": None, "kind": None, "action": None, "source": None, "latency_ms": None,
                           "faults": [], "forfeits": [], **fields, "board": board})

    def decision(self, i: int, dec: Mapping[str, Any], step: Step, hand: int, turn: int) -> None:
        """Decision ``i`` of the record (``dec``), applied as ``step`` at (``hand``, ``turn``)."""
        viewer, module = self.viewer, self.module
        own = viewer == ALL or viewer == step.seat
        shown, public_action = (True, None) if own else module.shown_action(step.before, step.seat, step.kind,
                                                                              step.action)
        if not shown:
            self.hidden.append(step)
        else:
            steps, self.hidden = [*self.hidden, step], []
            self.out.seen += 1
            fields: dict[str, Any] = {
                "seat": step.seat, "kind": step.kind,
                "action": self.engine.action_to_dict(step.action) if own else public_action,
                "source": dec.get("source"), "latency_ms": dec.get("latency_ms"),
                "faults": [_fault(f, viewer, dec.get("latency_ms")) for f in self.faults_at.get(i, ())],
                "forfeits": self.forfeits_upto(i), "counted": i if viewer == ALL else self.out.seen - 1}
            fields.update(_worded(module, fields["action"]))
            note = dec.get("note")
            if self.notes and isinstance(note, str) and note and viewer in (None, ALL, step.seat):
                fields["note"] = note
            self.waiting.append((i, hand, turn, fields, steps))
        if self.waiting and not (self.held is not None and self.held(step.after, viewer)):
            self._release(i)

    def finish(self, last: int, *, over: bool) -> None:
        """After the last decision (``last``, -1 for none): frames still waiting for an answer are drawn when the
        match is ``over`` (nothing left to hide), else (a live match) neither drawn nor counted; the frames so far
        are ``settled``."""
        if self.waiting and over:
            self._release(last)
        elif self.waiting:
            self.hidden = []
            self.out.seen -= len(self.waiting)
            self.waiting.clear()
        self.out.settled = len(self.out.frames)

    def _release(self, last: int) -> None:
        """Draw the waiting frames; the hidden decisions since (the answers they waited for, up to ``last``) show in
        the last one, applied with it."""
        waiting = self.waiting
        if self.hidden:
            waiting[-1] = (last, *waiting[-1][1:4], [*waiting[-1][4], *self.hidden])
            self.hidden = []
        for i, hand, turn, fields, steps in waiting:
            boards = self.module.boards(steps, self.viewer)
            for k, board in enumerate(boards):
                self.add(i, hand, turn, board, **fields, **({"part": k, "parts": len(boards)} if len(boards) > 1
                                                           else {}))
                fields = dict(fields, faults=[], forfeits=[])  # once, on the first board of the decision
        waiting.clear()


def _worded(module: ModuleType, action: dict[str, Any] | None) -> dict[str, str]:
    """``{"action_text": ...}`` when the game's frames module words actions and the action is shown, else {}."""
    wording = getattr(module, "action_text", None)
    return {} if wording is None or action is None else {"action_text": str(wording(action))}


def _fault(f: Any, viewer: int | str | None, latency_ms: Any) -> dict[str, Any]:
    detail = f.detail if viewer == ALL or viewer == f.seat else ""
    return {"seat": f.seat, "kind": f.kind, "latency_ms": latency_ms, "detail": detail}


def _forfeit_decision(rec: MatchRecord, ff: Any) -> int:
    """Index of the decision at which forfeit ``ff`` happened (-1: before any decision)."""
    if ff.fault is not None and 0 <= ff.fault < len(rec.faults):
        decision = rec.faults[ff.fault].decision
        return -1 if decision is None else int(decision)
    return int(rec.time_limit_at) if rec.time_limit_at is not None else len(rec.decisions)
