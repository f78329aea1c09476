"""SPRT on paired blocks: "is V2 better than V1 by ``elo1`` rather than by ``elo0``?" (pure math, numpy only).

**Blocks.** One block is one deal played at two tables: V1 holds seat s at one table and V2 holds seat s at the other,
so both get the same hand of the same deal, s rotating over the seats across blocks (``arena.tournaments.sprt_plan``
builds them). With 2 seats and no field the tables are V1 against V2 and V2 against V1 (fishtest's game pair: the two
versions share the deal). With a field the other seats are held by field bots, different ones at the two tables (no
field bot, nor owner, sees a deal twice); the two groups of field bots swap tables in the next block, so each meets V1
as often as V2. The deal's luck then hits V1 and V2 alike; the opponents' strength is balanced over pairs of blocks. A
table played again after a crash of the arena gets a fresh deal (its attempt number is in the deal's HMAC input): that
block still compares V1 and V2 at the same seat against balanced opponents, so it is unbiased, but its two tables no
longer share the cards, and it reduces the variance less.

Each version's result at its table is its pairwise points against the other seats (1 per seat it finished
above, 1/2 per tie: ``p`` in 0..N-1); the block's outcome is V2's points minus V1's,
stored exactly as the whole number of half points ``h = 2 (p2 - p1)`` in ``-2(N-1) .. 2(N-1)``
(``block_outcome``), i.e. the difference ``d = h / (2 (N - 1))`` in -1..1 of the two per-opponent scores.

**Elo.** Hypotheses are about the mean of ``d``: V2 is ``elo`` Elo points better when it gains, per opponent,
as much pairwise score as an ``elo``-stronger player scores above 1/2 against an equal one:
``mu(elo) = 1 / (1 + 10 ** (-elo / 400)) - 1/2``. This is exact under Bradley-Terry / Plackett-Luce when the
field is as strong as V1 (a pairwise expectation against an equal opponent is 1/2); against a much weaker or much
stronger field the same skill gap yields a smaller ``d``, so the test is of the gap *as seen against this field*.
**Head to head** (``head_to_head=True``: 2 seats, V1 against V2 at both tables, no field) V1's opponent is V2, so
V1 scores ``1 - E`` rather than 1/2 and ``d = 2 S - 1`` with ``S`` V2's mean score of the game pair: then
``mu(elo) = 2 / (1 + 10 ** (-elo / 400)) - 1``, which makes the test exactly fishtest's pentanomial SPRT on game
pairs (it tests the mean pair score ``S`` against the logistic expectation ``E(elo)``), and the Elo estimate
inverts it (``score_to_elo((1 + mean d) / 2)``).

**Test.** A generalised SPRT (the one fishtest runs on its pentanomial game pairs, here over the 4(N-1)+1 categories
of ``h``; head to head with N = 2 it is exactly fishtest's pentanomial model): the LLR is the log of the ratio of the
multinomial likelihoods maximised under ``E[d] = mu(elo1)`` and under ``E[d] = mu(elo0)``; the constrained maximum is
``p_i = f_i / (1 + lam (a_i - mu))`` with ``lam`` the root of ``sum f_i (a_i - mu) / (1 + lam (a_i - mu)) = 0``
(one-dimensional, monotone: found by a safeguarded Newton iteration, vectorised so that thousands of tests run at once
in the simulation test). Empty categories get a count of 1e-3 first, as fishtest does, so that the constraint can
always be met. (The normal approximation ``n (mu1 - mu0) (2 mean - mu0 - mu1) / (2 var)`` is not offered: with the few
blocks at which a clear difference is decided its variance estimate is too noisy.) Wald's bounds: accept H0 (elo0)
when ``LLR <= ln(beta / (1 - alpha))``, H1 (elo1) when ``LLR >= ln((1 - beta) / alpha)``.

**State.** ``SprtState`` holds only the seat count and the count of blocks per outcome: order-free, JSON-ready
(``to_dict``/``from_dict``), so it can live in Redis and be updated idempotently by a caller that records which
blocks it has counted. The error rates are checked by simulation in ``tests/ratings/test_sprt.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from arena.core.errors import ArenaError
from arena.ratings.margins import elo_to_score, pairwise_counts, score_to_elo

REGULARIZE = 1e-3  # pseudo-count of an empty outcome category (fishtest's regularize)
H0 = "H0"
H1 = "H1"


class SprtError(ArenaError, ValueError):
    """An SPRT input that cannot be used; the message names the bad value."""


@dataclass(frozen=True)
class SprtState:
    """Blocks counted so far by outcome: ``counts[h + 2(N-1)]`` blocks ended with V2 ``h`` half points ahead.

    Attributes: seats (N, 2..10: table size of every block); counts (4(N-1)+1 whole numbers >= 0).
    Build the empty state with ``SprtState.new(seats)``; never mutate, ``update`` returns a new one.
    """

    seats: int
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.seats, int) or not 2 <= self.seats <= 10:
            raise SprtError(f"an SPRT block is a pair of tables of 2..10 seats, got seats={self.seats!r}")
        width = 4 * (self.seats - 1) + 1
        if len(self.counts) != width or any((not isinstance(c, int)) or c < 0 for c in self.counts):
            raise SprtError(f"a {self.seats}-seat SPRT state needs {width} block counts >= 0, got {self.counts!r}")

    @classmethod
    def new(cls, seats: int) -> SprtState:
        """The state before any block, for tables of ``seats`` seats."""
        if not isinstance(seats, int) or not 2 <= seats <= 10:
            raise SprtError(f"an SPRT block is a pair of tables of 2..10 seats, got seats={seats!r}")
        return cls(seats, (0,) * (4 * (seats - 1) + 1))

    @property
    def blocks(self) -> int:
        """Blocks counted."""
        return sum(self.counts)

    @property
    def max_half_points(self) -> int:
        """Largest |h|: 2 (N - 1)."""
        return 2 * (self.seats - 1)

    def outcomes(self) -> tuple[float, ...]:
        """The value ``d = h / (2 (N - 1))`` (-1..1) of each count's category, in the order of ``counts``."""
        m = self.max_half_points
        return tuple((i - m) / m for i in range(2 * m + 1))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"seats": N, "counts": [...]}``."""
        return {"seats": self.seats, "counts": list(self.counts)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SprtState:
        """Inverse of ``to_dict``. Raises ``SprtError`` for a missing field or bad counts."""
        try:
            return cls(int(data["seats"]), tuple(int(c) for c in data["counts"]))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, SprtError):
                raise
            raise SprtError(f"malformed SPRT state {data!r}: {exc}") from exc


def block_outcome(v1_ranks: Sequence[int], v2_ranks: Sequence[int], seat: int) -> int:
    """Outcome of one block in half points: ``2 * (p2 - p1)``, with ``p1`` the pairwise points (wins + ties/2
    against the other seats) of the seat ``seat`` at V1's table (competition ranks ``v1_ranks``, seat order) and
    ``p2`` the same at V2's table. Raises ``SprtError`` when the tables differ in size or the seat is not one."""
    if len(v1_ranks) != len(v2_ranks):
        raise SprtError(f"a block's two tables have the same seats, got {list(v1_ranks)} and {list(v2_ranks)}")
    try:
        w1, d1, _ = pairwise_counts(tuple(v1_ranks), seat)
        w2, d2, _ = pairwise_counts(tuple(v2_ranks), seat)
    except ValueError as exc:
        raise SprtError(str(exc)) from exc
    return (2 * w2 + d2) - (2 * w1 + d1)


def update(state: SprtState, outcome: int) -> SprtState:
    """The state after one more block whose outcome is ``outcome`` half points (``block_outcome``).
    Raises ``SprtError`` when the outcome is not a whole number in ``-2(N-1) .. 2(N-1)``."""
    m = state.max_half_points
    if isinstance(outcome, bool) or not isinstance(outcome, (int, np.integer)) or not -m <= outcome <= m:
        raise SprtError(f"a {state.seats}-seat block outcome is a whole number of half points in -{m}..{m}, "
                        f"got {outcome!r}")
    counts = list(state.counts)
    counts[int(outcome) + m] += 1
    return SprtState(state.seats, tuple(counts))


def expected_outcome(elo: float, head_to_head: bool = False) -> float:
    """``mu(elo)``: the mean block outcome ``d`` (per-opponent score difference) of a V2 that is ``elo`` Elo points
    better than V1 (module docstring): ``E(elo) - 1/2`` (-1/2..1/2) against a field, ``2 E(elo) - 1`` (-1..1) head to
    head."""
    if head_to_head:
        return 2.0 * elo_to_score(elo) - 1.0
    return elo_to_score(elo) - 0.5


def bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's LLR bounds ``(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))``: -2.94, 2.94 at 5 %/5 %.
    Raises ``SprtError`` unless 0 < alpha, beta and alpha + beta < 1."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise SprtError(f"SPRT error rates need 0 < alpha, beta and alpha + beta < 1, got {alpha!r}, {beta!r}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def expected_blocks(elo0: float, elo1: float, seats: int, alpha: float = 0.05, beta: float = 0.05,
                    head_to_head: bool = False) -> float:
    """About how many blocks the test takes when V2 is exactly ``elo1`` (or ``elo0``: the larger of the two) Elo
    points better: Wald's approximation of the expected sample size, the LLR bound over the mean LLR gain per block
    ``(mu1 - mu0)^2 / (2 var)`` (normal approximation), with ``var = (N + 1) / (6 (N - 1))`` the variance of ``d``
    when each table's finishing order is uniform and the tables independent (two equal versions, no ties). Tables
    that share a deal make ``d`` less variable, so this is an upper estimate: at 5 %/5 % head to head about 12,800
    blocks for Elo 0 against 5, 800 for 0 against 20. Raises ``SprtError`` as ``llr`` and for fewer than 2 seats."""
    _check_elos(elo0, elo1)
    if seats < 2:
        raise SprtError(f"an SPRT block has 2 or more seats, got {seats}")
    lower, upper = bounds(alpha, beta)
    var = (seats + 1) / (6.0 * (seats - 1))
    step = (expected_outcome(elo1, head_to_head) - expected_outcome(elo0, head_to_head)) ** 2 / (2.0 * var)
    return max((1 - beta) * upper + beta * lower, -(alpha * upper + (1 - alpha) * lower)) / step


def _check_elos(elo0: float, elo1: float) -> None:
    if not (math.isfinite(elo0) and math.isfinite(elo1)) or elo0 == elo1:
        raise SprtError(f"the SPRT needs two different finite Elo hypotheses, got elo0={elo0!r} elo1={elo1!r}")


def _lambda(freqs: np.ndarray, values: np.ndarray, mu: float, iterations: int = 100) -> np.ndarray:
    """Root ``lam`` of ``g(lam) = sum_i f_i (a_i - mu) / (1 + lam (a_i - mu)) = 0`` per row of ``freqs`` (..., K).

    ``g`` is the derivative of the concave ``sum_i f_i log(1 + lam (a_i - mu))``, falling from +inf to -inf on
    the domain ``(-1/(max a - mu), 1/(mu - min a))`` when every f_i > 0 and ``min a < mu < max a``. Newton's
    method on it, a step that would leave the domain going half way to its edge instead.
    """
    x = values - mu  # (K,)
    lo, hi = -1.0 / x.max(), -1.0 / x.min()
    lam = np.zeros(freqs.shape[:-1])
    for _ in range(iterations):
        r = x / (1.0 + lam[..., None] * x)
        g = (freqs * r).sum(axis=-1)
        new = lam + g / (freqs * r * r).sum(axis=-1)
        new = np.where(new >= hi, 0.5 * (lam + hi), np.where(new <= lo, 0.5 * (lam + lo), new))
        done = np.abs(new - lam) <= 1e-13 * (1.0 + np.abs(lam))
        lam = new
        if np.all(done):
            break
    return lam


def llr_counts(counts: np.ndarray, seats: int, elo0: float, elo1: float, head_to_head: bool = False) -> np.ndarray:
    """Vectorised LLR: ``counts`` is an array (..., 4(N-1)+1) of block counts (rows of ``SprtState.counts``);
    returns the LLR of H1 (``elo1``) against H0 (``elo0``) per row, shape (...); 0 for a row without blocks.
    ``head_to_head``: blocks of V1 against V2 (2 seats, module docstring). Raises ``SprtError`` for equal or
    infinite Elo hypotheses, a wrong width, or ``head_to_head`` with more than 2 seats."""
    if head_to_head and seats != 2:
        raise SprtError(f"a head-to-head block is V1 against V2 on 2 seats, got seats={seats}")
    _check_elos(elo0, elo1)
    counts = np.asarray(counts, dtype=float)
    m = 2 * (seats - 1)
    if counts.shape[-1] != 2 * m + 1:
        raise SprtError(f"a {seats}-seat SPRT has {2 * m + 1} outcome categories, got {counts.shape[-1]}")
    values = (np.arange(2 * m + 1) - m) / m
    mu0, mu1 = expected_outcome(elo0, head_to_head), expected_outcome(elo1, head_to_head)
    n_raw = counts.sum(axis=-1)
    reg = np.where(counts > 0, counts, REGULARIZE)
    n = reg.sum(axis=-1)
    freqs = reg / n[..., None]
    lam0 = _lambda(freqs, values, mu0)
    lam1 = _lambda(freqs, values, mu1)
    terms = np.log1p(lam0[..., None] * (values - mu0)) - np.log1p(lam1[..., None] * (values - mu1))
    out = (reg * terms).sum(axis=-1)
    return np.where(n_raw > 0, out, 0.0)


def llr(state: SprtState, elo0: float = 0.0, elo1: float = 5.0, head_to_head: bool = False) -> float:
    """Log-likelihood ratio of "V2 is ``elo1`` Elo better" against "V2 is ``elo0`` Elo better" after the blocks of
    ``state`` (generalised SPRT, module docstring; ``head_to_head``: V1 against V2). 0.0 before the first block.
    Raises ``SprtError`` for equal or infinite hypotheses."""
    return float(llr_counts(np.array(state.counts), state.seats, elo0, elo1, head_to_head))


@dataclass(frozen=True)
class SprtStatus:
    """Where an SPRT stands. Attributes: verdict ("H1": V2 is better by elo1, "H0": not better than elo0, None:
    keep playing); llr and the bounds lower/upper (natural log); blocks; elo and margin (the Elo estimate of V2
    over V1 from the mean outcome, and half the width of its 95 % interval, Elo points; nan with fewer than two
    blocks); elo0, elo1, alpha, beta (the test's parameters)."""

    verdict: str | None
    llr: float
    lower: float
    upper: float
    blocks: int
    elo: float
    margin: float
    elo0: float
    elo1: float
    alpha: float
    beta: float


def estimate(state: SprtState, level: float = 0.95, head_to_head: bool = False) -> tuple[float, float]:
    """Elo of V2 over V1 from the mean block outcome ``d``, inverting ``mu``: ``score_to_elo(1/2 + mean d)``
    (``score_to_elo((1 + mean d) / 2)`` head to head), and its ``level`` margin (half the Elo width of the normal
    interval of the mean, as ``margins.elo_margin`` does). ``(nan, nan)`` without blocks; the margin is nan with
    one block. +/-inf when the mean reaches +/-1/2 (head to head: +/-1)."""
    n = state.blocks
    if n == 0:
        return math.nan, math.nan
    values = np.array(state.outcomes())
    counts = np.array(state.counts, dtype=float)
    mean = float((counts * values).sum() / n)

    def to_elo(d: float) -> float:
        score = (1.0 + d) / 2.0 if head_to_head else 0.5 + d
        return score_to_elo(min(max(score, 0.0), 1.0))

    elo = to_elo(mean)
    if n < 2:
        return elo, math.nan
    se = math.sqrt(float((counts * (values - mean) ** 2).sum() / n) / n)
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    return elo, (to_elo(mean + z * se) - to_elo(mean - z * se)) / 2.0


def status(state: SprtState, elo0: float = 0.0, elo1: float = 5.0, alpha: float = 0.05,
           beta: float = 0.05, head_to_head: bool = False) -> SprtStatus:
    """The verdict, LLR, bounds and Elo estimate of ``state`` (see ``SprtStatus``; ``head_to_head``: blocks of V1
    against V2, module docstring). Raises ``SprtError`` for bad error rates or hypotheses."""
    lower, upper = bounds(alpha, beta)
    value = llr(state, elo0, elo1, head_to_head)
    decided = H1 if value >= upper else H0 if value <= lower else None
    elo, margin = estimate(state, head_to_head=head_to_head)
    return SprtStatus(verdict=decided, llr=value, lower=lower, upper=upper, blocks=state.blocks, elo=elo,
                      margin=margin, elo0=elo0, elo1=elo1, alpha=alpha, beta=beta)


def verdict(state: SprtState, elo0: float = 0.0, elo1: float = 5.0, alpha: float = 0.05,
            beta: float = 0.05, head_to_head: bool = False) -> str | None:
    """"H1" once the LLR reaches Wald's upper bound (V2 is better by ``elo1``), "H0" once it reaches the lower
    bound (V2 is not better than ``elo0``), else None (play more blocks)."""
    return status(state, elo0, elo1, alpha, beta, head_to_head).verdict


VERDICT_WORDS = {
    "H1": "V2 is better: accept H1",
    "H0": "V2 is not better: accept H0",
    "inconclusive": "inconclusive: no decision",
}
"""A verdict of the test, for people: "H1" (V2 is ``elo1`` better), "H0" (it is not, ``elo0``), "inconclusive"."""


def verdict_text(verdict: str, elo0: float, elo1: float, unit: str = "Elo") -> str:
    """``VERDICT_WORDS`` of ``verdict`` with what the test compared: H0 says V2 is not ``elo1`` better, not that it
    is no better at all (a smaller gain is not ruled out), e.g. "V2 is not 40 nElo better: accept H0 (the blocks
    favour +0 over +40 nElo; a smaller gain is not ruled out)"; with ``elo1`` <= 0 (a non-regression test) H0 says V2
    is worse, H1 that it is not worse by -``elo0``. An unknown verdict is returned as it is."""
    if verdict == H1 and elo1 <= 0:  # a non-regression test (H0 a loss, H1 none)
        return (f"V2 is not worse by {-elo0:g} {unit}: accept H1 (the blocks favour {elo1:+g} over {elo0:+g} "
                f"{unit}: no regression of that size)")
    if verdict == H0 and elo1 <= 0:
        return (f"V2 is worse: accept H0 (the blocks favour {elo0:+g} over {elo1:+g} {unit}: a regression; a smaller "
                f"loss is not ruled out)")
    if verdict == H1:
        return f"V2 is better: accept H1 (the blocks favour {elo1:+g} over {elo0:+g} {unit})"
    if verdict == H0:
        return (f"V2 is not {elo1:g} {unit} better: accept H0 (the blocks favour {elo0:+g} over {elo1:+g} {unit}; "
                f"a smaller gain is not ruled out)")
    return VERDICT_WORDS.get(verdict, verdict)


def estimate_text(elo: float, margin: float, relative: bool, short: bool = False) -> str:
    """An SPRT's estimate for people: "Elo +12.3 ± 45.6" ("nElo" when ``relative``: the paired test on relative
    scores); "Elo -" before a block (``elo`` NaN); an infinite estimate (V2's mean block outcome at or past what
    the Elo model reaches: +/-1/2 a block against a field or house bots, +/-1 head to head, where it won every
    game) says that no finite estimate exists, and an infinite margin (the interval's end past that limit) that no
    finite margin does; ``short``: the figures only ("± inf" then "(margin unbounded)")."""
    name = "nElo" if relative else "Elo"
    if math.isnan(elo):
        return f"{name} -"
    if math.isinf(elo) and not short:
        sign = "+" if elo > 0 else "-"
        if relative:
            return f"{name} {sign}inf (every block went {'V2' if elo > 0 else 'V1'}'s way: no finite estimate yet)"
        return (f"{name} {sign}inf (the mean block outcome reaches what the Elo model can express, as when one "
                f"version wins every game, or the other bots are far weaker: no finite estimate)")
    if math.isinf(margin):
        return f"{name} {elo:+.1f} " + ("(margin unbounded)" if short else
                                        "(its 95 % interval reaches past what the Elo model can express: no finite "
                                        "margin)")
    spread = "" if math.isnan(margin) else f" ± {margin:.1f}"
    return f"{name} {elo:+.1f}{spread}"
