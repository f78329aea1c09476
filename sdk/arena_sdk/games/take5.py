"""Take 5! (6 nimmt!) rules engine: pure functions over frozen state, no I/O, no global randomness.

Implements ``../shared/rules/take5.md`` (the rules page of the project); the original Dutch texts are in
``../shared/seeds/``. Rule numbers in docstrings refer to that page ("rule 4" = too low, the seat chooses a row).

Flow of a game (``new_game`` -> repeated ``apply`` -> ``is_over`` / ``outcome``):

* A hand starts from a ``Take5Deal``: explicit (``deals=``) or derived from the seed (``deal_hand``).
* Draft variant: phase ``"draft"``; seats pick one card each in seat order (seat 0 first) until every seat holds
  10 cards; the 4 cards left start the rows (ascending order of the leftovers gives rows 0..3).
* Phase ``"choose"``: every seat that has not chosen yet is pending (simultaneous choice). Choices are hidden
  from the other seats until the last seat has chosen; then all are revealed and resolved lowest first.
* Phase ``"row"``: rule 4 struck the seat whose card is resolving; only that seat is pending (``ChooseRow``).
  Resolution then continues with the next card, targets recomputed after every card.
* After turn 10 (index 9) the bullheads of each penalty pile are added to the totals. If a total reaches the limit
  (``>= limit`` by default, ``> limit`` with ``limit_rule="more_than"``) the game is over (phase ``"over"``);
  the limit is never checked mid-hand. Otherwise the next hand is dealt.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal, Union

from .base import GameInfo, IllegalActionError, Outcome, RulesError, competition_ranks

GAME_ID = "take5"
DECK_SIZE = 104
HAND_SIZE = 10
NUM_ROWS = 4
ROW_CAPACITY = 5  # a row holds at most 5 cards; the 6th card takes them (rule 3)
MIN_PLAYERS = 2
MAX_PLAYERS = 10

CHOOSE_CARD = "TAKE5_CHOOSE_CARD"
CHOOSE_ROW = "TAKE5_CHOOSE_ROW"
DRAFT_PICK = "TAKE5_DRAFT_PICK"

INFO = GameInfo(
    game=GAME_ID,
    title="Take 5!",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    simultaneous=True,
    imperfect_information=True,
    decision_kinds=(CHOOSE_CARD, CHOOSE_ROW, DRAFT_PICK),
    lower_score_is_better=True,
)

Phase = Literal["draft", "choose", "row", "over"]
LimitRule = Literal["at_least", "more_than"]


@dataclass(frozen=True)
class Take5Config:
    """Rule options (take5.md, "The game" and "Variants").

    Attributes:
        limit: bullhead limit checked after each complete hand (default 66).
        limit_rule: ``"at_least"`` (total >= limit ends the game, default) or ``"more_than"`` (total > limit).
        known_cards: variant 1, only cards 1..(10 * players + 4) are used.
        draft: variant 2, the cards in play lie face up and are drafted one at a time in seat order.
    Raises ``RulesError`` (from ``__post_init__``) for a limit < 1 or an unknown limit_rule.
    """

    limit: int = 66
    limit_rule: LimitRule = "at_least"
    known_cards: bool = False
    draft: bool = False


@dataclass(frozen=True)
class Take5Deal:
    """The chance outcome of one hand.

    Normal play: ``hands`` holds 10 cards per seat (seat order) and ``rows`` the 4 face-up row starters
    (row 0..3); ``pool`` is empty. Draft variant: ``pool`` holds the 10 * players + 4 face-up cards in play,
    ``hands`` and ``rows`` are empty (the rows are the 4 cards left after the draft).
    """

    hands: tuple[tuple[int, ...], ...] = ()
    rows: tuple[int, ...] = ()
    pool: tuple[int, ...] = ()


@dataclass(frozen=True)
class ChooseCard:
    """Play ``card`` from the hand this turn (decision ``TAKE5_CHOOSE_CARD``)."""

    card: int


@dataclass(frozen=True)
class ChooseRow:
    """Rule 4: take row ``row`` (0..3) and start it anew with the resolving card (``TAKE5_CHOOSE_ROW``)."""

    row: int


@dataclass(frozen=True)
class DraftPick:
    """Draft variant: take ``card`` from the face-up pool into the hand (``TAKE5_DRAFT_PICK``)."""

    card: int


Take5Action = Union[ChooseCard, ChooseRow, DraftPick]


@dataclass(frozen=True)
class Play:
    """One revealed card and what happened to it (public).

    Attributes: seat; card; row (0..3) where the card ended; taken: the cards moved to the seat's penalty pile
    (empty when the card extended a row); chose_row: True when rule 4 applied.
    """

    seat: int
    card: int
    row: int
    taken: tuple[int, ...] = ()
    chose_row: bool = False


@dataclass(frozen=True)
class Turn:
    """A completed turn: its index in the hand (0..9) and its plays in resolution order (ascending card)."""

    turn: int
    plays: tuple[Play, ...]


@dataclass(frozen=True)
class Pick:
    """A (seat, card) pair: a draft pick, or a card revealed this turn."""

    seat: int
    card: int


@dataclass(frozen=True)
class Take5View:
    """What one seat may see (``observe``), and nothing else.

    Attributes:
        seat, num_players, config: who is looking, at what game.
        hand_number: 0-based hand of the game; turn: 0..9 within the hand (0 during the draft).
        hand: the seat's own cards, ascending.
        rows: the 4 rows, each ascending, 1..5 cards (empty tuples only during the draft).
        totals: bullheads of every seat from completed hands; hand_penalties: bullheads taken this hand so far.
        history: completed turns of this hand.
        kind: the decision pending for this seat (``CHOOSE_CARD``/``CHOOSE_ROW``/``DRAFT_PICK``) or None.
        resolving_card: CHOOSE_ROW only, the seat's card that is lower than every row end, else None.
        revealed: CHOOSE_ROW only, all cards revealed this turn ascending, else ().
        draft_pool: DRAFT_PICK / draft phase only, the cards still to pick, ascending.
        draft_picks: draft variant, the picks of this hand so far in order.
    """

    seat: int
    num_players: int
    config: Take5Config
    hand_number: int
    turn: int
    hand: tuple[int, ...]
    rows: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    hand_penalties: tuple[int, ...]
    history: tuple[Turn, ...] = ()
    kind: str | None = None
    resolving_card: int | None = None
    revealed: tuple[Pick, ...] = ()
    draft_pool: tuple[int, ...] = ()
    draft_picks: tuple[Pick, ...] = ()

    def target_row(self, card: int) -> int | None:
        """Row (0..3) that ``card`` would go to now by rules 1-2, or None when rule 4 applies."""
        return target_row(self.rows, card)

    def penalty(self, card: int) -> int | None:
        """Bullheads ``card`` would take if it resolved now alone (rule 3 overflow or 0), None when rule 4."""
        return penalty_if_played(self.rows, card)

    def row_bullheads(self, row: int) -> int:
        """Bullheads in row ``row`` (0..3)."""
        return sum(bullheads(c) for c in self.rows[row])


@dataclass(frozen=True)
class Take5State:
    """Complete, immutable state of a game. Build with ``new_game``; change only with ``apply``.

    Attributes (read them, never mutate):
        num_players, config, seed (None when only explicit deals drive the game), deals (explicit deals for hands
        0, 1, ...; later hands come from the seed).
        hand_number, turn, phase.
        hands: each seat's cards, ascending. rows: the 4 rows. totals: bullheads from completed hands.
        piles: each seat's penalty pile this hand (cards). history: completed turns of this hand.
        chosen: each seat's hidden choice this turn or None. revealed: this turn's (seat, card) in ascending card
        order once all have chosen; resolved: how many of them are resolved; current_plays: their Plays.
        draft_pool / draft_picks: draft variant state. dealt: the deals actually used so far, one per hand.
    """

    num_players: int
    config: Take5Config
    seed: int | None
    deals: tuple[Take5Deal, ...]
    hand_number: int
    turn: int
    phase: Phase
    hands: tuple[tuple[int, ...], ...]
    rows: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    piles: tuple[tuple[int, ...], ...]
    history: tuple[Turn, ...] = ()
    chosen: tuple[int | None, ...] = ()
    revealed: tuple[Pick, ...] = ()
    resolved: int = 0
    current_plays: tuple[Play, ...] = ()
    draft_pool: tuple[int, ...] = ()
    draft_picks: tuple[Pick, ...] = ()
    dealt: tuple[Take5Deal, ...] = field(default=())


def bullheads(card: int) -> int:
    """Bullheads (penalty points) of ``card`` (1..104), tested in order: 55 -> 7; other multiples of 11 -> 5;
    multiples of 10 -> 3; other multiples of 5 -> 2; else 1. Raises ``RulesError`` outside 1..104."""
    raise NotImplementedError


def deck(num_players: int, config: Take5Config) -> tuple[int, ...]:
    """Cards used in a hand: 1..104, or 1..(10 * num_players + 4) with ``known_cards`` (variant 1)."""
    raise NotImplementedError


def target_row(rows: tuple[tuple[int, ...], ...], card: int) -> int | None:
    """Rules 1-2: the row whose end is highest below ``card``; None when every row end is above (rule 4)."""
    raise NotImplementedError


def penalty_if_played(rows: tuple[tuple[int, ...], ...], card: int) -> int | None:
    """Bullheads ``card`` takes if it resolves now: the full row's bullheads on rule 3, 0 when it simply extends
    a row, None when rule 4 applies (the cost is then the seat's choice)."""
    raise NotImplementedError


def deal_hand(seed: int, hand_number: int, num_players: int, config: Take5Config) -> Take5Deal:
    """The deal of hand ``hand_number`` derived from ``seed`` alone (``random.Random`` seeded with a string of
    game id, seed and hand number; the full deck of the hand is reshuffled every hand, rules step 1)."""
    raise NotImplementedError


def new_game(
    num_players: int,
    config: Take5Config | None = None,
    *,
    seed: int | None = None,
    deals: tuple[Take5Deal, ...] | list[Take5Deal] = (),
) -> Take5State:
    """A new game. Hand ``h`` uses ``deals[h]`` when given, else ``deal_hand(seed, h, ...)``.

    Raises ``RulesError`` for a player count outside 2..10, when neither seed nor deals are given, or for an
    invalid explicit deal (wrong sizes, repeated cards, cards outside the deck of the variant).
    """
    raise NotImplementedError


def pending_seats(state: Take5State) -> tuple[int, ...]:
    """Seats that have a decision to make now, ascending (several in the choose phase, one otherwise)."""
    raise NotImplementedError


def decision_kind(state: Take5State, seat: int) -> str | None:
    """The decision kind pending for ``seat`` (``CHOOSE_CARD``, ``CHOOSE_ROW``, ``DRAFT_PICK``) or None."""
    raise NotImplementedError


def legal_actions(state: Take5State, seat: int) -> tuple[Take5Action, ...]:
    """Every legal action of ``seat`` now, in ascending card / row order; () when the seat is not pending."""
    raise NotImplementedError


def default_action(state: Take5State, seat: int) -> Take5Action:
    """The documented default the referee applies after a fault: the lowest card of the hand (choose), the row
    with the fewest bullheads, lowest index on ties (rule 4), the lowest card of the pool (draft).
    Raises ``IllegalActionError`` when ``seat`` is not pending."""
    raise NotImplementedError


def apply(state: Take5State, seat: int, action: Take5Action) -> Take5State:
    """The state after ``seat`` takes ``action``. Resolves the turn once every seat has chosen, stopping at each
    rule-4 decision; ends the hand after turn 10 and the game at the limit; deals the next hand.

    Raises ``IllegalActionError`` (with the action and the reason in the message) when the seat is not pending,
    the action is of the wrong kind or the card/row is not allowed; ``RulesError`` when a new hand is needed
    but there is neither an explicit deal left nor a seed.
    """
    raise NotImplementedError


def observe(state: Take5State, seat: int) -> Take5View:
    """The view of ``seat``: own hand, rows, totals, public history; never another seat's hand or hidden
    choice, the undealt cards or the seed."""
    raise NotImplementedError


def is_over(state: Take5State) -> bool:
    """True once a complete hand ended with a total at the limit."""
    raise NotImplementedError


def outcome(state: Take5State) -> Outcome:
    """Final totals and standard competition ranks (fewest bullheads first). Raises ``RulesError`` if not over."""
    raise NotImplementedError
