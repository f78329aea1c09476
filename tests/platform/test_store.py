"""The store on a real redis-server: bots, tournaments, jobs, results stored once, Elo ladder math."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena import store as store_module
from arena.store import Store, TournamentInfo, jobs_key
from arena.store.redis_server import PrivateRedis
from arena.tournaments.round_robin import round_robin


@pytest.fixture
def store(redis_url: str) -> Iterator[Store]:
    s = Store.from_url(redis_url)
    yield s
    s.close()


def _record(store: Store, match_id: str, seats: list[str], scores: list[float], *,
            faults: list[int] | None = None, tournament: str | None = None, game: str = "take5") -> bool:
    from arena_sdk.games.base import competition_ranks

    ranks = list(competition_ranks(scores, lower_is_better=True))
    return store.record_result(game, match_id, seats, scores, ranks, faults or [0] * len(seats),
                               {"match_id": match_id, "marker": "record"}, tournament_id=tournament)


def _tournament(store: Store, total: int, tid: str = "t1") -> TournamentInfo:
    info = TournamentInfo(id=tid, game="take5", bots=("a", "b", "c"), seats_per_match=3, rounds=1, seed=5,
                          config={"limit": 20}, deadline_ms=1000, matches_total=total, created_at=1000.0)
    store.create_tournament(info)
    return info


# -- bots ---------------------------------------------------------------------------------------------------------


def test_register_is_an_upsert_that_keeps_the_first_registration_time(store: Store) -> None:
    first = store.register_bot("take5", "alpha", "127.0.0.1:5001", now=100.0)
    again = store.register_bot("take5", "alpha", "127.0.0.1:6001", now=200.0)
    assert first.endpoint == "127.0.0.1:5001" and first.registered_at == 100.0
    assert again.endpoint == "127.0.0.1:6001" and again.registered_at == 100.0
    assert store.get_bot("take5", "alpha") == again
    assert store.get_bot("take5", "nobody") is None
    store.register_bot("take5", "bravo", "127.0.0.1:5002", now=150.0)
    store.register_bot("other", "alpha", "127.0.0.1:7001", now=150.0)
    assert [b.name for b in store.list_bots("take5")] == ["alpha", "bravo"]
    assert [(b.game, b.name) for b in store.list_bots()] == [("other", "alpha"), ("take5", "alpha"),
                                                              ("take5", "bravo")]


def test_reregistering_keeps_the_ladder_entry(store: Store) -> None:
    store.register_bot("take5", "a", "h:1")
    store.register_bot("take5", "b", "h:2")
    _record(store, "m1", ["a", "b"], [3, 10])
    store.register_bot("take5", "a", "h:9")
    assert [(e.bot, e.rating, e.matches) for e in store.ladder("take5")] == [("a", 1516.0, 1), ("b", 1484.0, 1)]


# -- tournaments --------------------------------------------------------------------------------------------------


def test_tournament_ids_count_up_and_tournaments_read_back(store: Store) -> None:
    assert [store.next_tournament_id() for _ in range(3)] == ["t1", "t2", "t3"]
    info = _tournament(store, 3, "t2")
    assert store.get_tournament("t2") == info
    assert store.tournament_game("t2") == "take5"
    assert store.get_tournament("t9") is None
    with pytest.raises(store_module.StoreError, match="exists"):
        store.create_tournament(info)


def test_tournament_progress_and_finish(store: Store) -> None:
    _tournament(store, 2)
    assert _record(store, "t1-000000", ["a", "b", "c"], [5, 10, 20], faults=[0, 2, 1], tournament="t1")
    t = store.get_tournament("t1")
    assert t is not None and (t.matches_done, t.faults, t.state, t.finished_at) == (1, 3, "running", None)
    assert _record(store, "t1-000001", ["b", "c", "a"], [5, 10, 20], faults=[1, 0, 0], tournament="t1")
    t = store.get_tournament("t1")
    assert t is not None and (t.matches_done, t.faults, t.state) == (2, 4, "finished")
    assert t.finished_at is not None and t.finished_at > 0
    assert store.get_match_record("t1-000001") == {"match_id": "t1-000001", "marker": "record"}
    assert store.get_match_record("t1-000009") is None
    assert store.get_match_record("t8-000000") is None


@pytest.mark.parametrize("grows", [False, True])
def test_a_plugin_format_finishes_by_itself_unless_it_grows(store: Store, grows: bool) -> None:
    # a format of another package (kind "gauntlet") planned in full at creation has no controller to finish it
    info = TournamentInfo(id="t1", game="take5", bots=("a", "b"), seats_per_match=2, rounds=1, seed=5, config={},
                          deadline_ms=1000, matches_total=1, created_at=1000.0, kind="gauntlet", grows=grows)
    store.create_tournament(info)
    assert store.get_tournament("t1") == info
    assert _record(store, "t1-000000", ["a", "b"], [5, 10], tournament="t1")
    t = store.get_tournament("t1")
    assert t is not None and t.matches_done == 1 and t.controlled is grows
    assert t.state == ("running" if grows else "finished")  # a growing one: only its controller finishes it


# -- results and the ladder ---------------------------------------------------------------------------------------


def test_three_at_1500_finishing_1_2_3(store: Store) -> None:
    assert _record(store, "m1", ["b", "a", "c"], [20, 5, 30])
    ladder = store.ladder("take5")
    assert [(e.rank, e.bot, e.matches, e.wins) for e in ladder] == [(1, "a", 1, 1), (2, "b", 1, 0), (3, "c", 1, 0)]
    assert [e.rating for e in ladder] == pytest.approx([1516.0, 1500.0, 1484.0], abs=1e-9)
    assert [e.mean_score for e in ladder] == [5.0, 20.0, 30.0]
    result = store.get_result("take5", "m1")
    assert result is not None and result["ratings_before"] == [1500.0] * 3
    assert result["deltas"] == pytest.approx([0.0, 16.0, -16.0], abs=1e-9)


def test_the_same_result_stored_twice_changes_nothing(store: Store, redis_url: str) -> None:
    _tournament(store, 5)
    assert _record(store, "t1-000000", ["a", "b", "c"], [1, 2, 3], faults=[1, 0, 0], tournament="t1") is True
    raw = redis.Redis.from_url(redis_url)
    before = {k: raw.dump(k) for k in raw.keys("*")}
    # same match id, even with other numbers: refused, nothing changes
    assert _record(store, "t1-000000", ["a", "b", "c"], [3, 2, 1], faults=[0, 0, 5], tournament="t1") is False
    after = {k: raw.dump(k) for k in raw.keys("*")}
    raw.close()
    assert after == before
    t = store.get_tournament("t1")
    assert t is not None and (t.matches_done, t.faults) == (1, 1)
    assert [e.matches for e in store.ladder("take5")] == [1, 1, 1]


def test_ties_share_ranks_on_the_ladder_and_in_wins(store: Store) -> None:
    # four at 1500 placed 1, 2, 2, 4 -> 1516 / 1500 / 1500 / 1484; b and c share rank 2 on the ladder
    assert _record(store, "m1", ["a", "b", "c", "d"], [0, 10, 10, 30])
    ladder = store.ladder("take5")
    assert [(e.rank, e.bot) for e in ladder] == [(1, "a"), (2, "b"), (2, "c"), (4, "d")]
    assert [e.rating for e in ladder] == pytest.approx([1516.0, 1500.0, 1500.0, 1484.0], abs=1e-9)
    # shared first places count as wins
    assert _record(store, "m2", ["c", "d"], [7, 7])
    wins = {e.bot: e.wins for e in store.ladder("take5")}
    assert wins == {"a": 1, "b": 0, "c": 1, "d": 1}


def test_ratings_use_pre_match_values_and_the_games_are_separate_ladders(store: Store) -> None:
    assert _record(store, "m1", ["a", "b"], [0, 10])            # a 1516, b 1484
    assert _record(store, "m2", ["a", "b"], [10, 0])            # b wins as the underdog
    ladder = {e.bot: e.rating for e in store.ladder("take5")}
    expected_b = 1484.0 + 32 * (1 - 1 / (1 + 10 ** ((1516.0 - 1484.0) / 400)))
    assert ladder["b"] == pytest.approx(expected_b, abs=1e-9)
    assert ladder["a"] + ladder["b"] == pytest.approx(3000.0, abs=1e-9)
    assert store.ladder("other") == []
    assert _record(store, "m1", ["a", "b"], [0, 10], game="other")   # same match id, other game: stored
    assert {e.bot: e.matches for e in store.ladder("other")} == {"a": 1, "b": 1}
    assert {e.bot: e.matches for e in store.ladder("take5")} == {"a": 2, "b": 2}


def test_bad_results_are_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="seated twice"):
        store.record_result("take5", "m1", ["a", "a"], [1, 2], [1, 2], [0, 0], {})
    with pytest.raises(ValueError, match="2 seats, 3 scores"):
        store.record_result("take5", "m1", ["a", "b"], [1, 2, 3], [1, 2], [0, 0], {})
    with pytest.raises(ValueError):
        store.record_result("take5", "m1", ["a"], [1], [1], [0], {})
    assert not store.has_result("take5", "m1")


def test_the_script_refuses_deltas_computed_from_moved_ratings(store: Store, redis_url: str) -> None:
    """Optimistic concurrency: deltas computed from ratings another worker has since changed are not applied."""
    assert _record(store, "m1", ["a", "b"], [0, 10])
    keys = [store_module.result_key("take5", "m2"), store_module.match_key("take5", "m2"),
            store_module.ladder_key("take5"), store_module.results_log_key("take5"),
            store_module.tournament_key("take5", "-"), store_module.ladder_stats_key("take5")]
    stale = ["{}", "{}", "1500.0", 2, "0", 0, "0", "m2",
             "a", "1500.0", "16.0", "0", 1, "b", "1500.0", "-16.0", "10", 0]  # a is 1516 now, not 1500
    assert store._record_result(keys=keys, args=stale) == -1
    assert not store.has_result("take5", "m2")
    assert {e.bot: e.matches for e in store.ladder("take5")} == {"a": 1, "b": 1}


def test_concurrent_workers_count_every_match_once(redis_url: str) -> None:
    """Eight threads (own connections) store 40 matches among 5 bots, every match twice; each counts once and
    the live ladder equals the one rebuilt from the stored results."""
    rng = random.Random(2024)
    bots = ["a", "b", "c", "d", "e"]
    matches = []
    for i in range(40):
        seats = rng.sample(bots, rng.randint(2, 5))
        matches.append((f"m{i}", seats, [float(rng.randint(0, 40)) for _ in seats]))
    work = matches + matches
    rng.shuffle(work)
    stored: list[bool] = []
    lock = threading.Lock()

    def worker(part: list[tuple[str, list[str], list[float]]]) -> None:
        s = Store.from_url(redis_url)
        for match_id, seats, scores in part:
            ok = _record(s, match_id, seats, scores)
            with lock:
                stored.append(ok)
        s.close()

    threads = [threading.Thread(target=worker, args=(work[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(stored) == [False] * 40 + [True] * 40
    s = Store.from_url(redis_url)
    ladder = s.ladder("take5")
    assert sum(e.matches for e in ladder) == sum(len(seats) for _, seats, _ in matches)
    assert sum(e.rating for e in ladder) == pytest.approx(1500.0 * len(ladder), abs=1e-6)
    assert s.rebuild_ladder("take5") == ladder
    s.close()


# -- jobs ---------------------------------------------------------------------------------------------------------


def test_jobs_are_claimed_once_stay_pending_until_acked(store: Store, redis_url: str) -> None:
    specs = round_robin("t1", "take5", ["a", "b", "c"], 2, 2, seed=3)
    store.enqueue(specs)
    assert store.queued_jobs() == 6
    first = store.read_jobs("w1", count=4, block_ms=10)
    second = store.read_jobs("w2", count=10, block_ms=10)
    assert [j.spec for j in first + second] == specs
    assert store.read_jobs("w3", count=10, block_ms=10) == []
    assert store.pending_jobs() == 6
    for job in first:
        store.ack_job(job)
    assert store.pending_jobs() == 2 and store.queued_jobs() == 2
    raw = redis.Redis.from_url(redis_url)
    raw.xadd(jobs_key("take5"), {"spec": "{not json"})
    raw.close()
    (bad,) = store.read_jobs("w1", count=10, block_ms=10)
    assert bad.spec is None and "malformed job" in bad.error


def test_pending_is_zero_before_any_job(store: Store) -> None:
    assert store.pending_jobs() == 0
    store.ensure_job_group()
    store.ensure_job_group()  # idempotent
    assert store.pending_jobs() == 0 and store.queued_jobs() == 0


# -- properties ---------------------------------------------------------------------------------------------------

_match = st.tuples(
    st.lists(st.sampled_from("abcdef"), min_size=2, max_size=6, unique=True),
    st.lists(st.integers(min_value=0, max_value=5), min_size=6, max_size=6),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(matches=st.lists(_match, min_size=1, max_size=12), repeats=st.lists(st.integers(0, 11), max_size=6))
def test_any_sequence_of_results_keeps_the_ladder_consistent(redis_server: PrivateRedis,
                                                             matches: list[tuple[list[str], list[int]]],
                                                             repeats: list[int]) -> None:
    """Ratings sum to 1500 per bot, each match counts once per seat even when stored again, and the live
    ladder equals the one rebuilt from the results."""
    s = Store.from_url(redis_server.url)
    s.client.flushall()
    try:
        order = list(range(len(matches))) + [r for r in repeats if r < len(matches)]
        for i in order:
            seats, scores = matches[i]
            _record(s, f"m{i}", seats, [float(x) for x in scores[:len(seats)]])
        ladder = s.ladder("take5")
        played = {b for seats, _ in matches for b in seats}
        assert {e.bot for e in ladder} == played
        assert sum(e.matches for e in ladder) == sum(len(seats) for seats, _ in matches)
        assert sum(e.rating for e in ladder) == pytest.approx(1500.0 * len(played), abs=1e-6)
        assert all(e.rank == 1 + sum(o.rating > e.rating for o in ladder) for e in ladder)
        assert s.rebuild_ladder("take5") == ladder
    finally:
        s.close()


# -- a tournament and its jobs in one transaction ------------------------------------------------------------------


def test_create_tournament_stores_and_queues_in_one_transaction(store: Store) -> None:
    specs = round_robin("t1", "take5", ["a", "b", "c", "d"], 3, 2, 9, {"limit": 20}, 1000)
    info = TournamentInfo(id="t1", game="take5", bots=("a", "b", "c", "d"), seats_per_match=3, rounds=2, seed=9,
                          config={"limit": 20}, deadline_ms=1000, matches_total=len(specs), created_at=1000.0)
    with store.client.monitor() as monitor:
        store.create_tournament(info, specs)
        commands = []
        for event in monitor.listen():
            commands.append(event["command"].split()[0].upper())
            if commands[-1] == "EXEC":
                break
    multi = commands.index("MULTI")
    assert commands[multi + 1] == "HSET" and commands[multi + 2:-1] == ["XADD"] * len(specs)
    queued = store.client.xrange(jobs_key("take5"))
    assert [fields["match"] for _, fields in queued] == [s.match_id for s in specs]
    assert store.get_tournament("t1").matches_total == len(specs) == 8


def test_create_tournament_refuses_specs_of_another_game_before_storing(store: Store) -> None:
    specs = round_robin("t1", "take5", ["a", "b"], 2, 1, 9, {}, 1000)
    info = TournamentInfo(id="t1", game="other", bots=("a", "b"), seats_per_match=2, rounds=1, seed=9,
                          config={}, deadline_ms=1000, matches_total=len(specs), created_at=1000.0)
    with pytest.raises(store_module.StoreError, match="every match spec"):
        store.create_tournament(info, specs)
    assert store.get_tournament("t1") is None and store.client.exists(jobs_key("take5")) == 0


def test_an_owners_version_quota_holds_against_concurrent_registrations_and_removals(store: Store) -> None:
    """The versions an owner holds in a game, over all its names, are counted and written in one atomic step: 8
    threads registering new versions under 4 names of one owner with room for 3 more leave it exactly at its
    quota; removing a NAME (every version) frees as many places; a NAME without an owner is not counted."""
    import threading

    from arena.store import VersionsExhausted, owner_bots_key

    owner = "a" * 64
    for v in ("1", "2"):
        store.register_bot_claim("take5", "n0", "127.0.0.1:1", version=v, owner_hash=owner, max_owner_versions=5)
    outcomes: list[str] = []
    start = threading.Barrier(8)

    def register(i: int) -> None:
        start.wait()
        try:
            store.register_bot_claim("take5", f"n{i % 4}", "127.0.0.1:1", version=f"v{i}", owner_hash=owner,
                                     max_owner_versions=5)
            outcomes.append("ok")
        except VersionsExhausted as exc:
            assert "has 5 bot versions registered for take5" in str(exc)
            outcomes.append("refused")

    threads = [threading.Thread(target=register, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok"] * 3 + ["refused"] * 5
    held = store.client.smembers(owner_bots_key("take5", owner))
    assert len(held) == 5 and held == {b for n in range(4) for b in
                                       (f"n{n}@{v}" for v in store.bot_versions("take5", f"n{n}"))}
    removed = store.remove_bot("take5", "n0")
    assert removed and len(store.client.smembers(owner_bots_key("take5", owner))) == 5 - len(removed)
    store.register_bot_claim("take5", "n0", "127.0.0.1:1", version="again", owner_hash=owner, max_owner_versions=5)
    for v in range(7):  # no owner: nothing counted, no quota
        store.register_bot_claim("take5", "free", "127.0.0.1:1", version=str(v), max_owner_versions=5)
    assert len(store.bot_versions("take5", "free")) == 7
    store.client.delete(owner_bots_key("take5", owner))  # versions registered before they were counted:
    store.migrate_owners()  # counted when `arena serve` starts
    assert store.client.smembers(owner_bots_key("take5", owner)) == {
        f"n{n}@{v}" for n in range(4) for v in store.bot_versions("take5", f"n{n}")}


def test_a_names_version_quota_holds_against_concurrent_registrations(store: Store) -> None:
    """The versions a NAME may hold are counted and written in one atomic step: 8 threads registering 8 new
    versions of a NAME with room for 3 more leave it exactly at its quota, the others refused; a version it has
    registers again."""
    import threading

    from arena.store import VersionsExhausted

    for v in ("1", "2"):
        store.register_bot_claim("take5", "raced", "127.0.0.1:1", version=v, max_versions=5)
    outcomes: list[str] = []
    start = threading.Barrier(8)

    def register(v: str) -> None:
        start.wait()
        try:
            store.register_bot_claim("take5", "raced", "127.0.0.1:1", version=v, max_versions=5)
            outcomes.append("ok")
        except VersionsExhausted as exc:
            assert "raced has 5 versions registered for take5" in str(exc)
            outcomes.append("refused")

    threads = [threading.Thread(target=register, args=(f"new{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok"] * 3 + ["refused"] * 5
    assert len(store.bot_versions("take5", "raced")) == 5
    store.register_bot_claim("take5", "raced", "127.0.0.1:2", version="1", max_versions=5)  # held already
    assert store.get_bot("take5", "raced@1").endpoint == "127.0.0.1:2"


def test_the_arena_id_is_read_without_a_write_once_it_exists(tmp_path: Path) -> None:
    # a Redis that refuses writes (its disk full: MISCONF) still answers every read the CLI's listings make
    with PrivateRedis(tmp_path / "data") as server:
        s = Store.from_url(server.url)
        try:
            first = s.arena_id()
            s.client.config_set("min-replicas-to-write", 1)  # from now on every write is refused (NOREPLICAS)
            with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
                s.client.set("probe", "1")
            assert s.arena_id() == first
        finally:
            s.client.config_set("min-replicas-to-write", 0)
            s.close()
