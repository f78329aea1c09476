"""The deal plan (no bot, and no owner, receives cards of one deal twice; seats balanced; every pair meets; the
counts of the formula) and the secret seed (commitment, keyed deal seeds, verification), all pure."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.errors import TournamentError
from arena.core.seeds import deal_seed, parse_seed_hex, seed_commitment, seed_hex
from arena.core.specs import PlannedMatch
from arena.tournaments.deals import deal_count, deal_plan, tables_per_deal
from arena.tournaments.round_robin import round_robin_formula, round_robin_size
from arena.tournaments.verify import verify_deals


def _bots(n: int) -> list[str]:
    return [f"bot{i}@1" for i in range(n)]


def _check_plan(plan: list[PlannedMatch], bots: list[str], k: int, rounds: int, owner: dict[str, str]) -> None:
    """Every promise of ``deal_plan(deals="duplicate")``'s docstring, on one plan."""
    b = len(bots)
    t_max = tables_per_deal(b, k)
    assert t_max == max(1, min(k, b // k))
    # counts: C(B, k) tables a round, each bot C(B-1, k-1) per round, the formula's total
    assert len(plan) == math.comb(b, k) * rounds == round_robin_size(b, k, rounds)
    assert round_robin_formula(b, k, rounds, deal_count=deal_count(plan)).split(", on")[0].endswith(f"= {len(plan)}")
    assert all(len(set(m.seats)) == k == len(m.seats) for m in plan)
    per_bot = Counter(x for m in plan for x in m.seats)
    assert per_bot == {x: math.comb(b - 1, k - 1) * rounds for x in bots}
    for r in range(rounds):
        subsets = [frozenset(m.seats) for m in plan if m.round == r]
        assert len(subsets) == len(set(subsets)) == math.comb(b, k)  # every k-subset once a round
    # every pair meets, C(B-2, k-2) times a round
    pairs = Counter(frozenset((x, y)) for m in plan for x in m.seats for y in m.seats if x < y)
    assert len(pairs) == math.comb(b, 2)
    assert set(pairs.values()) == {math.comb(b - 2, k - 2) * rounds}
    # seats balanced within 1
    for x in bots:
        held = Counter(i for m in plan for i, y in enumerate(m.seats) if y == x)
        counts = [held[i] for i in range(k)]
        assert max(counts) - min(counts) <= 1, (x, counts)
    if k == 2:  # and within each pair: the two bots take turns at seat 0, round after round
        first = Counter(m.seats for m in plan)
        for x, y in itertools.combinations(bots, 2):
            assert abs(first[(x, y)] - first[(y, x)]) <= 1, (x, y, first[(x, y)], first[(y, x)])
    # deals: at most T tables each, numbered 0.. in every round, tables 0.. in every deal
    by_deal: dict[tuple[int, int], list[PlannedMatch]] = defaultdict(list)
    for m in plan:
        by_deal[(m.round, m.deal)].append(m)
    assert deal_count(plan) == len(by_deal) >= math.ceil(len(plan) / t_max)
    for (_r, _d), tables in by_deal.items():
        assert 1 <= len(tables) <= t_max
        assert sorted(m.table for m in tables) == list(range(len(tables)))
    # nobody sees a deal twice: every match's deal (its seed at attempt 0) is dealt to each owner at one table
    seed = 2**255 + 12345
    received: dict[int, dict[str, tuple[int, int, int]]] = defaultdict(dict)
    for m in plan:
        s = deal_seed(seed, "t9", m.round, m.deal)
        for x in m.seats:
            first = received[s].setdefault(owner[x], (m.round, m.deal, m.table))
            assert first == (m.round, m.deal, m.table), f"owner {owner[x]} receives deal {s} twice"
    # the tables of one deal have disjoint bots, so seat j's hand is held by a different bot at each table
    for tables in by_deal.values():
        for j in range(k):
            assert len({m.seats[j] for m in tables}) == len(tables)


@settings(max_examples=80, deadline=None)
@given(num_bots=st.integers(2, 11), data=st.data(), rounds=st.integers(1, 2))
def test_properties_of_the_duplicate_plan(num_bots: int, data: st.DataObject, rounds: int) -> None:
    k = data.draw(st.integers(2, min(num_bots, 5)), label="k")
    bots = _bots(num_bots)
    owners = data.draw(st.lists(st.integers(0, num_bots - 1), min_size=num_bots, max_size=num_bots), label="owners")
    owner = {x: f"o{o}" for x, o in zip(bots, owners)}
    plan = deal_plan(bots, k, rounds, owners=owner)
    _check_plan(plan, bots, k, rounds, owner)
    assert deal_plan(list(reversed(bots)), k, rounds, owners=owner) == plan  # listing order does not matter


@settings(max_examples=30, deadline=None)
@given(num_bots=st.integers(2, 8), data=st.data(), rounds=st.integers(1, 2))
def test_properties_of_the_rotate_plan(num_bots: int, data: st.DataObject, rounds: int) -> None:
    k = data.draw(st.integers(2, num_bots), label="k")
    bots = _bots(num_bots)
    plan = deal_plan(bots, k, rounds, "rotate")
    assert len(plan) == math.comb(num_bots, k) * k * rounds == round_robin_size(num_bots, k, rounds, "rotate")
    groups: dict[tuple[int, int], list[PlannedMatch]] = defaultdict(list)
    for m in plan:
        groups[(m.round, m.deal)].append(m)
    for tables in groups.values():  # k rotations of one deal by the same bots: each bot holds each hand once
        assert [m.table for m in tables] == list(range(k))
        assert len({frozenset(m.seats) for m in tables}) == 1
        for j in range(k):
            assert sorted(m.seats[j] for m in tables) == sorted(tables[0].seats)
    per_seat = Counter((x, i) for m in plan for i, x in enumerate(m.seats))
    assert set(per_seat.values()) == {math.comb(num_bots - 1, k - 1) * rounds}


def test_owners_default_to_names_and_keep_tables_of_a_deal_apart() -> None:
    # 8 bots, 2 seats: T = 2 tables per deal; a@1 and a@2 are one NAME, so never at two tables of one deal
    bots = ["a@1", "a@2", "b@1", "c@1", "d@1", "e@1", "f@1", "g@1"]
    plan = deal_plan(bots, 2, 1)
    by_deal: dict[int, list[PlannedMatch]] = defaultdict(list)
    for m in plan:
        by_deal[m.deal].append(m)
    assert max(len(t) for t in by_deal.values()) == 2
    for tables in by_deal.values():
        names = [{x.split("@")[0] for x in m.seats} for m in tables]
        assert len(names) < 2 or not names[0] & names[1]
    # the same with an explicit owner shared by b and c
    plan = deal_plan(bots, 2, 1, owners={"b@1": "h1", "c@1": "h1"})
    _check_plan(plan, bots, 2, 1, {x: {"b@1": "h1", "c@1": "h1"}.get(x, x.split("@")[0]) for x in bots})


@pytest.mark.parametrize(("b", "k", "rounds"), [(4, 3, 36), (3, 3, 24), (9, 3, 2), (16, 4, 1), (10, 2, 3)])
def test_plans_of_known_sizes(b: int, k: int, rounds: int) -> None:
    bots = _bots(b)
    plan = deal_plan(bots, k, rounds)
    _check_plan(plan, bots, k, rounds, {x: x for x in bots})


def test_the_demo_sizes() -> None:
    """make demo: Take 5, 4 bots at 3 seats, 36 rounds; Taki, 3 bots at 3 seats, 24 rounds (B < 2k: one table per
    deal, every match on a deal of its own)."""
    take5 = deal_plan(_bots(4), 3, 36)
    assert (len(take5), deal_count(take5)) == (144, 144)
    taki = deal_plan(_bots(3), 3, 24)
    assert (len(taki), deal_count(taki)) == (24, 24)
    assert Counter((x, i) for m in taki for i, x in enumerate(m.seats)) == {(x, i): 8 for x in _bots(3)
                                                                           for i in range(3)}


def test_a_large_plan_is_quick_enough() -> None:
    import time

    started = time.process_time()
    plan = deal_plan([f"b{i:03d}" for i in range(40)], 3, 1)  # 9880 tables
    assert time.process_time() - started < 10.0  # a hang guard: about 0.3 s
    assert len(plan) == 9880 and deal_count(plan) <= 9880 // 3 + 20


def test_unknown_plan_and_too_few_bots() -> None:
    with pytest.raises(TournamentError, match="unknown deal plan"):
        deal_plan(_bots(3), 2, 1, "swiss")
    with pytest.raises(TournamentError, match="3 seats per match need at least 3 bots"):
        deal_plan(_bots(2), 3, 1)


# -- the secret seed ----------------------------------------------------------------------------------------------


def test_deal_seed_is_an_hmac_of_the_secret_seed() -> None:
    seed = int("0f" * 32, 16)
    key = bytes([0x0F] * 32)
    expected = int.from_bytes(hmac.new(key, b"t3/1/4/0", hashlib.sha256).digest()[:8], "big") & (2**63 - 1)
    assert deal_seed(seed, "t3", 1, 4) == expected == deal_seed(seed, "t3", 1, 4, 0)
    # golden value, computed once (python -c "import hmac,hashlib; ...")
    assert deal_seed(1, "t1", 0, 0) == int.from_bytes(
        hmac.new((1).to_bytes(32, "big"), b"t1/0/0/0", hashlib.sha256).digest()[:8], "big") & (2**63 - 1)
    seeds = {deal_seed(seed, t, r, d, a) for t in ("t1", "t2") for r in range(3) for d in range(3) for a in range(2)}
    assert len(seeds) == 2 * 3 * 3 * 2  # every input its own deal; a new attempt a fresh one
    assert deal_seed(seed + 1, "t3", 1, 4) != deal_seed(seed, "t3", 1, 4)
    assert all(0 <= s < 2**63 for s in seeds)


def test_commitment_is_the_sha256_of_the_seed_bytes() -> None:
    seed = 2**256 - 2
    assert seed_commitment(seed) == hashlib.sha256(seed.to_bytes(32, "big")).hexdigest()
    assert seed_commitment(0) == "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"  # sha256(32 zeros)
    assert parse_seed_hex(seed_hex(seed)) == seed and len(seed_hex(1)) == 64
    for bad in ("12", "x" * 64, "0" * 65):
        with pytest.raises(TournamentError, match="64 hex digits"):
            parse_seed_hex(bad)
    with pytest.raises(TournamentError, match="0..2\\*\\*256-1"):
        seed_commitment(2**256)


def test_verify_deals_accepts_a_true_tournament_and_names_every_lie() -> None:
    seed = 987654321 << 200
    plan = deal_plan(_bots(6), 2, 1)  # 15 tables, up to 2 per deal
    matches = [{"match_id": f"t5-{i:06d}", "seats": list(m.seats), "round": m.round, "deal": m.deal,
                "table": m.table, "attempt": 0, "seed": deal_seed(seed, "t5", m.round, m.deal)}
               for i, m in enumerate(plan)]
    matches[3]["attempt"] = 2  # played again after a crash: a fresh deal
    matches[3]["seed"] = deal_seed(seed, "t5", plan[3].round, plan[3].deal, 2)
    matches[3]["record_seed"] = matches[3]["seed"]
    assert verify_deals("t5", seed_hex(seed), seed_commitment(seed), matches) == []
    assert verify_deals("t5", seed_hex(seed), seed_commitment(seed + 1), matches)[0].startswith(
        "the revealed seed does not match the commitment")
    lied = [dict(m) for m in matches]
    lied[0]["seed"] += 1
    lied[3]["record_seed"] = 7
    twice = dict(lied[1], match_id="t5-000099", table=9)
    problems = verify_deals("t5", seed_hex(seed), seed_commitment(seed), [*lied, twice])
    assert any(p.startswith("match t5-000000: seed") for p in problems)
    assert any(p.startswith("match t5-000003: its record was played with seed 7") for p in problems)
    assert any("received cards of round 0" in p and "t5-000099" in p for p in problems)
    assert verify_deals("t5", "nope", "", matches) == ["a revealed tournament seed is 64 hex digits, got 'nope'"]


def test_verify_deals_lets_the_versions_of_a_head_to_head_sprt_see_a_deal_twice_only() -> None:
    """A head-to-head SPRT block: V1 against V2 at table 0, V2 against V1 at table 1, on one deal."""
    seed = 1234567 << 190

    def table(t: int, seats: list[str], deal: int = 0) -> dict[str, object]:
        return {"match_id": f"t2-{2 * deal + t:06d}", "seats": seats, "round": 0, "deal": deal, "table": t,
                "attempt": 0, "seed": deal_seed(seed, "t2", 0, deal)}

    block = [table(0, ["me@1", "me@2"]), table(1, ["me@2", "me@1"])]
    assert len(verify_deals("t2", seed_hex(seed), seed_commitment(seed), block)) == 2  # a round robin's rule
    assert verify_deals("t2", seed_hex(seed), seed_commitment(seed), block, twice_allowed=("me@1", "me@2")) == []
    third = table(2, ["me@1", "x@1"]) | {"match_id": "t2-000099"}  # a third table of deal 0
    stranger = table(0, ["x@1", "me@2"], deal=1)  # x@1 is allowed nothing
    again = table(1, ["x@1", "me@1"], deal=1)
    problems = verify_deals("t2", seed_hex(seed), seed_commitment(seed), [*block, third, stranger, again],
                            twice_allowed=("me@1", "me@2"))
    assert len(problems) == 2, problems
    assert "bot me@1 received cards of round 0, deal 0 twice" in problems[0] and "t2-000099" in problems[0]
    assert "bot x@1 received cards of round 0, deal 1 twice" in problems[1]
    lied = [dict(block[0], seed=1), block[1]]
    assert verify_deals("t2", seed_hex(seed), seed_commitment(seed + 1), lied, twice_allowed=("me@1", "me@2")) == [
        verify_deals("t2", seed_hex(seed), seed_commitment(seed + 1), [])[0],
        f"match t2-000000: seed 1 is not the deal seed {deal_seed(seed, 't2', 0, 0)} of round 0, deal 0, attempt 0"]
