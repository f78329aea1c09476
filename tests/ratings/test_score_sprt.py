"""The paired SPRT on the relative score, in normalized Elo: the block outcome, the state, the LLR against an
independent optimiser, its symmetries, the estimate, and the error rates measured on simulated tests whose blocks
look like the paired test's (most blocks identical: d = 0)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from arena.ratings import score_sprt
from arena.ratings.score_sprt import ScoreState, block_score_outcome
from arena.ratings.sprt import SprtError, bounds


def test_block_score_outcome_is_v2s_relative_score_minus_v1s() -> None:
    # bullheads, lower is better: V at seat 1 takes 3 at V1's table (others 6, 9, 0: mean 5, 2 better than it)
    # and 1 at V2's table (others 6, 9, 6: mean 7, 6 better): V2 is 4 better
    assert block_score_outcome([6, 3, 9, 0], [6, 1, 9, 6], 1, lower_is_better=True) == 4.0
    assert block_score_outcome([6, 3, 9, 0], [6, 1, 9, 6], 1, lower_is_better=False) == -4.0
    assert block_score_outcome([5, 7, 2], [5, 7, 2], 2, lower_is_better=True) == 0.0  # identical games
    assert block_score_outcome([1, 2, 3, 4], [1, 2, 3, 5], 0, lower_is_better=True) == pytest.approx(1 / 3, abs=1e-6)
    for bad in (([1, 2], [1, 2, 3], 0), ([1], [1], 0), ([1, 2], [1, 2], 2), ([1, math.nan], [1, 2], 0)):
        with pytest.raises(SprtError):
            block_score_outcome(*bad, lower_is_better=True)


def test_state_rounds_merges_and_round_trips() -> None:
    state = score_sprt.update(score_sprt.update(ScoreState.new(), 1 / 3), 0.3333333333)
    assert state.counts == ((0.333333, 2),) and state.blocks == 2
    state = score_sprt.update(state, -0.0)
    assert state.counts == ((0.0, 1), (0.333333, 2))
    assert ScoreState.from_dict(state.to_dict()) == state
    assert ScoreState.of({2.0: 1, 2.0000001: 2, 5.0: 0}).counts == ((2.0, 3),)
    for bad in ({1.0: -1}, {math.inf: 1}, {1.0: 1.5}):
        with pytest.raises(SprtError):
            ScoreState.of(bad)
    with pytest.raises(SprtError):
        score_sprt.update(state, math.nan)
    with pytest.raises(SprtError):
        ScoreState.from_dict({"blocks": 3})


def _llr_by_optimiser(signs: tuple[int, int, int], nelo0: float, nelo1: float) -> float:
    """The LLR by a general-purpose constrained optimiser (scipy's SLSQP): greatest sum f ln p over the trinomial
    (worse, alike, better) with mean = t sd, under each hypothesis."""
    values = np.array([-1.0, 0.0, 1.0])
    f = np.where(np.array(signs, dtype=float) > 0, np.array(signs, dtype=float), 1e-3)

    def best(nelo: float) -> float:
        t = score_sprt.t_of_nelo(nelo)

        def constraint(p: np.ndarray) -> float:
            mu = p @ values
            return float(mu - t * math.sqrt(max(p @ (values - mu) ** 2, 1e-300)))

        res = optimize.minimize(
            lambda p: -np.dot(f, np.log(p)), f / f.sum(), method="SLSQP", bounds=[(1e-12, 1)] * 3,
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}, {"type": "eq", "fun": constraint}],
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        assert res.success, res.message
        return -float(res.fun)

    return best(nelo1) - best(nelo0)


@pytest.mark.parametrize(
    ("counts", "nelo0", "nelo1"),
    [
        ({0.0: 30, 1.0: 6, -1.0: 2, 2.5: 3, -4.0: 1}, 0.0, 60.0),
        ({0.0: 10, 3.0: 4}, 0.0, 40.0),  # only gains: the empty category is regularized
        ({-2.0: 5, -0.5: 3, 1.0: 4, 7.0: 1}, -20.0, 20.0),
    ],
)
def test_llr_matches_an_independent_optimiser(counts: dict[float, int], nelo0: float, nelo1: float) -> None:
    state = ScoreState.of(counts)
    signs = score_sprt.sign_counts(state)
    assert sum(signs) == state.blocks
    assert score_sprt.llr(state, nelo0, nelo1) == pytest.approx(_llr_by_optimiser(signs, nelo0, nelo1), abs=2e-4)


@pytest.mark.parametrize("counts", [(0.2, 0.5, 0.3), (15, 1e-3, 1e-3), (1e-3, 1e-3, 40), (1e-3, 9, 1e-3), (3, 1e-3, 2)])
def test_constrained_distribution_meets_its_t_value(counts: tuple[float, float, float]) -> None:
    """Also where the counts sit at one end (every block worse): the fit meets the constraint, it does not stop at a
    trinomial of the wrong sign."""
    for t in (-0.3, 0.0, 0.02, 0.163, 0.6):
        for p in (score_sprt._constrained(np.array(counts, dtype=float), t),
                  score_sprt._constrained(np.array([counts, counts], dtype=float), t)[1]):
            mu = float(p @ score_sprt.SIGNS)
            sd = math.sqrt(float(p @ (score_sprt.SIGNS - mu) ** 2))
            assert p.sum() == pytest.approx(1.0) and (p > 0).all() and mu / sd == pytest.approx(t, abs=1e-9)


def test_a_worse_v2_is_never_evidence_for_better() -> None:
    """Every block worse: the LLR falls (H0) for a test of improvement; every block better: it rises (H1) for a
    non-regression test; at any length."""
    for n in (1, 5, 15, 50):
        assert score_sprt.llr(ScoreState.of({-3.0: n}), 0.0, 5.0) < 0
        assert score_sprt.llr(ScoreState.of({-3.0: n}), 0.0, 40.0) < 0
        assert score_sprt.llr(ScoreState.of({2.0: n}), -5.0, 0.0) > 0
        assert score_sprt.llr(ScoreState.of({2.0: n, 0.0: n}), -5.0, 0.0) > 0
    assert score_sprt.status(ScoreState.of({-3.0: 20}), 0.0, 40.0).verdict == "H0"


def test_identical_versions_accept_h0_on_blocks_that_all_end_alike() -> None:
    """Blocks that all end alike (V2 plays as V1) favour the hypothesis nearer a t-value of 0, at ln(1 - c^2) a
    block: a test of --elo1 40 accepts H0 after about 115 of them, of 20 after about 450, instead of running to its
    --max-blocks; a non-regression test (-20, 0) accepts H1 (V2 is no worse) alike."""
    for nelo1, blocks in ((40.0, 115), (20.0, 450)):
        t = score_sprt.t_of_nelo(nelo1)
        per_block = math.log(1.0 - t * t / (1.0 + t * t))
        assert score_sprt.llr(ScoreState.of({0.0: 100}), 0.0, nelo1) == pytest.approx(100 * per_block, rel=0.05)
        assert score_sprt.status(ScoreState.of({0.0: blocks - 10}), 0.0, nelo1).verdict is None
        assert score_sprt.status(ScoreState.of({0.0: blocks + 10}), 0.0, nelo1).verdict == "H0"
    assert score_sprt.status(ScoreState.of({0.0: 460}), -20.0, 0.0).verdict == "H1"


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60), st.floats(-60, 60), st.floats(1, 60))
def test_llr_favours_the_hypothesis_beyond_the_data(worse: int, alike: int, better: int, nelo0: float,
                                                     gap: float) -> None:
    """The likelihood ratio is monotone: blocks whose t-value lies above nelo1's favour H1, below nelo0's H0."""
    if worse + better + alike == 0:
        return
    nelo1 = nelo0 + gap
    reg = np.array([c if c > 0 else 1e-3 for c in (worse, alike, better)], dtype=float)
    f = reg / reg.sum()
    t_hat = (f[2] - f[0]) / math.sqrt(f[0] + f[2] - (f[2] - f[0]) ** 2)
    value = score_sprt.llr(ScoreState.of({-1.0: worse, 0.0: alike, 1.0: better}), nelo0, nelo1)
    if t_hat >= score_sprt.t_of_nelo(nelo1):
        assert value > 0
    elif t_hat <= score_sprt.t_of_nelo(nelo0):
        assert value < 0


def test_llr_zero_before_the_first_block_and_signs() -> None:
    assert score_sprt.llr(ScoreState.new(), 0, 5) == 0.0
    ahead = ScoreState.of({0.0: 40, 2.0: 8, -1.0: 2, 5.0: 1})
    assert score_sprt.llr(ahead, 0, 50) > 0
    assert score_sprt.llr(ahead, 0, 50) == pytest.approx(-score_sprt.llr(ahead, 50, 0))
    with pytest.raises(SprtError):
        score_sprt.llr(ahead, 5, 5)
    with pytest.raises(SprtError):
        score_sprt.llr(ahead, 0, 5000)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.integers(-20, 20).map(lambda v: v / 3), st.integers(1, 30), min_size=1, max_size=12),
       st.floats(-80, 80), st.floats(1, 80))
def test_llr_mirrors_with_the_outcomes(counts: dict[float, int], nelo0: float, gap: float) -> None:
    """V2's gains are V1's losses: the outcomes negated under the hypotheses negated give the same LLR; only the
    signs count."""
    nelo1 = nelo0 + gap
    state = ScoreState.of(counts)
    mirrored = ScoreState.of({-v: n for v, n in counts.items()})
    value = score_sprt.llr(state, nelo0, nelo1)
    assert math.isfinite(value)
    assert score_sprt.llr(mirrored, -nelo0, -nelo1) == pytest.approx(value, abs=1e-6 * (1 + abs(value)))
    signs = ScoreState.of([(float(np.sign(v)) * 7, n) for v, n in counts.items()])
    assert score_sprt.llr(signs, nelo0, nelo1) == pytest.approx(value, abs=1e-9)
    vectorised = score_sprt.llr_counts(np.array([score_sprt.sign_counts(state)] * 2, dtype=float), nelo0, nelo1)
    assert vectorised.tolist() == pytest.approx([value, value], abs=1e-9)  # the plain-float path agrees


def test_estimate_and_status() -> None:
    state = ScoreState.of({0.0: 5, 2.0: 3, 0.5: 1, -1.0: 1})  # signs: 1 worse, 5 alike, 4 better
    nelo, margin = score_sprt.estimate(state)
    mean = 3 / 10
    t = mean / math.sqrt(5 / 10 - mean * mean)
    assert nelo == pytest.approx(score_sprt.nelo_of_t(t))
    assert margin == pytest.approx(score_sprt.nelo_of_t(1.959964 * math.sqrt((1 + t * t / 2) / 10)), rel=1e-5)
    assert score_sprt.mean_outcome(state) == pytest.approx((6 + 0.5 - 1) / 10)
    assert all(math.isnan(x) for x in score_sprt.estimate(ScoreState.of({0.0: 5})))
    assert score_sprt.estimate(ScoreState.of({1.0: 3}))[0] == math.inf
    s = score_sprt.status(state, 0.0, 30.0)
    assert s.blocks == 10 and s.lower < s.llr < s.upper and s.verdict is None and s.elo == nelo
    assert score_sprt.status(ScoreState.of({0.0: 100, 3.0: 40, -1.0: 2}), 0.0, 30.0).verdict == "H1"
    assert score_sprt.status(ScoreState.of({0.0: 100, -3.0: 40, 1.0: 2}), 0.0, 30.0).verdict == "H0"
    assert score_sprt.nelo_of_t(score_sprt.t_of_nelo(17.0)) == pytest.approx(17.0)


SIM_TESTS = 2000
SIM_NELO1 = 40.0
SIM_TOLERANCE = 0.02


def _trinomial(nelo: float, alike: float = 0.6) -> np.ndarray:
    """(worse, alike, better) probabilities with ``alike`` of the blocks ending alike and block t-value
    ``t_of_nelo(nelo)``: with q = 1 - alike and m = better - worse, m / sqrt(q - m^2) = t gives m = t sqrt(q / (1 +
    t^2))."""
    t = score_sprt.t_of_nelo(nelo)
    q = 1.0 - alike
    m = t * math.sqrt(q / (1 + t * t))
    return np.array([(q - m) / 2, alike, (q + m) / 2])


def _simulate(rng: np.random.Generator, nelo: float, tests: int, max_blocks: int = 5000) -> tuple[np.ndarray, np.ndarray]:
    probs = _trinomial(nelo)
    counts = np.zeros((tests, 3))
    verdict = np.zeros(tests, dtype=int)
    blocks = np.zeros(tests, dtype=int)
    lower, upper = bounds(0.05, 0.05)
    running = np.arange(tests)
    for _ in range(max_blocks):
        if running.size == 0:
            break
        counts[running, rng.choice(3, size=running.size, p=probs)] += 1
        blocks[running] += 1
        llr = score_sprt.llr_counts(counts[running], 0.0, SIM_NELO1)
        decided = np.where(llr >= upper, 1, np.where(llr <= lower, -1, 0))
        verdict[running] = decided
        running = running[decided == 0]
    return verdict, blocks


def test_error_rates_by_simulation() -> None:
    """2,000 tests with V2 exactly nelo0 = 0 better (H0 true) and 2,000 exactly nelo1 = 40 better (H1 true),
    alpha = beta = 5 %, 60 % of the blocks ending alike: the false-positive and false-negative rates are within 2
    points of 5 % (seeded; standard error of a 5 % rate over 2,000 tests: 0.5 point)."""
    rng = np.random.default_rng(20261205)
    under_h0, _ = _simulate(rng, 0.0, SIM_TESTS)
    under_h1, blocks = _simulate(rng, SIM_NELO1, SIM_TESTS)
    assert np.all(under_h0 != 0) and np.all(under_h1 != 0), "every test reaches a verdict"
    false_positive = float(np.mean(under_h0 == 1))
    false_negative = float(np.mean(under_h1 == -1))
    assert abs(false_positive - 0.05) <= SIM_TOLERANCE, false_positive
    assert abs(false_negative - 0.05) <= SIM_TOLERANCE, false_negative
    assert 50 < blocks.mean() < 1000
    # what `arena sprt` says a test will take (Wald's approximation) is within a quarter of the simulated mean
    assert blocks.mean() == pytest.approx(score_sprt.expected_blocks(0.0, SIM_NELO1), rel=0.25), blocks.mean()


def test_expected_blocks_grow_as_the_square_of_the_inverse_gap() -> None:
    assert score_sprt.expected_blocks(0, 10) == pytest.approx(4 * score_sprt.expected_blocks(0, 20))
    assert score_sprt.expected_blocks(-5, 0) == pytest.approx(score_sprt.expected_blocks(0, 5))
    assert score_sprt.expected_blocks(0, 40, 0.01, 0.01) > score_sprt.expected_blocks(0, 40)
    with pytest.raises(SprtError):
        score_sprt.expected_blocks(5, 5)


def test_more_blocks_alike_cost_no_more_matches_at_equal_nelo() -> None:
    """The point of normalized Elo: at one nElo gap the test needs about as many blocks whatever the share of
    blocks that end alike (here 30 % against 80 %: within 25 % of each other)."""
    rng = np.random.default_rng(5)
    means = []
    for alike in (0.3, 0.8):
        probs = _trinomial(SIM_NELO1, alike)
        counts = np.zeros((600, 3))
        done = np.zeros(600, dtype=int)
        lower, upper = bounds(0.05, 0.05)
        running = np.arange(600)
        while running.size:
            counts[running, rng.choice(3, size=running.size, p=probs)] += 1
            llr = score_sprt.llr_counts(counts[running], 0.0, SIM_NELO1)
            stop = (llr >= upper) | (llr <= lower)
            done[running[stop]] = counts[running[stop]].sum(axis=-1)
            running = running[~stop]
        means.append(done.mean())
    assert means[0] == pytest.approx(means[1], rel=0.25), means


def test_a_forfeited_seat_scores_no_better_than_the_seats_ranked_ahead_of_it() -> None:
    """A forfeit the failure policy ranked last (t11-000214 of a review: V1's seat took 61 bullheads, rank 4 of 4)
    counted +1.33, better than its table's mean, from the scores alone; with the ranks it counts as the worst score
    ranked ahead of it (77), and the block goes to V2. Ranks that follow the scores change nothing."""
    v1_scores, v1_ranks = [60, 50, 77, 61], [2, 1, 3, 4]
    v2_scores, v2_ranks = [60, 50, 77, 66], [2, 1, 4, 3]  # V2 at seat 3 played: 66, better than 77
    assert block_score_outcome(v1_scores, v2_scores, 3, True) < 0  # the scores alone: V2 "worse"
    d = block_score_outcome(v1_scores, v2_scores, 3, True, v1_ranks, v2_ranks)
    assert d == round(-(66 - 187 / 3) + (77 - 187 / 3), 6) and d > 0
    assert block_score_outcome(v2_scores, v1_scores, 3, True, v2_ranks, v1_ranks) == -d  # V2 forfeited: V1's block
    # a house bot that forfeited with 2 bullheads, ranked last behind 30: read as 30, not as a table that got better
    assert block_score_outcome([20, 30, 40], [20, 30, 2], 0, True, [1, 2, 3], [1, 2, 3]) == -5.0
    # higher is better: a forfeit at 30 points behind a seat of 20 counts 20
    assert block_score_outcome([30, 20], [25, 20], 0, False, [2, 1], [1, 2]) == round(5 - 0, 6)
    for ranks in ([1, 2, 3, 4], ()):  # ranks from the scores (or none): the scores' outcome
        assert block_score_outcome([4, 8, 9, 12], [6, 8, 9, 12], 0, True, ranks, ranks) == \
            block_score_outcome([4, 8, 9, 12], [6, 8, 9, 12], 0, True)
    with pytest.raises(SprtError, match="ranks are one per seat"):
        block_score_outcome([1, 2], [1, 2], 0, True, [1], [1, 2])
