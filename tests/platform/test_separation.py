"""Tournaments run until their bots are separated (``arena.tournaments.until_separated``): the decision on real fits of made-up
results, the rounds it adds, the request checks, and the controller's exactly-once steps on the real redis-server
(results stored through the real result script; no bots needed here, see test_until_separated.py for those)."""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from typing import Any

import numpy as np
import pytest

from arena.core.errors import TournamentError
from arena.ratings.design import RatedMatch
from arena.ratings.fit import fit_ratings
from arena.store import Store, TournamentInfo
from arena.store.separation import separation_record
from arena.tournaments import until_separated as separation
from arena.tournaments.controllers import controller_of
from arena.tournaments.deals import deal_plan
from arena.tournaments.round_robin import MAX_MATCHES, round_robin
from arena.tournaments.until_separated import KIND, MIN_DEALS, Plan, check_request, decide, request_plan, round_specs

BOTS = ("a@1", "b@1", "c@1")
# Deals of a perfect order a > b > c (50 wins per pair) the fit separates. A perfect record says little about how
# far apart the bots are, and the fit's intervals (bootstrap floored by the information sd, arena.ratings.fit) are
# honestly wide: 12 deals (4 wins per pair) are not enough, 120 are not, 132 are.
CLEAR = 150


def _ordered_results(n_deals: int) -> list[RatedMatch]:
    """a beats b beats c at every table: each pair once per deal, a deal of its own per match."""
    out = []
    for d in range(n_deals):
        hi, lo = list(itertools.combinations(BOTS, 2))[d % 3]
        seats = (hi, lo) if d % 2 == 0 else (lo, hi)
        out.append(RatedMatch(seats, (1, 2) if seats[0] == hi else (2, 1), f"deal{d}/2", None, f"m{d}"))
    return out


def _fit(results: list[RatedMatch]) -> Any:
    return fit_ratings(results, replicates=separation.REPLICATES, seed=separation.bootstrap_seed("t1"))


def test_a_clear_order_over_enough_deals_finishes_as_separated() -> None:
    fit = _fit(_ordered_results(CLEAR))
    assert fit.bots == BOTS and fit.groups == CLEAR
    d = decide(fit, BOTS, rounds=50, played=CLEAR, matches_total=CLEAR, per_round=3, max_matches=300)
    assert (d.action, d.stopped_by, d.order) == ("finish", "separated", BOTS)
    assert d.text == "separated after 50 rounds, 150 matches: a@1 > b@1 > c@1"
    assert not _fit(_ordered_results(12)).separated()  # 4 wins per pair: the order is not resolved yet


def test_too_few_deals_never_count_as_separated() -> None:
    # separated intervals over fewer deals than asked for (min_deals 200 here, MIN_DEALS in the controller)
    fit = _fit(_ordered_results(CLEAR))
    assert fit.separated() and fit.groups == CLEAR and MIN_DEALS < CLEAR
    d = decide(fit, BOTS, rounds=50, played=CLEAR, matches_total=CLEAR, per_round=3, max_matches=300,
               min_deals=200)
    assert (d.action, d.stopped_by) == ("extend", "")
    assert d.text == ("not separated after 50 rounds, 150 matches: only 150 deals played, 200 needed before the "
                      "intervals are trusted; round 51 queued")


def test_overlapping_bots_get_another_round_until_the_cap() -> None:
    # b and c split their games (deals 2, 5, 8, ...: c wins the odd ones); a beats both
    results = [RatedMatch(m.bots, (m.ranks[1], m.ranks[0]), m.deal, None, m.match_id)
               if set(m.bots) == {"b@1", "c@1"} and int(m.match_id[1:]) % 2 else m
               for m in _ordered_results(CLEAR)]
    fit = _fit(results)
    assert not fit.separated()
    d = decide(fit, BOTS, rounds=50, played=CLEAR, matches_total=CLEAR, per_round=3, max_matches=153)
    assert d.action == "extend" and "b@1 and c@1 overlap (LOS" in d.text and "a@1 and" not in d.text
    capped = decide(fit, BOTS, rounds=50, played=CLEAR, matches_total=CLEAR, per_round=3, max_matches=152)
    assert (capped.action, capped.stopped_by) == ("finish", "cap")
    assert capped.text.startswith("cap reached, not separated after 50 rounds, 150 matches (another round would "
                                  "make 153 > 152 matches): bots ")


def test_a_bot_without_result_is_not_separated() -> None:
    fit = _fit([m for m in _ordered_results(15) if "c@1" not in m.bots])
    d = decide(fit, BOTS, rounds=5, played=10, matches_total=15, per_round=3, max_matches=30)
    assert d.action == "extend" and d.text.endswith("c@1 has no result yet; round 6 queued")
    none = decide(None, BOTS, rounds=1, played=0, matches_total=3, per_round=3, max_matches=3)
    assert (none.action, none.stopped_by, none.order) == ("finish", "cap", ())
    assert none.text.endswith("a@1, b@1, c@1 have no result yet")


def test_the_fit_of_a_check_is_the_same_on_every_worker() -> None:
    results = [{"seats": list(m.bots), "ranks": list(m.ranks), "seed": i // 2, "match_id": f"t9-{i:06d}"}
               for i, m in enumerate(_ordered_results(12))]
    first, again = separation.fit_results(results, "t9"), separation.fit_results(results[::-1], "t9")
    assert first is not None and again is not None
    assert first.margin == again.margin and first.ratings == again.ratings
    assert np.array_equal(first.samples, again.samples)
    other = separation.fit_results(results, "t10")  # another tournament draws other replicates
    assert other is not None and not np.array_equal(other.samples, first.samples)
    assert separation.fit_results([], "t9") is None


def _info(bots: tuple[str, ...], seats: int, rounds: int, total: int, deals: str = "duplicate",
          plan: Plan | None = None) -> TournamentInfo:
    plan = plan or request_plan(True, 0, bots, seats, rounds, deals, {})
    assert plan is not None
    return TournamentInfo(id="t7", game="take5", bots=bots, seats_per_match=seats, rounds=rounds, seed=5,
                          config={"limit": 66}, deadline_ms=500, matches_total=total, deals=deals, kind=KIND,
                          extra=plan.to_extra())


def test_an_added_round_is_the_deal_plan_of_one_round_with_its_seats_rotated() -> None:
    bots = ("w@1", "x@1", "y@1", "z@1")
    info = _info(bots, 2, 2, 12)
    plan = Plan.of(info)
    assert (plan.per_round, plan.deals_per_round, plan.max_matches) == (6, 3, 60)
    one = deal_plan(bots, 2, 1)
    rounds = {r: round_specs(_info(bots, 2, 2, 6 * r), plan, r) for r in (2, 3)}
    for r, specs in rounds.items():
        assert [s.match_id for s in specs] == [f"t7-{6 * r + i:06d}" for i in range(6)]
        assert all((s.round, s.tournament, s.config, s.deadline_ms) == (r, "t7", {"limit": 66}, 500) for s in specs)
        assert [(s.deal, s.table) for s in specs] == [(m.deal, m.table) for m in one]
        # seat i holds the plan's seat (i + r) % k: rotated in odd rounds, as planned in even ones
        assert [s.seats for s in specs] == [m.seats[r % 2:] + m.seats[:r % 2] for m in one]
        for d in range(plan.deals_per_round):  # the tables of one deal seat disjoint bots
            seated = [b for s in specs if s.deal == d for b in s.seats]
            assert len(seated) == len(set(seated)) == 4
    seats = Counter((b, i) for specs in rounds.values() for s in specs for i, b in enumerate(s.seats))
    assert set(seats.values()) == {3}  # over k = 2 added rounds each bot holds each seat equally often


def test_owner_classes_are_kept_without_the_owners_keys() -> None:
    bots = ("p@1", "q@1", "r@1", "s@1")
    owners = {"p@1": "hash-1", "q@1": "hash-1", "r@1": "", "s@1": "hash-2"}
    plan = request_plan(True, 0, bots, 2, 1, "duplicate", owners)
    assert plan is not None and plan.owners == {"p@1": "o0", "q@1": "o0", "r@1": "", "s@1": "o1"}
    assert "hash" not in str(plan.to_extra())
    # p and q share an owner: never at two tables of one deal, in the first rounds as in the added ones
    added = round_specs(_info(bots, 2, 1, 6, plan=plan), plan, 1)
    assert [s.seats for s in added] == [m.seats[1:] + m.seats[:1] for m in deal_plan(bots, 2, 1, owners=owners)]
    for d in {s.deal for s in added}:
        tables = [set(s.seats) for s in added if s.deal == d]
        assert len([t for t in tables if t & {"p@1", "q@1"}]) == 1


def test_the_request_checks() -> None:
    assert check_request(False, 0, 3, 2, 1, "duplicate") == 0
    assert check_request(True, 0, 3, 2, 1, "duplicate") == 30  # 10 rounds of C(3,2)
    assert check_request(True, 0, 3, 2, 12, "duplicate") == 36  # at least the first rounds
    assert check_request(True, 0, 3, 2, 1, "rotate") == 60
    assert check_request(True, 0, 60, 3, 1, "duplicate") == MAX_MATCHES  # 34220 a round
    assert check_request(True, 7, 3, 2, 2, "duplicate") == 7
    with pytest.raises(TournamentError, match="max_matches 5 is below the 6 matches of the first 2 rounds"):
        check_request(True, 5, 3, 2, 2, "duplicate")
    with pytest.raises(TournamentError, match=f"at most {MAX_MATCHES}"):
        check_request(True, MAX_MATCHES + 1, 3, 2, 1, "duplicate")
    with pytest.raises(TournamentError, match="set until_separated too"):
        check_request(False, 9, 3, 2, 1, "duplicate")


# --- the controller on the real redis-server --------------------------------------------------------------------


def _create(store: Store, bots: tuple[str, ...], rounds: int, cap: int = 0) -> TournamentInfo:
    tid = store.next_tournament_id()
    plan = request_plan(True, cap, bots, 2, rounds, "duplicate", {})
    assert plan is not None
    specs = round_robin(tid, "take5", bots, 2, rounds, 11, {}, 500)
    info = TournamentInfo(id=tid, game="take5", bots=bots, seats_per_match=2, rounds=rounds, seed=11, config={},
                          deadline_ms=500, matches_total=len(specs), deals="duplicate",
                          deal_count=len({(s.round, s.deal) for s in specs}), kind=KIND, extra=plan.to_extra())
    store.create_tournament(info, specs)
    return info


def _play_queued(store: Store, info: TournamentInfo) -> None:
    """Store a result for every queued match of ``info`` (the bot first in sorted order wins) and settle its job."""
    for job in store.read_jobs("test", 1000, 10):
        spec = job.spec
        assert spec is not None and spec.tournament == info.id
        ranks = [1 + sorted(spec.seats).index(b) for b in spec.seats]
        assert store.record_result("take5", spec.match_id, spec.seats, [float(r) for r in ranks], ranks, [0, 0], {},
                                   tournament_id=info.id, seed=1000 * spec.round + spec.deal,
                                   deal={"round": spec.round, "deal": spec.deal, "table": spec.table, "attempt": 0})
        store.ack_job(job)


def _control_at_once(store: Store, info_id: str, callers: int = 4) -> None:
    """``callers`` threads run the controller at once, as workers settling the last matches (and a sweep) do."""
    controller = controller_of(KIND)
    assert controller == separation.FORMAT.control  # the format's control, which runs separation.control
    info = store.get_tournament(info_id)
    barrier = threading.Barrier(callers)

    def call() -> None:
        barrier.wait()
        controller(store, info, None)

    threads = [threading.Thread(target=call) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_concurrent_checks_add_each_round_once_and_stop_once(store: Store) -> None:
    bots = ("a@1", "b@1", "c@1")
    # a perfect order is separated after tens of rounds (CLEAR): start with 25, then add rounds until it is
    first = 25
    info = _create(store, bots, rounds=first, cap=300)
    extended = 0
    for round_ in range(first, first + 40):
        _play_queued(store, info)
        t = store.get_tournament(info.id)
        assert t is not None and (t.matches_done, t.matches_total, t.state) == (3 * round_, 3 * round_, "running")
        _control_at_once(store, info.id)
        t = store.get_tournament(info.id)
        assert t is not None
        if t.state == "finished":
            break
        extended += 1
        assert (t.matches_total, t.state, store.queued_jobs()) == (3 * round_ + 3, "running", 3)
        record = separation_record(store, "take5", info.id)
        assert record.checked_total == 3 * round_ and record.stopped_by == ""
        assert record.last_check.startswith(f"not separated after {round_} round")
        assert record.last_check.endswith(f"; round {round_ + 1} queued")
    assert extended >= 1 and t.state == "finished" and store.queued_jobs() == 0
    rounds = first + extended
    assert t.matches_total == 3 * rounds
    record = separation_record(store, "take5", info.id)
    assert (record.stopped_by, record.rounds, record.matches, record.order) == ("separated", rounds, 3 * rounds, bots)
    assert record.reason == f"separated after {rounds} rounds, {3 * rounds} matches: a@1 > b@1 > c@1"
    assert t.revealed_seed() != ""  # finished with every match settled: the seed may be shown
    _control_at_once(store, info.id)  # a late sweep changes nothing
    assert store.get_tournament(info.id) == t


def test_the_cap_stops_a_tournament_that_is_not_separated(store: Store) -> None:
    info = _create(store, ("a@1", "b@1", "c@1"), rounds=2, cap=8)
    _play_queued(store, info)
    t = store.get_tournament(info.id)
    assert t is not None and t.matches_done == 6
    separation.control(store, t, None)
    t = store.get_tournament(info.id)
    assert t is not None and (t.state, t.matches_total) == ("finished", 6)
    record = separation_record(store, "take5", info.id)
    assert record.stopped_by == "cap" and record.reason.startswith(
        "cap reached, not separated after 2 rounds, 6 matches (another round would make 9 > 8 matches): bots a@1 "
        "and b@1 overlap")


def test_a_cancelled_tournament_is_left_alone(store: Store) -> None:
    info = _create(store, ("a@1", "b@1", "c@1"), rounds=1)
    _play_queued(store, info)
    store.cancel_tournament(info.id)
    t = store.get_tournament(info.id)
    assert t is not None and t.state == "cancelled"
    separation.control(store, t, None)
    assert store.get_tournament(info.id) == t and separation_record(store, "take5", info.id).stopped_by == ""
