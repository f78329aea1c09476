"""Taki rules engine: pure functions over frozen state, no I/O, no global randomness.

Implements ``../shared/rules/taki.md`` (the rules page of the project, including its 15 "Readings fixed", cited
here as "reading N"); the original Swedish text is in ``../shared/seeds/``. Types are in ``state.py``, cards in
``cards.py``, the effects of actions in ``effects.py``.

Flow: ``new_game`` -> repeated ``apply(state, seat, action)`` for the one seat in ``pending_seats`` ->
``is_over`` / ``outcome``. A turn may take several decisions (a run, a King's free card, a Plus's owed card);
a +3 opens a reaction window in which Breaker holders answer ``React`` out of turn.

Chance: the deal comes from ``deal_game(seed, ...)`` (``random.Random("taki:<seed>:deal")`` shuffles the deck;
the first ``hand_size`` cards go to seat 0, the next to seat 1, ...; the rest is the draw pile, top first) or is
given explicitly. The colourless first cards put back use ``random.Random("taki:<seed>:start")`` and reshuffle
``k`` (0, 1, ...) uses ``random.Random("taki:<seed>:reshuffle:<k>")``: string seeds are hashed with SHA-512, so a
game replays identically in every process. A game built from an explicit deal without a seed uses seed 0.

Choices this engine makes where taki.md leaves one (each has a test):

* Start: a colourless top card goes back into the draw pile at ``randint(0, m)`` of the ``m`` cards left (0 = on
  top, turned again); each return is a public ``"return"`` event. A coloured first card's command is ignored.
* Declarations ride on the play: ``PlayCard.close_run`` closes a run with that card; ``EndTurn`` ends one's own
  run left open (a continued open run ends closed). A Change Color inside a run ends it closed (a run left "open"
  would contradict "the named colour leads"); its action takes no ``close_run``.
* A card of an open run's colour (or a SuperTaki) played by the seat taking the next turn continues the run
  (reading 9); any other card or a draw ends it. With two players, a Stop at the end of a run left open gives the
  same seat the next turn, and it may continue its own run (then it must close it, like any continuation).
* A +2 as a run's last card ends the run even when left open (reading 9: the stack is answered first).
* A Plus that empties the hand is never a win, in the stairs too: its player draws one card and the turn ends
  (reading 4). (That draw always finds a card: at worst a reshuffle brings back the card the Plus covered.)
* Stairs: stages run from ``hand_size`` (8) down to 1; emptying the hand at stage 1 wins; the winner's stage is
  shown as 0. The score ``stage * 1000 + cards held`` orders exactly "by stage reached, then cards held". A stage
  draw short of cards is forgiven like any draw; only a play empties a hand (and changes the stage).
* The +3 draws (reading 10) and the last-card check happen inside the ``apply`` that resolves them; a declined
  Breaker question leaves no event. A seat's ``unseen`` history restarts at each of its decisions (declines too).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from ..base import IllegalActionError, Outcome, RulesError, competition_ranks
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
    card_token,
    deck,
    is_card,
)
from .effects import do_draw, do_end, do_play, do_react, record, thaw
from .state import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    REACT,
    STEP_KING,
    STEP_OVER,
    STEP_PLUS,
    STEP_REACT,
    STEP_RUN,
    STEP_STACK,
    STEP_TURN,
    TURN,
    Draw,
    EndTurn,
    Event,
    PlayCard,
    React,
    TakiAction,
    TakiConfig,
    TakiDeal,
    TakiState,
    TakiView,
)

STAIRS_SCORE_PER_STAGE = 1000  # more than any hand can hold (116 cards)

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
    [tuple(_PLAYS[card][last] if ok and _PLAYS[card] else () for card, ok in enumerate(matching)) for matching in _MATCHING]
    for last in (0, _LAST)
)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ------------------------------------------------------------------------------ deals and new games


def _check_players(num_players: object) -> int:
    if not _is_int(num_players) or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:  # type: ignore[operator]
        raise RulesError(f"Taki is played by {MIN_PLAYERS}..{MAX_PLAYERS} players, got {num_players!r}")
    return num_players  # type: ignore[return-value]


def _check_config(config: object) -> TakiConfig:
    if config is None:
        return TakiConfig()
    if not isinstance(config, TakiConfig):
        raise RulesError(f"config must be a TakiConfig, got {config!r}")
    return config


def _check_seed(seed: object) -> int:
    if not _is_int(seed):
        raise RulesError(f"a Taki seed must be a whole number, got {seed!r}")
    return seed  # type: ignore[return-value]


def deal_game(seed: int, num_players: int, config: TakiConfig | None = None) -> TakiDeal:
    """The deal derived from ``seed`` alone: the 116-card deck shuffled by ``random.Random("taki:<seed>:deal")``;
    seat 0 gets the first ``hand_size`` cards, seat 1 the next, ...; the rest is the draw pile, top first.

    Raises ``RulesError`` for a non-integer seed, a player count outside 2..10 or a bad config."""
    seed = _check_seed(seed)
    n = _check_players(num_players)
    size = _check_config(config).hand_size
    cards = list(deck())
    random.Random(f"taki:{seed}:deal").shuffle(cards)
    hands = tuple(tuple(cards[s * size : (s + 1) * size]) for s in range(n))
    return TakiDeal(hands=hands, draw_pile=tuple(cards[n * size :]))


def _as_cards(value: object, where: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise RulesError(f"{where} must be a sequence of cards, got {value!r}")
    for card in value:
        if not is_card(card):
            raise RulesError(f"{where}: {card!r} is not a Taki card (see cards.card_from_token)")
    return tuple(value)


def _validate_deal(deal: object, n: int, config: TakiConfig) -> TakiDeal:
    """A deal that can carry a game: ``n`` hands of ``hand_size`` cards and a draw pile, together exactly the
    116-card deck. (With at most 10 hands of at most 8 cards, the draw pile then always holds a coloured card to
    start the discard pile.)"""
    if not isinstance(deal, TakiDeal):
        raise RulesError(f"deal must be a TakiDeal, got {deal!r}")
    if isinstance(deal.hands, (str, bytes)) or not isinstance(deal.hands, (tuple, list)) or len(deal.hands) != n:
        raise RulesError(f"a {n}-player deal needs {n} hands, got {deal.hands!r}")
    size = config.hand_size
    hands = tuple(_as_cards(h, f"hand of seat {s}") for s, h in enumerate(deal.hands))
    for seat, hand in enumerate(hands):
        if len(hand) != size:
            raise RulesError(f"the hand of seat {seat} holds {len(hand)} cards, the deal gives {size} to each seat")
    pile = _as_cards(deal.draw_pile, "draw_pile")
    counts = Counter(c for h in hands for c in h) + Counter(pile)
    wanted = Counter(deck())
    if counts != wanted:
        extra = sorted((counts - wanted).elements())
        missing = sorted((wanted - counts).elements())
        raise RulesError(
            "the deal is not the 116-card Taki deck: "
            f"too many {[_TOKENS[c] for c in extra]}, missing {[_TOKENS[c] for c in missing]}"
        )
    return TakiDeal(hands=hands, draw_pile=pile)


def new_game(
    num_players: int,
    config: TakiConfig | None = None,
    *,
    seed: int | None = None,
    deal: TakiDeal | None = None,
) -> TakiState:
    """A new game from ``deal`` when given (validated), else from ``deal_game(seed, ...)``; ``seed`` (0 when only
    a deal is given) also drives the later chance events. The top card of the draw pile starts the discard pile;
    a colourless one goes back at a uniformly random place first (reading 1). Seat 0 moves first, ascending.

    Raises ``RulesError`` for a player count outside 2..10, a bad config or seed, neither seed nor deal, or a deal
    that is not ``num_players`` hands of ``hand_size`` cards plus a draw pile making up exactly the deck."""
    n = _check_players(num_players)
    config = _check_config(config)
    if seed is not None:
        seed = _check_seed(seed)
    if deal is None:
        if seed is None:
            raise RulesError("a Taki game needs a seed or an explicit deal")
        deal = deal_game(seed, n, config)
    else:
        deal = _validate_deal(deal, n, config)
        if seed is None:
            seed = 0
    pile = deal.draw_pile
    events: list[Event] = []
    rng: random.Random | None = None
    while CARD_COLOR[pile[0]] < 0:  # reading 1: put back at one of the len(rest) + 1 places, top included
        if rng is None:
            rng = random.Random(f"taki:{seed}:start")
        card, rest = pile[0], pile[1:]
        place = rng.randint(0, len(rest))
        pile = rest[:place] + (card,) + rest[place:]
        events.append(Event("return", card=_TOKENS[card]))
    first = pile[0]
    events.append(Event("lead", card=_TOKENS[first]))
    history = tuple(events)
    return TakiState(
        num_players=n,
        config=config,
        seed=seed,
        deal=deal,
        hands=tuple(tuple(sorted(h)) for h in deal.hands),
        draw_pile=pile[1:],
        discard_pile=(first,),
        follow_color=CARD_COLOR[first],  # a coloured first card's command is ignored ("Setup and turn")
        follow_symbol=CARD_SYMBOL[first],
        stack=0,
        direction=1,
        current=0,
        mode=STEP_TURN,
        react_seat=-1,
        run=None,
        last_play=False,
        declared=False,
        turn=0,
        stages=(config.hand_size,) * n if config.stairs else (),
        winner=None,
        reshuffles=0,
        unseen=(history,) * n,
    )


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


def _continues(state: TakiState, card: int) -> bool:
    """At the start of a turn, ``card`` continues the open run (reading 9)."""
    run = state.run
    return run is not None and (CARD_COLOR[card] == run.color or card == SUPERTAKI)


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
    """The documented default the referee applies after a fault: ``React(False)`` for a Breaker question;
    ``Draw`` when drawing is legal; else ``EndTurn`` when legal (a run, after a King); else the first legal action
    (a Plus's owed card: the lowest playable card, without declarations). Raises ``IllegalActionError`` when
    ``seat`` has no decision pending."""
    legal = legal_actions(state, seat)
    if not legal:
        raise IllegalActionError(f"no default action for seat {seat!r}: it has no decision pending")
    if state.mode == STEP_REACT:
        return REACT_NO
    if legal[-1] is DRAW or legal[-1] is END_TURN:
        return legal[-1]
    return legal[0]


# ------------------------------------------------------------------------------ apply


def _refuse(state: TakiState, seat: object, action: object, reason: str) -> IllegalActionError:
    return IllegalActionError(f"{action!r} by seat {seat!r} refused (turn {state.turn}): {reason}")


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
        elif _continues(state, card):
            return None
        elif not _matches(state, card):
            return _mismatch(state, card)
    elif mode == STEP_RUN:
        rc = state.run.color  # type: ignore[union-attr]
        if CARD_COLOR[card] == rc or card == SUPERTAKI:
            return None
        if card == CHCOLOR:
            return "a Change Color ends the run by itself: close_run must be False" if close else None
        if CARD_SYMBOL[card] == TAKI:
            return f"a player may not follow their own TAKI with a TAKI of another colour (run colour {_color_name(rc)})"
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


def apply(state: TakiState, seat: int, action: TakiAction) -> TakiState:
    """The state after ``seat`` takes ``action``; never mutates ``state``. Carries out the action's effects up to
    the next decision: the card's action, the end of the turn (last-card penalty, next seat), a +3 window.

    Raises ``IllegalActionError`` (naming the action, the seat and the reason) when the game is over, the seat
    has no decision pending, or the action is not legal now."""
    mode = state.mode
    pending = state.react_seat if mode == STEP_REACT else state.current
    if seat != pending or type(seat) is not int or mode == STEP_OVER:
        if mode == STEP_OVER:
            raise _refuse(state, seat, action, "the game is over")
        if _is_int(seat) and seat == pending:
            pass  # an int subclass (not bool) naming the pending seat
        elif _is_int(seat) and 0 <= seat < state.num_players:
            raise _refuse(state, seat, action, f"it is seat {pending}'s decision, not seat {seat}'s")
        else:
            raise _refuse(state, seat, action, f"no such seat in a {state.num_players}-player game")
    kind = type(action)
    ev: list[Event] = []
    if mode == STEP_REACT:
        if kind is not React:
            raise _refuse(state, seat, action, f"the pending decision is {REACT}, which takes a React")
        if not isinstance(action.play, bool):  # type: ignore[union-attr]
            raise _refuse(state, seat, action, "React.play must be True or False")
        new, w = thaw(state)
        do_react(w, ev, seat, action.play)  # type: ignore[union-attr]
        record(w, ev, seat)
        return new
    if kind is PlayCard:
        reason = _play_refusal(state, seat, action)  # type: ignore[arg-type]
        if reason is not None:
            raise _refuse(state, seat, action, reason)
        new, w = thaw(state)
        do_play(w, ev, seat, action.card, action.color, action.close_run, action.last_card)  # type: ignore[union-attr]
    elif kind is Draw:
        reason = _draw_refusal(state, seat)
        if reason is not None:
            raise _refuse(state, seat, action, reason)
        new, w = thaw(state)
        do_draw(w, ev, seat)
    elif kind is EndTurn:
        reason = _end_refusal(state)
        if reason is not None:
            raise _refuse(state, seat, action, reason)
        new, w = thaw(state)
        do_end(w, ev, seat)
    elif kind is React:
        raise _refuse(state, seat, action, "no +3 Breaker question is pending; this is a TAKI_TURN decision")
    else:
        raise _refuse(state, seat, action, "a TAKI_TURN decision takes a PlayCard, Draw or EndTurn")
    # effects.record, inlined on the hottest path: the seat's unseen events restart, the others' grow.
    batch = tuple(ev)
    grown = [u + batch for u in w["unseen"]]
    grown[seat] = batch
    w["unseen"] = tuple(grown)
    return new


# ------------------------------------------------------------------------------ views and results


def observe(state: TakiState, seat: int) -> TakiView:
    """The view of ``seat``: own hand, public table, the events since its last decision and, when it has a
    decision pending, the legal actions; never another seat's cards, the draw pile's order, the seed or which
    seat is asked about a Breaker. Raises ``RulesError`` for a seat outside 0..num_players-1."""
    if not _is_int(seat) or not 0 <= seat < state.num_players:
        raise RulesError(f"no seat {seat!r} in a {state.num_players}-player game")
    kind = decision_kind(state, seat)
    step: str | None = None
    if kind is not None:
        step = STEP_STACK if state.mode == STEP_TURN and state.stack else state.mode
    return TakiView(
        seat=seat,
        num_players=state.num_players,
        config=state.config,
        kind=kind,
        step=step,
        legal=legal_actions(state, seat) if kind is not None else (),
        hand=state.hands[seat],
        leading=state.discard_pile[-1],
        follow_color=state.follow_color,
        follow_symbol=state.follow_symbol,
        stack=state.stack,
        run=state.run,
        current_seat=state.current,
        direction=state.direction,
        counts=tuple(len(h) for h in state.hands),
        stages=state.stages,
        draw_pile_size=len(state.draw_pile),
        discard_pile_size=len(state.discard_pile),
        turn=state.turn,
        history=state.unseen[seat],
        winner=state.winner,
    )


def is_over(state: TakiState) -> bool:
    """True once a seat won or the turn cap was reached."""
    return state.mode == STEP_OVER


def scores(state: TakiState) -> tuple[int, ...]:
    """Each seat's score, lower is better: the cards it holds (the winner 0); stairs: ``stage * 1000 + cards``
    (the winner's stage is 0), which orders by stage reached, then cards held (taki.md "End", "stairs")."""
    if state.config.stairs:
        return tuple(st * STAIRS_SCORE_PER_STAGE + len(h) for st, h in zip(state.stages, state.hands))
    return tuple(len(h) for h in state.hands)


def outcome(state: TakiState) -> Outcome:
    """Final ``scores`` and standard competition ranks (the winner alone first; at the turn cap every seat by its
    score, equal scores sharing a rank). Raises ``RulesError`` if the game is not over."""
    if state.mode != STEP_OVER:
        raise RulesError(f"the game is not over (turn {state.turn}, seat {state.current} to play)")
    result = scores(state)
    return Outcome(scores=result, ranks=competition_ranks(result, lower_is_better=True))


def action_text(action: Any) -> str:
    """A short human text of an action (``"R5"``, ``"CHCOLOR B"``, ``"R+2 close last"``, ``"draw"``, ``"end"``,
    ``"break"``/``"decline"``), for logs and tests."""
    if isinstance(action, PlayCard):
        parts = [card_token(action.card) if is_card(action.card) else repr(action.card)]
        if action.color is not None:
            parts.append(COLOR_TOKENS[action.color] if _is_int(action.color) and 0 <= action.color < 4 else "?")
        if action.close_run:
            parts.append("close")
        if action.last_card:
            parts.append("last")
        return " ".join(parts)
    if isinstance(action, Draw):
        return "draw"
    if isinstance(action, EndTurn):
        return "end"
    if isinstance(action, React):
        return "break" if action.play else "decline"
    return repr(action)


__all__ = [
    "DRAW",
    "END_TURN",
    "REACT_NO",
    "REACT_YES",
    "action_text",
    "apply",
    "deal_game",
    "decision_kind",
    "default_action",
    "is_over",
    "legal_actions",
    "new_game",
    "observe",
    "outcome",
    "pending_seats",
    "scores",
]
