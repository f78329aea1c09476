"""Elo +/- margin and LOS from W/D/L: published golden vectors (fastchess) and hand-computed values, plus
properties (STYLE.md habit 7)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.ratings import elo_margin, elo_to_score, los, pairwise_counts, score_to_elo


def test_fastchess_golden_vector() -> None:
    # fastchess prints "Elo: 147.19 +/- 66.01" for W 60, D 20, L 20 (issue 10's golden vector).
    est = elo_margin(60, 20, 20)
    assert est.elo == pytest.approx(147.19, abs=0.01)
    assert est.margin == pytest.approx(66.01, abs=0.01)
    assert est.score == pytest.approx(0.7)
    assert est.games == 100
    assert str(est).startswith("+147.2 +/- 66.0 Elo")


def test_hand_computed_values() -> None:
    # score 3/4 -> 400 log10(3) = 190.85 Elo; LOS for W 10 L 5: 1/2 + erf(5 / sqrt(30)) / 2 = 0.9016.
    assert score_to_elo(0.75) == pytest.approx(190.8485, abs=1e-4)
    assert los(10, 5) == pytest.approx(0.90165, abs=1e-5)
    even = elo_margin(30, 40, 30)
    assert even.elo == 0.0 and even.los == 0.5
    # var per game = 60 * 1/4 / 100 = 0.15; se = sqrt(0.15 / 100); margin = (E(1/2 + 1.96 se) - E(1/2 - 1.96 se)) / 2
    se = math.sqrt(0.15 / 100)
    expected = 400 * math.log10((0.5 + 1.959964 * se) / (0.5 - 1.959964 * se))
    assert even.margin == pytest.approx(expected, abs=1e-3)
    assert even.margin == pytest.approx(53.2, abs=0.05)


def test_perfect_and_nil_scores() -> None:
    assert elo_margin(10, 0, 0).elo == math.inf and elo_margin(10, 0, 0).margin == math.inf
    assert elo_margin(0, 0, 3).elo == -math.inf
    assert los(0, 0) == 0.5


@pytest.mark.parametrize(("w", "d", "lost", "level"), [(0, 0, 0, 0.95), (-1, 2, 3, 0.95), (1, 1, 1, 1.0), (1, 1, 1, 0.0)])
def test_bad_input_is_refused(w: int, d: int, lost: int, level: float) -> None:
    with pytest.raises(ValueError):
        elo_margin(w, d, lost, level)


def test_bad_score_is_refused() -> None:
    with pytest.raises(ValueError):
        score_to_elo(1.5)
    with pytest.raises(ValueError):
        los(-1, 2)


@given(st.floats(min_value=-1500, max_value=1500))
def test_score_and_elo_are_inverse(elo: float) -> None:
    assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo, abs=1e-6)


@given(st.integers(0, 200), st.integers(0, 200), st.integers(0, 200))
def test_swapping_wins_and_losses_mirrors(w: int, d: int, lost: int) -> None:
    if w + d + lost == 0:
        return
    a, b = elo_margin(w, d, lost), elo_margin(lost, d, w)
    assert a.elo == pytest.approx(-b.elo) or (math.isinf(a.elo) and a.elo == -b.elo)
    assert a.los == pytest.approx(1 - b.los)
    if math.isfinite(a.margin) and math.isfinite(b.margin):
        assert a.margin == pytest.approx(b.margin)


def test_pairwise_counts_from_ranks() -> None:
    assert pairwise_counts([1, 2, 2, 4], 1) == (1, 1, 1)
    assert pairwise_counts([1, 2, 2, 4], 0) == (3, 0, 0)
    assert pairwise_counts([3, 1, 1], 0) == (0, 0, 2)
    with pytest.raises(ValueError):
        pairwise_counts([1, 2], 2)
