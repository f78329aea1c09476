"""The "unique" deal plan (every table a deal of its own) in every format, the arena's default per registration mode,
and the SPRT's ladder rule (one owner's versions sharing duplicate deals do not count on the public ladder), pure.

Also the attack figure of open registration: one person registers two names as two owners; on duplicate deals the
partner often sits at the other table of the same deal (and can pass the hands on), on unique deals never."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import pytest

from arena.core.specs import MatchSpec, PlannedMatch
from arena.store.tournaments import TournamentInfo
from arena.tournaments.deals import (
    CLOSED_DEFAULT,
    DEAL_PLANS,
    OPEN_DEFAULT,
    deal_count,
    deal_plan,
    default_deals,
    tables_per_deal,
)
from arena.tournaments.round_robin import round_robin_formula, round_robin_size
from arena.tournaments.sprt_plan import SprtParams, SprtPlanError, block_of, block_specs, check_field
from arena.tournaments.swiss import formula as swiss_formula
from arena.tournaments.swiss import round_specs as swiss_round_specs
from arena.tournaments.swiss_pairing import pair_round
from arena.tournaments.until_separated import request_plan
from arena.tournaments.until_separated import round_specs as separated_round_specs


def _bots(n: int) -> list[str]:
    return [f"bot{i}@1" for i in range(n)]


def partner_leaks(plan: Sequence[PlannedMatch], partner: dict[str, str]) -> tuple[int, int]:
    """(matches of ``bot0@1`` whose deal is also played at another table holding its partner, its matches)."""
    tables: dict[tuple[int, int], list[PlannedMatch]] = defaultdict(list)
    for m in plan:
        tables[(m.round, m.deal)].append(m)
    mine = [m for m in plan if "bot0@1" in m.seats]
    leaks = sum(1 for m in mine if any(partner["bot0@1"] in t.seats for t in tables[(m.round, m.deal)] if t != m))
    return leaks, len(mine)


def test_the_unique_plan_gives_every_table_its_own_deal_with_the_duplicate_plans_tables_and_balanced_seats() -> None:
    bots, k, rounds = _bots(8), 4, 2
    unique = deal_plan(bots, k, rounds, "unique")
    duplicate = deal_plan(bots, k, rounds, "duplicate")
    assert "unique" in DEAL_PLANS and tables_per_deal(8, 4, "unique") == 1 and tables_per_deal(8, 4) == 2
    assert len(unique) == round_robin_size(8, 4, rounds, "unique") == math.comb(8, 4) * rounds == 140
    assert deal_count(unique) == len(unique) == 140 and deal_count(duplicate) == 70  # one table per deal
    assert all(m.table == 0 for m in unique)
    assert len({(m.round, m.deal) for m in unique}) == len(unique)
    # the same tables: every 4-subset once a round
    for r in range(rounds):
        assert sorted(tuple(sorted(m.seats)) for m in unique if m.round == r) == sorted(
            tuple(sorted(m.seats)) for m in duplicate if m.round == r)
        assert len({frozenset(m.seats) for m in unique if m.round == r}) == math.comb(8, 4)
    # seats balanced: each bot holds each seat floor(m/k) or ceil(m/k) times
    for bot in bots:
        seats = Counter(m.seats.index(bot) for m in unique if bot in m.seats)
        played = sum(seats.values())
        assert played == math.comb(7, 3) * rounds
        assert set(seats) == set(range(k)) and max(seats.values()) - min(seats.values()) <= 1, (bot, seats)
    text = round_robin_formula(8, 4, rounds, "unique", deal_count(unique))
    assert text == "C(8,4) subsets x 2 rounds = 140, on 140 unique deals (every table its own deal)"


def test_the_default_plan_follows_the_registration_mode() -> None:
    assert default_deals(True) == OPEN_DEFAULT == "unique"
    assert default_deals(False) == CLOSED_DEFAULT == "duplicate"


def test_an_owner_with_two_names_meets_the_partner_across_a_deal_on_duplicate_deals_only() -> None:
    """With 8 bots at 4 seats, each name its own owner (a person who made a second owner), bot0's partner bot1
    sits at the other table of bot0's deal in 20 of its 35 matches a round on duplicate deals; in none on unique
    deals."""
    bots = _bots(8)
    owners = {b: f"owner-{b}" for b in bots}
    partner = {"bot0@1": "bot1@1"}
    leaks, played = partner_leaks(deal_plan(bots, 4, 1, "duplicate", owners), partner)
    assert (leaks, played) == (20, 35)  # 57 %
    assert partner_leaks(deal_plan(bots, 4, 1, "unique", owners), partner) == (0, 35)


def _info(bots: Sequence[str], k: int, deals: str, extra: dict[str, object] | None = None) -> TournamentInfo:
    return TournamentInfo(id="t5", game="take5", bots=tuple(bots), seats_per_match=k, rounds=1, seed=7, config={},
                          deadline_ms=500, matches_total=0, deals=deals, extra=dict(extra or {}))


def test_until_separated_adds_rounds_of_unique_deals() -> None:
    bots = _bots(6)
    plan = request_plan(True, 0, bots, 3, 1, "unique", {})
    assert plan is not None and plan.per_round == plan.deals_per_round == math.comb(6, 3)
    specs = separated_round_specs(_info(bots, 3, "unique"), plan, 3)
    assert len(specs) == 20 and len({(s.round, s.deal) for s in specs}) == 20 and {s.round for s in specs} == {3}
    duplicate = request_plan(True, 0, bots, 3, 1, "duplicate", {})
    assert duplicate is not None and duplicate.deals_per_round < 20  # shared deals there


def test_a_swiss_round_on_unique_deals_gives_every_table_its_own_deal() -> None:
    bots = _bots(16)
    pairing = pair_round(bots, 4, [])
    specs, deals = swiss_round_specs("t5", "take5", {}, 500, 0, 0, pairing, bots, {}, 4, "unique")
    assert deals == len(specs) == 4 and sorted(s.deal for s in specs) == [0, 1, 2, 3]
    assert all(s.table == 0 for s in specs)
    _, shared = swiss_round_specs("t5", "take5", {}, 500, 0, 0, pairing, bots, {}, 4, "duplicate")
    assert shared == 1  # 4 tables of disjoint bots, T = min(4, 16 // 4) = 4: one deal
    assert swiss_formula(16, 4, 5, deals="unique").endswith("= 20 matches, on unique deals (every table its own deal)")
    assert swiss_formula(16, 4, 5, 8, "unique").endswith(", on 8 unique deals so far")


def test_sprt_blocks_on_unique_deals_and_the_ladder_rule() -> None:
    one_owner = SprtParams(v1="me@1", v2="me@2", deals="duplicate", ladder=False)
    t0, t1 = block_specs("t9", "take5", one_owner, 3, {}, 250)
    assert (t0.deal, t0.table, t1.deal, t1.table) == (3, 0, 3, 1) and not t0.rated and not t1.rated
    unique = SprtParams(v1="me@1", v2="me@2", deals="unique")
    u0, u1 = block_specs("t9", "take5", unique, 3, {}, 250)
    assert (u0.deal, u0.table, u1.deal, u1.table) == (6, 0, 7, 0) and u0.rated and u1.rated
    assert (u0.match_id, u1.match_id) == ("t9-000006", "t9-000007") and u0.seats == t0.seats
    assert [block_of(s) for s in (t0, t1, u0, u1)] == [3, 3, 3, 3]
    assert "do not count on the public ladder" in one_owner.ladder_note
    assert "unique deals" in unique.ladder_note and "count on the public ladder" in unique.ladder_note
    # kept in the tournament's extra; an SPRT stored without them is a duplicate one that counts, as before
    assert SprtParams.from_dict(one_owner.to_dict()) == one_owner
    asked = SprtParams(v1="me@1", v2="me@2", deals="unique", ladder=False, ladder_off=True)
    a0, _ = block_specs("t9", "take5", asked, 3, {}, 250)
    assert not a0.rated and "as asked at its start" in asked.ladder_note
    assert SprtParams.from_dict(asked.to_dict()) == asked and "ladder_off" not in unique.to_dict()
    old = {k: v for k, v in unique.to_dict().items() if k not in ("deals", "ladder")}
    assert (SprtParams.from_dict(old).deals, SprtParams.from_dict(old).ladder) == ("duplicate", True)
    with pytest.raises(SprtPlanError, match="an SPRT plays duplicate or unique deals, got 'rotate'"):
        check_field(SprtParams(v1="me@1", v2="me@2", deals="rotate"))


def test_a_match_spec_carries_rated_false_only_when_it_is_off_the_ladder() -> None:
    spec = MatchSpec(match_id="t9-000001", game="take5", seats=("a@1", "b@1"), tournament="t9")
    assert "rated" not in spec.to_dict() and MatchSpec.from_dict(spec.to_dict()).rated
    off = MatchSpec(match_id="t9-000001", game="take5", seats=("a@1", "b@1"), tournament="t9", rated=False)
    assert off.to_dict()["rated"] is False and MatchSpec.from_dict(off.to_dict()) == off
