"""The block plan of an SPRT tournament (``arena sprt``): which bots sit where at the two tables of each block
(pure: no Redis, no clock, no global randomness).

A block b is one deal, (round 0, deal b) of the tournament, played at two tables (``table`` 0 and 1 of that deal;
match indexes 2b and 2b + 1): V1 holds seat s at table 0 and V2 holds seat s at table 1, s rotating over the k
seats across blocks. ``arena.ratings.sprt.block_outcome`` then compares V1's result at table 0 with V2's at table 1.
With ``deals="unique"`` the two tables of block b are two deals of their own, (round 0, deal 2b) and (round 0,
deal 2b + 1): the same seats, no cards shared between the tables (unpaired, so a little less precise).

The ladder: a block on duplicate deals whose V1 and V2 have one owner (the usual case: two versions of one bot)
lets that owner's versions share the deal, one seeing the cards the other holds at the other table, so its
matches do not count on the public ladder (``ladder`` False: stored and counted in the test only); every other
SPRT's matches count (``ladder_note`` says which, for people).

- **Without a field** (k = 2 only): table 0 is V1 against V2, table 1 is V2 against V1, on the same cards
  (fishtest's game pair). V1 and V2 each see the deal twice, which is allowed only for two versions of one owner's
  bot (the service checks it).
- **With house bots** (``house``: the paired test with common random numbers): both tables of block b hold the
  same house bots in the same seats, in the order given, V1 at seat s = b mod k of table 0 and V2 at seat s of
  table 1, on one duplicate deal; the seat seeds come from the deal and the seat (``arena.core.seeds.seat_seed``),
  so both tables give every seat the same seed, and the two games stay identical until V1 and V2 decide
  differently. House bots keep nothing between matches and may see a deal any number of times; V1 and V2 each see
  the deal once. Never on the public ladder.
- **With a field** (k - 1 other seats at each table): the two tables of a block get disjoint sets of field bots,
  and of field owners (``field_owners``: an owner class per field bot), so no field bot, and no two field bots of
  one owner, receive cards of one deal twice; hence the field needs at least 2 (k - 1) bots, and more when owners
  repeat (``check_field``). Blocks come in pairs (2p, 2p + 1) on the same seat s = p mod k with the same two groups
  of field bots, swapped: the group that sat with V1 in block 2p sits with V2 in block 2p + 1, so every field bot
  meets V1 exactly as often as V2 (over an even number of blocks), at the same seats. The groups move along the
  field from one pair to the next (a window of 2 (k - 1) bots advancing by 2 (k - 1)), so over a test every field
  bot plays about equally often and at every seat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from arena.core.limits import SPRT_FIELD
from arena.core.specs import MatchSpec, is_house_bot, match_id

MAX_FIELD = SPRT_FIELD  # field bots of one SPRT
MAX_BLOCKS = 20_000  # a test that decided nothing after this many blocks stops as "inconclusive"
MAX_WINDOW = 64  # blocks in flight
DEFAULT_MAX_BLOCKS = 5_000
DEFAULT_WINDOW = 8
SPRT_KIND = "sprt"
SPRT_DEAL_PLANS = ("duplicate", "unique")  # "rotate" would seat V1 and V2 at every seat of one deal
POINTS = "points"  # the block outcome: pairwise points from the ranks (arena.ratings.sprt)
SCORE = "score"  # a paired test's relative-score difference, normalized Elo (arena.ratings.score_sprt)
STATISTICS = (POINTS, SCORE)


class SprtPlanError(ValueError):
    """An SPRT that cannot be planned (field too small, owners that cannot be split, a bad parameter); the message
    names the bad value and what would do."""


@dataclass(frozen=True)
class SprtParams:
    """The parameters of one SPRT, as kept in its tournament's ``extra``.

    Attributes: v1, v2 (bot ids "NAME@VERSION": the old and the new version); field (bot ids of the other seats,
    empty for head-to-head game pairs); field_owners (an owner class per field bot: equal numbers = one owner);
    seats (k, table size); elo0, elo1 (hypotheses H0 and H1 on V2 - V1, Elo points, elo0 < elo1); alpha, beta
    (error rates, 0 < x < 0.5); window (blocks in flight, 1..``MAX_WINDOW``); max_blocks (counted blocks after
    which the test stops as "inconclusive", 1..``MAX_BLOCKS``); deals ("duplicate": both tables of a block on
    one deal, or "unique": a deal of its own each); ladder (whether its matches count on the public ladder: False
    when V1 and V2 have one owner and share duplicate deals, in a paired test, and when asked, ``ladder_off``: the
    test would have counted, and its start asked it not to); house (house bots
    "house:NAME" for the k - 1 other seats, in order: the paired test with common random numbers, no field);
    statistic (the block outcome the test runs on: "points", pairwise points from the ranks, elo0/elo1 in Elo
    points, ``arena.ratings.sprt``; or "score", a paired test's relative-score difference, elo0/elo1 in normalized
    Elo, ``arena.ratings.score_sprt``).
    """

    v1: str
    v2: str
    seats: int = 2
    field: tuple[str, ...] = ()
    field_owners: tuple[int, ...] = ()
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    window: int = DEFAULT_WINDOW
    max_blocks: int = DEFAULT_MAX_BLOCKS
    deals: str = "duplicate"
    ladder: bool = True
    ladder_off: bool = False
    house: tuple[str, ...] = ()
    statistic: str = POINTS
    extra: dict[str, Any] = dataclass_field(default_factory=dict, compare=False)

    @property
    def ladder_note(self) -> str:
        """Whether and why the test's matches count on the public ladder, one sentence for people."""
        if self.house:
            return ("its matches do not count on the public ladder: a paired test replays each scenario (deal, "
                    "house bots, seat seeds) for V1 and for V2, so each version plays cards the other also holds "
                    "(they count in the test only)")
        if self.ladder_off:
            return ("its matches do not count on the public ladder, as asked at its start (`arena sprt` keeps an "
                    "A/B test off it unless given --ladder): they count in the test only")
        if not self.ladder:
            return ("its matches do not count on the public ladder: V1 and V2 have one owner and play duplicate "
                    "deals, so each version's table holds the cards the other's holds (they count in the test only)")
        if self.deals == "unique":
            return "its matches count on the public ladder (unique deals: no cards are shared between tables)"
        return ("its matches count on the public ladder (duplicate deals, but V1 and V2 have different owners and "
                "no owner sits at both tables of a deal)")

    @property
    def head_to_head(self) -> bool:
        """True without a field and house bots: V1 against V2 at both tables (``arena.ratings.sprt``'s
        head-to-head model)."""
        return not self.field and not self.house

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the tournament's ``extra``)."""
        return {"v1": self.v1, "v2": self.v2, "seats": self.seats, "field": list(self.field),
                "field_owners": list(self.field_owners), "elo0": self.elo0, "elo1": self.elo1,
                "alpha": self.alpha, "beta": self.beta, "window": self.window, "max_blocks": self.max_blocks,
                "deals": self.deals, "ladder": self.ladder, **({"ladder_off": True} if self.ladder_off else {}),
                **({"house": list(self.house)} if self.house else {}),
                **({"statistic": self.statistic} if self.statistic != POINTS else {}), **self.extra}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SprtParams:
        """Inverse of ``to_dict`` (unknown keys are kept in ``extra``). Raises ``SprtPlanError`` for a missing or
        malformed field."""
        known = {"v1", "v2", "seats", "field", "field_owners", "elo0", "elo1", "alpha", "beta", "window",
                 "max_blocks", "deals", "ladder", "ladder_off", "house", "statistic"}
        try:
            return cls(v1=str(data["v1"]), v2=str(data["v2"]), seats=int(data["seats"]),
                       field=tuple(str(b) for b in data.get("field") or ()),
                       field_owners=tuple(int(o) for o in data.get("field_owners") or ()),
                       elo0=float(data["elo0"]), elo1=float(data["elo1"]), alpha=float(data["alpha"]),
                       beta=float(data["beta"]), window=int(data["window"]), max_blocks=int(data["max_blocks"]),
                       deals=str(data.get("deals") or "duplicate"), ladder=bool(data.get("ladder", True)),
                       ladder_off=bool(data.get("ladder_off", False)),
                       house=tuple(str(b) for b in data.get("house") or ()),
                       statistic=str(data.get("statistic") or POINTS),
                       extra={k: v for k, v in data.items() if k not in known})
        except (KeyError, TypeError, ValueError) as exc:
            raise SprtPlanError(f"malformed SPRT parameters {dict(data)!r}: {exc}") from exc


@dataclass(frozen=True)
class Block:
    """The two tables of block ``block``: ``seat`` (s, where V1 sits at table 0 and V2 at table 1) and the seats
    of each table in seat order (bot ids)."""

    block: int
    seat: int
    v1_table: tuple[str, ...]
    v2_table: tuple[str, ...]



def _split_classes(classes: Sequence[int], per_table: int) -> tuple[set[int], set[int]] | None:
    """Two disjoint sets of owner classes holding at least ``per_table`` bots each, as even as possible (subset
    sums over the classes, smallest class first), or None when there are none."""
    sizes: dict[int, int] = {}
    for c in classes:
        sizes[c] = sizes.get(c, 0) + 1
    total = len(classes)
    reach: dict[int, tuple[int, ...]] = {0: ()}  # bots on side A -> classes on side A
    for c in sorted(sizes, key=lambda c: (sizes[c], c)):
        for s, chosen in list(reach.items()):
            reach.setdefault(s + sizes[c], (*chosen, c))
    fits = [s for s in reach if per_table <= s <= total - per_table]
    if not fits:
        return None
    best = min(fits, key=lambda s: (abs(2 * s - total), s))
    side_a = set(reach[best])
    return side_a, set(sizes) - side_a


def check_field(params: SprtParams) -> None:
    """Raise ``SprtPlanError`` unless every block can be planned: k = 2 without a field; with one, no field bot is
    V1 or V2 or listed twice, one owner class per field bot, at least 2 (k - 1) field bots, and the owner
    classes split into two sides of at least k - 1 bots each (two tables with no owner in common)."""
    k, fld = params.seats, params.field
    if not 2 <= k <= 10:
        raise SprtPlanError(f"an SPRT table has 2..10 seats, got {k}")
    if params.deals not in SPRT_DEAL_PLANS:
        raise SprtPlanError(f"an SPRT plays {' or '.join(SPRT_DEAL_PLANS)} deals, got {params.deals[:16]!r}")
    if params.v1 == params.v2:
        raise SprtPlanError(f"V1 and V2 are the same bot {params.v1}: an SPRT compares two different versions")
    if params.statistic not in STATISTICS:
        raise SprtPlanError(f"an SPRT runs on {' or '.join(STATISTICS)}, got {params.statistic[:16]!r}")
    if params.statistic == SCORE and not params.house:
        raise SprtPlanError("the relative-score statistic is the paired test's (house bots in the other seats); "
                            "a field or head-to-head test runs on pairwise points")
    if params.house:
        _check_house(params)
        return
    if not fld:
        if k != 2:
            raise SprtPlanError(f"without a field an SPRT block is V1 against V2 on 2 seats; {k} seats need a field "
                                f"of at least {2 * (k - 1)} other bots (--field)")
        return
    if len(fld) > MAX_FIELD:
        raise SprtPlanError(f"a field holds at most {MAX_FIELD} bots, got {len(fld)}")
    inside = sorted({params.v1, params.v2} & set(fld))
    if inside:
        raise SprtPlanError(f"the field cannot hold the versions under test: {', '.join(inside)}")
    repeated = sorted({b for b in fld if fld.count(b) > 1})
    if repeated:
        raise SprtPlanError(f"field bots listed more than once: {', '.join(repeated)}")
    if len(params.field_owners) != len(fld):
        raise SprtPlanError(f"{len(fld)} field bots need as many owner classes, got {len(params.field_owners)}")
    need = k - 1
    if len(fld) < 2 * need:
        raise SprtPlanError(f"the field is too small: with {k} seats each table of a block has {need} field "
                            f"bot{'s' if need != 1 else ''} and the two tables must not share one, so the field "
                            f"needs at least 2 x {need} = {2 * need} bots, got {len(fld)}")
    if _split_classes(params.field_owners, need) is None:
        raise SprtPlanError(f"the field's owners cannot be split over the two tables of a block: each table needs "
                            f"{need} field bots and no owner may sit at both, but {len(fld)} field bots have "
                            f"{len(set(params.field_owners))} owners; add bots of other owners or use fewer seats")


def _check_house(params: SprtParams) -> None:
    """The paired test: k - 1 house bots ("house:NAME"), no field, duplicate deals, off the ladder."""
    bad = [b for b in params.house if not is_house_bot(b)]
    if bad:
        raise SprtPlanError(f"house bots are named house:<sample name> (e.g. house:heuristic), got {', '.join(bad)}")
    if len(params.house) != params.seats - 1:
        raise SprtPlanError(f"a paired test of {params.seats} seats needs {params.seats - 1} house "
                            f"bot{'s' if params.seats != 2 else ''} for the other seats, got {len(params.house)}")
    if params.field:
        raise SprtPlanError("a paired test seats house bots in the other seats: it takes no field")
    if params.deals != "duplicate":
        raise SprtPlanError("a paired test replays one deal for V1 and V2: its deals are duplicate")
    if params.ladder:
        raise SprtPlanError("a paired test's matches do not count on the public ladder (ladder must be False)")


def field_groups(params: SprtParams, pair: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two groups of k - 1 field bots of block pair ``pair`` (blocks 2 pair and 2 pair + 1), with no owner
    class in common: greedily from the field rotated by ``pair * 2 (k - 1)``; when that fails (owners repeat),
    from a fixed even split of the owner classes into two sides, each side rotated by ``pair * (k - 1)``."""
    fld, classes, need = params.field, params.field_owners, params.seats - 1
    n = len(fld)
    start = (pair * 2 * need) % n
    order = [(start + i) % n for i in range(n)]
    a: list[int] = []
    b: list[int] = []
    for i in order:
        if len(a) < need and classes[i] not in {classes[j] for j in b}:
            a.append(i)
        elif len(b) < need and classes[i] not in {classes[j] for j in a}:
            b.append(i)
        if len(a) == need and len(b) == need:
            return tuple(fld[i] for i in a), tuple(fld[i] for i in b)
    split = _split_classes(classes, need)
    if split is None:
        raise SprtPlanError("the field's owners cannot be split over the two tables of a block (check_field)")
    groups = []
    for side in split:
        members = [i for i in range(n) if classes[i] in side]
        offset = (pair * need) % len(members)
        groups.append(tuple(fld[members[(offset + j) % len(members)]] for j in range(need)))
    return groups[0], groups[1]


def plan_block(params: SprtParams, block: int) -> Block:
    """The tables of block ``block`` (0-based; module docstring): pair p = block // 2, seat s = p mod k; without a
    field table 0 is V1 at s against V2 and table 1 the same seats swapped; with one, the pair's two field groups
    (``field_groups``), the first with V1 in even blocks and with V2 in odd ones, fill the seats other than s in
    order. Raises ``SprtPlanError`` for a negative block or a field ``check_field`` refuses."""
    if block < 0:
        raise SprtPlanError(f"block numbers start at 0, got {block}")
    check_field(params)
    k = params.seats
    if params.house:  # the paired test: one scenario per block, V1's seat rotating block by block
        s = block % k
        house = iter(params.house)
        others = [next(house) if seat != s else "" for seat in range(k)]
        return Block(block, s, tuple(params.v1 if seat == s else b for seat, b in enumerate(others)),
                     tuple(params.v2 if seat == s else b for seat, b in enumerate(others)))
    pair = block // 2
    s = pair % k
    if not params.field:
        first = [params.v2, params.v2]
        first[s] = params.v1
        second = [params.v1, params.v1]
        second[s] = params.v2
        return Block(block, s, tuple(first), tuple(second))
    g1, g2 = field_groups(params, pair)
    if block % 2:
        g1, g2 = g2, g1

    def table(version: str, group: Sequence[str]) -> tuple[str, ...]:
        others = iter(group)
        return tuple(version if seat == s else next(others) for seat in range(k))

    return Block(block, s, table(params.v1, g1), table(params.v2, g2))


def block_specs(tournament_id: str, game: str, params: SprtParams, block: int, config: Mapping[str, Any],
                deadline_ms: int) -> tuple[MatchSpec, MatchSpec]:
    """The two matches of block ``block``: ids ``match_id(tournament_id, 2 block)`` (V1's table) and ``2 block +
    1`` (V2's table), both round 0; "duplicate": deal ``block``, tables 0 and 1 (both are dealt the same cards,
    ``arena.core.seeds.deal_seed``); "unique": deals ``2 block`` and ``2 block + 1``, table 0 each. Both carry
    ``rated=params.ladder``."""
    planned = plan_block(params, block)
    unique = params.deals == "unique"
    return tuple(  # type: ignore[return-value]
        MatchSpec(match_id=match_id(tournament_id, 2 * block + t), game=game, seats=seats, config=dict(config),
                  deadline_ms=deadline_ms, tournament=tournament_id, round=0,
                  deal=2 * block + t if unique else block, table=0 if unique else t, rated=params.ladder)
        for t, seats in enumerate((planned.v1_table, planned.v2_table)))


def block_of(spec: MatchSpec) -> int:
    """The block a match of an SPRT belongs to: half its index in the tournament (``block_specs``: match ids
    ``2 block`` and ``2 block + 1``), whatever the deal plan. Raises ``SprtPlanError`` for a malformed id."""
    try:
        return int(spec.match_id.rsplit("-", 1)[1]) // 2
    except (IndexError, ValueError) as exc:
        raise SprtPlanError(f"malformed SPRT match id {spec.match_id!r}") from exc
