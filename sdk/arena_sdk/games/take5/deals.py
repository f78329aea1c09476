"""Take 5 deals: the checks of a player count and a config, the deck of a hand, the deal derived from a seed
(``deal_hand``) and the validation of an explicit deal.

``rules`` re-exports the public names (``deck``, ``deal_hand``); the engine's functions call the rest.
"""

from __future__ import annotations

import random

from ..base import RulesError
from .state import (
    DECK_SIZE,
    GAME_ID,
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ROWS,
    Take5Config,
    Take5Deal,
    _is_int,
)


def _check_players(num_players: object) -> int:
    if not _is_int(num_players) or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:  # type: ignore[operator]
        raise RulesError(f"Take 5 is played by {MIN_PLAYERS}..{MAX_PLAYERS} players, got {num_players!r}")
    return num_players  # type: ignore[return-value]


def _check_config(config: object) -> Take5Config:
    if not isinstance(config, Take5Config):
        raise RulesError(f"config must be a Take5Config, got {config!r}")
    return config


def _deck_top(num_players: int, config: Take5Config) -> int:
    return HAND_SIZE * num_players + NUM_ROWS if config.known_cards else DECK_SIZE


def deck(num_players: int, config: Take5Config) -> tuple[int, ...]:
    """Cards used in a hand: 1..104, or 1..(10 * num_players + 4) with ``known_cards`` (variant 1).

    Raises ``RulesError`` for a player count outside 2..10."""
    _check_players(num_players)
    return tuple(range(1, _deck_top(num_players, _check_config(config)) + 1))


def deal_hand(seed: int, hand_number: int, num_players: int, config: Take5Config) -> Take5Deal:
    """The deal of hand ``hand_number`` derived from ``seed`` alone (``random.Random`` seeded with a string of
    game id, seed and hand number; the full deck of the hand is reshuffled every hand, rules step 1).

    Normal play: seat ``i`` gets shuffled cards ``10*i .. 10*i+9`` (sorted), the next 4 start rows 0..3.
    Draft variant: the pool is the first ``10 * num_players + 4`` shuffled cards, sorted.
    Raises ``RulesError`` for a seed or hand number that is not a whole number (hand number >= 0) or a bad
    player count. No global random state is read or changed."""
    if not _is_int(seed):
        raise RulesError(f"a Take 5 seed must be a whole number, got {seed!r}")
    if not _is_int(hand_number) or hand_number < 0:
        raise RulesError(f"hand_number must be a whole number >= 0, got {hand_number!r}")
    _check_players(num_players)
    _check_config(config)
    cards = list(range(1, _deck_top(num_players, config) + 1))
    random.Random(f"{GAME_ID}:{seed}:{hand_number}").shuffle(cards)
    in_play = HAND_SIZE * num_players
    if config.draft:
        return Take5Deal(pool=tuple(sorted(cards[: in_play + NUM_ROWS])))
    hands = tuple(tuple(sorted(cards[i : i + HAND_SIZE])) for i in range(0, in_play, HAND_SIZE))
    return Take5Deal(hands=hands, rows=tuple(cards[in_play : in_play + NUM_ROWS]))


def _as_cards(value: object, what: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)):
        raise RulesError(f"{what} must be a sequence of cards, got {value!r}")
    try:
        return tuple(value)  # type: ignore[arg-type]
    except TypeError:
        raise RulesError(f"{what} must be a sequence of cards, got {value!r}") from None


def _validate_deal(deal: object, hand_number: int, num_players: int, config: Take5Config) -> Take5Deal:
    """A copy of an explicit ``deal`` with tuples everywhere; ``RulesError`` naming the first problem found."""
    where = f"deal of hand {hand_number}"
    if not isinstance(deal, Take5Deal):
        raise RulesError(f"{where}: expected a Take5Deal, got {deal!r}")
    top = _deck_top(num_players, config)
    hands = tuple(_as_cards(h, f"{where}: the hand of seat {i}") for i, h in enumerate(_as_cards(deal.hands, where)))
    rows = _as_cards(deal.rows, f"{where}: rows")
    pool = _as_cards(deal.pool, f"{where}: pool")
    if config.draft:
        if hands or rows:
            raise RulesError(f"{where}: the draft variant deals only a pool; hands and rows must be empty")
        wanted = HAND_SIZE * num_players + NUM_ROWS
        if len(pool) != wanted:
            raise RulesError(
                f"{where}: the draft pool holds {len(pool)} cards, {num_players} players need {wanted} "
                f"(10 per seat + 4 rows)"
            )
        cards = pool
    else:
        if pool:
            raise RulesError(f"{where}: a pool is only dealt in the draft variant; deal hands and rows instead")
        if len(hands) != num_players:
            raise RulesError(f"{where}: {len(hands)} hands for {num_players} players")
        for seat, hand in enumerate(hands):
            if len(hand) != HAND_SIZE:
                raise RulesError(f"{where}: seat {seat} is dealt {len(hand)} cards, needs {HAND_SIZE}")
        if len(rows) != NUM_ROWS:
            raise RulesError(f"{where}: {len(rows)} row starters, needs {NUM_ROWS}")
        cards = tuple(c for hand in hands for c in hand) + rows
    seen: set[int] = set()
    for card in cards:
        if not _is_int(card) or not 1 <= card <= top:
            variant = " (known cards variant)" if config.known_cards else ""
            raise RulesError(f"{where}: card {card!r} is outside the deck 1..{top}{variant}")
        if card in seen:
            raise RulesError(f"{where}: card {card} is dealt more than once")
        seen.add(card)
    return Take5Deal(hands=hands, rows=rows, pool=pool)
