"""The Take 5 renderer: a match record, turn by turn, for people (``arena match show``): pure, no I/O.

``story_of(record)`` re-simulates a record (the JSON form of ``arena.match.referee.MatchRecord``) with the rules engine
and returns what happened as plain data: per hand the rows it started with (and the draft picks of variant 2), per
turn the rows before it, every revealed card in resolution order (lowest first, Take 5 rule step 4) with where it
went and what its seat took (rule 3: the sixth card takes the five; rule 4: a card below every row end takes a row
of its seat's choice), the faults of that turn and the default actions applied for them, then the bullheads of
the hand and the running totals. ``render_match(record)`` turns that into rich renderables (tables and rules) for
a ``rich.console.Console``.

Nothing is printed, read or written here; the caller owns the console. A record that cannot be fully re-simulated
(a tampered or truncated one) is rendered up to the first decision that cannot be applied, with a note saying so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from arena.match.record import MatchRecord, RecordError
from arena.render.base import RenderError, one_line, result_table, safe, transports_text
from arena.render.frames import take5 as FRAMES  # noqa: F401, N812 - the web viewer's boards (arena.render.frames)
from arena_sdk import wire
from arena_sdk.games import take5

ROW_NAMES = ("row 1", "row 2", "row 3", "row 4")  # rows are 0..3 in the engine and on the wire, 1..4 for people


# --- the story: plain data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultNote:
    """A fault as shown beside the play it affected.

    Attributes: seat; kind ("timeout", "error", "unreachable", "illegal", "malformed"); detail (for a person);
    decision_kind: the DecisionKind name that got the default action, None for a StartMatch fault;
    action: the default action applied, JSON form (``{"card": 3}``, ``{"row": 0}``) or None.
    """

    seat: int
    kind: str
    detail: str
    decision_kind: str | None = None
    action: Mapping[str, int] | None = None


@dataclass(frozen=True)
class PlayStory:
    """One revealed card, in resolution order.

    Attributes:
        seat, card: who played what.
        row: row (0..3) where the card ended.
        rows_before: the four rows just before this card resolved (the rows the earlier cards of the turn left).
        taken: cards the seat took into its penalty pile (empty when the card extended a row).
        bullheads: bullheads of ``taken``.
        rule: "extend" (rules 1-2), "sixth" (rule 3) or "rule4" (a card below every row end; the seat chose).
        cheapest_row: rule 4 only, the row with the fewest bullheads at that moment (lowest index on ties).
        card_fault / row_fault: the fault whose default action chose the card / the rule-4 row, else None.
    """

    seat: int
    card: int
    row: int
    rows_before: tuple[tuple[int, ...], ...]
    taken: tuple[int, ...]
    bullheads: int
    rule: str
    cheapest_row: int | None = None
    card_fault: FaultNote | None = None
    row_fault: FaultNote | None = None


@dataclass(frozen=True)
class TurnStory:
    """One turn: ``turn`` 0..9 of hand ``hand``; the rows before it and after it; its plays lowest card first."""

    hand: int
    turn: int
    rows_before: tuple[tuple[int, ...], ...]
    plays: tuple[PlayStory, ...]
    rows_after: tuple[tuple[int, ...], ...]


@dataclass
class HandStory:
    """One hand (0-based ``hand``).

    Attributes:
        rows_at_start: the rows of turn 1 (after the draft in variant 2); () when the hand never got there.
        draft: variant 2, the picks in order as (seat, card, fault or None).
        turns: the completed turns. penalties: bullheads each seat took this hand (seat order).
        totals: running totals after the hand, seat order; None when the hand did not complete.
    """

    hand: int
    rows_at_start: tuple[tuple[int, ...], ...] = ()
    draft: list[tuple[int, int, FaultNote | None]] = field(default_factory=list)
    turns: list[TurnStory] = field(default_factory=list)
    penalties: tuple[int, ...] = ()
    totals: tuple[int, ...] | None = None


@dataclass
class MatchStory:
    """A whole match re-simulated from its record.

    Attributes:
        record: the record (validated). hands: the hands in order.
        start_faults: StartMatch faults (no decision attached).
        stopped: None when every decision applied; else why the re-simulation stopped (the story ends there).
        over: True when the re-simulated game is over after the last decision.
    """

    record: MatchRecord
    hands: list[HandStory] = field(default_factory=list)
    start_faults: list[FaultNote] = field(default_factory=list)
    stopped: str | None = None
    over: bool = False


def _as_record(record: MatchRecord | Mapping[str, Any]) -> MatchRecord:
    if isinstance(record, MatchRecord):
        return record
    try:
        return MatchRecord.from_dict(dict(record) if isinstance(record, Mapping) else record)
    except RecordError as exc:
        raise RenderError(f"not a match record: {exc}") from exc


def _bullheads(cards: Sequence[int]) -> int:
    return sum(take5.bullheads(c) for c in cards)


def _cheapest(rows: Sequence[Sequence[int]]) -> int:
    costs = [_bullheads(r) for r in rows]
    return costs.index(min(costs))


def story_of(record: MatchRecord | Mapping[str, Any]) -> MatchStory:
    """Re-simulate ``record`` (a ``MatchRecord`` or its JSON dict) and tell it hand by hand, turn by turn.

    Raises ``RenderError`` when ``record`` is not a well-formed record, is not a Take 5 match, or its config,
    seed and deals cannot start a game. A decision that cannot be applied (tampered record) ends the story with
    ``stopped`` set; it never raises for that.
    """
    rec = _as_record(record)
    if rec.game != take5.GAME_ID:
        raise RenderError(f"not a Take 5 record: game {rec.game!r}")
    n = len(rec.seats)
    try:
        config = wire.config_from_dict(rec.game, rec.config)
        deals = tuple(wire.deal_from_dict(rec.game, d) for d in rec.deals)
        state = take5.new_game(n, config, seed=rec.seed, deals=deals)
    except (ValueError, TypeError) as exc:
        raise RenderError(f"cannot rebuild the game from the record's config, seed and deals: {exc}") from exc

    story = MatchStory(record=rec)
    faults_at: dict[int, list[Any]] = {}
    for f in rec.faults:
        if f.decision is None:
            story.start_faults.append(FaultNote(f.seat, f.kind, f.detail))
        else:
            faults_at.setdefault(f.decision, []).append(f)

    hand = HandStory(hand=0)
    story.hands.append(hand)
    turn_rows: tuple[tuple[int, ...], ...] = ()
    # (seat, kind) -> fault note of the default action applied in the turn being played
    turn_faults: dict[tuple[int, str], FaultNote] = {}

    for i, dec in enumerate(rec.decisions):
        if take5.is_over(state):
            story.stopped = f"decision {i}: the game is already over, {len(rec.decisions) - i} decision(s) remain"
            break
        if state.phase == "choose" and all(c is None for c in state.chosen):
            turn_rows = state.rows
            if state.turn == 0 and not hand.rows_at_start:
                hand.rows_at_start = state.rows
        seat = dec.get("seat")
        kind = take5.decision_kind(state, seat) if isinstance(seat, int) else None
        if kind is None or not isinstance(seat, int):
            story.stopped = (f"decision {i}: recorded for seat {seat!r}, but the game asks seat(s) "
                             f"{list(take5.pending_seats(state))}")
            break
        try:
            action = wire.action_from_dict(rec.game, kind, dec.get("action"))
            after = take5.apply(state, seat, action)
        except (wire.WireError, take5.IllegalActionError, take5.RulesError) as exc:
            story.stopped = f"decision {i}: seat {seat}'s action {dec.get('action')!r} cannot be applied: {exc}"
            break
        note = None
        for f in faults_at.get(i, ()):
            note = FaultNote(f.seat, f.kind, f.detail, kind, wire.action_to_dict(rec.game, action))
        if kind == take5.DRAFT_PICK:
            hand.draft.append((seat, action.card, note))
        elif note is not None:
            turn_faults[(seat, kind)] = note

        completed = _completed_turns(state, after)
        for t in completed:
            hand.turns.append(_turn_story(hand.hand, t, turn_rows, turn_faults))
            turn_rows = hand.turns[-1].rows_after
            turn_faults = {}
        if after.phase == "over" or after.hand_number != state.hand_number:
            hand.penalties = tuple(
                sum(p.bullheads for t in hand.turns for p in t.plays if p.seat == s) for s in range(n)
            )
            hand.totals = after.totals
            if after.phase != "over":
                hand = HandStory(hand=after.hand_number)
                story.hands.append(hand)
        state = after
    story.over = take5.is_over(state)
    if not story.hands[-1].turns and not story.hands[-1].draft and len(story.hands) > 1:
        story.hands.pop()  # a freshly dealt hand that was never played (the record ends at a hand boundary)
    return story


def _completed_turns(before: Any, after: Any) -> tuple[take5.Turn, ...]:
    """The turns completed by one ``apply``: none, or the one whose last card (or rule-4 choice) resolved."""
    done = len(before.history)
    if after.phase == "over" or after.hand_number == before.hand_number:
        return tuple(after.history[done:])
    return tuple(after.previous_history[done:])


def _turn_story(hand: int, turn: take5.Turn, rows_before: tuple[tuple[int, ...], ...],
                faults: Mapping[tuple[int, str], FaultNote]) -> TurnStory:
    rows = [tuple(r) for r in rows_before]
    plays = []
    for p in turn.plays:
        before = tuple(rows)
        if p.chose_row:
            rule, cheapest = "rule4", _cheapest(before)
        elif p.taken:
            rule, cheapest = "sixth", None
        else:
            rule, cheapest = "extend", None
        rows[p.row] = (p.card,) if p.taken or p.chose_row else rows[p.row] + (p.card,)
        plays.append(PlayStory(
            seat=p.seat, card=p.card, row=p.row, rows_before=before, taken=tuple(p.taken),
            bullheads=_bullheads(p.taken), rule=rule, cheapest_row=cheapest,
            card_fault=faults.get((p.seat, take5.CHOOSE_CARD)),
            row_fault=faults.get((p.seat, take5.CHOOSE_ROW)) if p.chose_row else None,
        ))
    return TurnStory(hand=hand, turn=turn.turn, rows_before=tuple(rows_before), plays=tuple(plays),
                     rows_after=tuple(rows))


# --- rich rendering ----------------------------------------------------------------------------------------------


def _bh(n: int) -> str:
    return f"{n} bullhead" if n == 1 else f"{n} bullheads"


def _cards(cards: Sequence[int]) -> str:
    return " ".join(str(c) for c in cards) if cards else "-"


def _rows_table(rows: Sequence[Sequence[int]], title: str) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2, 0, 2))
    table.add_column("row", style="bold")
    table.add_column("cards")
    table.add_column("bullheads", justify="right")
    for r, cards in enumerate(rows):
        table.add_row(ROW_NAMES[r], _cards(cards), _bh(_bullheads(cards)))
    return table


def _fault_text(note: FaultNote, what: str) -> str:
    return f"{note.kind}: default {what} ({one_line(note.detail)})"


def _what_happened(p: PlayStory) -> Text:
    row = ROW_NAMES[p.row]
    text = Text()
    if p.rule == "extend":
        text.append(f"goes to {row} (card {len(p.rows_before[p.row]) + 1} of 5)")
    elif p.rule == "sixth":
        text.append(f"6th card on {row}: takes {_cards(p.taken)}", style="yellow")
    else:
        text.append(f"below every row end (rule 4): chooses {row}, takes {_cards(p.taken)}", style="magenta")
        if p.cheapest_row is not None and _bullheads(p.rows_before[p.cheapest_row]) < p.bullheads:
            cheapest = p.cheapest_row
            text.append(f"; cheapest was {ROW_NAMES[cheapest]} ({_bh(_bullheads(p.rows_before[cheapest]))})")
    if p.card_fault is not None:
        text.append(f"\n  fault {_fault_text(p.card_fault, 'card, the lowest in hand')}", style="red")
    if p.row_fault is not None:
        text.append(f"\n  fault {_fault_text(p.row_fault, 'row, the cheapest')}", style="red")
    return text


def _seat_label(rec: MatchRecord, seat: int) -> str:
    return f"{safe(rec.seats[seat].name)} (seat {seat})"


SCORE_LABEL = "bullheads"


def progress(before: Any, after: Any, names: Sequence[str]) -> str | None:
    """A line for a game shown live (``arena play``): the bullheads of a hand when it ends, else None."""
    if after.hand_number == before.hand_number and after.phase != "over":
        return None
    taken = [t - b for t, b in zip(after.totals, before.totals)]
    return (f"hand {before.hand_number + 1}: "
            + ", ".join(f"{n} +{d} ({t})" for n, d, t in zip(names, taken, after.totals)))


def summary(record: MatchRecord | Mapping[str, Any]) -> Table:
    """The bullheads each bot took in every hand, and the running totals (what ``arena play`` prints). Raises
    ``RenderError`` as ``story_of`` does."""
    story = story_of(record)
    names = [s.name for s in story.record.seats]
    table = Table(title="Bullheads per hand (total)")
    table.add_column("hand", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    for hand in story.hands:
        if hand.totals is None:
            continue
        table.add_row(str(hand.hand + 1), *(f"{p} ({tot})" for p, tot in zip(hand.penalties, hand.totals)))
    return table


def config_text(config: Mapping[str, Any]) -> str:
    """The rule options of a Take 5 config (JSON form) in a few words."""
    return _config_text(config)


def _config_text(config: Mapping[str, Any]) -> str:
    rule = ">" if config.get("limit_rule") == "more_than" else ">="
    variants = [name for name, key in (("known cards", "known_cards"), ("draft", "draft")) if config.get(key)]
    return f"limit {rule} {config.get('limit', 66)} bullheads; variants: {', '.join(variants) or 'none'}"


def _when(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if epoch_s else "-"


def render_match(record: MatchRecord | Mapping[str, Any]) -> Group:
    """Rich renderables telling ``record`` turn by turn: a header (match, seats, config, seed), per hand the
    starting rows and the draft, per turn a table of the revealed cards in resolution order (bot, row, what it
    took, rule-4 choices, faults with the default action applied) and the rows after it, per hand the bullheads
    taken and the totals, then the result and every fault. Print it with ``Console.print``.

    Raises ``RenderError`` as ``story_of`` does.
    """
    story = story_of(record)
    rec = story.record
    parts: list[RenderableType] = []

    header = Table(title=f"Match {safe(rec.match_id)}", title_justify="left", show_header=False, box=None,
                   padding=(0, 2, 0, 0))
    header.add_column("field", style="bold")
    header.add_column("value")
    header.add_row("game", f"{rec.game}: {_config_text(rec.config)}")
    header.add_row("seats", ", ".join(f"{i}: {safe(s.name)}" for i, s in enumerate(rec.seats)))
    calls = transports_text(rec)
    if calls:
        header.add_row("calls", calls)
    header.add_row("deal", f"seed {rec.seed}" if rec.seed is not None else "explicit deals")
    header.add_row("deadline", f"{rec.deadline_ms} ms per decision")
    header.add_row("played", f"{_when(rec.started_at)}, {rec.duration_s:.2f} s, {len(rec.decisions)} decisions, "
                             f"{len(rec.faults)} faults")
    parts.append(header)
    for start_fault in story.start_faults:
        parts.append(Text(f"StartMatch fault of {_seat_label(rec, start_fault.seat)}: {start_fault.kind} "
                          f"({one_line(start_fault.detail)})", style="red"))

    for hand in story.hands:
        parts.append(Rule(f"Hand {hand.hand + 1}"))
        if hand.draft:
            picks = Text("Draft (face up, seat order): ")
            for k, (seat, card, note) in enumerate(hand.draft):
                if k:
                    picks.append(", ")
                picks.append(f"{rec.seats[seat].name} {card}", style="red" if note is not None else "")
                if note is not None:
                    picks.append(f" [{note.kind}: default, the lowest card]", style="red")
            parts.append(picks)
        if hand.rows_at_start:
            parts.append(_rows_table(hand.rows_at_start, "Rows at the start"))
        for t in hand.turns:
            table = Table(title=f"Hand {hand.hand + 1} · turn {t.turn + 1}", title_justify="left")
            table.add_column("card", justify="right")
            table.add_column("bot")
            table.add_column("what happened")
            table.add_column("bullheads", justify="right")
            for p in t.plays:
                table.add_row(str(p.card), _seat_label(rec, p.seat), _what_happened(p),
                              str(p.bullheads) if p.taken else "")
            parts.append(table)
            parts.append(_rows_table(t.rows_after, f"Rows after turn {t.turn + 1}"))
        if hand.totals is not None:
            end = Table(title=f"End of hand {hand.hand + 1}", title_justify="left")
            end.add_column("bot")
            end.add_column("bullheads this hand", justify="right")
            end.add_column("total", justify="right")
            for s in range(len(rec.seats)):
                end.add_row(_seat_label(rec, s), str(hand.penalties[s]), str(hand.totals[s]))
            parts.append(end)

    if story.stopped is not None:
        parts.append(Text(f"The record cannot be re-simulated further: {story.stopped}", style="bold red"))
    elif not story.over:
        parts.append(Text("The record ends before the game is over.", style="bold red"))

    result = result_table(rec, "bullheads")
    parts.append(result)

    if rec.faults:
        faults = Table(title="Faults", title_justify="left")
        for col in ("bot", "hand", "turn", "kind"):
            faults.add_column(col, no_wrap=True)
        faults.add_column("detail", overflow="fold")
        for f in rec.faults:
            faults.add_row(_seat_label(rec, f.seat) if 0 <= f.seat < len(rec.seats) else str(f.seat),
                           str(f.hand + 1), str(f.turn + 1), f.kind, Text(one_line(f.detail)))
        parts.append(faults)
    return Group(*parts)
