"""Elo difference, 95 % margin and likelihood of superiority from win/draw/loss counts (pure math, stdlib only).

The formulas of the chess match tools (fastchess, cutechess-cli), for two players or for one player's pairwise
results inside multiplayer matches (a match of N seats gives N - 1 pairwise results per bot: above = win, tie =
draw, below = loss):

* score ``s = (W + D/2) / N`` over ``N = W + D + L`` games; Elo difference ``-400 * log10(1/s - 1)``;
* per-game variance ``(W (1-s)^2 + D (1/2-s)^2 + L s^2) / N``, standard error of the score ``sqrt(var / N)``;
  the margin is half the Elo width of the normal interval ``s -/+ z * se`` (z = 1.96 for 95 %), so an Elo
  interval that is not symmetric is reported as one number, as those tools do;
* likelihood of superiority ``LOS = 1/2 + 1/2 * erf((W - L) / sqrt(2 (W + L)))`` (draws carry no information).

Golden vector (fastchess): W 60, D 20, L 20 gives +147.2 +/- 66.0 Elo and LOS 100.0 %.

A perfect or a nil score has no finite margin by those formulas (the interval reaches a score of 1 or 0, i.e.
infinity; so does a short record near one, 1 draw and 1 loss). ``bounded_margin`` then adds ``PRIOR_DRAWS``
virtual draws (BayesElo's prior: two virtual draws between every two players) and takes z times the delta-method
standard error of the Elo performance, ``ELO_PER_LOGIT * se / (s (1 - s))``, which is finite for every record of
two games or more: 60 wins and no loss give +/- 240.7 Elo where the plain formula gives infinity.

The margin assumes independent games. Pairwise results taken from multiplayer matches are correlated (the N - 1
results of one bot in one match, and the tables of one deal), so the margin is then too narrow: use
``arena.ratings.fit`` (a bootstrap over deals) for standings people act on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

ELO_PER_LOGIT = 400.0 / math.log(10.0)  # Elo points per natural-log odds unit (173.72)
PRIOR_DRAWS = 2  # virtual draws added to a perfect or nil record (BayesElo's default prior)
MIN_MATCHES = 5  # a ladder bot with fewer matches shows "too few matches" instead of a margin


def score_to_elo(score: float) -> float:
    """Elo difference (Elo points) at which the logistic model expects ``score`` (0..1, 1/2 = equal).

    ``-400 * log10(1/score - 1)``; ``-inf`` at 0 and ``+inf`` at 1. Raises ``ValueError`` outside 0..1.
    """
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"a score is a fraction of points between 0 and 1, got {score!r}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return 0.0 - 400.0 * math.log10(1.0 / score - 1.0)  # 0.0 - x: an even score gives 0.0, not -0.0


def elo_to_score(elo: float) -> float:
    """Expected score (0..1) of a player ``elo`` Elo points stronger: ``1 / (1 + 10 ** (-elo / 400))``."""
    if elo == math.inf:
        return 1.0
    if elo == -math.inf:
        return 0.0
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority (0..1): the probability that the player is stronger, from wins and losses
    alone (draws carry no information): ``1/2 + 1/2 * erf((W - L) / sqrt(2 (W + L)))``; 1/2 with no decisive
    game. Raises ``ValueError`` for a negative count."""
    if wins < 0 or losses < 0:
        raise ValueError(f"win and loss counts cannot be negative, got W={wins} L={losses}")
    if wins + losses == 0:
        return 0.5
    return 0.5 + 0.5 * math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses)))


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference with its margin, as a chess match tool prints it (``+147.2 +/- 66.0``).

    Attributes: elo (Elo points; +/-inf for a perfect or a nil score); margin (Elo points, half the width of the
    ``level`` interval; inf when the score is 0 or 1, nan with one game or less); score (0..1); games (N);
    los (likelihood of superiority, 0..1); level (confidence, e.g. 0.95).
    """

    elo: float
    margin: float
    score: float
    games: int
    los: float
    level: float

    def __str__(self) -> str:
        return f"{self.elo:+.1f} +/- {self.margin:.1f} Elo (LOS {100 * self.los:.1f} %, {self.games} games)"


def elo_margin(wins: int, draws: int, losses: int, level: float = 0.95) -> EloEstimate:
    """Elo difference and its ``level`` margin from win/draw/loss counts (the fastchess/cutechess formulas above).

    Args:
        wins: games won (>= 0).
        draws: games drawn (>= 0).
        losses: games lost (>= 0); at least one game in all.
        level: two-sided confidence of the margin, in (0, 1) (default 0.95: z = 1.96).
    Returns:
        ``EloEstimate``; W 60 D 20 L 20 gives elo 147.19, margin 66.01.
    Raises:
        ValueError: a negative count, no game at all, or a level outside (0, 1).
    """
    if wins < 0 or draws < 0 or losses < 0:
        raise ValueError(f"game counts cannot be negative, got W={wins} D={draws} L={losses}")
    n = wins + draws + losses
    if n == 0:
        raise ValueError("an Elo estimate needs at least one game, got W=0 D=0 L=0")
    if not 0.0 < level < 1.0:
        raise ValueError(f"the confidence level is a fraction in (0, 1), got {level!r}")
    score = (wins + draws / 2.0) / n
    elo = score_to_elo(score)
    if score in (0.0, 1.0):
        margin = math.inf
    elif n < 2:
        margin = math.nan
    else:
        variance = (wins * (1.0 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score**2) / n
        se = math.sqrt(variance / n)
        z = NormalDist().inv_cdf(0.5 + level / 2.0)
        low, high = max(score - z * se, 0.0), min(score + z * se, 1.0)
        margin = (score_to_elo(high) - score_to_elo(low)) / 2.0
    return EloEstimate(elo=elo, margin=margin, score=score, games=n, los=los(wins, losses), level=level)


def pairwise_counts(ranks: Sequence[int], seat: int) -> tuple[int, int, int]:
    """Wins, draws and losses of the player at ``seat`` against each other player of one match, from the
    competition ranks of the match (1 = best, ties share a rank). Raises ``ValueError`` for a bad seat or rank."""
    if not 0 <= seat < len(ranks):
        raise ValueError(f"seat {seat} is not a seat of a {len(ranks)}-player match")
    if any(r < 1 for r in ranks):
        raise ValueError(f"ranks start at 1, got {list(ranks)}")
    mine = ranks[seat]
    others = [r for i, r in enumerate(ranks) if i != seat]
    return (sum(1 for r in others if mine < r), sum(1 for r in others if mine == r),
            sum(1 for r in others if mine > r))


def bounded_margin(wins: int, draws: int, losses: int, level: float = 0.95, prior_draws: int = PRIOR_DRAWS) -> float:
    """A finite ``level`` margin, Elo points, for every record of at least two games (module docstring).

    The fastchess margin of ``elo_margin`` when it is finite; when it is not (a perfect or nil score, or a short
    record whose interval reaches a score of 0 or 1), ``prior_draws`` virtual draws are added and the margin is
    ``z * ELO_PER_LOGIT * se / (s (1 - s))``, the delta-method half width of the Elo performance's normal interval
    (z = 1.96 for 95 %). Returns nan for fewer than two games (nothing to measure a spread on). Raises
    ``ValueError`` like ``elo_margin`` and for a negative ``prior_draws``.
    """
    if prior_draws < 0:
        raise ValueError(f"virtual draws cannot be negative, got {prior_draws}")
    plain = elo_margin(wins, draws, losses, level)
    if plain.games < 2:
        return math.nan
    if math.isfinite(plain.margin):
        return plain.margin
    d = draws + prior_draws
    n = wins + d + losses
    score = (wins + d / 2.0) / n
    if score in (0.0, 1.0):
        return math.inf  # no virtual draw asked for: the plain answer stands
    variance = (wins * (1.0 - score) ** 2 + d * (0.5 - score) ** 2 + losses * score**2) / n
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    return z * ELO_PER_LOGIT * math.sqrt(variance / n) / (score * (1.0 - score))
