"""Take 5 variant 2 (draft): picks in seat order, the pool shrinks, the 4 leftovers start the rows."""

from __future__ import annotations

import random

import pytest

from arena_sdk.games import take5
from arena_sdk.games.base import IllegalActionError
from arena_sdk.games.take5 import ChooseCard, ChooseRow, DraftPick, Take5Config


def _draft_all(state: take5.Take5State, rng: random.Random) -> take5.Take5State:
    n = state.num_players
    picks = 0
    while state.phase == "draft":
        seat = picks % n  # seat 0 first, round after round
        assert take5.pending_seats(state) == (seat,)
        pool_before = state.draft_pool
        card = rng.choice(pool_before)
        state = take5.apply(state, seat, DraftPick(card))
        picks += 1
        assert card in state.hands[seat]
        if state.phase == "draft":
            assert len(state.draft_pool) == len(pool_before) - 1 and card not in state.draft_pool
            assert state.rows == ((), (), (), ())
    assert picks == 10 * n
    return state


@pytest.mark.parametrize("players", range(2, 11))
@pytest.mark.parametrize("known", [True, False])
def test_draft_deals_a_pool_and_ends_with_the_leftovers_as_rows(players: int, known: bool) -> None:
    config = Take5Config(known_cards=known, draft=True)
    state = take5.new_game(players, config, seed=players * 31 + known)
    assert state.phase == "draft"
    pool = state.draft_pool
    assert len(pool) == 10 * players + 4 and list(pool) == sorted(set(pool))
    if known:  # variants combined: exactly the 10n+4 known cards, all face up
        assert pool == take5.deck(players, config)
    else:
        assert set(pool) <= set(range(1, 105))
    assert state.hands == ((),) * players
    state = _draft_all(state, random.Random(players))
    assert state.phase == "choose" and state.turn == 0
    assert all(len(h) == 10 for h in state.hands)
    leftovers = sorted(set(pool) - {c for h in state.hands for c in h})
    assert state.rows == tuple((c,) for c in leftovers), "rows 0..3 are the 4 leftovers in ascending order"
    assert state.draft_pool == ()
    assert [p.seat for p in state.draft_picks] == [i % players for i in range(10 * players)]


def test_draft_view_is_public_and_only_the_picker_decides() -> None:
    state = take5.new_game(3, Take5Config(draft=True, known_cards=True), seed=5)
    state = take5.apply(state, 0, DraftPick(state.draft_pool[3]))
    for seat in range(3):
        view = take5.observe(state, seat)
        assert view.draft_pool == state.draft_pool
        assert view.draft_picks == state.draft_picks
        assert view.kind == (take5.DRAFT_PICK if seat == 1 else None)
    assert take5.legal_actions(state, 1) == tuple(DraftPick(c) for c in state.draft_pool)
    assert take5.legal_actions(state, 0) == () and take5.legal_actions(state, 2) == ()
    assert take5.default_action(state, 1) == DraftPick(min(state.draft_pool))


def test_illegal_picks_are_refused() -> None:
    state = take5.new_game(2, Take5Config(draft=True, known_cards=True), seed=0, deals=[take5.Take5Deal(pool=tuple(range(1, 25)))])
    state = take5.apply(state, 0, DraftPick(7))
    with pytest.raises(IllegalActionError, match=r"DraftPick\(card=7\).*not in the draft pool"):
        take5.apply(state, 1, DraftPick(7))  # already taken
    with pytest.raises(IllegalActionError, match="not in the draft pool"):
        take5.apply(state, 1, DraftPick(25))  # outside the known deck
    with pytest.raises(IllegalActionError, match="seat 1's decision"):
        take5.apply(state, 0, DraftPick(8))  # out of seat order
    with pytest.raises(IllegalActionError, match="TAKE5_DRAFT_PICK"):
        take5.apply(state, 1, ChooseCard(8))
    with pytest.raises(IllegalActionError, match="TAKE5_DRAFT_PICK"):
        take5.apply(state, 1, ChooseRow(0))
    assert take5.apply(state, 1, DraftPick(8)).hands == ((7,), (8,))


def test_every_hand_of_a_draft_game_starts_with_a_draft() -> None:
    rng = random.Random(3)
    state = take5.new_game(2, Take5Config(draft=True, known_cards=True, limit=1000), seed=11)
    for hand in range(2):
        assert state.phase == "draft" and state.hand_number == hand and state.draft_picks == ()
        state = _draft_all(state, rng)
        while state.phase != "draft":
            seat = take5.pending_seats(state)[0]
            state = take5.apply(state, seat, rng.choice(take5.legal_actions(state, seat)))
