"""Elo ratings for multiplayer matches (pure math, no Redis): ``docs/DESIGN.md``, "Ratings".

A match of N players ranked by the game's outcome (ties share a rank) is decomposed into its N(N-1)/2 pairs.
Each player's change is ``K/(N-1) * sum_j (S_ij - E_ij)`` over the other players j, all from the pre-match
ratings, with S_ij = 1 when i ranks above j, 1/2 on a tie, 0 below, and the logistic expectation
``E_ij = 1 / (1 + 10 ** ((R_j - R_i) / 400))``. For N = 2 this is classic Elo. The deltas sum to zero and do not
depend on the order in which the players are listed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

INITIAL_RATING = 1500.0
K_FACTOR = 32.0


def expected_score(rating: float, opponent: float) -> float:
    """Elo expectation of a player rated ``rating`` against ``opponent`` (both in Elo points), in 0..1."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def pair_score(rank: int, other_rank: int) -> float:
    """Actual pairwise score from two ranks (1 = best): 1 above, 0.5 tie, 0 below."""
    if rank < other_rank:
        return 1.0
    if rank == other_rank:
        return 0.5
    return 0.0


def elo_deltas(ratings: Sequence[float], ranks: Sequence[int], k: float = K_FACTOR) -> list[float]:
    """Rating change of every player of one match, in the order given.

    Args:
        ratings: pre-match ratings, Elo points, one per player (N >= 2).
        ranks: finishing ranks, 1 = best, equal ranks for tied players (e.g. 1, 2, 2, 4).
        k: K factor, Elo points (default 32).
    Returns:
        ``K/(N-1) * sum_j (S_ij - E_ij)`` per player, Elo points; the values sum to zero (up to rounding).
    Raises:
        ValueError: fewer than 2 players, lengths differ, a rank below 1, or a K that is not positive.
    """
    n = len(ratings)
    if n < 2:
        raise ValueError(f"an Elo update needs at least 2 players, got {n}")
    if len(ranks) != n:
        raise ValueError(f"{n} ratings but {len(ranks)} ranks")
    if any(r < 1 for r in ranks):
        raise ValueError(f"ranks start at 1, got {list(ranks)}")
    if not k > 0:
        raise ValueError(f"K must be positive, got {k}")
    scale = k / (n - 1)
    return [
        scale
        * sum(
            pair_score(ranks[i], ranks[j]) - expected_score(ratings[i], ratings[j])
            for j in range(n)
            if j != i
        )
        for i in range(n)
    ]
