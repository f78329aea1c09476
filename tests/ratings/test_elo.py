"""Elo ladder math: golden vectors computed by hand (issue 2 item 8) and properties (STYLE.md habit 7)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.ratings import elo_deltas, expected_score

GOLDEN = [
    # (ratings, ranks, expected new ratings), K = 32
    ([1500, 1500], [1, 2], [1516, 1484]),
    ([1500, 1500, 1500], [1, 2, 3], [1516, 1500, 1484]),
    ([1500, 1500, 1500, 1500], [1, 2, 2, 4], [1516, 1500, 1500, 1484]),
    # 1400 finishes first, 1600 second, 1500 third.
    ([1600, 1500, 1400], [2, 3, 1], [1593.603, 1484.000, 1422.397]),
]


@pytest.mark.parametrize(("ratings", "ranks", "expected"), GOLDEN)
def test_golden_vectors(ratings: list[float], ranks: list[int], expected: list[float]) -> None:
    new = [r + d for r, d in zip(ratings, elo_deltas(ratings, ranks, k=32))]
    assert new == pytest.approx(expected, abs=5e-4)


def test_two_players_is_classic_elo() -> None:
    # Classic Elo: 1613 v 1477 with K 32, the favourite loses: 32 * (0 - E).
    e = 1 / (1 + 10 ** ((1477 - 1613) / 400))
    assert elo_deltas([1613, 1477], [2, 1]) == pytest.approx([-32 * e, 32 * e])
    assert expected_score(1613, 1477) == pytest.approx(0.686, abs=1e-3)


def test_tie_between_equals_changes_nothing() -> None:
    assert elo_deltas([1500, 1500], [1, 1]) == [0.0, 0.0]


@pytest.mark.parametrize(
    ("ratings", "ranks"), [([1500], [1]), ([1500, 1500], [1]), ([1500, 1500], [0, 1])]
)
def test_bad_input_is_refused(ratings: list[float], ranks: list[int]) -> None:
    with pytest.raises(ValueError):
        elo_deltas(ratings, ranks)


players = st.lists(
    st.tuples(st.floats(min_value=800, max_value=2800), st.integers(min_value=1, max_value=10)),
    min_size=2,
    max_size=10,
)


@given(players)
def test_deltas_sum_to_zero(ps: list[tuple[float, int]]) -> None:
    ratings, ranks = zip(*ps)
    assert sum(elo_deltas(ratings, ranks)) == pytest.approx(0.0, abs=1e-9)


@given(players, st.randoms(use_true_random=False))
def test_listing_order_changes_nothing(ps: list[tuple[float, int]], rnd) -> None:
    ratings, ranks = zip(*ps)
    base = dict(zip(range(len(ps)), elo_deltas(ratings, ranks)))
    order = list(range(len(ps)))
    rnd.shuffle(order)
    shuffled = elo_deltas([ratings[i] for i in order], [ranks[i] for i in order])
    assert shuffled == pytest.approx([base[i] for i in order])


@given(st.floats(min_value=800, max_value=2800), st.floats(min_value=800, max_value=2800))
def test_ties_are_symmetric(a: float, b: float) -> None:
    da, db = elo_deltas([a, b], [1, 1])
    assert da == pytest.approx(-db)
    assert (da > 0) == (a < b) or a == b or da == pytest.approx(0)


@given(st.floats(min_value=800, max_value=2800), st.floats(min_value=800, max_value=2800))
def test_winner_gains_loser_loses(a: float, b: float) -> None:
    da, db = elo_deltas([a, b], [1, 2])
    assert da > 0 > db
