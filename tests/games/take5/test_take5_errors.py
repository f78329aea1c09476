"""Take 5 errors: illegal actions name the action and the reason; bad games and deals name the problem."""

from __future__ import annotations

import pytest

from arena_sdk.games import take5
from arena_sdk.games.base import IllegalActionError, RulesError
from arena_sdk.games.take5 import ChooseCard, ChooseRow, DraftPick, Take5Config, Take5Deal

HANDS = (tuple(range(1, 11)), tuple(range(11, 21)), tuple(range(21, 31)))
ROWS = (40, 50, 60, 70)


def _game(**config: object) -> take5.Take5State:
    return take5.new_game(3, Take5Config(**config), seed=0, deals=[Take5Deal(hands=HANDS, rows=ROWS)])  # type: ignore[arg-type]


# ---------------------------------------------------------------- illegal actions


def test_card_not_in_hand() -> None:
    state = _game()
    with pytest.raises(IllegalActionError, match=r"ChooseCard\(card=15\) by seat 0 .*card 15 is not in seat 0's hand"):
        take5.apply(state, 0, ChooseCard(15))
    with pytest.raises(IllegalActionError, match="not in seat 0's hand"):
        take5.apply(state, 0, ChooseCard(40))  # a row card


def test_a_seat_chooses_once_per_turn() -> None:
    state = take5.apply(_game(), 1, ChooseCard(11))
    with pytest.raises(IllegalActionError, match="seat 1 already chose"):
        take5.apply(state, 1, ChooseCard(12))


def test_wrong_seat_during_a_row_choice() -> None:
    state = _game()
    for seat, card in ((0, 1), (1, 11), (2, 21)):
        state = take5.apply(state, seat, ChooseCard(card))
    assert state.phase == "row" and take5.pending_seats(state) == (0,)
    with pytest.raises(IllegalActionError, match=r"ChooseRow\(row=1\) by seat 2 .*seat 0's decision"):
        take5.apply(state, 2, ChooseRow(1))
    with pytest.raises(IllegalActionError, match="no such seat"):
        take5.apply(state, 3, ChooseRow(1))
    with pytest.raises(IllegalActionError, match="no such seat"):
        take5.apply(state, -1, ChooseRow(1))


@pytest.mark.parametrize("row", [-1, 4, 1.0, None])
def test_row_out_of_range(row: object) -> None:
    state = _game()
    for seat, card in ((0, 1), (1, 11), (2, 21)):
        state = take5.apply(state, seat, ChooseCard(card))
    with pytest.raises(IllegalActionError, match="does not exist; rows are 0..3"):
        take5.apply(state, 0, ChooseRow(row))  # type: ignore[arg-type]


def test_wrong_action_kind() -> None:
    state = _game()
    with pytest.raises(IllegalActionError, match=r"ChooseRow\(row=0\).*TAKE5_CHOOSE_CARD.*ChooseCard"):
        take5.apply(state, 0, ChooseRow(0))
    with pytest.raises(IllegalActionError, match="TAKE5_CHOOSE_CARD"):
        take5.apply(state, 0, DraftPick(1))
    with pytest.raises(IllegalActionError, match="TAKE5_CHOOSE_CARD"):
        take5.apply(state, 0, 1)  # type: ignore[arg-type]
    for seat, card in ((0, 1), (1, 11), (2, 21)):
        state = take5.apply(state, seat, ChooseCard(card))
    with pytest.raises(IllegalActionError, match="TAKE5_CHOOSE_ROW"):
        take5.apply(state, 0, ChooseCard(2))


def test_no_action_after_the_game_is_over() -> None:
    state = _game(limit=1)
    for turn in range(10):
        for seat in range(3):
            state = take5.apply(state, seat, take5.default_action(state, seat))
        while state.phase == "row":
            seat = take5.pending_seats(state)[0]
            state = take5.apply(state, seat, take5.default_action(state, seat))
    assert take5.is_over(state)
    assert take5.pending_seats(state) == () and take5.legal_actions(state, 0) == ()
    with pytest.raises(IllegalActionError, match="the game is over"):
        take5.apply(state, 0, ChooseCard(2))
    with pytest.raises(IllegalActionError, match="no decision pending"):
        take5.default_action(state, 0)


def test_default_action_needs_a_pending_seat_and_outcome_needs_the_end() -> None:
    state = take5.apply(_game(), 0, ChooseCard(3))
    with pytest.raises(IllegalActionError, match="seat 0"):
        take5.default_action(state, 0)
    assert take5.default_action(state, 1) == ChooseCard(11)
    with pytest.raises(RulesError, match="not over"):
        take5.outcome(state)


def test_observe_unknown_seat() -> None:
    with pytest.raises(RulesError, match="no seat 3"):
        take5.observe(_game(), 3)


def test_deals_that_cannot_carry_the_game_are_refused_at_creation() -> None:
    """Explicit deals without a seed must cover the longest possible game (3 players x 65 + 1 hands at limit 66),
    so running out of deals is found by ``new_game``, never by ``apply`` halfway through a match."""
    deal = Take5Deal(hands=HANDS, rows=ROWS)
    with pytest.raises(RulesError, match="1 explicit deal.*cannot carry a whole game.*up to 196 hands"):
        take5.new_game(3, deals=[deal])
    assert take5.max_hands(3, Take5Config()) == 196
    assert take5.max_hands(3, Take5Config(limit=1)) == 1  # one hand always reaches a limit of 1
    assert take5.max_hands(2, Take5Config(limit=5, limit_rule="more_than")) == 11
    take5.new_game(3, Take5Config(limit=1), deals=[deal])  # enough deals: no seed needed
    take5.new_game(3, seed=0, deals=[deal])  # the seed deals the later hands


def test_the_limit_is_capped_at_creation() -> None:
    with pytest.raises(RulesError, match="1..1000"):
        Take5Config(limit=1001)


# ---------------------------------------------------------------- bad games


@pytest.mark.parametrize("players", [0, 1, 11, -2, 4.0, "4", True, None])
def test_bad_player_counts(players: object) -> None:
    with pytest.raises(RulesError, match="2..10 players"):
        take5.new_game(players, seed=1)  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="2..10 players"):
        take5.deal_hand(1, 0, players, Take5Config())  # type: ignore[arg-type]


def test_needs_a_seed_or_a_deal() -> None:
    with pytest.raises(RulesError, match="needs a seed or at least one explicit deal"):
        take5.new_game(4)
    with pytest.raises(RulesError, match="seed must be a whole number"):
        take5.new_game(4, seed="7")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"limit": 0}, "limit must be"),
        ({"limit": 66.5}, "limit must be"),
        ({"limit_rule": "at_most"}, "limit_rule must be one of"),
        ({"draft": 1}, "draft must be True or False"),
        ({"known_cards": "yes"}, "known_cards must be True or False"),
    ],
)
def test_bad_config(config: dict[str, object], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        Take5Config(**config)  # type: ignore[arg-type]


def _swap(hands: tuple[tuple[int, ...], ...], seat: int, new: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(new if i == seat else h for i, h in enumerate(hands))


@pytest.mark.parametrize(
    ("deal", "config", "message"),
    [
        (Take5Deal(hands=HANDS[:2], rows=ROWS), {}, "deal of hand 0: 2 hands for 3 players"),
        (Take5Deal(hands=_swap(HANDS, 1, tuple(range(11, 20))), rows=ROWS), {}, "seat 1 is dealt 9 cards, needs 10"),
        (Take5Deal(hands=_swap(HANDS, 2, tuple(range(21, 32))), rows=ROWS), {}, "seat 2 is dealt 11 cards"),
        (Take5Deal(hands=HANDS, rows=ROWS[:3]), {}, "3 row starters, needs 4"),
        (Take5Deal(hands=HANDS, rows=(40, 50, 60, 5)), {}, "card 5 is dealt more than once"),
        (Take5Deal(hands=_swap(HANDS, 0, (1, 1, 3, 4, 5, 6, 7, 8, 9, 10)), rows=ROWS), {}, "card 1 is dealt more"),
        (Take5Deal(hands=HANDS, rows=(40, 50, 60, 105)), {}, r"card 105 is outside the deck 1..104"),
        (Take5Deal(hands=HANDS, rows=(40, 50, 60, 0)), {}, r"card 0 is outside the deck"),
        (Take5Deal(hands=HANDS, rows=(31, 32, 33, 40)), {"known_cards": True}, r"card 40 is outside the deck 1..34"),
        (Take5Deal(hands=HANDS, rows=(40, 50, 60, "70")), {}, r"card '70' is outside"),  # type: ignore[arg-type]
        (Take5Deal(hands=HANDS, rows=ROWS, pool=(1, 2)), {}, "a pool is only dealt in the draft variant"),
        (Take5Deal(hands=HANDS, rows=ROWS), {"draft": True}, "the draft variant deals only a pool"),
        (Take5Deal(pool=tuple(range(1, 34))), {"draft": True}, "the draft pool holds 33 cards, 3 players need 34"),
        (Take5Deal(pool=tuple(range(1, 34)) + (1,)), {"draft": True}, "card 1 is dealt more than once"),
        (Take5Deal(pool=tuple(range(2, 36))), {"draft": True, "known_cards": True}, "card 35 is outside the deck 1..34"),
    ],
)
def test_bad_explicit_deals(deal: Take5Deal, config: dict[str, object], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        take5.new_game(3, Take5Config(**config), seed=0, deals=[deal])  # type: ignore[arg-type]


def test_a_bad_later_deal_is_refused_up_front_and_named() -> None:
    good = Take5Deal(hands=HANDS, rows=ROWS)
    bad = Take5Deal(hands=HANDS, rows=(40, 50, 60, 60))
    with pytest.raises(RulesError, match="deal of hand 1: card 60 is dealt more than once"):
        take5.new_game(3, seed=0, deals=[good, bad])
    with pytest.raises(RulesError, match="deal of hand 0: expected a Take5Deal"):
        take5.new_game(3, seed=0, deals=[{"hands": HANDS, "rows": ROWS}])  # type: ignore[list-item]


def test_explicit_deals_given_as_lists_are_accepted() -> None:
    deal = Take5Deal(hands=[list(h) for h in HANDS], rows=list(ROWS))  # type: ignore[arg-type]
    state = take5.new_game(3, seed=0, deals=[deal])
    assert state.hands == HANDS and state.rows == ((40,), (50,), (60,), (70,))
