"""Common random numbers through the whole chain, in process (tools/ab_tests.py's blocks): a paired block of one
version against itself replays the same game at both tables (h = 0 every time), whatever the bots' randomness; the
same block with seeds of their own does not. And the tilt the error-rate simulation uses reaches the mean it asks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import ab_tests  # noqa: E402


@pytest.mark.parametrize("game", ["take5", "taki"])
def test_a_paired_block_of_one_version_is_the_same_game_twice(game: str, monkeypatch: pytest.MonkeyPatch) -> None:
    same = {"same": ((0.3, ""), (0.3, ""))}  # noisy: the bots draw many random numbers
    monkeypatch.setattr(ab_tests, "PAIRS", same)
    paired = [ab_tests.block((game, "same", "paired", b)) for b in range(6)]
    field = [ab_tests.block((game, "same", "field", b)) for b in range(6)]
    assert paired == [(0, 0.0)] * 6  # the same ranks and the same scores at both tables
    assert all(score is None for _, score in field) and any(h != 0 for h, _ in field)  # seeds of their own


def test_tilt_reaches_the_mean_and_keeps_the_support() -> None:
    freqs = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    values = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    tilted = ab_tests.tilt(freqs, values, 0.0)
    assert float((tilted * values).sum()) == pytest.approx(0.0, abs=1e-6)
    assert tilted.sum() == pytest.approx(1.0) and np.all(tilted > 0)
