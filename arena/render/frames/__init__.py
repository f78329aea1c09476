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
reads it, from the dict the perspective is shown: Take 5 numbers rows from 1 as its board does), found through the
renderer lookup (``arena.render.renderer``); this module names no game.

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

A fault's ``detail`` (which may name the legal answers, so the hand) is given to ``ALL`` and to the faulting seat's
own perspective only, else "". A decision the perspective may not even know was asked (a game's hidden
out-of-turn question) makes no frame of its own: its effects show in the next frame that perspective sees.
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
    faults_at: dict[int, list[Any]] = {}
    for f in rec.faults:
        if f.decision is not None:
            faults_at.setdefault(f.decision, []).append(f)
    forfeits = sorted(((_forfeit_decision(rec, ff), k) for k, ff in enumerate(rec.forfeits)))
    shown_forfeits = 0

    def forfeits_upto(i: int) -> list[dict[str, Any]]:
        nonlocal shown_forfeits
        out_ = []
        while shown_forfeits < len(forfeits) and forfeits[shown_forfeits][0] <= i:
            ff = rec.forfeits[forfeits[shown_forfeits][1]]
            out_.append({"seat": ff.seat, "reason": ff.reason, "detail": ff.detail})
            shown_forfeits += 1
        return out_

    def add(decision: int, hand: int, turn: int, board: dict[str, Any], **fields: Any) -> None:
        out.applied.append(decision)
        counted = decision if viewer == ALL else out.seen - 1
        out.frames.append({"index": len(out.frames), "decision": counted, "hand": hand, "turn": turn,
                           "round": f"{hand}/{turn}", "position": position_text(rec.game, hand, turn),
                           "seat": None, "kind": None, "action": None, "source": None, "latency_ms": None,
                           "faults": [], "forfeits": [], **fields, "board": board})

    hand, turn = engine.position(state)
    add(-1, hand, turn, module.board(state, viewer), forfeits=forfeits_upto(-1),
        faults=[_fault(f, viewer, None) for f in rec.faults if f.decision is None])
    hidden: list[Step] = []
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
        step = Step(seat, str(kind), action, state, after)
        hand, turn = engine.position(state)
        state = after
        own = viewer == ALL or viewer == seat
        shown, public_action = (True, None) if own else module.shown_action(step.before, seat, step.kind, action)
        if not shown:
            hidden.append(step)
            continue
        steps, hidden = [*hidden, step], []
        out.seen += 1
        fields: dict[str, Any] = {
            "seat": seat, "kind": step.kind, "action": engine.action_to_dict(action) if own else public_action,
            "source": dec.get("source"), "latency_ms": dec.get("latency_ms"),
            "faults": [_fault(f, viewer, dec.get("latency_ms")) for f in faults_at.get(i, ())],
            "forfeits": forfeits_upto(i)}
        fields.update(_worded(module, fields["action"]))
        if notes and isinstance(dec.get("note"), str) and dec["note"] and (viewer in (None, ALL) or viewer == seat):
            fields["note"] = dec["note"]
        for board in module.boards(steps, viewer):
            add(i, hand, turn, board, **fields)
            fields = dict(fields, faults=[], forfeits=[])  # once, on the first board of the decision
    out.settled = len(out.frames)
    if hidden and not out.stopped:  # hidden decisions at the very end: their effects in one last frame
        hand, turn = engine.position(hidden[0].before)
        for board in module.boards(hidden, viewer):
            add(len(rec.decisions) - 1, hand, turn, board, forfeits=forfeits_upto(len(rec.decisions)))
    res = rec.result
    out.result = {"scores": list(res.scores), "ranks": list(res.ranks), "faults": list(res.faults),
                  "forfeits": list(res.forfeits) or [None] * len(rec.seats)}
    return out


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
