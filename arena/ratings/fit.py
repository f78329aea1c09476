"""Batch rating fit over whole matches, with deal luck taken out and bootstrap intervals over deals.

Pure math (numpy/scipy; no Redis, no clock, no global random generator): ``docs/DESIGN.md``, "Ratings".

**Model.** Plackett-Luce over each match's finishing order, on the Elo scale. Every seat has a *strength*

    u = theta[bot] + seat[N, seat index] + luck[deal, N, hand]

and the order is read as successive choices: the winner is chosen among all N seats with chance
``exp(u_i) / sum_j exp(u_j)``, second place among the rest the same way, and so on. Equivalently each seat draws
``u + Gumbel noise`` and the seats finish in the order of the draws, so the chance that seat i finishes above seat
j is ``1 / (1 + exp(-(u_i - u_j)))``: the Bradley-Terry / Elo expectation. Hence the Elo scale: 400 / ln 10 =
173.7 Elo points per unit of ``u``, and with N = 2 the fit is classic Elo by maximum likelihood.

* ``theta``: the bots' ratings;
* ``seat``: a fixed effect per seat index of each table size (moving first, say); only differences between
  seats matter, and with seat-balanced schedules it changes nothing;
* ``luck``: the luck of the cards, one effect per (deal, hand) that was played at two tables or more (the same
  cards held by different bots, or by the same bot in another seat rotation), as Gaussian random effects with
  standard deviation ``tau``. A (deal, hand) seen at one table only gets no effect: its luck cannot be told
  from the bot's skill and stays in the noise. This is a mixed model (a GLMM, like lme4's ``glmer``): ``tau``
  is chosen by maximising the Laplace approximation of the marginal likelihood (``deal_effects=True``), or
  given (``deal_effects=<Elo>``), or the effects are left out (``False``). The luck is so *taken out* of the
  comparison (a bot that came last with a hand that also sank the other bots who held it is not marked down
  for it), not merely averaged out by a balanced schedule. Ratings of a fit with deal effects are per-deal
  ratings: they predict the order on a deal of average luck, so they spread wider than ratings of the same
  bots fitted without (where the luck is part of the noise and shrinks every difference). Compare bots within
  one fit. ``tests/ratings/test_fit.py`` shows the effect on simulated duplicate deals.

**Ties** (tied places share a competition rank): a tie is split into the orders it could stand for, each with an
equal share of the match's weight: both orders of a two-way tie (so between two players a tie is half a win,
as in Elo), all six of a three-way tie, and the 2t rotations and reversals of a larger one (each tied seat is
above each other in half of them); a match with several ties takes the product of those orders, or (above 64)
as many combined orders as the largest tie has.

Weak Gaussian priors (``prior_sd``, default 1000 Elo, on ratings and seat effects) keep a bot that won or lost
everything finite; ``prior_sd=None`` gives the plain maximum likelihood. Maximisation: ``scipy.optimize.minimize``
(trust-region Newton-CG, "trust-ncg", with the analytic gradient and Hessian-vector product); the ``tau``
search: ``scipy.optimize.minimize_scalar``; the Laplace log-determinant: a sparse LU (``scipy.sparse.linalg``).

**Anchor.** Ratings are shifted so that their mean is ``anchor_rating`` (1500), or so that the ``anchor`` bot has
it (then its interval is a point).

**Intervals.** A nonparametric bootstrap over *deals*, since the results inside a match and across the tables of
one deal are correlated: every table at which one deal was played is one group, a match without a deal (or whose
deal was played once) its own group; each replicate draws as many groups as there are, with replacement
(multinomial weights, ``numpy.random.default_rng(seed)``), refits with ``tau`` fixed and re-anchors. The interval
is ``rating -/+ z * sd*`` (sd* the standard deviation of the replicates, z = 1.96 for 95 %), the "rating +/-
margin" a ladder prints: a standard error is stable with the 100..200 replicates a ladder can afford, where
percentile end points are not (measured on simulated data: 92.5 % coverage of a nominal 95 % with percentiles of
100 replicates, 95.5 % with this). The likelihood of superiority of bot a over bot b is the normal approximation
``Phi((R_a - R_b) / sd*(R_a - R_b))`` with the bootstrap standard deviation of the difference. Floor: every sd*
(of a rating, of a difference) is ``max(bootstrap sd, information sd)``, the information sd from the inverse
Hessian of the penalised likelihood at the fit (Laplace; ``arena.ratings.information``, which says why), since the
bootstrap collapses on data without variety: 10 matches all won by one of two bots give +/- 10 Elo by the
bootstrap alone, +/- 570 with the floor.

**Connected bots.** The fit compares bots only through chains of shared tables. Bots in groups that never met
(``arena.ratings.groups``) can be fitted together, but the gap between the groups is then set by the prior alone and
every margin takes it in (+/- 640 Elo for bots with 108 matches each, +/- 47 in a fit of their own group); the
ladder fits each connected group on its own (``arena.ratings.ladder.fit_groups``).

**Order-free.** Matches are sorted into a canonical order (by deal, then content) before anything else, so a fit
(bootstrap included) does not depend on the order of the stored results.

**Cost.** One fit is a sparse Newton solve over bots + seats + luck effects; the bootstrap refits all replicates
together as one batch (``BATCH_CELLS``). About 0.1 s for 60 matches of 4 bots with 100 replicates, a few
seconds for 500 matches of 8 bots with luck effects, on the 2-core machine; a ladder of 100,000 matches should
cache it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
from scipy import optimize, sparse
from scipy.sparse import linalg as sparse_linalg

from arena.ratings.design import FitError, RatedMatch, _Block, _Design
from arena.ratings.information import anchored_covariance, difference_sd, rating_covariance, seat_hessian
from arena.ratings.margins import ELO_PER_LOGIT

DEFAULT_REPLICATES = 200
DEFAULT_PRIOR_SD = 1000.0  # Elo points: weak, it only keeps all-win and all-loss bots finite
BATCH_CELLS = 2_000_000  # bootstrap fits done together: at most this many (seat, replicate) cells
BOOTSTRAP_GTOL = 1e-5  # gradient norm at which a bootstrap refit stops (its error is then << 0.01 Elo)
TAU_BOUNDS = (0.02, 5.0)  # search range of the deal-luck sd, natural-log odds (3.5 .. 870 Elo)


@dataclass(frozen=True)
class Standing:
    """One line of a fitted ladder. Attributes: rank (1 = best by rating), bot, rating (Elo points), lower and
    upper (the interval, Elo points; None without bootstrap), matches, los_next (likelihood of superiority over
    the bot on the next line, 0..1; None on the last line or without bootstrap)."""

    rank: int
    bot: str
    rating: float
    lower: float | None
    upper: float | None
    matches: int
    los_next: float | None


@dataclass(frozen=True)
class FitResult:
    """A batch fit.

    Attributes:
        bots: bot ids, best rating first (ties by id).
        ratings: bot -> rating, Elo points (anchored).
        margin: bot -> half width of the ``level`` interval, Elo points: z * max(bootstrap sd, information sd)
            (1.96 sd for 95 %); empty without bootstrap.
        lower, upper: bot -> rating -/+ margin, Elo points; empty without bootstrap.
        matches: bot -> matches played.
        samples: bootstrap ratings, array (replicates, len(bots)) in the order of ``bots``, Elo points (anchored);
            nan where a replicate drew no match of the bot. Shape (0, len(bots)) without bootstrap.
        seat_effects: table size N -> N seat effects, Elo points, centred (mean 0), seat 0 first.
        deal_sd: the deal-luck standard deviation ``tau``, Elo points (0.0 without deal effects).
        luck_effects: number of (deal, hand) effects in the model.
        groups: bootstrap groups (deals, plus matches without a shared deal).
        level, replicates, seed, anchor, anchor_rating: the parameters of the fit.
        covariance: observed-information covariance of the anchored ratings, Elo points squared, (len(bots),
            len(bots)) in the order of ``bots`` (``arena.ratings.information``); (0, 0) without bootstrap.
    """

    bots: tuple[str, ...]
    ratings: dict[str, float]
    margin: dict[str, float]
    lower: dict[str, float]
    upper: dict[str, float]
    matches: dict[str, int]
    samples: np.ndarray = field(repr=False)
    seat_effects: dict[int, tuple[float, ...]]
    deal_sd: float
    luck_effects: int
    groups: int
    level: float
    replicates: int
    seed: int
    anchor: str | None
    anchor_rating: float
    covariance: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))

    def _index(self, bot: str) -> int:
        try:
            return self.bots.index(bot)
        except ValueError:
            raise FitError(f"bot {bot!r} has no match in this fit") from None

    def interval(self, bot: str) -> tuple[float, float]:
        """The ``level`` interval of ``bot``'s rating, Elo points. Raises ``FitError`` for an unknown bot or a fit
        without bootstrap."""
        self._index(bot)
        if not self.lower:
            raise FitError("this fit has no bootstrap (replicates=0): no intervals")
        return self.lower[bot], self.upper[bot]

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority of ``a`` over ``b`` (0..1): ``Phi(diff / sd)`` with sd the larger of the
        bootstrap and the information standard deviations of the rating difference (1 or 0 when it is 0 and the
        ratings differ, 1/2 when equal). Raises ``FitError`` for an unknown bot or a fit without bootstrap."""
        i, j = self._index(a), self._index(b)
        if self.samples.shape[0] == 0:
            raise FitError("this fit has no bootstrap (replicates=0): no likelihood of superiority")
        diff = self.ratings[a] - self.ratings[b]
        d = self.samples[:, i] - self.samples[:, j]
        d = d[np.isfinite(d)]
        sd = float(np.std(d, ddof=1)) if d.size > 1 else 0.0
        if self.covariance.shape[0] == len(self.bots):
            sd = max(sd, difference_sd(self.covariance, i, j))
        if sd == 0.0:
            return 0.5 if diff == 0 else (1.0 if diff > 0 else 0.0)
        return NormalDist().cdf(diff / sd)

    def separated(self) -> bool:
        """True when every two bots adjacent by rating have intervals that do not overlap (upper bound of the
        lower bot below the lower bound of the upper bot), i.e. the whole order is resolved at ``level``.
        Raises ``FitError`` without bootstrap."""
        if not self.lower:
            raise FitError("this fit has no bootstrap (replicates=0): nothing is separated")
        return all(self.upper[lo] < self.lower[hi] for hi, lo in zip(self.bots, self.bots[1:]))

    def standings(self) -> list[Standing]:
        """The fitted ladder, best first, with competition ranks by rating (equal ratings share a rank)."""
        out = []
        for k, bot in enumerate(self.bots):
            rank = 1 + sum(1 for b in self.bots if self.ratings[b] > self.ratings[bot])
            nxt = self.bots[k + 1] if k + 1 < len(self.bots) else None
            has_boot = self.samples.shape[0] > 0
            out.append(Standing(
                rank=rank, bot=bot, rating=self.ratings[bot],
                lower=self.lower.get(bot), upper=self.upper.get(bot), matches=self.matches[bot],
                los_next=self.los(bot, nxt) if (nxt is not None and has_boot) else None,
            ))
        return out


def _cumsum(a: np.ndarray) -> np.ndarray:
    """Sums from the first place to each, over axis 0 (places; a loop over the few places is ten times faster
    than ``np.cumsum`` along a leading axis)."""
    out = np.empty_like(a)
    out[0] = a[0]
    for k in range(1, a.shape[0]):
        np.add(out[k - 1], a[k], out=out[k])
    return out


def _revcumsum(a: np.ndarray) -> np.ndarray:
    """Sums from each place to the last, over axis 0 (places)."""
    out = np.empty_like(a)
    out[-1] = a[-1]
    for k in range(a.shape[0] - 2, -1, -1):
        np.add(out[k + 1], a[k], out=out[k])
    return out


class _Problem:
    """Minus the penalised Plackett-Luce log-likelihood of a batch of R independent fits that share the data and
    differ in their ranking weights ``w`` (rankings x R: the bootstrap replicates), with its gradient and
    Hessian-vector product for ``scipy.optimize.minimize``; the parameters are R vectors one after the other.

    For a strict ranking with seat strengths U_0 (best) .. U_{N-1}, E = exp(U), D_k = sum_{l>=k} E_l: the
    log-likelihood is sum_{k<N-1} (U_k - log D_k); with C_l = sum_{k<=min(l,N-2)} 1/D_k its gradient in U is
    [l < N-1] - E_l C_l and minus its Hessian times V is E (V C - cumsum_k (pi_k . V) / D_k), pi_k the choice
    probabilities of place k. The E, 1/D and C of the last point are kept for the Hessian products.
    """

    def __init__(self, d: _Design, w: np.ndarray, precision: np.ndarray) -> None:
        self.d, self.precision = d, precision
        self.w = w.reshape(len(w), -1)
        self.r = self.w.shape[1]
        self._at: np.ndarray | None = None
        self._cache: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def _strengths(self, b: _Block, flat: np.ndarray) -> np.ndarray:
        """Seat strengths (N, rankings, R) of the parameters ``flat`` (R x P, one after the other)."""
        strengths: np.ndarray = (b.S @ flat.reshape(self.r, -1).T).reshape(b.n, b.count, self.r)
        return strengths

    def _to_params(self, b: _Block, per_seat: np.ndarray) -> np.ndarray:
        """Back from (N, rankings, R) seat values to (R, P) parameter sums."""
        sums: np.ndarray = (b.ST @ per_seat.reshape(-1, self.r)).T
        return sums

    def objective(self, flat: np.ndarray) -> tuple[float, np.ndarray]:
        params = flat.reshape(self.r, -1)
        f = 0.5 * float(np.sum(self.precision * params * params))
        grad = self.precision * params
        cache = []
        for b in self.d.blocks:
            w = self.w[b.sl][None, :, :]
            u = self._strengths(b, flat)
            top = u.max(axis=0)
            e = np.exp(u - top)
            den = _revcumsum(e)
            inv = 1.0 / den
            inv[-1] = 0.0
            c = _cumsum(inv)
            last = b.not_last
            f -= float(np.sum(w * (u - np.log(den) - top) * last))
            grad = grad - self._to_params(b, w * (last - e * c))
            cache.append((e, inv, c))
        self._at, self._cache = flat.copy(), cache
        return f, grad.ravel()

    def _state(self, flat: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        if self._at is None or not np.array_equal(flat, self._at):
            self.objective(flat)
        return self._cache

    def hessp(self, flat: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = self.precision * v.reshape(self.r, -1)
        for b, (e, inv, c) in zip(self.d.blocks, self._state(flat)):
            vv = self._strengths(b, v)
            q = _revcumsum(e * vv) * inv
            hv = e * (vv * c - _cumsum(q * inv))
            out = out + self._to_params(b, self.w[b.sl][None, :, :] * hv)
        flat_out: np.ndarray = out.ravel()
        return flat_out

    def gradient_norms(self, flat: np.ndarray) -> np.ndarray:
        """Norm of each fit's gradient at ``flat``, shape (R,)."""
        norms: np.ndarray = np.linalg.norm(self.objective(flat)[1].reshape(self.r, -1), axis=1)
        return norms

    def seat_hessians(self, flat: np.ndarray) -> list[sparse.csr_matrix]:
        """Per block, minus the log-likelihood's Hessian in the seat strengths (``information.seat_hessian``); R = 1."""
        return [seat_hessian(e[:, :, 0], inv[:, :, 0], c[:, :, 0], self.w[b.sl][:, 0])
                for b, (e, inv, c) in zip(self.d.blocks, self._state(flat))]

    def luck_hessian(self, flat: np.ndarray) -> sparse.csc_matrix:
        """Minus the log-likelihood's Hessian in the luck effects (prior left out), sparse (luck x luck); R = 1."""
        d = self.d
        total = sparse.csc_matrix((d.n_luck, d.n_luck))
        for b, hu in zip(d.blocks, self.seat_hessians(flat)):
            s_luck = b.S[:, d.n_fixed:]
            total = total + (s_luck.T @ hu @ s_luck).tocsc()
        return total

    def minimise(self, start: np.ndarray, gtol: float = 1e-7) -> np.ndarray:
        """The R fits from ``start`` ((P,) for all, or (R, P)); returns (R, P). The trust region is shared by
        the batch; a fit of the batch left above ``gtol`` (the region shrank for another one) is redone alone."""
        x0 = np.broadcast_to(start, (self.r, self.d.n_params)).ravel().copy()
        res = optimize.minimize(self.objective, x0, jac=True, hessp=self.hessp, method="trust-ncg",
                                options={"gtol": gtol * math.sqrt(self.r), "maxiter": 1000})
        out = np.asarray(res.x).reshape(self.r, -1).copy()
        if self.r > 1:
            for k in np.flatnonzero(self.gradient_norms(res.x) > gtol):
                out[k] = _Problem(self.d, self.w[:, k], self.precision).minimise(out[k], gtol)[0]
        return out


def _precision(d: _Design, prior_sd: float | None, tau: float | None) -> np.ndarray:
    prec = np.zeros(d.n_params)
    if prior_sd is not None:
        prec[: d.n_fixed] = 1.0 / (prior_sd / ELO_PER_LOGIT) ** 2
    if d.n_luck:
        prec[d.n_fixed:] = 1.0 / (tau if tau else TAU_BOUNDS[0]) ** 2
    return prec


def _laplace(d: _Design, prior_sd: float | None, tau: float, start: np.ndarray) -> tuple[float, np.ndarray]:
    """Minus the Laplace-approximated log marginal likelihood of ``tau`` (up to a constant), and the mode."""
    prec = _precision(d, prior_sd, tau)
    problem = _Problem(d, d.w, prec)
    params = problem.minimise(start)[0]
    f, _ = problem.objective(params)
    hessian = (problem.luck_hessian(params) + sparse.identity(d.n_luck) / tau**2).tocsc()
    lu = sparse_linalg.splu(hessian)
    logdet = float(np.sum(np.log(np.abs(lu.U.diagonal()))) + np.sum(np.log(np.abs(lu.L.diagonal()))))
    return f + d.n_luck * math.log(tau) + 0.5 * logdet, params


def fit_ratings(
    matches: Sequence[RatedMatch],
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
    level: float = 0.95,
    anchor: str | None = None,
    anchor_rating: float = 1500.0,
    seat_effects: bool = True,
    deal_effects: bool | float = True,
    prior_sd: float | None = DEFAULT_PRIOR_SD,
) -> FitResult:
    """Fit the ratings of every bot of ``matches`` (module docstring: model, anchor, bootstrap).

    Args:
        matches: ``RatedMatch``s of one game (any order; the order changes nothing).
        replicates: bootstrap replicates (0: point estimates only, no intervals or LOS).
        seed: seed of the bootstrap draws (``numpy.random.default_rng(seed)``).
        level: interval confidence, in (0, 1) (0.95: rating -/+ 1.96 bootstrap standard deviations).
        anchor: bot id given ``anchor_rating`` (None: the mean rating is ``anchor_rating``).
        anchor_rating: Elo points (1500).
        seat_effects: fit a fixed effect per seat index of each table size.
        deal_effects: True: (deal, hand) luck effects with their sd chosen by Laplace marginal likelihood; a
            number: with that sd, Elo points (> 0); False: none.
        prior_sd: sd of the Gaussian prior on ratings and seat effects, Elo points (None: none, plain maximum
            likelihood, which diverges for a bot that won or lost every pair or a bot set split in two).
    Returns:
        ``FitResult`` (ratings, intervals and bootstrap samples in Elo points).
    Raises:
        FitError: no match, a bad match, an anchor that has no match, replicates < 0, a level outside (0, 1),
        a deal-effect sd or prior sd that is not positive.
    """
    fixed_tau = _fixed_tau(matches, replicates, level, prior_sd, deal_effects)
    d = _Design(matches, seat_effects, deal_effects is not False)
    if anchor is not None and anchor not in d.bots:
        raise FitError(f"anchor bot {anchor!r} has no match in this fit")
    params, tau = _point_fit(d, prior_sd, fixed_tau)
    prec = _precision(d, prior_sd, tau if d.n_luck else None)
    anchor_index = None if anchor is None else d.bots.index(anchor)
    nb = len(d.bots)
    point = _anchored(params[:nb], anchor_index, anchor_rating)
    samples = _bootstrap(d, params, prec, replicates, seed, anchor_index, anchor_rating)

    order = sorted(range(nb), key=lambda i: (-point[i], d.bots[i]))
    bots = tuple(d.bots[i] for i in order)
    samples = samples[:, order]
    ratings = {d.bots[i]: float(point[i]) for i in order}
    lower: dict[str, float] = {}
    upper: dict[str, float] = {}
    margin: dict[str, float] = {}
    covariance = np.zeros((0, 0))
    if replicates:
        problem = _Problem(d, d.w, prec)
        cov = rating_covariance([b.S for b in d.blocks], problem.seat_hessians(params), prec, nb, d.n_fixed,
                                ridge=prior_sd is None)
        covariance = anchored_covariance(cov, anchor_index)[np.ix_(order, order)]
        z = NormalDist().inv_cdf(0.5 + level / 2.0)
        for k, bot in enumerate(bots):
            column = samples[:, k][np.isfinite(samples[:, k])]
            boot = float(np.std(column, ddof=1)) if column.size > 1 else 0.0  # none: the information sd alone
            margin[bot] = z * max(boot, math.sqrt(max(0.0, covariance[k, k])))
            lower[bot], upper[bot] = ratings[bot] - margin[bot], ratings[bot] + margin[bot]
    seat = {}
    for n, sl in d.seat_slices.items():
        e = params[sl] * ELO_PER_LOGIT
        seat[n] = tuple(float(x) for x in e - e.mean())
    return FitResult(
        bots=bots, ratings=ratings, margin=margin, lower=lower, upper=upper, matches={b: d.matches[b] for b in bots},
        samples=samples, seat_effects=seat, deal_sd=tau * ELO_PER_LOGIT if d.n_luck else 0.0,
        luck_effects=d.n_luck, groups=d.groups, level=level, replicates=replicates, seed=seed, anchor=anchor,
        anchor_rating=anchor_rating, covariance=covariance,
    )


def _fixed_tau(matches: Sequence[RatedMatch], replicates: int, level: float, prior_sd: float | None,
               deal_effects: bool | float) -> float | None:
    """Check the arguments of ``fit_ratings`` (``FitError`` naming the bad one); the deal-luck sd it was given,
    natural-log odds, or None (chosen by the fit, or no luck effects)."""
    if not matches:
        raise FitError("a batch fit needs at least one match, got none")
    if replicates < 0:
        raise FitError(f"replicates cannot be negative, got {replicates}")
    if not 0.0 < level < 1.0:
        raise FitError(f"the confidence level is a fraction in (0, 1), got {level!r}")
    if prior_sd is not None and not prior_sd > 0:
        raise FitError(f"prior_sd is a positive number of Elo points or None, got {prior_sd!r}")
    if isinstance(deal_effects, bool):
        return None
    if not deal_effects > 0:
        raise FitError(f"a deal-effect sd is a positive number of Elo points, got {deal_effects!r}")
    return float(deal_effects) / ELO_PER_LOGIT


def _point_fit(d: _Design, prior_sd: float | None, fixed_tau: float | None) -> tuple[np.ndarray, float]:
    """The fitted parameters (P,) and the deal-luck sd (natural-log odds; 0 without luck effects): ``fixed_tau``,
    or the one maximising the Laplace marginal likelihood (``minimize_scalar`` over ``TAU_BOUNDS``)."""
    start = np.zeros(d.n_params)
    if d.n_luck == 0:
        return _Problem(d, d.w, _precision(d, prior_sd, None)).minimise(start)[0], 0.0
    if fixed_tau is not None:
        return _Problem(d, d.w, _precision(d, prior_sd, fixed_tau)).minimise(start)[0], fixed_tau
    warm = {"x": start}

    def minus_log_marginal(log_tau: float) -> float:
        value, mode = _laplace(d, prior_sd, math.exp(log_tau), warm["x"])
        warm["x"] = mode
        return value

    found = optimize.minimize_scalar(minus_log_marginal, bounds=tuple(math.log(t) for t in TAU_BOUNDS),
                                     method="bounded", options={"xatol": 0.02})
    tau = math.exp(float(found.x))
    return _Problem(d, d.w, _precision(d, prior_sd, tau)).minimise(warm["x"])[0], tau


def _anchored(theta_logit: np.ndarray, anchor: int | None, anchor_rating: float,
              present: np.ndarray | None = None) -> np.ndarray:
    """Ratings in Elo points from natural-log odds: the ``anchor``-th has ``anchor_rating``, else their mean (over
    the ``present`` ones) has it."""
    elo: np.ndarray = theta_logit * ELO_PER_LOGIT
    if anchor is not None:
        anchored_elo: np.ndarray = elo - elo[anchor] + anchor_rating
        return anchored_elo
    mask = np.ones(len(elo), bool) if present is None else present
    centred: np.ndarray = elo - elo[mask].mean() + anchor_rating
    return centred


def _bootstrap(d: _Design, params: np.ndarray, prec: np.ndarray, replicates: int, seed: int, anchor: int | None,
               anchor_rating: float) -> np.ndarray:
    """The anchored ratings of every bootstrap replicate over deals, (replicates, bots) in ``d.bots`` order; NaN
    for a bot (or, anchored, a whole replicate) that the replicate's draw left without a match."""
    nb = len(d.bots)
    samples = np.empty((replicates, nb))
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(d.groups, np.full(d.groups, 1.0 / d.groups), size=replicates)  # (R, groups)
    batch = max(1, min(replicates, BATCH_CELLS // max(1, sum(b.S.shape[0] for b in d.blocks))))
    for first in range(0, replicates, batch):
        c = counts[first:first + batch]
        reps = _Problem(d, d.w[:, None] * c.T[d.unit_group], prec).minimise(params, gtol=BOOTSTRAP_GTOL)
        for k, (rep, cnt) in enumerate(zip(reps, c)):
            present = (d.bot_group @ cnt) > 0
            if anchor is not None and not present[anchor]:
                samples[first + k] = np.nan
            else:
                samples[first + k] = np.where(present, _anchored(rep[:nb], anchor, anchor_rating, present), np.nan)
    return samples


