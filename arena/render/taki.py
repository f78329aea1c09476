"""The Taki renderer: a match record, turn by turn, for people (``arena match show``): pure, no I/O.

``render_match(record)`` re-simulates the record with the Taki engine and returns rich renderables: a header
(match, seats, options, seed), then one table row per decision (turn, seat, what the seat did, and every public
event it caused: runs and whether they ended open or closed, +2 stacks and who drew them, Stops, direction changes,
the +3 Breaker reaction, draws with their reason, missing "last card" penalties, reshuffles, stage changes of the
stairs, the win), the leading card and colour to follow after it, faults with the default action applied, then the
result. A record that cannot be fully re-simulated is rendered up to the first decision that cannot be applied,
with a note saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from arena.match.record import MatchRecord, RecordError
from arena.render.base import RenderError, one_line, result_table, safe, transports_text
from arena.render.frames import taki as FRAMES  # noqa: F401, N812 - the web viewer's boards (arena.render.frames)
from arena_sdk.games import get_game
from arena_sdk.games.taki import bot as taki_bot
from arena_sdk.games.taki import cards as C
from arena_sdk.games.taki.state import Event, TakiState

_REASONS = {
    "draw": "draws", "stack": "draws the +2 stack", "plus": "owes a card after a Plus and draws",
    "+3": "draws for the +3", "broken": "draws for the broken +3", "breaker": "pays for its own Breaker",
    "last card": "forgot to declare last card and draws", "stage": "moves on a stage and draws",
}


def _event_text(e: Event, names: list[str]) -> tuple[str, str]:
    """(text, style) of one public event."""
    who = names[e.seat] if e.seat is not None and 0 <= e.seat < len(names) else "?"
    kind = e.kind
    if kind == "play":
        extra = []
        if e.color:
            extra.append(f"colour {e.color}")
        if e.closed:
            extra.append("closes the run")
        if e.declared:
            extra.append("last card!")
        return f"{who} plays {e.card}" + (f" ({', '.join(extra)})" if extra else ""), ""
    if kind == "draw":
        return f"{who} {_REASONS.get(e.reason or 'draw', 'draws')}: {e.count} card(s)", "yellow"
    if kind == "break":
        return f"{who} breaks the +3 out of turn with a BREAKER", "magenta"
    if kind == "end":
        return f"{who} ends the {'run, closed' if e.closed else 'turn (run left open)' }", ""
    if kind == "skip":
        return f"{who} is stopped (loses the turn)", "cyan"
    if kind == "reshuffle":
        return f"the discard pile is reshuffled: {e.count} cards form the new draw pile", "dim"
    if kind == "stage":
        return f"{who} reaches stage {e.count}", "green"
    if kind == "win":
        return f"{who} wins!", "bold green"
    if kind == "cap":
        return f"the turn cap ends the game after {e.count} turns", "bold"
    if kind == "lead":
        return f"leading card {e.card}", "dim"
    if kind == "return":
        return f"colourless first card {e.card} goes back into the draw pile", "dim"
    return f"{kind} {who} {e.card or ''} {e.count or ''}".strip(), ""


SCORE_LABEL = "cards held; stairs: 1000 x stage + cards"


def position_text(hand: int, turn: int) -> str:
    """Where a fault happened: Taki has no hands, only turns."""
    return f"turn {turn + 1}"


def score_label_of(config: Mapping[str, Any]) -> str:
    """What a score counts under ``config`` (JSON form): cards held, or in the stairs 1000 x stage + cards held."""
    return "score (1000 x stage + cards)" if config.get("stairs") else "cards held"
PROGRESS_EVERY = 25  # turns between two live lines of ``arena play``


def progress(before: TakiState, after: TakiState, names: list[str]) -> str | None:
    """A line for a game shown live (``arena play``): every ``PROGRESS_EVERY`` turns the cards each seat holds,
    and the end of the game; else None."""
    over = after.mode == "over"
    if not over and after.turn // PROGRESS_EVERY == before.turn // PROGRESS_EVERY:
        return None
    held = ", ".join(f"{n} {len(h)}" for n, h in zip(names, after.hands))
    if after.stages:
        held += "; stages " + ", ".join(f"{n} {stage}" for n, stage in zip(names, after.stages))
    if over:
        return f"game over in turn {before.turn + 1}: cards held {held}"
    return f"turn {after.turn}: cards held {held}"


def config_text(config: Mapping[str, Any]) -> str:
    """The rule options of a Taki config (JSON form) in a few words."""
    return _config_text(config)


def summary(record: MatchRecord | Mapping[str, Any]) -> Table:
    """Per seat: the cards played, drawn (with penalties) and held at the end, the turns, and who won (what
    ``arena play`` prints). Raises ``RenderError`` for a record that is not a readable Taki record."""
    rec = _as_record(record)
    game = get_game("taki")
    names = [safe(s.name) for s in rec.seats]
    try:
        state = game.new_game(len(rec.seats), game.config_from_dict(rec.config), seed=rec.seed,
                              deals=tuple(game.deal_from_dict(d) for d in rec.deals))
        played = [0] * len(names)
        drawn = [0] * len(names)
        penalties = [0] * len(names)
        for dec in rec.decisions:
            seat = dec["seat"]
            state = game.apply(state, seat, game.action_from_dict(dec["kind"], dec["action"]))
            for e in state.unseen[seat]:
                if e.seat is None:
                    continue
                if e.kind in ("play", "break"):
                    played[e.seat] += 1
                elif e.kind == "draw":
                    drawn[e.seat] += e.count
                    if e.reason not in ("draw", "stack", "+3", "stage"):
                        penalties[e.seat] += e.count
    except (ValueError, KeyError, TypeError) as exc:
        raise RenderError(f"cannot re-simulate the record: {exc}") from exc
    table = Table(title=f"Taki: {state.turn} turns")
    for col in ("bot", "cards played", "cards drawn", "of which penalties", "cards held"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for i, name in enumerate(names):
        table.add_row(name, str(played[i]), str(drawn[i]), str(penalties[i]), str(len(state.hands[i])))
    return table


def _as_record(record: MatchRecord | Mapping[str, Any]) -> MatchRecord:
    try:
        rec = record if isinstance(record, MatchRecord) else MatchRecord.from_dict(dict(record))
    except RecordError as exc:
        raise RenderError(f"not a match record: {exc}") from exc
    if rec.game != "taki":
        raise RenderError(f"not a Taki record: game {rec.game!r}")
    return rec


def _config_text(config: Mapping[str, Any]) -> str:
    parts = [f"turn cap {config.get('turn_cap', 2000)}", f"{config.get('hand_size', 8)} cards each"]
    if config.get("stairs"):
        parts.append("stairs")
    if not config.get("draw_when_playable", True):
        parts.append("no drawing when a play is possible")
    if config.get("plus_draw_when_playable"):
        parts.append("drawing allowed after a Plus")
    return ", ".join(parts)


def _table_state(state: TakiState) -> str:
    text = f"{C.card_token(state.discard_pile[-1])}, follow {C.COLOR_TOKENS[state.follow_color]}"
    if state.stack:
        text += f", +2 stack {state.stack}"
    if state.run is not None:
        text += f", run {C.COLOR_TOKENS[state.run.color]} ({'open' if state.run.open else 'running'})"
    return text


def render_match(record: MatchRecord | Mapping[str, Any]) -> Group:
    """Rich renderables telling a Taki ``record`` decision by decision (see the module docstring). Raises
    ``RenderError`` for a record that is not a readable Taki record."""
    rec = _as_record(record)
    game = get_game("taki")
    names = [safe(s.name) for s in rec.seats]
    parts: list[RenderableType] = []
    header = Table(title=f"Match {safe(rec.match_id)}", title_justify="left", show_header=False, box=None,
                   padding=(0, 2, 0, 0))
    header.add_column("field", style="bold")
    header.add_column("value")
    header.add_row("game", f"taki: {_config_text(rec.config)}")
    header.add_row("seats", ", ".join(f"{i}: {n}" for i, n in enumerate(names)))
    calls = transports_text(rec)
    if calls:
        header.add_row("calls", calls)
    header.add_row("deal", f"seed {rec.seed}" if rec.seed is not None else "explicit deal")
    header.add_row("deadline", f"{rec.deadline_ms} ms per decision")
    header.add_row("played", f"{rec.duration_s:.2f} s, {len(rec.decisions)} decisions, {len(rec.faults)} faults")
    parts.append(header)
    try:
        state = game.new_game(len(rec.seats), game.config_from_dict(rec.config), seed=rec.seed,
                              deals=tuple(game.deal_from_dict(d) for d in rec.deals))
    except ValueError as exc:
        raise RenderError(f"cannot rebuild the game from the record's config, seed and deals: {exc}") from exc
    start = state.unseen[0] if state.unseen else ()
    # the start's events (the leading card among them), then the table they leave: its colour to follow, a stack
    events = [text for text, _ in (_event_text(e, names) for e in start) if not text.startswith("leading card")]
    parts.append(Text("Start: " + "; ".join([*events, f"leading card {_table_state(state)}"]) + "."))
    faults_at: dict[int, list[Any]] = {}
    for f in rec.faults:
        if f.decision is not None:
            faults_at.setdefault(f.decision, []).append(f)
        else:
            parts.append(Text(f"StartMatch fault of {names[f.seat]}: {f.kind} ({one_line(f.detail)})",
                              style="red"))

    table = Table(title="Decisions", title_justify="left")
    table.add_column("turn", justify="right")
    table.add_column("bot")
    table.add_column("decision")
    table.add_column("what happened", overflow="fold")
    table.add_column("table after")
    stopped = None
    for i, dec in enumerate(rec.decisions):
        seat = dec.get("seat")
        kind = game.decision_kind(state, seat) if isinstance(seat, int) else None
        if kind is None or not isinstance(seat, int):
            pending = list(game.pending_seats(state))
            stopped = f"decision {i}: recorded for seat {seat!r}, but the game asks seat(s) {pending}"
            break
        try:
            action = game.action_from_dict(kind, dec.get("action"))
            after = game.apply(state, seat, action)
        except ValueError as exc:
            stopped = f"decision {i}: seat {seat}'s action {dec.get('action')!r} cannot be applied: {exc}"
            break
        what = Text()
        for k, e in enumerate(after.unseen[seat]):
            if k:
                what.append("\n")
            text, style = _event_text(e, names)
            what.append(text, style=style)
        if not after.unseen[seat] and kind == "TAKI_REACT":
            what.append("declines to break the +3", style="dim")
        for f in faults_at.get(i, ()):
            what.append(f"\nfault {f.kind}: default {taki_bot.describe(action)} ({one_line(f.detail)})",
                        style="red")
        label = taki_bot.describe(action)
        table.add_row(str(state.turn + 1), f"{names[seat]} (seat {seat})", label, what, _table_state(after))
        state = after
    parts.append(table)
    if stopped is not None:
        parts.append(Text(f"The record cannot be re-simulated further: {stopped}", style="bold red"))
    elif not game.is_over(state):
        parts.append(Text("The record ends before the game is over.", style="bold red"))
    result = result_table(rec, score_label_of(rec.config))
    parts.append(result)
    return Group(*parts)
