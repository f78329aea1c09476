"""Deal plans shared by every format: tables grouped into duplicate deals under the deal guarantee, and seats
balanced so that every bot holds every seat equally often (pure).

Duplicate deals (DESIGN.md "Deals are secret and never seen twice"): the same cards are dealt at every table of a
deal (seat j holds hand j of the deal), like a board of duplicate bridge played at several tables; the tables of one
deal seat pairwise disjoint sets of bots, and of owners, so no bot (and no two bots of one owner) ever receives cards
of a deal twice. Unique deals (``deals="unique"``): every table gets a deal of its own, so no two tables share cards
at all and nothing can be passed from one table to another, whoever owns the bots (what open registration needs,
where one person may hold two owners). ``deals="rotate"`` keeps the older plan for trusted self-play only: every
k-subset plays every seat rotation of the same deal, so each bot meets each deal k times.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence

from arena.core.errors import TournamentError
from arena.core.specs import PlannedMatch

DEAL_PLANS = ("duplicate", "unique", "rotate")
OPEN_DEFAULT = "unique"  # the deal plan of a request that names none while registration is open
CLOSED_DEFAULT = "duplicate"  # ... and while the organiser has closed it (owners are the organiser's accounts)
DEALS_HELP = ("Deal plan; default: unique while registration is open, duplicate once the organiser has closed it. "
              "unique: every table gets a deal of its own, so nothing can be passed between tables, whoever owns "
              "the bots; it costs about 0-11 % more matches for the same precision (`make fairness`). duplicate: "
              "each deal is played at several tables by different bots and owners, so part of the luck of the cards "
              "cancels out; it is for closed registration, where owners are accounts the organiser made: in open "
              "registration one person can make two owners and pass hands between the tables of a deal.")
ROTATE_WARNING = ("--deals rotate: every bot plays every seat of each of its deals, so it sees every deal k times "
                  "and can remember its opponents' hands; use it only for trusted self-play")


def default_deals(registration_open: bool) -> str:
    """The deal plan of a request that names none: ``OPEN_DEFAULT`` ("unique") while registration is open (anyone
    may make a second owner, so duplicate deals would let one person sit at two tables of a deal), else
    ``CLOSED_DEFAULT`` ("duplicate")."""
    return OPEN_DEFAULT if registration_open else CLOSED_DEFAULT


def tables_per_deal(num_bots: int, seats_per_match: int, deals: str = "duplicate") -> int:
    """T, the most tables that play one deal: ``max(1, min(k, B // k))`` for "duplicate" (tables of a deal seat
    disjoint bots, so at most B // k of them; at most k, like the k seat rotations of the older plan), 1 for
    "unique", k for "rotate"."""
    if deals == "rotate":
        return seats_per_match
    if deals == "unique":
        return 1
    return max(1, min(seats_per_match, num_bots // seats_per_match))


def owner_classes(bots: Sequence[str], owners: Mapping[str, str] | None = None) -> tuple[int, ...]:
    """An owner class per bot, numbered from 0 in order of first appearance: bots with the same non-empty
    ``owners[bot]`` (an owner key) share one, and a bot without one is owned by its NAME (so the versions of one
    NAME always share a class). Every deal plan keeps the bots of one class off the other tables of a deal."""
    keys: dict[str, int] = {}
    out = []
    for bot in bots:
        given = (owners or {}).get(bot)
        key = f"owner:{given}" if given else f"name:{bot.split('@', 1)[0]}"
        out.append(keys.setdefault(key, len(keys)))
    return tuple(out)


def owner_labels(owners: Mapping[str, str]) -> dict[str, str]:
    """``owners`` (bot id -> owner key, "" for none) with every key replaced by a class label "o0", "o1", ... (in
    order of the sorted bot ids; "" stays ""): what a growing tournament stores so that the rounds it adds keep
    its owners apart (``owner_classes`` reads it like the keys) without storing the keys themselves."""
    labels: dict[str, str] = {}
    return {b: labels.setdefault(o, f"o{len(labels)}") if o else "" for b, o in sorted(owners.items())}


PACK_WINDOW = 256  # open deals a table is tried against before it opens a new deal (bounds the planning time)
PACK_ORDER_SEED = 20240601  # fixed: the order tables are packed in is a pure function of B and k


def pack_deals(subsets: Sequence[tuple[int, ...]], owner_of: Sequence[int], per_deal: int) -> list[list[int]]:
    """Group table indexes into deals of at most ``per_deal`` tables whose owner sets are pairwise disjoint: first
    fit, in a fixed shuffled order of the tables (consecutive subsets in combination order overlap too much to
    share deals), against the ``PACK_WINDOW`` most recently opened deals that still have room."""
    order = list(range(len(subsets)))
    if per_deal > 1:
        random.Random(PACK_ORDER_SEED).shuffle(order)  # a private generator with a fixed seed: deterministic
    deals: list[list[int]] = []
    open_deals: list[tuple[set[int], list[int]]] = []
    for index in order:
        owners = {owner_of[i] for i in subsets[index]}
        for pos in range(len(open_deals) - 1, max(-1, len(open_deals) - 1 - PACK_WINDOW), -1):
            taken, tables = open_deals[pos]
            if taken.isdisjoint(owners):
                taken |= owners
                tables.append(index)
                if len(tables) == per_deal:
                    del open_deals[pos]
                break
        else:
            tables = [index]
            deals.append(tables)
            if per_deal > 1:
                open_deals.append((set(owners), tables))
    return deals


def balanced_seats(tables: Sequence[tuple[int, ...]], k: int) -> list[tuple[int, ...]]:
    """Seat the bots of every table so that each bot's tables, in order, taken k at a time, hold every seat once.

    An equitable edge colouring of the bipartite graph tables x bots (de Werra): each bot's i-th table joins its
    vertex number i // k, so every vertex has at most k edges and a proper k-colouring exists (König). It is built
    edge by edge: a colour free at both ends, else the two free colours are swapped along an alternating path
    (which, the graph being bipartite, cannot reach the bot's vertex). Colour = seat.
    """
    at_table: list[list[int | None]] = [[None] * k for _ in tables]  # table -> seat -> bot vertex
    at_left: list[list[int | None]] = []  # bot vertex -> seat -> table
    left_bot: list[int] = []
    current: dict[int, int] = {}  # bot -> its current vertex
    used: dict[int, int] = {}  # bot -> tables seen so far
    for t, bots in enumerate(tables):
        vertices = []
        for b in bots:
            n = used.get(b, 0)
            used[b] = n + 1
            if n % k == 0:
                current[b] = len(at_left)
                at_left.append([None] * k)
                left_bot.append(b)
            vertices.append(current[b])
        table_t = at_table[t]
        # first the seats that a matching of the table's bots to seats still free for them gives (no swaps) ...
        free = [[c for c in range(k) if at_left[u][c] is None] for u in vertices]
        matched: list[int | None] = []
        for options in free:  # most often, first come first served finds one
            seat = next((c for c in options if c not in matched), None)
            if seat is None:
                matched = _match_seats(free, k)
                break
            matched.append(seat)
        late = []
        for u, seat in zip(vertices, matched):
            if seat is None:
                late.append(u)
            else:
                at_left[u][seat] = t
                table_t[seat] = u
        # ... then each other bot: a seat free for both, else swap two seats along an alternating path
        for u in late:
            left_u = at_left[u]
            seat = next((c for c in range(k) if left_u[c] is None and table_t[c] is None), None)
            if seat is None:
                seat = next(c for c in range(k) if left_u[c] is None)  # taken at t
                other = next(c for c in range(k) if table_t[c] is None)  # taken at u
                _swap_path(at_table, at_left, t, seat, other)
            left_u[seat] = t
            table_t[seat] = u
    return [tuple(left_bot[u] for u in seats if u is not None) for seats in at_table]


def _match_seats(free: Sequence[Sequence[int]], k: int) -> list[int | None]:
    """A maximum matching of rows to seats, row i taking one of ``free[i]`` (augmenting paths; k <= 10)."""
    owner: list[int | None] = [None] * k  # seat -> row

    def place(row: int, seen: set[int]) -> bool:
        for c in free[row]:
            if c not in seen:
                seen.add(c)
                holder = owner[c]
                if holder is None or place(holder, seen):
                    owner[c] = row
                    return True
        return False

    for row in range(len(free)):
        place(row, set())
    out: list[int | None] = [None] * len(free)
    for c, holder in enumerate(owner):
        if holder is not None:
            out[holder] = c
    return out


def _swap_path(at_table: list[list[int | None]], at_left: list[list[int | None]], t: int, a: int, b: int) -> None:
    """Swap colours ``a`` and ``b`` along the path that leaves table ``t`` by its ``a`` edge and alternates
    ``b``, ``a``, ... (``t`` has no ``b`` edge): afterwards ``a`` is free at ``t``."""
    path: list[tuple[int, int, int]] = []  # (bot vertex, table, colour)
    node, on_table, colour = t, True, a
    while True:
        nxt = (at_table if on_table else at_left)[node][colour]
        if nxt is None:
            break
        path.append((nxt, node, colour) if on_table else (node, nxt, colour))
        node, on_table, colour = nxt, not on_table, b if colour == a else a
    for left, table, colour in path:
        at_left[left][colour] = None
        at_table[table][colour] = None
    for left, table, colour in path:
        swapped = b if colour == a else a
        at_left[left][swapped] = table
        at_table[table][swapped] = left


def deal_plan(bots: Sequence[str], seats_per_match: int, rounds: int, deals: str = "duplicate",
              owners: Mapping[str, str] | None = None) -> list[PlannedMatch]:
    """The matches of a round robin and the deal each is played on, in order (round, deal, table).

    ``deals="duplicate"`` (the default). With B bots, k seats and R rounds:

    - every k-subset of the bots plays exactly one match (table) per round: C(B, k) * R matches; each bot plays
      C(B-1, k-1) * R of them, and every two bots meet C(B-2, k-2) * R >= R times;
    - the tables of a round are grouped into deals of at most T = ``tables_per_deal`` = max(1, min(k, B // k))
      tables (first fit, in a fixed order); **the tables of one deal seat pairwise disjoint sets of owners**, so no
      bot, and no two bots of one owner (``owners``: bot id -> owner key; a bot without one is owned by its
      NAME), sit at two tables of one deal; and no deal is used in two rounds, or twice in a round (each
      (round, deal) has its own HMAC input, see ``deal_seed``). Hence no bot and no owner ever receives cards of
      one deal in two matches. (Bots of one owner may sit at the same table: they then see one deal once, in one
      match, like any table.)
    - seat j of every table holds hand j of the deal (the game deals by seat), so each hand of a deal is held by
      a different bot at each of its tables;
    - seats are balanced: each bot's matches, taken k at a time (in combination order of their subsets, round
      after round), hold every seat exactly once (the last, shorter block: distinct seats), so over the tournament
      each bot holds each seat floor(m/k) or ceil(m/k) times for its m matches (within 1). At 2 seats every odd
      round seats the pairs of round 0 the other way round, so the two bots of a pair take turns at seat 0 (the
      first to move, in a game of turns): over R rounds each holds it floor(R/2) or ceil(R/2) times.

    With B < 2k there is one table per deal (T = 1): every match has a deal of its own.

    ``deals="unique"``: the tables, subsets and seats of "duplicate", each table on a deal of its own (T = 1):
    C(B, k) * R matches on as many deals, so no two tables share a card, whatever the owners.

    ``deals="rotate"`` (trusted self-play only): every k-subset plays the k seat rotations of one deal per round
    (table r seats ``subset[(i + r) % k]`` at seat i): C(B, k) * k * R matches, each bot in each seat of each of
    its deals once, so each bot sees each of its deals k times.

    Bots are taken in sorted order; the plan does not depend on the order they are listed in. Raises
    ``TournamentError`` for an unknown plan or k outside 1..B.
    """
    if deals not in DEAL_PLANS:
        raise TournamentError(f"unknown deal plan {deals!r}; choose one of {', '.join(DEAL_PLANS)}")
    k = seats_per_match
    ordered = sorted(bots)
    if not 1 <= k <= len(ordered):
        raise TournamentError(f"{k} seats per match need at least {k} bots, got {len(ordered)}")
    subsets = list(itertools.combinations(range(len(ordered)), k))
    out: list[PlannedMatch] = []
    if deals == "rotate":
        for round_ in range(rounds):
            for index, subset in enumerate(subsets):
                for r in range(k):
                    out.append(PlannedMatch(round_, index, r, tuple(ordered[subset[(i + r) % k]] for i in range(k))))
        return out
    packed = pack_deals(subsets, owner_classes(ordered, owners), tables_per_deal(len(ordered), k, deals))
    if k == 2:  # one round's seats, the same pairs the other way round in every odd round
        one = balanced_seats(subsets, k)
        seated = [seats[::-1] if round_ % 2 else seats for round_ in range(rounds) for seats in one]
    else:  # seats: coloured in combination order, round after round (short alternating paths)
        seated = balanced_seats([subset for _ in range(rounds) for subset in subsets], k)
    for round_ in range(rounds):  # laid out by deal
        base = round_ * len(subsets)
        for d, tables in enumerate(packed):
            for t, index in enumerate(tables):
                out.append(PlannedMatch(round_, d, t, tuple(ordered[i] for i in seated[base + index])))
    return out


def deal_count(plan: Sequence[PlannedMatch]) -> int:
    """Distinct deals of a plan (its (round, deal) pairs)."""
    return len({(m.round, m.deal) for m in plan})

