"""Simulated match results of known strengths, for the rating tests (numpy, seeded; no game engine).

A table is a Plackett-Luce draw: the seat strength is the bot's strength (natural-log odds) plus the luck of its
hand, plus independent standard Gumbel noise, and the seats finish in the order of the totals (no ties). Given the
luck, seat i finishes above seat j with chance ``1 / (1 + exp(-(u_i - u_j)))``: exactly the fit's model, so the
true ratings are known on its scale (Elo = natural-log odds * 400 / ln 10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from arena.ratings import RatedMatch
from arena.ratings.margins import ELO_PER_LOGIT


def ranks_of(totals: np.ndarray) -> tuple[int, ...]:
    """Competition ranks (1 = highest total) of distinct totals."""
    order = np.argsort(-totals)
    ranks = np.empty(len(totals), dtype=int)
    ranks[order] = np.arange(1, len(totals) + 1)
    return tuple(int(r) for r in ranks)


def play(rng: np.random.Generator, strengths: Mapping[str, float], seats: Sequence[str],
         luck: np.ndarray) -> tuple[int, ...]:
    """Ranks of one table: ``seats`` in seat order, ``luck`` per seat (log odds)."""
    totals = np.array([strengths[b] for b in seats]) + luck + rng.gumbel(size=len(seats))
    return ranks_of(totals)


def logits(elos: Mapping[str, float]) -> dict[str, float]:
    """Elo points -> natural-log odds."""
    return {b: e / ELO_PER_LOGIT for b, e in elos.items()}


def random_deals(rng: np.random.Generator, elos: Mapping[str, float], seats: int, matches: int,
                 luck_sd: float = 0.0) -> list[RatedMatch]:
    """``matches`` tables of ``seats`` bots drawn at random, each with a fresh deal (no deal id)."""
    strengths = logits(elos)
    bots = sorted(strengths)
    out = []
    for k in range(matches):
        table = [str(b) for b in rng.choice(bots, size=seats, replace=False)]
        ranks = play(rng, strengths, table, rng.normal(0.0, luck_sd, size=seats))
        out.append(RatedMatch(tuple(table), ranks, match_id=f"m{k:05d}"))
    return out


def duplicate_deals(rng: np.random.Generator, elos: Mapping[str, float], seats: int, rounds: int,
                    luck_sd: float, lucky: str | None = None) -> list[RatedMatch]:
    """Duplicate deals: in each round the bots are split at random into tables of ``seats``, and each of
    ``seats`` deals is played at every table (no bot sees a deal twice when there are 2+ tables; the seating
    rotates with the deal so that every bot holds every hand once per round). Hand h of a deal has luck
    ``N(0, luck_sd)``, the same at every table. ``lucky``: that bot is always handed the luckiest hand of
    the deal instead (an unbalanced schedule)."""
    strengths = logits(elos)
    bots = sorted(strengths)
    out = []
    deal = 0
    for _ in range(rounds):
        perm = [str(b) for b in rng.permutation(bots)]
        groups = [perm[i:i + seats] for i in range(0, len(perm), seats)]
        for d in range(seats):
            luck = rng.normal(0.0, luck_sd, size=seats)
            for g, group in enumerate(groups):
                table = [group[(i + d + g) % seats] for i in range(seats)]
                if lucky is not None and lucky in table:
                    best = int(np.argmax(luck))
                    here = table.index(lucky)
                    table[here], table[best] = table[best], table[here]
                out.append(RatedMatch(tuple(table), play(rng, strengths, table, luck), deal=f"deal{deal}",
                                       match_id=f"m{deal:05d}-{g}"))
            deal += 1
    return out


def rotated_deals(rng: np.random.Generator, elos: Mapping[str, float], seats: int, deals: int,
                  luck_sd: float) -> list[RatedMatch]:
    """Seat rotation of one deal by the same bots: each deal goes to ``seats`` bots drawn at random, who play it
    ``seats`` times, seat i held by ``table[(i + r) % seats]`` in rotation r (every bot holds every hand once).
    Hand h of a deal has luck ``N(0, luck_sd)`` at every table."""
    strengths = logits(elos)
    bots = sorted(strengths)
    out = []
    for deal in range(deals):
        group = [str(b) for b in rng.choice(bots, size=seats, replace=False)]
        luck = rng.normal(0.0, luck_sd, size=seats)
        for r in range(seats):
            table = [group[(i + r) % seats] for i in range(seats)]
            out.append(RatedMatch(tuple(table), play(rng, strengths, table, luck), deal=f"deal{deal}",
                                   match_id=f"m{deal:05d}-{r}"))
    return out
