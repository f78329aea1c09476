"""Swiss pairing for k-seat tables (pure: no Redis, no network, no clock).

A Swiss tournament plays in rounds; each round seats every bot once, at a table of exactly k bots of similar
standing, or gives it a bye when the bot count B is not a multiple of k. ``pair_round`` plans the next round from
the standing and the rounds planned so far; ``swiss_standings`` orders the bots by pairwise points and Buchholz.

* Byes: B mod k bots per round, those with the fewest byes so far, and among them the lowest in the standing.
* Tables: the other bots, grouped so that (1) the number of repeat meetings (a pair of bots seated together again,
  counted once per earlier table that seated both) is as small as found, then (2) the standing spread (sum over
  tables of highest minus lowest standing position) is as small as found. A greedy pass (the best unplaced bot,
  then the next bots of the standing that it and its table have met least) is improved by swapping bots between
  two tables while the cost falls: any two tables when one of them seats a repeat, else tables at most two apart
  in the standing. The result is deterministic.
* Seats: within a table the bots are seated by ``scipy.optimize.linear_sum_assignment`` on cost[bot][seat] = how
  many times the bot held that seat before (bots in standing order as rows), so seats even out over the rounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from arena.core.errors import TournamentError

MIN_SEATS = 2
MAX_SEATS = 10
_NEAR = 2  # tables without repeats swap bots with the tables this close in the standing only
_MAX_PASSES = 50  # local-improvement sweeps over all table pairs (each sweep that improves nothing ends the search)


@dataclass(frozen=True)
class SwissRound:
    """One planned Swiss round: tables (each a tuple of k bot ids in SEAT order) and byes (bots sitting out)."""

    tables: tuple[tuple[str, ...], ...]
    byes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: ``{"tables": [[bot, ...], ...], "byes": [bot, ...]}``."""
        return {"tables": [list(t) for t in self.tables], "byes": list(self.byes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SwissRound:
        """Inverse of ``to_dict``. Raises ``ValueError`` when ``d`` is not a mapping with "tables" (a list of lists
        of strings) and "byes" (a list of strings)."""
        if not isinstance(d, Mapping) or "tables" not in d or "byes" not in d:
            raise ValueError(f"a Swiss round needs 'tables' and 'byes', got {d!r}")
        tables, byes = d["tables"], d["byes"]
        if not isinstance(tables, list | tuple) or not all(
                isinstance(t, list | tuple) and all(isinstance(b, str) for b in t) for t in tables):
            raise ValueError(f"a Swiss round's tables must be lists of bot ids, got {tables!r}")
        if not isinstance(byes, list | tuple) or not all(isinstance(b, str) for b in byes):
            raise ValueError(f"a Swiss round's byes must be a list of bot ids, got {byes!r}")
        return cls(tuple(tuple(t) for t in tables), tuple(byes))


def bye_points(k: int) -> float:
    """Points a bye scores: (k - 1) / 2, the mean pairwise points of a k-seat table."""
    return (k - 1) / 2


def _check(standing: Sequence[str], k: int, history: Sequence[SwissRound]) -> None:
    if not MIN_SEATS <= k <= MAX_SEATS:
        raise TournamentError(f"seats per table must be {MIN_SEATS}..{MAX_SEATS}, got {k}")
    if len(set(standing)) != len(standing):
        raise TournamentError(f"a bot id is repeated in the standing: {list(standing)}")
    if k > len(standing):
        raise TournamentError(f"{k} seats per table need at least {k} bots, got {len(standing)}")
    known = set(standing)
    for i, rnd in enumerate(history):
        named = {b for t in rnd.tables for b in t} | set(rnd.byes)
        unknown = sorted(named - known)
        if unknown:
            raise TournamentError(f"round {i + 1} of the history names bots not in the standing: {unknown}")


def _choose_byes(standing: Sequence[str], k: int, history: Sequence[SwissRound]) -> list[str]:
    count = dict.fromkeys(standing, 0)
    for rnd in history:
        for b in rnd.byes:
            count[b] += 1
    n = len(standing) % k
    order = sorted(range(len(standing)), key=lambda i: (count[standing[i]], -i))
    return [standing[i] for i in sorted(order[:n])]


def _meetings(pos: Mapping[str, int], history: Sequence[SwissRound]) -> list[list[int]]:
    n = len(pos)
    meet = [[0] * n for _ in range(n)]
    for rnd in history:
        for table in rnd.tables:
            idx = [pos[b] for b in table]
            for a in idx:
                for b in idx:
                    if a != b:
                        meet[a][b] += 1
    return meet


class _Grouping:
    """Tables as lists of standing positions, with the cost (repeats * weight + spread) of each."""

    def __init__(self, players: list[int], k: int, meet: list[list[int]]) -> None:
        self.k = k
        self.meet = meet
        self.weight = (max(players) + 1) * (len(players) // k) + 1 if players else 1  # any spread is below it
        self.tables = self._greedy(players)
        self.costs = [self.cost(t) for t in self.tables]

    def cost(self, table: Sequence[int]) -> int:
        meet = self.meet
        repeats = sum(meet[a][b] for i, a in enumerate(table) for b in table[i + 1:])
        return repeats * self.weight + max(table) - min(table)

    def _greedy(self, players: list[int]) -> list[list[int]]:
        left = list(players)  # ascending standing positions
        tables = []
        while left:
            table = [left.pop(0)]
            while len(table) < self.k:
                best = min(range(len(left)), key=lambda j: (sum(self.meet[left[j]][a] for a in table), j))
                table.append(left.pop(best))
            tables.append(table)
        return tables

    def improve(self) -> None:
        for _ in range(_MAX_PASSES):
            if not self._sweep():
                return

    def _sweep(self) -> bool:
        improved = False
        n, w = len(self.tables), self.weight
        for x in range(n):
            for y in range(x + 1, n):
                # every pair of tables when one has a repeat; otherwise only near tables, to narrow the spread
                if y - x <= _NEAR or self.costs[x] >= w or self.costs[y] >= w:
                    improved |= self._improve_pair(x, y)
        return improved

    def _improve_pair(self, x: int, y: int) -> bool:
        improved = False
        tx, ty = self.tables[x], self.tables[y]
        for i in range(self.k):
            for j in range(self.k):
                nx = tx[:i] + [ty[j]] + tx[i + 1:]
                ny = ty[:j] + [tx[i]] + ty[j + 1:]
                cx, cy = self.cost(nx), self.cost(ny)
                if cx + cy < self.costs[x] + self.costs[y]:
                    tx, ty = nx, ny
                    self.tables[x], self.tables[y] = tx, ty
                    self.costs[x], self.costs[y] = cx, cy
                    improved = True
        return improved


def _seat(table: Sequence[int], standing: Sequence[str], seats: Mapping[str, list[int]]) -> tuple[str, ...]:
    rows = sorted(table)
    cost = np.array([seats[standing[p]] for p in rows], dtype=float)
    row_ind, col_ind = linear_sum_assignment(cost)
    out = [""] * len(rows)
    for r, c in zip(row_ind, col_ind):
        out[int(c)] = standing[rows[int(r)]]
    return tuple(out)


def pair_round(standing: Sequence[str], k: int, history: Sequence[SwissRound],
               owners: Mapping[str, int] | None = None) -> SwissRound:
    """Plan the next round (module docstring: the bye, table and seat rules).

    Args:
        standing: every bot id of the tournament, best first (the caller orders them), distinct.
        k: seats per table, 2..10, k <= len(standing).
        history: the rounds planned so far, in order (their tables and byes name bots of ``standing`` only).
        owners: bot id -> owner class; informational, not used (bots of one owner may share a table).
    Returns:
        ``SwissRound``: len(standing) // k tables of k bots in seat order, tables in standing order of their best
        bot, and len(standing) % k byes in standing order.
    Raises:
        TournamentError: k outside 2..10 or above the bot count, a repeated bot id, or a history naming a bot
        that is not in ``standing``.
    """
    del owners
    _check(standing, k, history)
    pos = {b: i for i, b in enumerate(standing)}
    byes = _choose_byes(standing, k, history)
    bye_set = set(byes)
    players = [i for i, b in enumerate(standing) if b not in bye_set]
    grouping = _Grouping(players, k, _meetings(pos, history))
    grouping.improve()
    seats = {b: [0] * k for b in standing}
    for rnd in history:
        for table in rnd.tables:
            if len(table) == k:
                for s, b in enumerate(table):
                    seats[b][s] += 1
    tables = sorted(grouping.tables, key=min)
    return SwissRound(tuple(_seat(t, standing, seats) for t in tables), tuple(byes))


@dataclass(frozen=True)
class SwissLine:
    """One line of the Swiss standings.

    Attributes:
        rank: standard competition rank (1, 2, 2, 4) by (points, tiebreak).
        bot: bot id.
        points: pairwise points from the game's ranks (per match: 1 per opponent finished ahead of, 1/2 per tie)
            plus ``bye_points(k)`` per bye.
        tiebreak: opponents' mean points (Buchholz per opponent met): the mean, over every opponent met in every
            match, of that opponent's points; 0 for a bot with no match.
        matches: matches played.
        byes: byes received.
    """

    rank: int
    bot: str
    points: float
    tiebreak: float
    matches: int
    byes: int


def _match_points(seats: Sequence[str], ranks: Sequence[int], points: dict[str, float]) -> None:
    for i, b in enumerate(seats):
        for j in range(len(seats)):
            if j != i:
                points[b] += 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0


def swiss_standings(bots: Sequence[str], k: int, results: Sequence[tuple[Sequence[str], Sequence[int]]],
                    rounds: Sequence[SwissRound], first_order: Sequence[str]) -> list[SwissLine]:
    """The standings of a Swiss tournament.

    Args:
        bots: every bot id of the tournament.
        k: seats per table (the bye scores ``bye_points(k)``).
        results: (seats, ranks) of every stored match: bot ids in seat order and their competition ranks
            (1 = best, ties share a rank).
        rounds: the rounds planned so far (their byes score).
        first_order: the first round's order; breaks ties of (points, tiebreak); bots missing from it come after,
            in ``bots`` order.
    Returns:
        One ``SwissLine`` per bot, sorted by points desc, tiebreak desc, then position in ``first_order``.
    Raises:
        TournamentError: a result or round naming a bot not in ``bots``, or a result whose seats and ranks differ
        in length.
    """
    points = dict.fromkeys(bots, 0.0)
    matches = dict.fromkeys(bots, 0)
    byes = dict.fromkeys(bots, 0)
    met: dict[str, list[str]] = {b: [] for b in bots}
    for seats, ranks in results:
        if len(seats) != len(ranks) or any(b not in points for b in seats):
            raise TournamentError(f"a result names unknown bots or mismatched ranks: {list(seats)} {list(ranks)}")
        _match_points(seats, ranks, points)
        for b in seats:
            matches[b] += 1
            met[b].extend(o for o in seats if o != b)
    for rnd in rounds:
        for b in rnd.byes:
            if b not in byes:
                raise TournamentError(f"a round's bye names a bot not in the tournament: {b!r}")
            byes[b] += 1
            points[b] += bye_points(k)
    tiebreak = {b: (sum(points[o] for o in met[b]) / len(met[b]) if met[b] else 0.0) for b in bots}
    first = {b: i for i, b in enumerate(first_order)}
    order = sorted(range(len(bots)), key=lambda i: (-points[bots[i]], -round(tiebreak[bots[i]], 9),
                                                     first.get(bots[i], len(first)), i))
    lines: list[SwissLine] = []
    for n, i in enumerate(order):
        b = bots[i]
        key = (points[b], round(tiebreak[b], 9))
        prev = lines[-1] if lines else None
        rank = prev.rank if prev is not None and (prev.points, round(prev.tiebreak, 9)) == key else n + 1
        lines.append(SwissLine(rank, b, points[b], tiebreak[b], matches[b], byes[b]))
    return lines
