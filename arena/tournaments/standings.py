"""Standings of one tournament (pure): every match decomposes into pairs, like the ladder's Elo; in a match a bot
scores 1 point per opponent it finished ahead of and 1/2 per opponent it tied with (its pairwise wins and ties);
``standings`` ranks the bots by points and adds the Elo performance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.core.specs import BotTally


def tally_match(tally: dict[str, BotTally], seats: Sequence[str], scores: Sequence[float],
                ranks: Sequence[int]) -> None:
    """Add one match to ``tally`` (bot id -> ``BotTally``, updated in place).

    Args: seats: bot ids in seat order (distinct). scores: game score per seat. ranks: competition rank per seat,
    1 = best (lower rank = finished ahead). Raises ``ValueError`` when the lengths differ.
    """
    if not len(seats) == len(scores) == len(ranks):
        raise ValueError(f"one score and one rank per seat: {len(seats)} seats, {len(scores)} scores, "
                         f"{len(ranks)} ranks")
    for i, bot in enumerate(seats):
        t = tally.setdefault(bot, BotTally())
        t.matches += 1
        t.score_sum += float(scores[i])
        for j, opponent in enumerate(seats):
            if i == j:
                continue
            t.pairs += 1
            t.opponents[opponent] = t.opponents.get(opponent, 0) + 1
            if ranks[i] < ranks[j]:
                t.wins += 1
                t.half_points += 2
            elif ranks[i] == ranks[j]:
                t.half_points += 1
            else:
                t.losses += 1


@dataclass(frozen=True)
class StandingsLine:
    """One bot's line of a tournament's standings.

    Attributes:
        rank: standard competition rank by points (1, 2, 2, 4), 1 = best.
        bot: bot id. points: pairwise points (1 per opponent finished ahead of, 1/2 per tie).
        matches: matches played. mean_score: game score per match (``lower_score_is_better``).
        performance: Elo performance, points: mean opponent rating + 400 * (wins - losses) / pairs.
        score_rate: points / pairs, 0..1. pairs, wins, losses: see ``BotTally``.
        tiebreak: a format's second ordering number (a Swiss: opponents' mean points), None for round robins.
        byes: rounds sat out (a Swiss; counted in ``points``).
    """

    rank: int
    bot: str
    points: float
    matches: int
    mean_score: float
    performance: float
    score_rate: float
    pairs: int
    wins: int
    losses: int
    tiebreak: float | None = None
    byes: int = 0


def standings(tally: dict[str, BotTally], ratings: dict[str, float], initial_rating: float) -> list[StandingsLine]:
    """Rank the bots of ``tally`` (only bots that played) by points.

    Args:
        tally: bot id -> its counts in the tournament (``tally_match``).
        ratings: current rating of each bot (the live ladder), Elo points; a bot absent from it counts as
            ``initial_rating``.
    Returns:
        Lines sorted by points (best first), then score rate, then bot id; equal points share a rank (1, 2, 2, 4).
        The Elo performance of a bot is the mean rating of the opponents it met (weighted by pairs) plus
        400 * (pairwise wins - pairwise losses) / pairs.
    """
    lines = []
    for bot, t in tally.items():
        if t.matches == 0 or t.pairs == 0:
            continue
        opp_sum = sum(n * ratings.get(opp, initial_rating) for opp, n in t.opponents.items())
        points = t.half_points / 2
        lines.append((bot, points, t, opp_sum / t.pairs + 400.0 * (t.wins - t.losses) / t.pairs))
    lines.sort(key=lambda x: (-x[1], -x[1] / x[2].pairs, x[0]))
    out = []
    for bot, points, t, performance in lines:
        rank = 1 + sum(1 for other in lines if other[1] > points)
        out.append(StandingsLine(rank=rank, bot=bot, points=points, matches=t.matches,
                                 mean_score=t.score_sum / t.matches, performance=performance,
                                 score_rate=points / t.pairs, pairs=t.pairs, wins=t.wins, losses=t.losses))
    return out
