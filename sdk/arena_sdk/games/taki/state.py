"""Taki data types: config, deal, actions, public events, the frozen game state and the per-seat view.

Everything here is an immutable value; the engine functions live in ``rules.py``. Rule references ("reading 4")
are to ``docs/rules/taki.md``, section "Readings fixed".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..base import GameInfo, check_config, rule
from .cards import _TOKENS, COLOR_TOKENS, is_card

GAME_ID = "taki"
MIN_PLAYERS = 2
MAX_PLAYERS = 10
HAND_SIZE = 8  # taki.md "Setup and turn": 8 cards each; the stairs start at stage 8
MAX_TURN_CAP = 100_000

TURN = "TAKI_TURN"
"""Decision kind of a turn step: play one card (with its declarations), draw, or ``EndTurn`` (run / King)."""
REACT = "TAKI_REACT"
"""Decision kind of the out-of-turn +3 Breaker question (reading 10): ``React(play=True)`` or ``React(False)``."""

INFO = GameInfo(
    game=GAME_ID,
    title="Taki",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    simultaneous=False,
    imperfect_information=True,
    decision_kinds=(TURN, REACT),
    lower_score_is_better=True,
    order=1,  # the SDK's games in this order: the first is the CLI's default --game
)

# Steps of the pending decision (``TakiState.mode``; the view's ``step`` adds "stack" for a turn facing +2s).
STEP_TURN = "turn"  # start of a turn: play a matching card (or continue an open run) or draw
STEP_STACK = "stack"  # start of a turn facing an active +2 stack: +2, King or draw the stack (view only)
STEP_RUN = "run"  # inside one's own run (or a continued open run): run cards, SuperTaki, Change Color, EndTurn
STEP_PLUS = "plus"  # a Plus owes a second card (reading 4): a matching card, else draw one
STEP_KING = "king"  # after a King: any one card with no matching, or EndTurn (reading 5)
STEP_REACT = "react"  # a seat holding a +3 Breaker is asked (reading 10)
STEP_OVER = "over"


@dataclass(frozen=True)
class TakiConfig:
    """Rule options (every item marked "(config)" in taki.md, plus the hand size).

    Attributes:
        draw_when_playable: drawing is allowed at the start of a turn even when a play is possible (default True;
            taki.md "Setup and turn"). Facing a +2 stack, drawing the stack is always allowed (reading 3).
        plus_draw_when_playable: after a Plus, drawing is allowed even when a card could be played (default
            False: the Plus forces the play, reading 4).
        turn_cap: the game ends after this many completed turns (default 2000, 1..100000; reading 14).
        stairs: the Taki tournament ("stairs") variant, one long game through stages 8..1.
        hand_size: cards dealt to each seat, 1..8 (default 8); in the stairs it is also the first stage. Smaller
            hands exist for short test positions and quick variants.
    Each field is a declared rule option (``rule``: the CLI options come from it). Raises ``RulesError`` (from
    ``__post_init__``, ``check_config``) naming the field and the bad value.
    """

    draw_when_playable: bool = rule(True, "whether drawing is allowed when a card could be played")
    plus_draw_when_playable: bool = rule(False, "whether a seat owing a card after a Plus may draw instead of playing",
                                         flag="plus-draw")
    turn_cap: int = rule(2000, "the game ends after this many turns, ranked by cards held", minimum=1,
                         maximum=MAX_TURN_CAP, unit="TURNS")
    stairs: bool = rule(False, "the stairs, one long game through stages 8 down to 1", variant="stairs")
    hand_size: int = rule(HAND_SIZE, "cards dealt to each seat", minimum=1, maximum=HAND_SIZE, unit="CARDS")

    def __post_init__(self) -> None:
        check_config(self)


@dataclass(frozen=True)
class TakiDeal:
    """The chance outcome of a game: ``hands`` (one tuple of ``hand_size`` cards per seat, seat order) and
    ``draw_pile`` (every other card of the 116, top first; its top card starts the discard pile)."""

    hands: tuple[tuple[int, ...], ...]
    draw_pile: tuple[int, ...]


# --------------------------------------------------------------------------------------------------- actions


def _token_or_repr(card: object) -> str:
    return (_TOKENS[card] or "") if is_card(card) else repr(card)


@dataclass(frozen=True, repr=False)
class PlayCard:
    """Play ``card`` from the hand (decision ``TAKI_TURN``).

    Attributes:
        card: the card (int, see ``cards.py``).
        color: the named colour 0..3 of a Change Color (required there, None for every other card).
        close_run: inside a run (one's own or a continued open run), play this card as the run's last card and
            declare the run closed; refused on a TAKI or SuperTaki that starts a run (a lone TAKI, reading 8) and
            on a Change Color (it ends the run by itself) and outside runs.
        last_card: the "last card" declaration, allowed only when the play leaves exactly one card (reading 13).
    """

    card: int
    color: int | None = None
    close_run: bool = False
    last_card: bool = False

    def __repr__(self) -> str:
        parts = [_token_or_repr(self.card)]
        if self.color is not None:
            color = COLOR_TOKENS[self.color] if type(self.color) is int and 0 <= self.color < 4 else repr(self.color)
            parts.append(f"color={color}")
        if self.close_run:
            parts.append(f"close_run={self.close_run!r}")
        if self.last_card:
            parts.append(f"last_card={self.last_card!r}")
        return f"PlayCard({', '.join(parts)})"


@dataclass(frozen=True)
class Draw:
    """Draw (decision ``TAKI_TURN``): one card, or the whole +2 stack when facing one; ends the turn (a drawn card
    waits for the next turn)."""


@dataclass(frozen=True)
class EndTurn:
    """End one's run (left open, or closed when it continued another seat's open run), or end the turn after a
    King without playing (decision ``TAKI_TURN``)."""


@dataclass(frozen=True)
class React:
    """Answer to the out-of-turn +3 Breaker question (decision ``TAKI_REACT``): ``play=True`` plays a Breaker."""

    play: bool


TakiAction = PlayCard | Draw | EndTurn | React


# ---------------------------------------------------------------------------------------------- public events


class Event(NamedTuple):
    """One public event. A seat's view carries those since its last decision (``TakiView.history``).

    kind, and the fields each one sets:
        ``"lead"``: card = the first leading card. ``"return"``: card = a colourless first card put back into the
        draw pile (reading 1).
        ``"play"``: seat, card, color (the named colour of a Change Color, the colour a SuperTaki takes), closed
        (close_run), declared (last card).
        ``"break"``: seat played a +3 Breaker out of turn (card ``"BREAKER"``).
        ``"end"``: seat ended its run or its King turn (``EndTurn``); closed: the run ended closed.
        ``"draw"``: seat drew count cards (never which); reason: ``"draw"`` (a chosen or needed draw), ``"stack"``
        (a +2 stack), ``"plus"`` (an unanswered Plus, or a Plus as final card), ``"+3"``, ``"broken"`` (the +3's
        player after a Breaker), ``"breaker"`` (own-turn Breaker penalty), ``"last card"`` (missing
        declaration), ``"stage"`` (stairs). A count below the reason's number means no card was left anywhere.
        ``"skip"``: seat lost its turn to a Stop. ``"reshuffle"``: count cards became the new draw pile.
        ``"stage"``: seat moved to stage count (stairs). ``"win"``: seat won. ``"cap"``: the turn cap ended the
        game after count turns.
    Cards and colours are tokens (``"R5"``, ``"B"``).
    """

    kind: str
    seat: int | None = None
    card: str | None = None
    count: int = 0  # type: ignore[assignment]  # the field shadows tuple.count, on purpose: the wire name
    color: str | None = None
    closed: bool = False
    declared: bool = False
    reason: str | None = None


class RunInfo(NamedTuple):
    """A TAKI run (readings 6-9), public.

    Attributes: color (0..3); seat: who is running it, or who left it open; cards: cards played in it so far (1 =
    a lone TAKI / SuperTaki); continued: a seat is continuing another's open run (it then closes it when it ends);
    open: the run was left open and the seat taking the next turn may continue it.
    """

    color: int
    seat: int
    cards: int
    continued: bool
    open: bool


# ---------------------------------------------------------------------------------------------- state, view


@dataclass(frozen=True)
class TakiState:
    """Complete, immutable state of a game. Build with ``new_game``; change only with ``apply``.

    Attributes (read them, never mutate):
        num_players, config; seed (drives the deal when no explicit deal was given, and every later chance event:
        the colourless first card put back, reshuffles); deal (the deal used).
        hands: each seat's cards, ascending. draw_pile: top first. discard_pile: bottom first, the last one is the
        leading card.
        follow_color (0..3) and follow_symbol: what the next card must match (reading 2), kept apart from the top
        card. stack: cards an active +2 stack makes draw (0 = none). direction: +1 ascending seats, -1 descending.
        current: the seat whose turn it is (the +3's player during a Breaker question).
        mode: the pending step (``STEP_TURN``, ``STEP_RUN``, ``STEP_PLUS``, ``STEP_KING``, ``STEP_REACT``,
        ``STEP_OVER``). react_seat: the seat asked about a Breaker (mode react), else -1.
        run: the run being played or left open, else None.
        last_play / declared: the current seat's last hand change this turn was a play / that play declared "last
        card" (reading 13); declared is False whenever last_play is.
        turn: completed turns (reading 14). stages: each seat's stage (stairs; () otherwise; 0 = won).
        winner: the seat that won, or None. reshuffles: reshuffles so far (names the next one's generator).
        unseen: per seat, the public events since that seat's last decision (including that decision).
    """

    num_players: int
    config: TakiConfig
    seed: int
    deal: TakiDeal
    hands: tuple[tuple[int, ...], ...]
    draw_pile: tuple[int, ...]
    discard_pile: tuple[int, ...]
    follow_color: int
    follow_symbol: int
    stack: int
    direction: int
    current: int
    mode: str
    react_seat: int
    run: RunInfo | None
    last_play: bool
    declared: bool
    turn: int
    stages: tuple[int, ...]
    winner: int | None
    reshuffles: int
    unseen: tuple[tuple[Event, ...], ...]


@dataclass(frozen=True)
class TakiView:
    """What one seat may see (``observe``), and nothing else: never another seat's cards, the draw pile's order,
    the seed, or which seat is asked about a Breaker.

    Attributes:
        seat, num_players, config: who is looking, at what game.
        kind: the decision pending for this seat (``TURN``/``REACT``) or None. step: its step (``"turn"``,
            ``"stack"``, ``"run"``, ``"plus"``, ``"king"``, ``"react"``) or None. legal: every legal action of
            that decision, in ``legal_actions`` order (() when none is pending).
        hand: own cards, ascending. leading: the top card of the discard pile.
        follow_color (0..3), follow_symbol: what the next card must match (reading 2).
        stack: active +2 stack (0 = none). run: the run being played or left open, or None.
        current_seat: whose turn it is. direction: +1 or -1.
        counts: every seat's number of cards. stages: every seat's stage (stairs; () otherwise).
        draw_pile_size: cards in the draw pile. discard_pile_size: cards in the discard pile.
        turn: completed turns.
        history: the public events since this seat's last decision, that decision included, oldest first.
        winner: the winning seat once the game is over (None at the turn cap or while playing).
    """

    seat: int
    num_players: int
    config: TakiConfig
    kind: str | None
    step: str | None
    legal: tuple[TakiAction, ...]
    hand: tuple[int, ...]
    leading: int
    follow_color: int
    follow_symbol: int
    stack: int
    run: RunInfo | None
    current_seat: int
    direction: int
    counts: tuple[int, ...]
    stages: tuple[int, ...]
    draw_pile_size: int
    discard_pile_size: int
    turn: int
    history: tuple[Event, ...]
    winner: int | None

