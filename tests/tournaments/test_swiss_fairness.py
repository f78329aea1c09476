"""Swiss pairing orders bots of known strength better than random pairing (tools/swiss_fairness.py, seeded)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import swiss_fairness  # noqa: E402


def test_swiss_beats_random_pairing() -> None:
    # 16 and 24 bots, 4 seats, 120 repetitions each (fixed seeds): over 200 repetitions the gap is about
    # 0.01 rho with a standard error of 0.003 per design (make fairness-swiss).
    swiss, rand = [], []
    for b in (16, 24):
        c = swiss_fairness.compare(b, 4, reps=120, seed=1)
        assert c.rounds == {16: 6, 24: 7}[b]
        swiss += c.swiss
        rand += c.random
    assert np.mean(swiss) >= np.mean(rand), (np.mean(swiss), np.mean(rand))


def test_simulation_is_plackett_luce_of_the_strengths() -> None:
    strengths = swiss_fairness.strengths_of(4)
    assert strengths["b00"] == 0.0 and strengths["b03"] > strengths["b02"] > strengths["b01"]
    rng = np.random.default_rng(0)
    wins = sum(swiss_fairness.play(rng, strengths, ["b03", "b00"])[0] == 1 for _ in range(4000)) / 4000
    expected = 1 / (1 + 10 ** (-800 / 400))  # Elo 800 vs 0
    assert abs(wins - expected) < 0.02
    rnd = swiss_fairness.random_round(rng, sorted(swiss_fairness.strengths_of(10)), 4)
    assert len(rnd.tables) == 2 and len(rnd.byes) == 2
