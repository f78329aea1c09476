"""Observed-information (Laplace) covariance of the batch fit's ratings: the floor under its bootstrap intervals.

Pure math (numpy/scipy), used by ``arena.ratings.fit``; see that module's docstring, "Intervals".

**Why a floor.** The bootstrap over deals measures the spread of the fit over data sets like the one observed. When
the data have no variety it has nothing to resample: two bots, 10 matches all won by one of them, and every
replicate is again 10 wins, so the bootstrap sd is 0 and the interval a point (1925.6 +/- 10.5 Elo without this
floor), although 10 games say little about *how much* better the winner is. The model knows better: the curvature
of the penalised log-likelihood at the fit is flat along the winner's rating (one more win barely changes the
likelihood), so its inverse, the Laplace approximation of the posterior covariance under the weak prior, is wide
(about 290 Elo sd per rating, 1.96 sd = 570 Elo, with the default 1000 Elo prior).

**Rule.** Every standard deviation the fit reports (each bot's anchored rating, and each rating difference for
the likelihood of superiority) is ``max(bootstrap sd, information sd)``. With plenty of varied data the two agree
(both estimate the sampling sd of a regular maximum likelihood estimate), so the max changes the interval by no
more than the noise of a 100..200-replicate bootstrap; the bootstrap stays the one that counts when results are
correlated beyond the model (it resamples whole deals, a cluster-robust estimate where the information one is not),
and the information one counts when the bootstrap collapses (perfect records, a few deals, a bot met in one deal).
Taking the larger is the conservative choice: an interval people act on, and that ``--until-separated`` stops on,
should not be narrower than either honest estimate.

**Computation.** The Hessian of minus the penalised log-likelihood in all parameters (bots, seat effects, luck
effects), ``H = sum_blocks S^T Hu S + diag(precision)`` with ``Hu`` the Plackett-Luce Hessian in the seat
strengths (``seat_hessian``), is sparse; one sparse LU of it and ``len(bots)`` solves give the bots' block of
``H^-1`` (the seat and luck effects integrated out, as their Schur complement would). Without a prior
(``prior_sd=None``) the ratings are defined only up to a common shift, so ``H`` is singular: a ridge of sd
``RIDGE_SD`` Elo on the fixed effects makes it invertible and leaves every anchored rating and difference
unchanged (they do not move along the shift). Cost: about that of one Laplace step of the deal-luck search,
0.4 s for 20,000 matches of 16 bots with 20,000 luck effects (whose fit with 100 replicates takes 90 s).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as sparse_linalg

from arena.ratings.margins import ELO_PER_LOGIT

RIDGE_SD = 1e5  # Elo points: the ridge of a fit without prior (only the unidentified common shift feels it)


def seat_hessian(e: np.ndarray, inv: np.ndarray, c: np.ndarray, w: np.ndarray) -> sparse.csr_matrix:
    """Minus the Hessian of the weighted Plackett-Luce log-likelihood of one block of strict rankings, in the
    seat strengths, sparse ((N * rankings) square, rows place-major as the block's ``S``).

    Args: e, inv, c: the block's ``exp(U)``, ``1/D_k`` (0 at the last place) and ``C_l`` (``fit._Problem``), each
    (N, rankings); w: ranking weights (rankings,). Per ranking it is ``diag(E C) - sum_k pi_k pi_k^T``, pi_k the
    choice probabilities of place k."""
    e, inv, c = e.T, inv.T, c.T  # (rankings, N)
    count, n = e.shape
    place = np.arange(n)
    pi = e[:, None, :] * inv[:, :, None] * (place[None, :] >= place[:, None])[None]  # (rankings, k, l)
    h = (e * c)[:, :, None] * np.eye(n)[None] - np.einsum("rkl,rkm->rlm", pi, pi)
    h *= w[:, None, None]
    base = np.arange(count)[:, None, None]  # row of (ranking r, place l): l * count + r
    rows = np.broadcast_to(base + count * place[None, :, None], h.shape).ravel()
    cols = np.broadcast_to(base + count * place[None, None, :], h.shape).ravel()
    return sparse.csr_matrix((h.ravel(), (rows, cols)), shape=(count * n, count * n))


def rating_covariance(designs: Sequence[sparse.csr_matrix], seat_hessians: Sequence[sparse.csr_matrix],
                      precision: np.ndarray, n_bots: int, n_fixed: int, ridge: bool) -> np.ndarray:
    """The bots' block of the inverse of minus the penalised log-likelihood's Hessian, natural-log odds squared,
    (n_bots, n_bots), the first ``n_bots`` parameters being the bots'.

    Args: designs: each block's ``S`` (rows: seat strengths, columns: parameters); seat_hessians: each block's
    ``seat_hessian``; precision: the prior precision of every parameter; n_fixed: parameters before the luck
    effects (bots and seats); ridge: add the ``RIDGE_SD`` ridge to the fixed effects (a fit without prior)."""
    n_params = precision.shape[0]
    diag = precision.astype(float).copy()
    if ridge:
        diag[:n_fixed] += (ELO_PER_LOGIT / RIDGE_SD) ** 2
    hessian = sparse.diags(diag).tocsc()
    for s, hu in zip(designs, seat_hessians):
        hessian = hessian + (s.T @ hu @ s).tocsc()
    lu = sparse_linalg.splu(hessian.tocsc())
    rhs = np.zeros((n_params, n_bots))
    rhs[np.arange(n_bots), np.arange(n_bots)] = 1.0
    cov = np.asarray(lu.solve(rhs))[:n_bots]
    symmetric: np.ndarray = (cov + cov.T) / 2.0
    return symmetric


def anchored_covariance(cov_logit: np.ndarray, anchor: int | None) -> np.ndarray:
    """Covariance (Elo points squared) of the anchored ratings ``theta - theta[anchor]`` (``anchor`` an index) or
    ``theta - mean(theta)`` (None), from the covariance of ``theta`` in natural-log odds."""
    nb = cov_logit.shape[0]
    contrast = np.eye(nb)
    if anchor is None:
        contrast -= 1.0 / nb
    else:
        contrast[:, anchor] -= 1.0
    out = contrast @ cov_logit @ contrast.T * ELO_PER_LOGIT**2
    symmetric: np.ndarray = (out + out.T) / 2.0
    return symmetric


def difference_sd(cov: np.ndarray, i: int, j: int) -> float:
    """Standard deviation of rating i minus rating j from the covariance ``cov`` (0 for i == j; never negative)."""
    return float(np.sqrt(max(0.0, cov[i, i] + cov[j, j] - 2.0 * cov[i, j])))
