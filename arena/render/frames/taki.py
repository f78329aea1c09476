"""Taki boards for the match viewer (``arena.render.frames``): pure, no I/O; ``docs/rules/taki.md``.

A board is a JSON-ready dict (cards and colours as tokens, ``"R5"``, ``"KING"``, ``"B"``)::

    {"turn": completed turns, "leading": the top card of the discard pile, "discard": the last cards of the
     discard pile, bottom first (at most ``DISCARD_SHOWN``), "discard_size", "draw_pile": cards in the draw pile,
     "follow_color", "follow_symbol": what the next card must match, "stack": an active +2 stack (0 = none),
     "run": {"color", "seat", "cards", "continued", "open"} or None, "current": whose turn it is,
     "direction": +1 or -1, "counts": cards per seat, "stages": stairs stage per seat ([] without stairs),
     "winner": seat or None, "events": the public events of the decision ({"kind", "seat", "card", "count",
     "color", "closed", "declared", "reason"}: plays, +3 Breaker reactions, draws with their reason, skips,
     reshuffles, stages, the win), "hands": {"K": cards} for the seats the perspective may see (none in public)}

Hidden: which seat is asked about a +3 Breaker (a declined question makes no frame but in ``"all"`` and that seat's
own perspective, and the +3's frame waits for the answers: ``held``), the draw pile's order, every hand but the
perspective's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.render.frames import visible_hands
from arena_sdk.games import taki
from arena_sdk.games.taki.cards import COLOR_NAMES, COLOR_TOKENS, tokens

DISCARD_SHOWN = 8


def _hands(state: taki.TakiState, viewer: int | str | None) -> dict[str, list[str]]:
    return visible_hands(state.hands, viewer, tokens)


def _symbol(symbol: int) -> str:
    return str(taki.SYMBOL_TOKENS.get(symbol, symbol))


def board(state: taki.TakiState, viewer: int | str | None, events: Sequence[taki.Event] = ()) -> dict[str, Any]:
    """The table of ``state`` as ``viewer`` sees it (None: public; ``"all"``; a seat), with ``events``."""
    run = state.run
    return {
        "turn": state.turn, "leading": taki.card_token(state.discard_pile[-1]),
        "discard": tokens(state.discard_pile[-DISCARD_SHOWN:]), "discard_size": len(state.discard_pile),
        "draw_pile": len(state.draw_pile), "follow_color": taki.color_token(state.follow_color),
        "follow_symbol": _symbol(state.follow_symbol), "stack": state.stack,
        "run": None if run is None else {"color": taki.color_token(run.color), "seat": run.seat, "cards": run.cards,
                                         "continued": run.continued, "open": run.open},
        "current": state.current, "direction": state.direction, "counts": [len(h) for h in state.hands],
        "stages": list(state.stages), "winner": state.winner,
        "events": [e._asdict() for e in events], "hands": _hands(state, viewer),
    }


def shown_action(state: taki.TakiState, seat: int, kind: str, action: Any) -> tuple[bool, dict[str, Any] | None]:
    """How another seat or the public sees ``seat``'s decision: a +3 Breaker question is hidden unless the seat
    played its Breaker (then every seat sees the break); every turn action is public (a draw never shows the
    card)."""
    if kind == taki.REACT:
        return (True, {"play": True}) if action.play else (False, None)
    if isinstance(action, taki.PlayCard):
        return True, {"card": taki.card_token(action.card),
                      "color": None if action.color is None else taki.color_token(action.color),
                      "close_run": action.close_run, "last_card": action.last_card}
    return True, {"draw": True} if isinstance(action, taki.Draw) else {"end_turn": True}


def action_text(action: dict[str, Any]) -> str:
    """An action dict of ``shown_action`` as a person reads it: "plays CHCOLOR, calls red", "plays R5, closes the
    run, last card", "draws", "ends its turn", "breaks the +3"."""
    if action.get("play"):
        return "breaks the +3"
    if action.get("draw"):
        return "draws"
    if action.get("end_turn"):
        return "ends its turn"
    color = action.get("color")
    parts = [f"plays {action.get('card')}"]
    if color in COLOR_TOKENS:
        parts.append(f"calls {COLOR_NAMES[COLOR_TOKENS.index(color)]}")
    parts += ["closes the run"] * bool(action.get("close_run")) + ["last card"] * bool(action.get("last_card"))
    return ", ".join(parts)


def held(state: taki.TakiState, viewer: int | str | None) -> bool:
    """True while ``state`` waits for a +3 Breaker answer of a seat other than ``viewer`` (None: the public): the
    frame of the +3 waits for it, so that it shows the +3's draws (or the break) as when nobody holds a Breaker."""
    asked = taki.pending_seats(state)
    return bool(asked) and taki.decision_kind(state, asked[0]) == taki.REACT and viewer not in asked


def boards(steps: Sequence[Any], viewer: int | str | None) -> list[dict[str, Any]]:
    """One board after the last of ``steps`` (``arena.render.frames.Step``), with the public events of every step
    (hidden decisions before it included)."""
    events: list[taki.Event] = []
    for step in steps:
        events.extend(step.after.unseen[step.seat])
    return [board(steps[-1].after, viewer, events)]
