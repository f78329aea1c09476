"""The store's issue-3 parts on a real redis-server, one script at a time: bot versions and owners, job reclaim,
refresh and settling, cancellation of queued jobs, worker heartbeats, tournament listing and the ladder check."""

from __future__ import annotations

import itertools
import time

import pytest
import redis

from arena.store import (
    LadderEntry,
    OwnershipError,
    Store,
    TournamentInfo,
    WorkerStatus,
    jobs_key,
    ladder_key,
    ladders_equal,
    token_hash,
    worker_key,
)
from arena.tournaments.round_robin import round_robin


def _tournament(store: Store, tid: str, bots: tuple[str, ...] = ("a", "b", "c"), k: int = 2) -> list:
    """A stored and queued round robin of k rounds: C(B, k) * k matches."""
    specs = round_robin(tid, "take5", list(bots), k, k, seed=3)
    store.create_tournament(TournamentInfo(id=tid, game="take5", bots=bots, seats_per_match=k, rounds=k, seed=3,
                                           config={}, deadline_ms=1000, matches_total=len(specs),
                                           created_at=time.time()))
    store.enqueue(specs)
    return specs


# -- bots ---------------------------------------------------------------------------------------------------------


def test_versions_owners_and_removal(store: Store) -> None:
    owner = token_hash("secret")
    first, claimed = store.register_bot_claim("take5", "vb", "h:1", version="1.0", owner_hash=owner, now=10.0)
    assert claimed and first.bot_id == "vb@1.0" and first.registered_at == 10.0
    second, claimed = store.register_bot_claim("take5", "vb", "h:2", version="2.0", owner_hash=owner, now=20.0,
                                               sdk_version="0.1", author="me")
    assert not claimed and (second.sdk_version, second.author, second.updated_at) == ("0.1", "me", 20.0)
    with pytest.raises(OwnershipError, match="'vb'"):
        store.register_bot("take5", "vb", "h:3", version="3.0", owner_hash=token_hash("guess"))
    assert store.bot_versions("take5", "vb") == ["1.0", "2.0"]
    assert store.owner_token_matches("take5", "vb", "secret") is True
    assert store.owner_token_matches("take5", "vb", "Secret") is False
    assert store.owner_token_matches("take5", "nobody", "secret") is None
    # "NAME" is the newest registered version; a re-registration does not make a version newer
    assert store.resolve_bot("take5", "vb") == "vb@2.0"
    store.register_bot("take5", "vb", "h:9", version="1.0", owner_hash=owner, now=30.0)
    assert store.resolve_bot("take5", "vb") == "vb@2.0"
    assert store.get_bot("take5", "vb@1.0").endpoint == "h:9"  # type: ignore[union-attr]
    assert store.get_bot("take5", "vb@1.0").registered_at == 10.0  # type: ignore[union-attr]
    assert store.resolve_bot("take5", "vb@9") is None and store.get_bot("take5", "bad ref") is None
    assert store.update_bot("take5", "vb@9", "h:1") is None
    assert store.update_bot("take5", "vb@2.0", "h:7", now=40.0).endpoint == "h:7"  # type: ignore[union-attr]
    # removal keeps the ladder and the owner
    assert store.record_result("take5", "m1", ["vb@1.0", "vb@2.0"], [1, 2], [1, 2], [0, 0], {})
    assert store.remove_bot("take5", "vb@1.0") == ["vb@1.0"]
    assert store.resolve_bot("take5", "vb") == "vb@2.0" and store.remove_bot("take5", "vb@1.0") == []
    assert store.remove_bot("take5", "vb") == ["vb@2.0"]
    assert store.list_bots("take5") == [] and store.resolve_bot("take5", "vb") is None
    assert {e.bot for e in store.ladder("take5")} == {"vb@1.0", "vb@2.0"}
    assert store.owner_hash("take5", "vb") == owner


# -- jobs ---------------------------------------------------------------------------------------------------------


def test_reclaim_counts_deliveries_and_refresh_keeps_a_live_workers_jobs(store: Store) -> None:
    specs = _tournament(store, "t1")
    live = store.read_jobs("live", 1, 10)
    dead = store.read_jobs("dead", 2, 10)
    assert [j.spec.match_id for j in live + dead] == [s.match_id for s in specs[:3]]  # type: ignore[union-attr]
    time.sleep(0.15)
    assert store.refresh_jobs("live", live) == {}
    assert store.refresh_jobs("dead", live) == {live[0].entry_id: "live"}  # not dead's: untouched
    reclaimed = store.reclaim_jobs("rescuer", 10, 100)
    assert [(j.entry_id, j.deliveries, j.spec) for j in reclaimed] == [(j.entry_id, 2, j.spec) for j in dead]
    assert store.reclaim_jobs("other", 10, 100) == []  # just claimed: not idle any more
    assert store.refresh_jobs("dead", dead) == {j.entry_id: "rescuer" for j in dead}
    store.ack_job(reclaimed[0])
    assert store.refresh_jobs("rescuer", reclaimed[:1]) == {reclaimed[0].entry_id: ""}  # settled
    # a pending job whose stream entry is gone comes back without a spec and can be settled
    store.client.xdel(jobs_key("take5"), reclaimed[1].entry_id)
    time.sleep(0.15)
    (ghost,) = [j for j in store.reclaim_jobs("rescuer", 10, 100) if j.entry_id == reclaimed[1].entry_id]
    assert ghost.spec is None and ghost.deliveries == 3
    assert store.drop_job(ghost, "") == 1
    details = store.pending_details("take5")
    assert [(d["consumer"], d["times_delivered"]) for d in details] == [("rescuer", 2)]  # live's, reclaimed too


def test_refresh_and_beat_refreshes_as_refresh_jobs_writes_the_heartbeat_and_outlives_a_script_flush(
        store: Store) -> None:
    specs = _tournament(store, "t1")
    mine = store.read_jobs("me", 2, 10)
    theirs = store.read_jobs("other", 1, 10)
    now = time.time()
    beat = WorkerStatus(name="me", host="box", pid=42, started_at=now, last_seen=now, concurrency=2,
                        running=(specs[0].match_id,), matches_done=0, timeout_s=3.0)
    time.sleep(0.15)
    assert store.refresh_and_beat("me", mine + theirs, beat) == {theirs[0].entry_id: "other"}
    assert store.list_workers() == [beat]
    reclaimed = store.reclaim_jobs("rescuer", 10, 100)  # theirs is idle (0.15 s); mine were refreshed
    assert [j.entry_id for j in reclaimed] == [theirs[0].entry_id]
    store.ack_job(mine[0])
    store.client.script_flush()  # a Redis that lost its scripts (restarted): the refresh loads its own again
    later = WorkerStatus(**{**beat.__dict__, "matches_done": 1})
    assert store.refresh_and_beat("me", mine, later) == {mine[0].entry_id: ""}  # settled
    assert store.list_workers() == [later]
    assert store.refresh_and_beat("me", [], beat) == {} and store.list_workers() == [beat]  # nothing to refresh


def test_a_claim_takes_what_it_wants_across_the_games_streams_in_turn_order_and_makes_missing_groups(
        store: Store) -> None:
    from arena.core.specs import MatchSpec

    games = store.job_games()
    store.enqueue([MatchSpec(match_id=f"m-{g}-{i}", game=g, seats=("a@1", "b@1"), seed=i)
                   for g in games for i in range(2)])
    store.ensure_job_group()
    claimed = store._claim_from("w", games[::-1], 3)  # the last game first, then the one before it
    assert [j.spec.match_id for j in claimed] == [  # type: ignore[union-attr]
        f"m-{games[-1]}-0", f"m-{games[-1]}-1", f"m-{games[-2]}-0"]
    assert [j.game for j in claimed] == [games[-1], games[-1], games[-2]]
    assert all(j.deliveries == 1 and j.fields["spec"] for j in claimed)
    store.client.delete(jobs_key(games[0]))  # a flushed stream: no group there any more
    assert [j.spec.match_id for j in store._claim_from("w", games, 9)] == [  # type: ignore[union-attr]
        f"m-{g}-{i}" for g in games[1:] for i in range(2) if (g, i) not in {(games[-1], 0), (games[-1], 1),
                                                                           (games[-2], 0)}]
    assert store.client.xinfo_groups(jobs_key(games[0]))[0]["name"] == "workers"  # made again, for the next claim


def test_a_claim_takes_a_job_waiting_in_any_games_stream_without_waiting_on_the_empty_ones(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.core.specs import MatchSpec

    games = store.job_games()
    assert len(games) >= 2
    last = games[-1]  # read last: every stream before it is empty
    store.enqueue([MatchSpec(match_id=f"m-{last}-{i}", game=last, seats=("a@1", "b@1"), seed=i) for i in range(3)])
    store.ensure_job_group()
    blocks: list[object] = []
    read = store.client.xreadgroup

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        blocks.append(kwargs.get("block"))
        return read(*args, **kwargs)

    monkeypatch.setattr(store.client, "xreadgroup", recorded)
    jobs = store.read_jobs("w", 2, 60_000)
    assert [j.spec.match_id for j in jobs] == [f"m-{last}-0", f"m-{last}-1"]  # type: ignore[union-attr]
    assert blocks == []  # no stream was waited on: a job was there (one server: one script read them all)
    assert [j.spec.match_id for j in store.read_jobs("w", 5, 0)] == [f"m-{last}-2"]  # type: ignore[union-attr]
    assert store.read_jobs("w", 5, 20) == [] and blocks == [20]  # then waits when none, on every stream at once


def test_an_idle_claim_takes_a_job_arriving_in_any_games_stream(store: Store,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from arena.core.specs import MatchSpec

    games = store.job_games()
    store.ensure_job_group()
    blocks: list[int] = []
    read = store.client.xreadgroup
    timers: list[threading.Timer] = []

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("block") is not None:
            blocks.append(kwargs["block"])
            timers.append(threading.Timer(0.05, store.enqueue, [[MatchSpec(match_id="m-late", game=games[-1],
                                                                           seats=("a@1", "b@1"), seed=1)]]))
            timers[-1].start()
        return read(*args, **kwargs)

    monkeypatch.setattr(store.client, "xreadgroup", recorded)
    jobs = store.read_jobs("w", 1, 60_000)  # every stream empty: it waits, and the job comes in the last one
    for timer in timers:  # its enqueue done before the store closes (else: a Redis error in its thread)
        timer.join()
    assert [(j.game, j.spec.match_id) for j in jobs] == [(games[-1], "m-late")]  # type: ignore[union-attr]
    assert blocks == [60_000]  # one wait, on every stream: not first on another game's empty one


def test_claims_take_turns_between_the_games_so_that_none_starves_another(store: Store) -> None:
    from arena.core.specs import MatchSpec

    games = store.job_games()
    for game in games:
        store.enqueue([MatchSpec(match_id=f"m-{game}-{i}", game=game, seats=("a@1", "b@1"), seed=i) for i in range(4)])
    store.ensure_job_group()
    claimed = [job.game for _ in range(2 * len(games)) for job in store.read_jobs("w", 1, 0)]
    assert sorted(claimed) == sorted(games * 2)  # one job at a time: every game's jobs come in turn


def test_settling_a_job_without_running_it(store: Store) -> None:
    specs = _tournament(store, "t1")  # 6 matches
    jobs = store.read_jobs("w", 6, 10)
    assert store.drop_job(jobs[0], "failed") == 1
    assert store.drop_job(jobs[0], "failed") == 0  # settled already: nothing counted twice
    assert store.record_result("take5", specs[1].match_id, list(specs[1].seats), [1, 2], [1, 2], [0, 0], {},
                               tournament_id="t1")
    assert store.drop_job(jobs[1], "cancelled") == 2  # its result is stored: only acknowledged
    with pytest.raises(ValueError, match="reason"):
        store.drop_job(jobs[2], "lost")
    info = store.get_tournament("t1")
    assert info is not None and (info.matches_failed, info.matches_cancelled, info.matches_done) == (1, 0, 1)
    assert store.failed_matches("take5", "t1") == [specs[0].match_id]
    for job in jobs[2:5]:
        assert store.drop_job(job, "failed") == 1
    assert store.get_tournament("t1").state == "running"  # type: ignore[union-attr]
    # the last match is stored: 1 done + 4 failed + this one = 6, the tournament finishes
    assert store.record_result("take5", specs[5].match_id, list(specs[5].seats), [1, 2], [1, 2], [0, 0], {},
                               tournament_id="t1")
    store.ack_job(jobs[5])
    info = store.get_tournament("t1")
    assert info is not None and (info.state, info.matches_done, info.matches_failed) == ("finished", 2, 4)
    assert store.pending_jobs() == 0 and store.queued_jobs() == 0


def test_a_tournament_finishes_exactly_when_every_match_is_done_cancelled_or_failed(store: Store) -> None:
    """Every way of settling 3 matches (stored, dropped as cancelled, dropped as failed), in every order: the state
    stays "running" until matches_done + matches_cancelled + matches_failed = matches_total, then is "finished"."""
    outcomes = ("done", "cancelled", "failed")
    n = 0
    for kinds in itertools.product(outcomes, repeat=3):
        for order in itertools.permutations(range(3)):
            n += 1
            tid = f"t{n}"
            specs = _tournament(store, tid, k=3)  # 3 bots, 3 seats, 3 rounds
            jobs = {j.spec.match_id: j for j in store.read_jobs("w", 3, 10)}  # type: ignore[union-attr]
            for step, i in enumerate(order, start=1):
                spec = specs[i]
                if kinds[i] == "done":
                    assert store.record_result("take5", spec.match_id, list(spec.seats), [1, 2, 3], [1, 2, 3],
                                               [0, 0, 0], {}, tournament_id=tid)
                    store.ack_job(jobs[spec.match_id])
                else:
                    assert store.drop_job(jobs[spec.match_id], kinds[i]) == 1
                info = store.get_tournament(tid)
                assert info is not None
                settled = info.matches_done + info.matches_cancelled + info.matches_failed
                assert settled == step
                assert info.state == ("finished" if settled == info.matches_total else "running"), (kinds, order)
            assert (info.matches_done, info.matches_cancelled, info.matches_failed) == tuple(
                kinds.count(k) for k in outcomes)
    assert store.pending_jobs() == 0 and store.queued_jobs() == 0


def test_cancel_drops_only_undelivered_jobs_of_that_tournament(store: Store) -> None:
    t1 = _tournament(store, "t1")                       # 6 jobs
    t2 = _tournament(store, "t2", ("x", "y"))           # 2 jobs
    t3 = _tournament(store, "t3", ("p", "q"))           # 2 jobs, delivered below
    taken = store.read_jobs("w", 2, 10)                 # t1-000000, t1-000001 delivered
    assert [j.spec.match_id for j in taken] == ["t1-000000", "t1-000001"]  # type: ignore[union-attr]
    info, dropped = store.cancel_tournament("t1", now=50.0)
    assert (info.state, info.cancelled_at, dropped, info.matches_cancelled) == ("cancelled", 50.0, 4, 4)
    assert store.queued_jobs() == 2 + 2 + 2            # t1's two delivered jobs, t2 and t3 untouched
    rest = store.read_jobs("w", 10, 10)
    assert [j.spec.match_id for j in rest] == [s.match_id for s in t2 + t3]  # type: ignore[union-attr]
    # a second cancel changes nothing; a delivered job of t1 is dropped when its worker sees the state
    assert store.cancel_tournament("t1")[1] == 0
    assert store.drop_job(taken[0], "cancelled") == 1
    assert store.get_tournament("t1").matches_cancelled == 5  # type: ignore[union-attr]
    # a result stored after all (a worker that was running it) is counted as played, not cancelled
    assert store.record_result("take5", "t1-000000", list(t1[0].seats), [1, 2], [1, 2], [0, 0], {},
                               tournament_id="t1")
    info = store.get_tournament("t1")
    assert info is not None and (info.matches_done, info.matches_cancelled, info.state) == (1, 4, "cancelled")
    # finished tournaments are left alone
    for spec in t2:
        assert store.record_result("take5", spec.match_id, list(spec.seats), [1, 2], [1, 2], [0, 0], {},
                                   tournament_id="t2")
    assert store.cancel_tournament("t2")[0].state == "finished"
    assert [t.id for t in store.list_tournaments()] == ["t3", "t2", "t1"]
    assert [t.id for t in store.list_tournaments("other")] == []
    with pytest.raises(Exception, match="no tournament t9"):
        store.cancel_tournament("t9")


def test_cancel_of_a_tournament_without_a_stream(store: Store) -> None:
    store.create_tournament(TournamentInfo(id="t1", game="take5", bots=("a", "b"), seats_per_match=2, rounds=1,
                                           seed=1, config={}, deadline_ms=1000, matches_total=2, created_at=1.0))
    info, dropped = store.cancel_tournament("t1")
    assert (info.state, dropped) == ("cancelled", 0)


# -- workers ------------------------------------------------------------------------------------------------------


def test_heartbeats_list_workers_and_forget_them(store: Store) -> None:
    now = time.time()
    beat = WorkerStatus(name="w1", host="box", pid=42, started_at=now - 5, last_seen=now, concurrency=4,
                        running=("t1-000003",), matches_done=7, timeout_s=3.0)
    store.heartbeat(beat)
    store.heartbeat(WorkerStatus(name="w0", host="box", pid=43, started_at=now, last_seen=now - 10,
                                 concurrency=1, running=(), matches_done=0, timeout_s=3.0, stopped=True), forget_s=1)
    listed = store.list_workers()
    assert [w.name for w in listed] == ["w0", "w1"] and listed[1] == beat
    assert beat.alive(now + 3.0) and not beat.alive(now + 3.1) and not listed[0].alive(now)
    assert 0 < store.client.ttl(worker_key("w1")) <= 3600
    store.client.delete(worker_key("w0"))  # what the TTL does after forget_s
    assert [w.name for w in store.list_workers()] == ["w1"]
    assert store.client.zrange("arena:workers", 0, -1) == ["w1"]  # pruned from the index


# -- the ladder check ---------------------------------------------------------------------------------------------


def test_check_ladder_replays_the_log_as_of_one_moment(store: Store, redis_url: str) -> None:
    assert store.check_ladder("take5").equal and store.check_ladder("take5").results == 0
    assert store.record_result("take5", "m1", ["a", "b"], [1, 2], [1, 2], [0, 0], {})
    assert store.record_result("take5", "m2", ["b", "c"], [1, 2], [1, 2], [0, 0], {})
    check = store.check_ladder("take5")
    assert check.equal and check.results == 2 and check.live == check.rebuilt == store.ladder("take5")
    assert [e.bot for e in store.rebuild_ladder("take5", results=1)] == ["a", "b"]
    assert store.rebuild_ladder("take5", results=0) == []
    raw = redis.Redis.from_url(redis_url)
    raw.zincrby(ladder_key("take5"), 1e-3, "c")
    raw.close()
    assert not store.check_ladder("take5").equal


def test_ladders_equal() -> None:
    a = [LadderEntry(1, "x", 1510.0, 2, 1, 4.0), LadderEntry(2, "y", 1490.0, 2, 1, 6.0)]
    assert ladders_equal(a, list(reversed(a)))
    assert ladders_equal(a, [a[0], LadderEntry(2, "y", 1490.0 + 1e-7, 2, 1, 6.0)])
    assert not ladders_equal(a, [a[0], LadderEntry(2, "y", 1490.0 + 1e-5, 2, 1, 6.0)])
    assert not ladders_equal(a, [a[0], LadderEntry(2, "y", 1490.0, 3, 1, 6.0)])
    assert not ladders_equal(a, [a[0], LadderEntry(2, "y", 1490.0, 2, 2, 6.0)])
    assert not ladders_equal(a, [a[0], LadderEntry(2, "y", 1490.0, 2, 1, 6.1)])
    assert not ladders_equal(a, a[:1])
