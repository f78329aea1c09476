"""Connected groups of a ladder (pure: no Redis, no clock): which bots are linked by a chain of shared tables.

Two bots are in one group when they sat at one table, or when a chain of tables links them (a sat with b, b with
c: a and c are in one group). Ratings compare bots only through such chains: the results of a group say how its
bots stand against each other and nothing about how they stand against another group's bots, so a fit over two
groups together leaves the gap between the groups to its prior alone (the margin of every bot then takes in that
unidentified gap: +/- 640 Elo for bots with 108 matches each, beside +/- 47 in a fit of their own group). The
ladder therefore fits each group on its own, numbers the groups, and says that ratings of different groups are not
comparable.

Groups are the connected components of the graph whose nodes are bots and whose edges are shared tables
(``scipy.sparse.csgraph.connected_components``). They are numbered from 1: the group with the most bots first,
ties by the smallest bot id of the group, so the numbers depend only on who met whom, not on the order of results.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components


def connected_groups(tables: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
    """The connected groups of the bots of ``tables``.

    Args:
        tables: the bot ids of each table (a match's seats, or a pair that met); a table of one bot makes that
            bot a group of its own unless another table links it.
    Returns:
        The groups, each a tuple of bot ids in sorted order, numbered by their place in the list from 1: most
        bots first, ties by smallest bot id. Every bot of ``tables`` is in exactly one group; [] for no table.
    """
    index: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for table in tables:
        seats = [index.setdefault(str(b), len(index)) for b in table]
        for other in seats[1:]:  # a star over the table's seats links all of them
            rows.append(seats[0])
            cols.append(other)
    if not index:
        return []
    n = len(index)
    graph = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    _count, labels = connected_components(graph, directed=False)
    members: dict[int, list[str]] = {}
    for bot, i in index.items():
        members.setdefault(int(labels[i]), []).append(bot)
    groups = [tuple(sorted(bots)) for bots in members.values()]
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def group_numbers(groups: Sequence[Sequence[str]]) -> dict[str, int]:
    """Bot id -> the number of its group (1 = the first of ``groups``), for groups as ``connected_groups`` gives."""
    return {bot: k for k, group in enumerate(groups, 1) for bot in group}
