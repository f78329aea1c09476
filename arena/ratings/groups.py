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

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

T = TypeVar("T")


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


def groups_note(groups: int, removed: Sequence[int] = ()) -> str:
    """The sentence shown under a ladder of ``groups`` connected groups (more than 1); "" for 0 or 1 group.
    ``removed``: the numbers of the groups whose bots are all removed (no longer registered): no tournament can seat
    them, so only the other groups can be joined."""
    if groups <= 1:
        return ""
    note = (f"{groups} groups of bots that never shared a table, even through other bots: ratings of different "
            f"groups are not comparable (each group is rated on its own), and ranks and LOS are within a group")
    if removed:
        named = " and ".join(str(g) for g in sorted(removed))
        note += (f"; group{'s' if len(removed) > 1 else ''} {named} hold{'' if len(removed) > 1 else 's'} only "
                 f"removed bots (their results stay; no tournament can seat them)")
    if groups - len(set(removed)) >= 2:
        note += "; a tournament with bots of two groups joins them"
    return note


def removed_groups(entries: Iterable[T], group_of: Callable[[T], int], removed: Callable[[T], bool]) -> list[int]:
    """The groups (numbers from 1) whose every entry is removed (``removed(entry)``): the groups no tournament can
    join any more; group 0 (not counted yet) is never one."""
    alive: dict[int, bool] = {}
    for e in entries:
        g = group_of(e)
        if g:
            alive[g] = alive.get(g, False) or not removed(e)
    return sorted(g for g, any_alive in alive.items() if not any_alive)


def group_sections(entries: Sequence[T], group_of: Callable[[T], int], groups: int) -> list[tuple[str, list[T]]]:
    """Ladder entries split by connected group, for display: ``[("", entries)]`` for one group (or none); with
    more, one ``(heading, entries)`` per group in group order, heading "group G of N: K bots", and entries of group
    0 (not counted yet) last under "not counted yet: K bots". ``group_of`` gives an entry's group (0 = unknown);
    the order of entries within a section is kept."""
    if groups <= 1:
        return [("", list(entries))]
    numbers = sorted({group_of(e) for e in entries}, key=lambda g: g or float("inf"))
    sections = []
    for g in numbers:
        part = [e for e in entries if group_of(e) == g]
        bots = f"{len(part)} bot" + ("" if len(part) == 1 else "s")
        sections.append((f"group {g} of {groups}: {bots}" if g else f"not counted yet: {bots}", part))
    return sections
