"""`arena sprt show` of a paired test says which sign of the mean block outcome is better for V2, and the sign it
says is the one ``arena.ratings.score_sprt.block_score_outcome`` gives: a block where V2 took fewer bullheads than V1
in the same Take 5 scenario has a positive outcome."""

from __future__ import annotations

import pytest

from arena.cli import sprt_report
from arena.ratings.score_sprt import ScoreState, block_score_outcome, mean_outcome, update
from arena_sdk.pb import arena_pb2


def _shown(outcomes: list[float], capsys: pytest.CaptureFixture[str]) -> str:
    state = ScoreState()
    for d in outcomes:
        state = update(state, d)
    t = arena_pb2.Tournament(id="t6", game="take5", state="finished", matches_total=2 * len(outcomes),
                             matches_done=2 * len(outcomes), seed_commitment="ab" * 32, seed_hex="cd" * 16)
    s = arena_pb2.Sprt(tournament=t, v1="mine@1.0", v2="mine@2.0", seats=4, house=["heuristic"] * 3, elo0=0,
                       elo1=40, alpha=0.05, beta=0.05, blocks=len(outcomes), verdict="H1", statistic="score",
                       mean_outcome=mean_outcome(state), llr=3.0, lower=-2.94, upper=2.94,
                       score_counts=[arena_pb2.SprtScoreCount(outcome=o, blocks=n) for o, n in state.counts])
    sprt_report.print_sprt(s)
    return next(line for line in capsys.readouterr().out.splitlines() if "mean block outcome" in line)


def test_the_mean_block_outcome_says_a_positive_one_is_v2_better(capsys: pytest.CaptureFixture[str]) -> None:
    # seat 0: V1 took 12 bullheads at its table, V2 4 at its own, the house bots the same 8, 8, 8 at both
    v2_better = block_score_outcome([12, 8, 8, 8], [4, 8, 8, 8], seat=0, lower_is_better=True)
    assert v2_better > 0
    line = _shown([v2_better, v2_better, -1.0], capsys)
    assert "V2 ended better than V1 in 2 blocks, worse in 1 block, alike in 0 blocks" in line
    assert f"mean block outcome +{(2 * v2_better - 1.0) / 3:.3f} (positive: V2 better;" in line


def test_a_negative_mean_block_outcome_is_shown_with_its_sign(capsys: pytest.CaptureFixture[str]) -> None:
    v2_worse = block_score_outcome([4, 8, 8, 8], [12, 8, 8, 8], seat=0, lower_is_better=True)
    line = _shown([v2_worse, v2_worse, 0.0], capsys)
    assert "better than V1 in 0 blocks, worse in 2 blocks" in line
    assert f"mean block outcome -{abs(2 * v2_worse) / 3:.3f} (positive: V2 better;" in line
