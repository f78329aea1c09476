"""SPRT on the relative-score difference of paired blocks, hypotheses in normalized Elo (pure math, numpy only).

The paired test (``arena sprt V1 V2 --house ...``, ``arena.tournaments.sprt_plan``) plays one scenario twice: the
same deal, the same house bots in the same seats and the same seat seeds, V1 at seat s of one table and V2 at seat
s of the other. ``arena.ratings.sprt`` compares the two tables by pairwise points (ranks); this module compares
them by the game's scores, which show what the two versions did differently even when the ranks stay the same.

**Outcome.** A version's *relative score* at its table is how much better its game score is than the mean of the
other seats' scores, ``r = sign * (score_V - mean of the others)`` with ``sign = -1`` when a lower score is better
(a penalty score) and ``+1`` otherwise; the block's outcome is ``d = r(V2's table) - r(V1's table)``, in the
game's score units (``block_score_outcome``), stored as it is (``ScoreState``; the mean is shown to people).

**Statistic.** The test runs on the sign of ``d``: +1 when V2 ended better relative to its table than V1 did in
the same scenario, 0 when both ended alike (identical games end alike), -1 when worse: a paired sign test, so
"better" means *better in more scenarios than worse*. Not the mean of ``d``: its distribution is skewed and
heavy-tailed (one different early choice can swing the score of a whole hand), which made a
sequential test of its mean accept a non-existent gap too often (7-8 % at a nominal 5 %, ``docs/ab-tests.md``),
while its sign carries more information per block (2.6 times, measured on versions that differ in one
rule).

**Normalized Elo.** The hypotheses fix the sign's mean in units of its standard deviation, the block's t-value
``t = (P(+1) - P(-1)) / sd``; as in fishtest's normalized Elo for game pairs a block is two matches, and
``nelo = t / sqrt(2) * 800 / ln(10)`` (``t_of_nelo``, ``nelo_of_t``): the matches a test with bounds
``[0, nelo1]`` needs depend on ``nelo1`` alone, whatever the share of blocks that end alike.

**Likelihood.** Blocks are independent draws of a trinomial (worse, alike, better) with unknown probabilities.
Under hypothesis ``t_j`` the trinomial is the one of greatest likelihood ``sum_i f_i ln p_i`` subject to
``sum_i p_i a_i = t_j * sigma(p)`` (a_i = -1, 0, 1; the generalised SPRT under a t-value constraint, as fishtest's
normalized SPRT). On three categories it has a closed shape: with ``u^2 = P(-1) + P(+1)`` and
``c = t / sqrt(1 + t^2)`` the constraint gives ``P(+/-1) = u (u +/- c) / 2``, ``P(0) = 1 - u^2``, and the
likelihood is concave in ``u`` on ``(|c|, 1)``: its maximum is the root of the derivative, found by bisection
(``_constrained``). An empty category counts ``REGULARIZE``. The LLR is ``sum_i f_i ln(p1_i / p0_i)``;
Wald's bounds as in ``arena.ratings.sprt.bounds``. Error rates are checked by simulation in
``tests/ratings/test_score_sprt.py`` and on measured outcome distributions by ``tools/ab_tests.py``.

**State.** Blocks counted per outcome value ``d`` (``ScoreState``): order-free and JSON-ready, so it lives in Redis.
Outcome values are rounded to ``DIGITS`` decimals, so that equal outcomes computed along different paths share a
category.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from arena.ratings.sprt import H0, H1, SprtError, SprtStatus, bounds

REGULARIZE = 1e-3  # pseudo-count of a value of the support not seen yet (fishtest's regularize)
DIGITS = 6  # outcome values are rounded to this many decimals
NELO_PER_T = 800.0 / math.log(10.0) / math.sqrt(2.0)  # nElo of a block t-value of 1 (a block is 2 matches)
MAX_NELO = 1000.0  # |nelo| hypotheses above this are refused: t > 4, a difference no test needs
STATISTIC = "score"  # the name SprtParams.statistic gives this test ("points": arena.ratings.sprt)


def t_of_nelo(nelo: float) -> float:
    """The block t-value ``E[d] / sd(d)`` of a normalized Elo difference: ``nelo * sqrt(2) * ln(10) / 800``."""
    return nelo / NELO_PER_T


def nelo_of_t(t: float) -> float:
    """Inverse of ``t_of_nelo``: normalized Elo of a block t-value."""
    return t * NELO_PER_T


def expected_blocks(nelo0: float, nelo1: float, alpha: float = 0.05, beta: float = 0.05) -> float:
    """About how many blocks a test with hypotheses ``nelo0 < nelo1`` takes when V2 is exactly ``nelo1`` better
    (or ``nelo0``: the larger of the two): Wald's approximation of the expected sample size, ``((1 - beta) B + beta
    A) / ((t1 - t0)^2 / 2)`` with ``A``, ``B`` the LLR bounds and ``t`` the block t-values (normal approximation
    of the per-block LLR). Between the two the test takes longer, far outside them shorter; it depends on the gap
    alone (normalized Elo), not on the share of blocks that end alike. At 5 %/5 %: about 42 blocks for a gap of 87,
    12,800 for 5. Raises ``SprtError`` as ``llr``."""
    _check_nelos(nelo0, nelo1)
    lower, upper = bounds(alpha, beta)
    step = (t_of_nelo(nelo1) - t_of_nelo(nelo0)) ** 2 / 2  # the mean LLR gain per block at either hypothesis
    return max((1 - beta) * upper + beta * lower, -(alpha * upper + (1 - alpha) * lower)) / step


def block_score_outcome(v1_scores: Sequence[float], v2_scores: Sequence[float], seat: int,
                        lower_is_better: bool, v1_ranks: Sequence[int] = (), v2_ranks: Sequence[int] = ()) -> float:
    """Outcome ``d`` of one block (module docstring): V2's relative score at seat ``seat`` of its table minus V1's
    at the same seat of its table, in the game's score units, rounded to ``DIGITS`` decimals. ``v1_scores`` and
    ``v2_scores``: final game score per seat (seat order) of V1's and V2's tables; ``v1_ranks`` and ``v2_ranks``
    (optional): the tables' stored competition ranks, which the failure policy sets apart from the scores for a
    seat that forfeited (ranked last, whatever its score): every seat's score then counts as no better than the
    score of any seat ranked ahead of it, so a forfeit (the version's, or a house bot's) never scores better than
    its rank (a forfeiting seat's default actions may have taken few points). Raises ``SprtError`` when the tables
    differ in size, have fewer than 2 seats, the seat is not one of them, a score is not finite, or ranks given are
    not one per seat."""
    if len(v1_scores) != len(v2_scores) or len(v1_scores) < 2:
        raise SprtError(f"a block's two tables have the same 2 or more seats, got scores {list(v1_scores)} and "
                        f"{list(v2_scores)}")
    if not 0 <= seat < len(v1_scores):
        raise SprtError(f"seat {seat} is not a seat of a {len(v1_scores)}-seat table")
    if not all(math.isfinite(float(s)) for s in (*v1_scores, *v2_scores)):
        raise SprtError(f"game scores are finite numbers, got {list(v1_scores)} and {list(v2_scores)}")
    if any(ranks and len(ranks) != len(v1_scores) for ranks in (v1_ranks, v2_ranks)):
        raise SprtError(f"ranks are one per seat, got {list(v1_ranks)} and {list(v2_ranks)}")
    sign = -1.0 if lower_is_better else 1.0
    k = len(v1_scores)

    def relative(scores: Sequence[float], ranks: Sequence[int]) -> float:
        good = [sign * float(s) for s in scores]  # higher is better
        if ranks:  # ranked behind a seat: scored no better than it
            good = [min([g, *(good[j] for j in range(k) if int(ranks[j]) < int(ranks[i]))]) for i, g in enumerate(good)]
        return good[seat] - (sum(good) - good[seat]) / (k - 1)

    return _canonical(relative(v2_scores, v2_ranks) - relative(v1_scores, v1_ranks))


def _canonical(value: float) -> float:
    out = round(float(value), DIGITS)
    return 0.0 if out == 0 else out  # no -0.0 category


@dataclass(frozen=True)
class ScoreState:
    """Blocks counted so far by outcome value: ``counts`` maps ``d`` (rounded to ``DIGITS`` decimals) to its number
    of blocks (> 0). Never mutate; ``update`` returns a new state. ``ScoreState.new()`` is the state before any
    block."""

    counts: tuple[tuple[float, int], ...] = ()

    def __post_init__(self) -> None:
        for value, n in self.counts:
            if not isinstance(n, int) or n <= 0 or not math.isfinite(value):
                raise SprtError(f"a score SPRT state counts finite outcomes with whole numbers > 0, got "
                                f"{value!r}: {n!r}")

    @classmethod
    def new(cls) -> ScoreState:
        """The state before any block."""
        return cls(())

    @classmethod
    def of(cls, counts: Mapping[float, int] | Iterable[tuple[float, int]]) -> ScoreState:
        """The state of outcome value -> blocks (values rounded to ``DIGITS`` decimals; equal ones merged, zero
        counts dropped). Raises ``SprtError`` for a negative or non-whole count or a value that is not finite."""
        merged: dict[float, int] = {}
        items = counts.items() if isinstance(counts, Mapping) else counts
        for value, n in items:
            try:
                v, c = _canonical(float(value)), int(n)
            except (TypeError, ValueError) as exc:
                raise SprtError(f"a score SPRT count is a number of blocks per outcome, got {value!r}: {n!r}") from exc
            if c != n or c < 0 or not math.isfinite(v):
                raise SprtError(f"a score SPRT count is a whole number >= 0 per finite outcome, got {value!r}: {n!r}")
            if c:
                merged[v] = merged.get(v, 0) + c
        return cls(tuple(sorted(merged.items())))

    @property
    def blocks(self) -> int:
        """Blocks counted."""
        return sum(n for _, n in self.counts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"counts": {"<d>": blocks, ...}}`` (values as ``repr`` of the float)."""
        return {"counts": {repr(v): n for v, n in self.counts}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoreState:
        """Inverse of ``to_dict``. Raises ``SprtError`` for a missing field or bad counts."""
        try:
            return cls.of({float(k): v for k, v in dict(data["counts"]).items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise SprtError(f"malformed score SPRT state {data!r}: {exc}") from exc


def update(state: ScoreState, outcome: float) -> ScoreState:
    """The state after one more block with outcome ``outcome`` (``block_score_outcome``). Raises ``SprtError`` for
    a value that is not a finite number."""
    if isinstance(outcome, bool) or not isinstance(outcome, (int, float, np.integer, np.floating)):
        raise SprtError(f"a score block outcome is a number, got {outcome!r}")
    merged = dict(state.counts)
    value = _canonical(float(outcome))
    if not math.isfinite(value):
        raise SprtError(f"a score block outcome is a finite number, got {outcome!r}")
    merged[value] = merged.get(value, 0) + 1
    return ScoreState(tuple(sorted(merged.items())))


SIGNS = np.array([-1.0, 0.0, 1.0])  # the statistic's values: V2 worse, alike, better


def sign_counts(state: ScoreState) -> tuple[int, int, int]:
    """Blocks by the sign of their outcome: (V2 worse, alike, better)."""
    worse = sum(n for v, n in state.counts if v < 0)
    better = sum(n for v, n in state.counts if v > 0)
    return worse, state.blocks - worse - better, better


def _check_nelos(nelo0: float, nelo1: float) -> None:
    if not (math.isfinite(nelo0) and math.isfinite(nelo1)) or nelo0 == nelo1:
        raise SprtError(f"the SPRT needs two different finite normalized Elo hypotheses, got {nelo0!r}, {nelo1!r}")
    if max(abs(nelo0), abs(nelo1)) > MAX_NELO:
        raise SprtError(f"normalized Elo hypotheses are within +/-{MAX_NELO:g}, got {nelo0!r}, {nelo1!r}")


def _constrained(counts: np.ndarray, t: float, iterations: int = 200) -> np.ndarray:
    """The trinomial (..., 3) (worse, alike, better) of greatest likelihood ``sum_i f_i ln p_i`` for the counts
    ``counts`` (..., 3, all > 0) with ``(p_+ - p_-) / sd == t``.

    With ``s = p_- + p_+`` the constraint gives ``p_+ - p_- = c sqrt(s)``, ``c = t / sqrt(1 + t^2)``, so with
    ``u = sqrt(s)`` in ``(|c|, 1)``: ``p_+/- = u (u +/- c) / 2``, ``p_0 = 1 - u^2``, and the log-likelihood's derivative
    ``(f_- + f_+) / u + f_- / (u - c) + f_+ / (u + c) - 2 f_0 u / (1 - u^2)`` falls strictly from +inf to -inf on that
    interval (every term falls): its root, found by bisection, is the unique maximum."""
    c = t / math.sqrt(1.0 + t * t)
    if counts.ndim == 1:  # one test: the same bisection in plain floats (numpy costs more than it saves here)
        one = _best_u(float(counts[0]), float(counts[1]), float(counts[2]), c)
        return np.array([one * (one - c) / 2.0, 1.0 - one * one, one * (one + c) / 2.0])
    f_minus, f_zero, f_plus = counts[..., 0], counts[..., 1], counts[..., 2]
    lo = np.full(counts.shape[:-1], abs(c))
    hi = np.ones(counts.shape[:-1])
    for _ in range(iterations):
        u = 0.5 * (lo + hi)
        slope = (f_minus + f_plus) / u + f_minus / (u - c) + f_plus / (u + c) - 2.0 * f_zero * u / (1.0 - u * u)
        lo, hi = np.where(slope > 0, u, lo), np.where(slope > 0, hi, u)
        if np.all(hi - lo <= 1e-15):
            break
    u = 0.5 * (lo + hi)
    return np.stack([u * (u - c) / 2.0, 1.0 - u * u, u * (u + c) / 2.0], axis=-1)


def _best_u(f_minus: float, f_zero: float, f_plus: float, c: float) -> float:
    """``_constrained``'s root ``u`` for one trinomial of counts (all > 0)."""
    lo, hi = abs(c), 1.0
    while hi - lo > 1e-15:
        u = 0.5 * (lo + hi)
        if u in (lo, hi):
            break
        slope = (f_minus + f_plus) / u + f_minus / (u - c) + f_plus / (u + c) - 2.0 * f_zero * u / (1.0 - u * u)
        lo, hi = (u, hi) if slope > 0 else (lo, u)
    return 0.5 * (lo + hi)


def llr_counts(counts: np.ndarray, nelo0: float, nelo1: float) -> np.ndarray:
    """Vectorised LLR: ``counts`` (..., 3) blocks by sign (V2 worse, alike, better; ``sign_counts``); returns the
    LLR of H1 (``nelo1``) against H0 (``nelo0``) per row, shape (...); 0 for a row without blocks. Blocks that end
    alike count too: a hypothesis of a t-value ``t`` other than 0 needs at least ``c^2 = t^2 / (1 + t^2)`` of the
    blocks to differ, so a run of blocks all alike (identical versions) moves the LLR towards the hypothesis nearer
    0, at ``ln(1 - c^2)`` per block for H1 against an H0 of 0 (an identical V2 accepts H0 of a test of ``--elo1
    20`` after about 450 blocks, of 40 after about 115). Raises ``SprtError`` for equal, infinite or out-of-range
    hypotheses or a wrong width."""
    _check_nelos(nelo0, nelo1)
    counts = np.asarray(counts, dtype=float)
    if counts.shape[-1] != 3:
        raise SprtError(f"the score SPRT counts blocks by sign (worse, alike, better), got width {counts.shape[-1]}")
    reg = np.where(counts > 0, counts, REGULARIZE)
    p0 = _constrained(reg, t_of_nelo(nelo0))
    p1 = _constrained(reg, t_of_nelo(nelo1))
    out = (reg * (np.log(p1) - np.log(p0))).sum(axis=-1)
    return np.where(counts.sum(axis=-1) > 0, out, 0.0)


def llr(state: ScoreState, nelo0: float = 0.0, nelo1: float = 5.0) -> float:
    """LLR of "V2 is ``nelo1`` normalized Elo better" against ``nelo0`` after the blocks of ``state`` (module
    docstring); 0.0 before the first block. Raises ``SprtError`` for bad hypotheses."""
    return float(llr_counts(np.array(sign_counts(state), dtype=float), nelo0, nelo1))


def estimate(state: ScoreState, level: float = 0.95) -> tuple[float, float]:
    """Normalized Elo of V2 over V1 from the blocks' signs, ``t = (better - worse) / n / sd`` (``nelo_of_t``), and
    its ``level`` margin (half the width of the normal interval of the t-value, whose standard error is
    ``sqrt((1 + t^2 / 2) / n)``), nElo. ``(nan, nan)`` with fewer than two blocks or while every block ended alike;
    ``(+/-inf, nan)`` when every block went V2's way (against it) and none ended alike: no spread to scale by."""
    worse, alike, better = sign_counts(state)
    n = worse + alike + better
    if n < 2 or worse + better == 0:
        return math.nan, math.nan
    mean = (better - worse) / n
    sd = math.sqrt((better + worse) / n - mean * mean)
    if sd == 0:
        return (math.inf if mean > 0 else -math.inf), math.nan
    t = mean / sd
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    return nelo_of_t(t), nelo_of_t(z * math.sqrt((1.0 + t * t / 2.0) / n))


def mean_outcome(state: ScoreState) -> float:
    """Mean block outcome ``d`` (game score units: how much better V2's relative score is than V1's); nan without
    blocks."""
    n = state.blocks
    return sum(v * c for v, c in state.counts) / n if n else math.nan


def status(state: ScoreState, nelo0: float = 0.0, nelo1: float = 5.0, alpha: float = 0.05,
           beta: float = 0.05) -> SprtStatus:
    """The verdict, LLR, bounds and normalized Elo estimate of ``state`` (``SprtStatus`` whose ``elo``, ``margin``,
    ``elo0`` and ``elo1`` are normalized Elo). Raises ``SprtError`` for bad error rates or hypotheses."""
    lower, upper = bounds(alpha, beta)
    value = llr(state, nelo0, nelo1)
    decided = H1 if value >= upper else H0 if value <= lower else None
    elo, margin = estimate(state)
    return SprtStatus(verdict=decided, llr=value, lower=lower, upper=upper, blocks=state.blocks, elo=elo,
                      margin=margin, elo0=nelo0, elo1=nelo1, alpha=alpha, beta=beta)
