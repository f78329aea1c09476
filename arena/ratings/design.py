"""The batch fit's input (pure): a rated match (``RatedMatch``: seats, ranks, deal and hands), and the design
arrays a set of them becomes (``_Design``: strict rankings per table size, ties split into equally weighted orders,
bootstrap groups, the parameter layout). ``arena.ratings.fit`` fits them."""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from arena.core.errors import ArenaError
from arena.core.specs import is_house_bot

MAX_TIE_ORDERS = 64  # a match with ties is split into at most this many strict orders


class FitError(ArenaError, ValueError):
    """A batch fit that cannot be done; the message names the bad value (a match, a bot, a parameter)."""


@dataclass(frozen=True)
class RatedMatch:
    """One match as the fit reads it: the bots in seat order and how they ranked (``from_stored`` reads a result
    the store keeps).

    Attributes:
        bots: bot ids in seat order (seat 0 first), distinct, N >= 2.
        ranks: competition rank per seat (1 = best, ties share a rank: 1, 2, 2, 4).
        deal: id of the deal (any hashable: the store's seed, a deal key); tables with the same id played the
            same cards. None: a deal played at this table only.
        hands: which part of the deal each seat held (0..N-1, a permutation); None: seat i held part i.
        match_id: the match's id, used only to give matches without a deal a canonical order.
    Raises ``FitError`` (a ``ValueError``) for mismatched lengths, fewer than 2 seats, a bot seated twice, a rank
    below 1, or hands that are not a permutation of the seats.
    """

    bots: tuple[str, ...]
    ranks: tuple[int, ...]
    deal: Hashable | None = None
    hands: tuple[int, ...] | None = None
    match_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "bots", tuple(str(b) for b in self.bots))
        object.__setattr__(self, "ranks", tuple(int(r) for r in self.ranks))
        n = len(self.bots)
        if n < 2 or len(self.ranks) != n:
            raise FitError(f"a match needs >= 2 seats and one rank per seat, got bots={list(self.bots)} "
                           f"ranks={list(self.ranks)}")
        if len(set(self.bots)) != n:
            raise FitError(f"a bot is seated twice in match {self.match_id}: {list(self.bots)}")
        if any(r < 1 for r in self.ranks):
            raise FitError(f"ranks start at 1, got {list(self.ranks)} in match {self.match_id}")
        if self.hands is not None:
            object.__setattr__(self, "hands", tuple(int(h) for h in self.hands))
            if sorted(self.hands) != list(range(n)):
                raise FitError(f"hands must be a permutation of 0..{n - 1}, got {list(self.hands)}")

    @classmethod
    def from_stored(cls, result: Mapping[str, Any]) -> RatedMatch:
        """From a stored result (``ResultStore.get_result``: "seats", "ranks", "seed", "match_id"). The deal id is
        ``"<seed>/<N>"`` (a seed deals differently for another seat count); no seed: a deal of its own. A house bot
        holding several seats (a paired SPRT's ``--house heuristic,heuristic``) is fitted as one player per seat:
        its second seat is ``"<name>#2"``, and so on. Raises ``FitError`` for a missing field or a bad match."""
        try:
            seats, ranks = list(result["seats"]), result["ranks"]
        except (KeyError, TypeError) as exc:
            raise FitError(f"a stored result needs seats and ranks, got {result!r}") from exc
        given = list(seats)
        for i, name in enumerate(given):
            if is_house_bot(str(name)) and name in given[:i]:
                seats[i] = f"{name}#{given[:i].count(name) + 1}"
        seed = result.get("seed")
        deal = None if seed is None else f"{seed}/{len(seats)}"
        match_id = result.get("match_id")
        return cls(tuple(seats), tuple(ranks), deal, None, None if match_id is None else str(match_id))

    def hand(self, seat: int) -> int:
        """The part of the deal held at ``seat``."""
        return seat if self.hands is None else self.hands[seat]


def fitted_matches(results: Iterable[Mapping[str, Any]]) -> list[RatedMatch]:
    """The stored results a fit reads (``RatedMatch.from_stored`` of each), leaving out void ones (``"void": true``:
    every seat failed, so the ranks tell nothing of the bots). Raises ``FitError`` as ``from_stored``."""
    return [RatedMatch.from_stored(r) for r in results if not r.get("void")]


def _group_key(m: RatedMatch) -> str:
    if m.deal is not None:
        return f"d{type(m.deal).__name__}:{m.deal!s}"
    if m.match_id is not None:
        return f"m:{m.match_id}"
    return f"c:{m.bots!r}{m.ranks!r}{m.hands!r}"


def _sort_key(m: RatedMatch) -> tuple[str, tuple[str, ...], tuple[int, ...], tuple[int, ...], str]:
    return (_group_key(m), m.bots, m.ranks, m.hands or (), m.match_id or "")


def _tie_orders(tied: Sequence[int]) -> list[tuple[int, ...]]:
    """Orders in which a tied place is split: every order for 2 or 3 tied seats; for more, the 2t orders of the
    dihedral group (rotations and their reverses), in which each seat is above each other in half of them."""
    t = len(tied)
    if t <= 3:
        return list(itertools.permutations(tied))
    rotations = [tuple(tied[(i + r) % t] for i in range(t)) for r in range(t)]
    return rotations + [tuple(reversed(o)) for o in rotations]


def _strict_orders(ranks: Sequence[int]) -> list[tuple[int, ...]]:
    """Strict orders of the seats (best first) that a ranking with ties is split into, with equal weights."""
    places = sorted(set(ranks))
    parts = [_tie_orders([s for s in range(len(ranks)) if ranks[s] == r]) for r in places]
    total = math.prod(len(p) for p in parts)
    if total <= MAX_TIE_ORDERS:
        return [tuple(s for part in combo for s in part) for combo in itertools.product(*parts)]
    width = max(len(p) for p in parts)
    return [tuple(s for p in parts for s in p[i % len(p)]) for i in range(width)]


class _Block:
    """The strict rankings of one table size N: ``S`` maps parameters to the strength of the seat at each
    place; its rows are place-major (all rankings' best seat first, then all second seats, ...), so that the
    per-place sums run over contiguous rows. ``sl`` is the rankings' slice of the weights."""

    def __init__(self, n: int, rows: list[list[int]], first: int, n_params: int) -> None:
        self.n = n
        count = len(rows) // n
        self.count = count
        self.sl = slice(first, first + count)
        rows = [rows[r * n + k] for k in range(n) for r in range(count)]
        indptr = np.cumsum([0] + [len(r) for r in rows])
        indices = np.array([c for r in rows for c in r], dtype=np.int64)
        self.S = sparse.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(rows), n_params))
        self.ST = self.S.T.tocsr()
        self.not_last = np.ones((n, 1, 1))
        self.not_last[-1] = 0.0


class _Design:
    """The fit's data as arrays: per table size a ``_Block`` of strict rankings (ties split into orders), one
    weight per ranking (1 / number of orders of its match), the bootstrap group of every ranking, and the
    parameter layout ``[theta (bots) | seat effects | luck effects]``."""

    def __init__(self, matches: Sequence[RatedMatch], seat_effects: bool, deal_effects: bool) -> None:
        ordered = sorted(matches, key=_sort_key)
        self.bots = tuple(sorted({b for m in ordered for b in m.bots}))
        bot_index = {b: i for i, b in enumerate(self.bots)}
        group_keys = sorted({_group_key(m) for m in ordered})
        group_index = {g: i for i, g in enumerate(group_keys)}
        self.groups = len(group_keys)
        sizes = sorted({len(m.bots) for m in ordered})
        seat_base: dict[int, int] = {}
        p = len(self.bots)
        if seat_effects:
            for n in sizes:
                seat_base[n] = p
                p += n
        self.seat_slices = {n: slice(b, b + n) for n, b in seat_base.items()}
        self.n_fixed = p
        tables: dict[tuple[str, int, int], int] = {}
        if deal_effects:
            for m in ordered:
                if m.deal is None:
                    continue
                for s in range(len(m.bots)):
                    key = (_group_key(m), len(m.bots), m.hand(s))
                    tables[key] = tables.get(key, 0) + 1
        luck_keys = sorted(k for k, c in tables.items() if c >= 2)
        luck_index = {k: p + i for i, k in enumerate(luck_keys)}
        self.n_luck = len(luck_keys)
        self.n_params = p + self.n_luck
        self.matches = dict.fromkeys(self.bots, 0)
        rows_of: dict[int, list[list[int]]] = {n: [] for n in sizes}
        weight_of: dict[int, list[float]] = {n: [] for n in sizes}
        group_of: dict[int, list[int]] = {n: [] for n in sizes}
        for m in ordered:
            n = len(m.bots)
            gk = _group_key(m)
            for b in m.bots:
                self.matches[b] += 1
            cols_of = []
            for s, b in enumerate(m.bots):
                c = [bot_index[b]]
                if n in seat_base:
                    c.append(seat_base[n] + s)
                lk = luck_index.get((gk, n, m.hand(s))) if m.deal is not None else None
                if lk is not None:
                    c.append(lk)
                cols_of.append(c)
            orders = _strict_orders(m.ranks)
            for order in orders:
                rows_of[n] += [cols_of[s] for s in order]
                weight_of[n].append(1.0 / len(orders))
                group_of[n].append(group_index[gk])
        self.blocks: list[_Block] = []
        first = 0
        for n in sizes:
            self.blocks.append(_Block(n, rows_of[n], first, self.n_params))
            first += len(weight_of[n])
        self.w = np.array([x for n in sizes for x in weight_of[n]])
        self.unit_group = np.array([g for n in sizes for g in group_of[n]], dtype=np.int64)
        # bots present in each group: to mark a bot absent from a bootstrap replicate
        self.bot_group = sparse.csr_matrix(
            (np.ones(sum(len(m.bots) for m in ordered)),
             ([bot_index[b] for m in ordered for b in m.bots],
              [group_index[_group_key(m)] for m in ordered for _ in m.bots])),
            shape=(len(self.bots), self.groups))
