"""Take 5 cards, bullheads, the decks of the known-cards variant, target rows and seeded deals."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from arena_sdk.games import take5
from arena_sdk.games.base import RulesError
from arena_sdk.games.take5 import Take5Config

# take5.md, "Variants": bullhead totals of the known-cards deck for 2..10 players.
KNOWN_DECK_BULLHEADS = {2: 38, 3: 55, 4: 72, 5: 85, 6: 103, 7: 120, 8: 137, 9: 154, 10: 171}


@pytest.mark.parametrize(
    ("card", "heads"),
    [(55, 7), (11, 5), (22, 5), (99, 5), (10, 3), (100, 3), (5, 2), (15, 2), (95, 2), (1, 1), (104, 1), (54, 1)],
)
def test_bullheads_of_single_cards(card: int, heads: int) -> None:
    assert take5.bullheads(card) == heads


def test_whole_deck_holds_171_bullheads_in_the_documented_counts() -> None:
    heads = [take5.bullheads(c) for c in take5.deck(4, Take5Config())]
    assert len(heads) == 104
    assert sum(heads) == 171
    assert Counter(heads) == {1: 76, 2: 9, 3: 10, 5: 8, 7: 1}


@pytest.mark.parametrize("card", [0, 105, -1, 55.0, "55", True, None])
def test_bullheads_refuses_non_cards(card: object) -> None:
    with pytest.raises(RulesError, match="no Take 5 card"):
        take5.bullheads(card)  # type: ignore[arg-type]


@pytest.mark.parametrize("players", range(2, 11))
def test_known_cards_deck_range_and_bullheads(players: int) -> None:
    cards = take5.deck(players, Take5Config(known_cards=True))
    assert cards == tuple(range(1, 10 * players + 5))
    assert sum(take5.bullheads(c) for c in cards) == KNOWN_DECK_BULLHEADS[players]


@pytest.mark.parametrize("players", range(2, 11))
def test_full_deck_is_used_without_the_variant(players: int) -> None:
    assert take5.deck(players, Take5Config()) == tuple(range(1, 105))
    assert take5.deck(players, Take5Config(draft=True)) == tuple(range(1, 105))


@pytest.mark.parametrize("players", range(2, 11))
@pytest.mark.parametrize("known", [False, True])
def test_seeded_deal_shapes(players: int, known: bool) -> None:
    config = Take5Config(known_cards=known)
    deal = take5.deal_hand(7, 0, players, config)
    assert deal.pool == ()
    assert len(deal.hands) == players and all(len(h) == 10 for h in deal.hands)
    assert all(list(h) == sorted(h) for h in deal.hands)
    assert len(deal.rows) == 4
    used = [c for h in deal.hands for c in h] + list(deal.rows)
    assert len(set(used)) == len(used) == 10 * players + 4
    assert set(used) <= set(take5.deck(players, config))
    if known:  # variant 1: every card of the small deck is in play
        assert sorted(used) == list(take5.deck(players, config))


def test_deal_is_deterministic_and_ignores_the_global_random_state() -> None:
    config = Take5Config()
    random.seed(1)
    first = take5.deal_hand(123, 2, 5, config)
    random.seed(2)
    state_before = random.getstate()
    second = take5.deal_hand(123, 2, 5, config)
    assert first == second
    assert random.getstate() == state_before, "deal_hand must not draw from the global random generator"


def test_deal_changes_with_seed_and_hand_number() -> None:
    config = Take5Config()
    base = take5.deal_hand(123, 0, 4, config)
    assert take5.deal_hand(124, 0, 4, config) != base
    assert take5.deal_hand(123, 1, 4, config) != base


def test_known_deal_for_a_fixed_seed_is_stable() -> None:
    """Pins the derivation (random.Random("take5:<seed>:<hand>").shuffle of the deck) so records stay replayable."""
    cards = list(range(1, 25))
    random.Random("take5:42:0").shuffle(cards)
    deal = take5.deal_hand(42, 0, 2, Take5Config(known_cards=True))
    assert deal.hands == (tuple(sorted(cards[:10])), tuple(sorted(cards[10:20])))
    assert deal.rows == tuple(cards[20:24])


def test_seeded_game_plays_the_seeded_deals_hand_after_hand() -> None:
    state = take5.new_game(3, seed=9)
    assert state.dealt == (take5.deal_hand(9, 0, 3, Take5Config()),)
    assert state.hands == take5.deal_hand(9, 0, 3, Take5Config()).hands


ROWS = ((10,), (20, 22, 25), (30,), (40, 41, 42, 43, 44))


@pytest.mark.parametrize(
    ("card", "row", "penalty"),
    [(26, 1, 0), (21, 0, 0), (11, 0, 0), (29, 1, 0), (31, 2, 0), (45, 3, 11), (104, 3, 11), (5, None, None)],
)
def test_target_row_and_penalty(card: int, row: int | None, penalty: int | None) -> None:
    assert take5.target_row(ROWS, card) == row
    assert take5.penalty_if_played(ROWS, card) == penalty


def test_view_helpers_match_the_module_functions() -> None:
    state = take5.new_game(2, seed=0, deals=[take5.Take5Deal(hands=(tuple(range(1, 11)), tuple(range(11, 21))), rows=(30, 40, 50, 55))])
    view = take5.observe(state, 0)
    assert view.target_row(5) is None and view.penalty(5) is None
    assert view.target_row(45) == 1 and view.penalty(45) == 0
    assert [view.row_bullheads(r) for r in range(4)] == [3, 3, 3, 7]
