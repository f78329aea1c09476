"""Taki decisions: who is pending, the legal actions in their documented order, the default action, and why an
action is refused (internal to the engine; ``rules.py`` re-exports the public names).

Legal plays come from tables built once at import: ``_PLAYS[card][flags]`` holds the pre-built ``PlayCard``s of a
card (declaration variants included), ``_MATCHING`` says which cards match what is to be followed. Reading numbers
refer to taki.md "Readings fixed".
"""

from __future__ import annotations

from ..base import IllegalActionError
from .cards import (
    _TOKENS,
    ALL_CARDS,
    CARD_COLOR,
    CARD_SYMBOL,
    CHCOLOR,
    COLOR_TOKENS,
    KING,
    PLUS2,
    SUPERTAKI,
    SYMBOL_TOKENS,
    TAKI,
    is_card,
)
from .state import (
    MAX_PLAYERS,
    REACT,
    STEP_KING,
    STEP_OVER,
    STEP_PLUS,
    STEP_REACT,
    STEP_RUN,
    STEP_TURN,
    TURN,
    Draw,
    EndTurn,
    PlayCard,
    React,
    TakiAction,
    TakiState,
)

# ------------------------------------------------------------------------------ the pre-built actions

DRAW = Draw()
END_TURN = EndTurn()
REACT_NO = React(False)
REACT_YES = React(True)
_REACT_ACTIONS = (REACT_NO, REACT_YES)

_LAST = 1  # the play may carry the "last card" declaration (it leaves exactly one card)
_CLOSE = 2  # the play is inside a run and may close it


def _variants(card: int, flags: int) -> tuple[PlayCard, ...]:
    colors: tuple[int | None, ...] = (0, 1, 2, 3) if card == CHCOLOR else (None,)
    closes = (False, True) if flags & _CLOSE and card != CHCOLOR else (False,)
    lasts = (False, True) if flags & _LAST else (False,)
    return tuple(PlayCard(card, c, k, x) for c in colors for k in closes for x in lasts)


# _PLAYS[card][flags]: the play actions of ``card`` in documented order (colour, then close_run, then last_card).
_PLAYS: list[tuple[tuple[PlayCard, ...], ...]] = [()] * (max(ALL_CARDS) + 1)
for _card in ALL_CARDS:
    _PLAYS[_card] = tuple(_variants(_card, f) for f in range(4))


# _MATCHING[follow_color * _STRIDE + follow_symbol][card]: the card may be played on what is to be followed (its
# colour or symbol matches, or it is colourless: "Setup and turn").
_STRIDE = 20
_MATCHING: list[tuple[bool, ...]] = [
    tuple(
        CARD_COLOR[card] < 0 or CARD_COLOR[card] == fc or CARD_SYMBOL[card] == fs for card in range(len(CARD_COLOR))
    )
    for fc in range(4)
    for fs in range(_STRIDE)
]
# _MATCHING_PLAYS[last][follow_color * _STRIDE + follow_symbol][card]: the plays of a matching card, else ().
_MATCHING_PLAYS: tuple[list[tuple[tuple[PlayCard, ...], ...]], ...] = tuple(
    [
        tuple(_PLAYS[card][last] if ok and _PLAYS[card] else () for card, ok in enumerate(matching))
        for matching in _MATCHING
    ]
    for last in (0, _LAST)
)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ------------------------------------------------------------------------------ decisions


def pending_seats(state: TakiState) -> tuple[int, ...]:
    """The one seat with a decision pending: the turn's seat, or the seat asked about a Breaker; () when over."""
    mode = state.mode
    if mode == STEP_REACT:
        return _ONE_SEAT[state.react_seat]
    if mode == STEP_OVER:
        return ()
    return _ONE_SEAT[state.current]


_ONE_SEAT = tuple((seat,) for seat in range(MAX_PLAYERS))


def _pending(state: TakiState) -> int:
    mode = state.mode
    if mode == STEP_REACT:
        return state.react_seat
    if mode == STEP_OVER:
        return -1
    return state.current


def decision_kind(state: TakiState, seat: int) -> str | None:
    """``REACT`` for the seat asked about a Breaker, ``TURN`` for the turn's seat, else None."""
    if not _is_int(seat) or seat != _pending(state):
        return None
    return REACT if state.mode == STEP_REACT else TURN


def _matches(state: TakiState, card: int) -> bool:
    return _MATCHING[state.follow_color * _STRIDE + state.follow_symbol][card]


def _has_play(state: TakiState, hand: tuple[int, ...]) -> bool:
    """A card of ``hand`` can be played now (turn start without a stack, or a Plus's owed card)."""
    matching = _MATCHING[state.follow_color * _STRIDE + state.follow_symbol]
    run = state.run if state.mode == STEP_TURN else None
    rc = run.color if run is not None else -2
    for card in hand:
        if matching[card] or CARD_COLOR[card] == rc:
            return True
    return False


def legal_actions(state: TakiState, seat: int) -> tuple[TakiAction, ...]:
    """Every legal action of ``seat`` now; () when it has no decision pending.

    Order: plays by ascending card, each card once however many copies the hand holds; per card the variants by
    named colour (Change Color: R, Y, G, B), then ``close_run`` False/True (only inside a run, reading 6-9), then
    ``last_card`` False/True (only when the play leaves exactly one card, reading 13); then ``Draw`` and
    ``EndTurn`` when allowed. A Breaker question offers ``React(False)``, ``React(True)``."""
    mode = state.mode
    if mode == STEP_REACT:
        if seat == state.react_seat and _is_int(seat):
            return _REACT_ACTIONS
        return ()
    if seat != state.current or mode == STEP_OVER or not (type(seat) is int or _is_int(seat)):
        return ()
    hand = state.hands[seat]
    last = _LAST if len(hand) == 2 else 0
    colors = CARD_COLOR
    plays = _PLAYS
    out: list[TakiAction] = []
    previous = -1
    if mode == STEP_TURN:
        if state.stack:  # only +2 and King answer an active stack; drawing takes it (reading 3)
            symbols = CARD_SYMBOL
            for card in hand:
                if card != previous and (symbols[card] == PLUS2 or card == KING):
                    out += plays[card][last]
                previous = card
            out.append(DRAW)
            return tuple(out)
        run = state.run
        if run is None:
            options = _MATCHING_PLAYS[last][state.follow_color * _STRIDE + state.follow_symbol]
            for card in hand:
                if card != previous:
                    found = options[card]
                    if found:
                        out += found
                    previous = card
        else:  # an open run: its colour and SuperTaki continue it (reading 9)
            rc = run.color
            matching = _MATCHING[state.follow_color * _STRIDE + state.follow_symbol]
            for card in hand:
                if card != previous:
                    if colors[card] == rc or card == SUPERTAKI:
                        out += plays[card][_CLOSE | last]
                    elif matching[card]:
                        out += plays[card][last]
                    previous = card
        if not out or state.config.draw_when_playable:
            out.append(DRAW)
        return tuple(out)
    if mode == STEP_RUN:
        rc = state.run.color  # type: ignore[union-attr]
        for card in hand:
            if card != previous:
                if colors[card] == rc or card == SUPERTAKI:
                    out += plays[card][_CLOSE | last]
                elif card == CHCOLOR:
                    out += plays[card][last]
            previous = card
        out.append(END_TURN)
        return tuple(out)
    if mode == STEP_PLUS:
        options = _MATCHING_PLAYS[last][state.follow_color * _STRIDE + state.follow_symbol]
        for card in hand:
            if card != previous:
                found = options[card]
                if found:
                    out += found
                previous = card
        if not out or state.config.plus_draw_when_playable:
            out.append(DRAW)
        return tuple(out)
    # STEP_KING: any one card, no matching needed, or end the turn (reading 5)
    for card in hand:
        if card != previous:
            out += plays[card][last]
        previous = card
    out.append(END_TURN)
    return tuple(out)


def default_action(state: TakiState, seat: int) -> TakiAction:
    """The documented default the referee applies after a fault (and for every decision of a forfeited seat): it
    keeps the game moving, so a silent seat cannot stall a match by drawing the whole deck. ``React(False)`` for a
    Breaker question; else the first legal play in ``legal_actions`` order (the lowest playable card; its
    "last card" declaration when that is allowed; a Change Color names the first colour, red); else ``Draw``;
    else ``EndTurn``. Raises ``IllegalActionError`` when ``seat`` has no decision pending."""
    legal = legal_actions(state, seat)
    if not legal:
        raise IllegalActionError(f"no default action for seat {seat!r}: it has no decision pending")
    if state.mode == STEP_REACT:
        return REACT_NO
    first = legal[0]
    if type(first) is PlayCard:
        for action in legal:
            if type(action) is not PlayCard or action.card != first.card or action.color != first.color:
                break
            if action.last_card and not action.close_run:
                return action
        return first
    return first


def _color_name(color: int) -> str:
    return COLOR_TOKENS[color]


def _play_refusal(state: TakiState, seat: int, action: PlayCard) -> str | None:
    """Why ``action`` may not be played now, or None when it is legal (mirrors ``legal_actions``)."""
    card = action.card
    hand = state.hands[seat]
    if type(card) is not int or card not in hand:
        if not is_card(card):
            return f"{card!r} is not a Taki card"
        return f"{_TOKENS[card]} is not in seat {seat}'s hand"
    color, close, declare = action.color, action.close_run, action.last_card
    if color is not None or card == CHCOLOR or close is not False or declare is not False:
        if not isinstance(close, bool) or not isinstance(declare, bool):
            return "close_run and last_card must be True or False"
        if card == CHCOLOR:
            if not _is_int(color) or not 0 <= color < 4:  # type: ignore[operator]
                return f"a Change Color must name a colour 0..3 (R, Y, G, B), got color={color!r}"
        elif color is not None:
            return f"only a Change Color names a colour; {_TOKENS[card]} takes color=None"
        if declare and len(hand) != 2:
            return (
                "'last card' may be declared only on a play that leaves exactly one card; "
                f"this one leaves {len(hand) - 1}"
            )
    mode = state.mode
    if mode == STEP_TURN:
        if state.stack:
            if CARD_SYMBOL[card] != PLUS2 and card != KING:
                return f"only a +2 or a King may be played on an active +2 stack of {state.stack}"
        else:
            run = state.run
            if run is not None and (CARD_COLOR[card] == run.color or card == SUPERTAKI):
                return None  # continues the open run (reading 9)
            if not _MATCHING[state.follow_color * _STRIDE + state.follow_symbol][card]:
                return _mismatch(state, card)
    elif mode == STEP_RUN:
        rc = state.run.color  # type: ignore[union-attr]
        if CARD_COLOR[card] == rc or card == SUPERTAKI:
            return None
        if card == CHCOLOR:
            return "a Change Color ends the run by itself: close_run must be False" if close else None
        if CARD_SYMBOL[card] == TAKI:
            return (
                "a player may not follow their own TAKI with a TAKI of another colour "
                f"(run colour {_color_name(rc)})"
            )
        if CARD_COLOR[card] < 0:
            return f"{_TOKENS[card]} may not be played inside one's own run (reading 6)"
        return f"{_TOKENS[card]} is not of the run's colour {_color_name(rc)} (reading 6)"
    elif mode == STEP_PLUS and not _matches(state, card):
        return _mismatch(state, card)
    if close:
        if CARD_SYMBOL[card] == TAKI or card == SUPERTAKI:
            return "a lone TAKI or SuperTaki cannot be closed by its player (reading 8)"
        return "close_run applies only to a card played inside a run"
    return None


def _mismatch(state: TakiState, card: int) -> str:
    return (
        f"{_TOKENS[card]} matches neither the colour to follow ({_color_name(state.follow_color)}) "
        f"nor the symbol to follow ({SYMBOL_TOKENS[state.follow_symbol]})"
    )


def _draw_refusal(state: TakiState, seat: int) -> str | None:
    mode = state.mode
    if mode == STEP_TURN:
        if state.stack or state.config.draw_when_playable or not _has_play(state, state.hands[seat]):
            return None
        return "drawing is not allowed while a card can be played (config draw_when_playable=False)"
    if mode == STEP_PLUS:
        if state.config.plus_draw_when_playable or not _has_play(state, state.hands[seat]):
            return None
        return "after a Plus a second card must be played when one is legal; drawing is refused (reading 4)"
    if mode == STEP_RUN:
        return "no drawing inside one's own run: play a card of the run or end the run (reading 3)"
    return "no drawing after a King: play any card or end the turn (reading 3)"


def _end_refusal(state: TakiState) -> str | None:
    mode = state.mode
    if mode == STEP_RUN or mode == STEP_KING:
        return None
    if mode == STEP_PLUS:
        return "a Plus owes a second card: play one, or draw when none can be played (reading 4)"
    return "EndTurn ends a run or the turn after a King; at the start of a turn play a card or draw"


