"""Taki rules engine: pure functions over frozen state, no I/O, no global randomness.

Implements ``docs/rules/taki.md`` (the rules page of the project, including its 15 "Readings fixed", cited
here as "reading N"); the original Swedish text is in ``../shared/seeds/``. Types are in ``state.py``, cards in
``cards.py``, legality and the pending decision in ``legal.py`` (re-exported here), the effects of actions in
``effects.py``.

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
    BLUE,
    BREAKER,
    CARD_COLOR,
    CARD_SYMBOL,
    CHCOLOR,
    COLOR_TOKENS,
    COLORS,
    DECK_SIZE,
    GREEN,
    KING,
    PLUS3,
    RED,
    SUPERTAKI,
    SYMBOL_TOKENS,
    YELLOW,
    card_color,
    card_from_token,
    card_symbol,
    card_token,
    color_from_token,
    color_token,
    deck,
    is_card,
)
from .effects import do_draw, do_end, do_play, do_react, record, thaw
from .legal import (
    DRAW,
    END_TURN,
    REACT_NO,
    REACT_YES,
    _draw_refusal,
    _end_refusal,
    _is_int,
    _play_refusal,
    decision_kind,
    default_action,
    legal_actions,
    pending_seats,
)
from .state import (
    GAME_ID,
    INFO,
    MAX_PLAYERS,
    MIN_PLAYERS,
    REACT,
    STEP_OVER,
    STEP_REACT,
    STEP_STACK,
    STEP_TURN,
    TURN,
    Draw,
    EndTurn,
    Event,
    PlayCard,
    React,
    RunInfo,
    TakiAction,
    TakiConfig,
    TakiDeal,
    TakiState,
    TakiView,
)

STAIRS_SCORE_PER_STAGE = 1000  # more than any hand can hold (116 cards)

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


# ------------------------------------------------------------------------------ apply


def _refuse(state: TakiState, seat: object, action: object, reason: str) -> IllegalActionError:
    return IllegalActionError(f"{action!r} by seat {seat!r} refused (turn {state.turn}): {reason}")


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


__all__ = [  # the engine's public surface: its cards, its types (state.py) and its functions
    "BLUE", "BREAKER", "CHCOLOR", "COLORS", "COLOR_TOKENS", "DECK_SIZE", "GREEN", "KING", "PLUS3", "RED", "SUPERTAKI",
    "SYMBOL_TOKENS", "YELLOW", "card_color", "card_from_token", "card_symbol", "card_token", "color_from_token",
    "color_token", "deck",
    "GAME_ID", "INFO", "REACT", "TURN", "Draw", "EndTurn", "Event", "PlayCard", "React", "RunInfo", "TakiAction",
    "TakiConfig", "TakiDeal", "TakiState", "TakiView",
    "DRAW", "END_TURN", "REACT_NO", "REACT_YES",
    "action_text", "apply", "deal_game", "decision_kind", "default_action", "is_over", "legal_actions", "new_game",
    "observe", "outcome", "pending_seats", "scores",
]
