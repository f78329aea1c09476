"""Take 5! types: the rule constants, the config, a deal, the actions, the public records of play, a seat's view
and the complete state, with the card facts they need (bullheads, target row). The engine that moves a state is
``rules.py``; both implement ``docs/rules/take5.md``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..base import GameInfo, RulesError, check_config, rule

GAME_ID = "take5"
DECK_SIZE = 104
HAND_SIZE = 10
NUM_ROWS = 4
ROW_CAPACITY = 5  # a row holds at most 5 cards; the 6th card takes them (rule 3)
MIN_PLAYERS = 2
MAX_PLAYERS = 10
# Highest accepted bullhead limit. Every hand moves at least one bullhead into the totals (10 * players >= 20 cards
# meet 4 rows with 16 free places), so a game lasts at most players * limit + 1 hands; the cap keeps a match (and
# a worker slot) from running for days. The rules' default is 66.
MAX_LIMIT = 1000

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
    order=0,  # the SDK's games in this order: the first is the CLI's default --game
)

Phase = Literal["draft", "choose", "row", "over"]
LimitRule = Literal["at_least", "more_than"]
_LIMIT_RULES = ("at_least", "more_than")


@dataclass(frozen=True)
class Take5Config:
    """Rule options (take5.md, "The game" and "Variants").

    Attributes:
        limit: bullhead limit checked after each complete hand (default 66).
        limit_rule: ``"at_least"`` (total >= limit ends the game, default) or ``"more_than"`` (total > limit).
        known_cards: variant 1, only cards 1..(10 * players + 4) are used.
        draft: variant 2, the cards in play lie face up and are drafted one at a time in seat order.
    Each field is a declared rule option (``rule``: the CLI options come from it). Raises ``RulesError`` (from
    ``__post_init__``, ``check_config``) for a limit outside 1..``MAX_LIMIT`` (1000), an unknown limit_rule or a
    variant that is not True or False.
    """

    limit: int = rule(66, "bullhead limit checked after each complete hand", minimum=1, maximum=MAX_LIMIT,
                      unit="BULLHEADS")
    limit_rule: LimitRule = rule("at_least", "the game ends when a total is at least (>=) or more than (>) the limit",
                                 choices=_LIMIT_RULES)
    known_cards: bool = rule(False, "only cards 1..10*players+4", variant="known-cards")
    draft: bool = rule(False, "the cards are drafted face up", variant="draft")

    def __post_init__(self) -> None:
        check_config(self)


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


Take5Action = ChooseCard | ChooseRow | DraftPick


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
        previous_history: during turn 0 of a hand after the first (and its draft), the completed turns of the
            previous hand, whose last turn the seat has not seen yet; () otherwise.
        kind: the decision pending for this seat (``CHOOSE_CARD``/``CHOOSE_ROW``/``DRAFT_PICK``) or None.
        resolving_card: CHOOSE_ROW only, the seat's card that is lower than every row end, else None.
        revealed: CHOOSE_ROW only, all cards revealed this turn ascending, else ().
        draft_pool: DRAFT_PICK / draft phase only, the cards still to pick, ascending.
        draft_picks: draft variant, the picks of this hand so far in order.
        history_first_turn / previous_history_first_turn: 0 (``history`` / ``previous_history`` are complete), as
            ``observe`` gives and the SDK gives its bots; only a bot that lost its state mid-match (restarted) may
            get a view whose history starts later: at turn ``history_first_turn`` of the hand (the earlier turns
            went to the bot's previous process; protocol: ``Take5View.history_first_turn``).
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
    previous_history: tuple[Turn, ...] = ()
    kind: str | None = None
    resolving_card: int | None = None
    revealed: tuple[Pick, ...] = ()
    draft_pool: tuple[int, ...] = ()
    draft_picks: tuple[Pick, ...] = ()
    history_first_turn: int = 0
    previous_history_first_turn: int = 0

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
        hands: each seat's cards, ascending; a chosen card stays in the hand until the reveal.
        rows: the 4 rows (empty tuples during the draft). totals: bullheads from completed hands.
        piles: each seat's penalty pile this hand (cards). history: completed turns of this hand.
        chosen: each seat's hidden choice this turn or None (all None again once revealed). revealed: this
        turn's (seat, card) in ascending card order once all have chosen, kept while resolution waits for a
        rule-4 row choice; resolved: how many of them are resolved; current_plays: their Plays.
        draft_pool / draft_picks: draft variant state. dealt: the deals actually used so far, one per hand.
        previous_history: the completed turns of the previous hand (public), so that a reader can account for
        the totals it added.
    In phase ``"over"`` the hands are empty and rows, piles and history are those of the last hand, whose
    bullheads are already counted in ``totals``.
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
    previous_history: tuple[Turn, ...] = ()



def _bullheads_of(card: int) -> int:
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


# Index = card; index 0 is unused. Built once from the rule text's tests, read by every hot path.
_BULLHEADS: tuple[int, ...] = (0,) + tuple(_bullheads_of(c) for c in range(1, DECK_SIZE + 1))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def bullheads(card: int) -> int:
    """Bullheads (penalty points) of ``card`` (1..104), tested in order: 55 -> 7; other multiples of 11 -> 5;
    multiples of 10 -> 3; other multiples of 5 -> 2; else 1. Raises ``RulesError`` outside 1..104."""
    if not _is_int(card) or not 1 <= card <= DECK_SIZE:
        raise RulesError(f"no Take 5 card {card!r}: cards are whole numbers 1..{DECK_SIZE}")
    return _BULLHEADS[card]



def target_row(rows: tuple[tuple[int, ...], ...], card: int) -> int | None:
    """Rules 1-2: the row whose end is highest below ``card``; None when every row end is above (rule 4).

    Empty rows (only during the draft) are never a target."""
    best: int | None = None
    best_end = 0
    for index, row in enumerate(rows):
        if row:
            end = row[-1]
            if best_end < end < card:
                best, best_end = index, end
    return best


def penalty_if_played(rows: tuple[tuple[int, ...], ...], card: int) -> int | None:
    """Bullheads ``card`` takes if it resolves now: the full row's bullheads on rule 3, 0 when it simply extends
    a row, None when rule 4 applies (the cost is then the seat's choice)."""
    index = target_row(rows, card)
    if index is None:
        return None
    row = rows[index]
    if len(row) >= ROW_CAPACITY:
        return sum(_BULLHEADS[c] for c in row)
    return 0


