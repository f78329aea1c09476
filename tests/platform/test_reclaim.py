"""Reclaim (issue 3, item 1) on real parts: a worker process SIGKILLed in mid-match, its job reclaimed by another
worker and the match counted exactly once; a live worker running a match longer than the visibility timeout keeps
its job; a job that always fails is recorded as failed after max_deliveries and its tournament finishes."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import pytest
from platform_helpers import SLOW_BOT, wait_until

from arena.core.seeds import deal_seed
from arena.core.specs import MatchSpec
from arena.store import Store, TournamentInfo, WorkerStatus, results_log_key
from arena.tournaments.round_robin import round_robin
from arena.worker import loop as scheduler
from arena.worker.fleet import reclaim_idle_s, warn_of_namesakes

SLOW_ARGS = ["--sleep", "0.25"]  # every Decide answers after 0.25 s: one hand of Take 5 takes ~3 s
ONE_HAND = {"limit": 1}  # limit 1 bullhead: a 2-seat match always ends after its first hand


def _tournament(store: Store, bots: list[str], *, seed: int = 5,
                edit: Callable[[list[MatchSpec]], list[MatchSpec]] | None = None) -> list[MatchSpec]:
    """A stored round robin (k=2, 2 rounds, one hand per match) whose specs, changed by ``edit``, are queued."""
    tid = store.next_tournament_id()
    config = dict(ONE_HAND)
    specs = round_robin(tid, "take5", bots, 2, 2, seed, config, deadline_ms=1000)
    if edit is not None:
        specs = edit(specs)
    store.create_tournament(TournamentInfo(
        id=tid, game="take5", bots=tuple(bots), seats_per_match=2, rounds=2, seed=seed, config=config,
        deadline_ms=1000, matches_total=len(specs), created_at=time.time()))
    scheduler.enqueue_matches(store, specs)
    return specs


def _slow_bots(store: Store, start_bot: Callable[..., Any], names: list[str]) -> list[str]:
    ids = []
    for name in names:
        bot = start_bot(SLOW_BOT, extra_args=SLOW_ARGS)
        ids.append(store.register_bot("take5", name, bot.endpoint, version="test").bot_id)
    return ids


def _running(store: Store, worker: str) -> tuple[str, ...]:
    return next((w.running for w in store.list_workers() if w.name == worker), ())


def test_a_worker_killed_mid_match_has_its_job_reclaimed_and_the_match_counted_once(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    bots = _slow_bots(store, start_bot, ["slow-a", "slow-b"])
    doomed = workers.process("doomed", concurrency=1, visibility_timeout_s=2.0, heartbeat_s=0.3)
    wait_until(lambda: any(w.name == "doomed" for w in store.list_workers()), "the doomed worker's heartbeat")
    specs = _tournament(store, bots)
    assert len(specs) == 2
    (in_flight,) = wait_until(lambda: _running(store, "doomed"), "the doomed worker to start a match")
    time.sleep(0.5)  # well into the match: StartMatch done, Decide calls under way
    assert not store.has_result("take5", in_flight)
    doomed.kill()
    pending = store.pending_details("take5")
    # its match, and the other one claimed ahead (prefetch) while it played: both reclaimed; the one claimed ahead
    # was never started, so it keeps attempt 0 of its deal
    assert [(p["consumer"], p["times_delivered"]) for p in pending] == [("doomed", 1)] * 2

    rescuer = workers.thread("rescuer", concurrency=2, visibility_timeout_s=2.0, heartbeat_s=0.3)
    tid = specs[0].tournament
    info = wait_until(lambda: (t := store.get_tournament(tid)) and t.state == "finished" and t,
                      f"tournament {tid} to finish; doomed worker log:\n{doomed.log()}")
    rescuer.stop()

    # counted exactly once: the tournament, the results log, the ladder and the rebuilt ladder agree
    assert (info.matches_done, info.matches_total, info.matches_failed) == (2, 2, 0)
    assert store.client.llen(results_log_key("take5")) == 2
    assert sorted(store.client.lrange(results_log_key("take5"), 0, -1)) == sorted(s.match_id for s in specs)
    assert {e.bot: e.matches for e in store.ladder("take5")} == {bots[0]: 2, bots[1]: 2}
    assert store.check_ladder("take5").equal
    assert store.pending_jobs() == 0 and store.queued_jobs() == 0
    # the match the dead worker was running was played again, by the rescuer, on a fresh deal (its bots may have
    # seen the first one): attempt 1 of its deal, HMAC-keyed by the tournament seed (5)
    result = store.get_result("take5", in_flight)
    assert result is not None and result["worker"] == "rescuer"
    spec = next(s for s in specs if s.match_id == in_flight)
    assert result["deal"] == {"round": spec.round, "deal": spec.deal, "table": 0, "attempt": 1}
    assert result["seed"] == deal_seed(5, tid, spec.round, spec.deal, 1) != deal_seed(5, tid, spec.round, spec.deal, 0)
    other = store.get_result("take5", next(s.match_id for s in specs if s.match_id != in_flight))
    assert other is not None and other["deal"]["attempt"] == 0
    by_name = {w.name: w for w in store.list_workers()}
    assert not by_name["doomed"].alive(time.time()) and by_name["doomed"].running == (in_flight,)
    assert by_name["rescuer"].matches_done == 2 and by_name["rescuer"].stopped


def test_a_live_worker_keeps_a_match_longer_than_the_visibility_timeout(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """Visibility timeout 1 s, a match of ~3 s: the running worker refreshes its job, so the other worker (another
    process), which tries to reclaim every 0.5 s, never gets it."""
    bots = _slow_bots(store, start_bot, ["slow-a", "slow-b"])
    specs = _tournament(store, bots)
    owner = workers.thread("owner", concurrency=1, visibility_timeout_s=1.0, heartbeat_s=0.2)
    (first,) = wait_until(lambda: _running(store, "owner"), "the owner to start a match")
    thief = workers.process("thief", concurrency=1, visibility_timeout_s=1.0, heartbeat_s=0.2)
    deliveries: set[int] = set()

    def finished() -> bool:
        deliveries.update(p["times_delivered"] for p in store.pending_details("take5")
                          if p["message_id"] and p["consumer"] == "owner")
        return store.has_result("take5", first)

    wait_until(finished, f"match {first} to finish")
    owner.stop()
    thief.stop()
    result = store.get_result("take5", first)
    assert result is not None and result["worker"] == "owner"
    assert deliveries == {1}  # never reclaimed: its delivery count stayed 1 while it ran
    assert result["ranks"] and max(result["scores"]) >= 1
    info = store.get_tournament(specs[0].tournament)
    assert info is not None and info.matches_done == len(specs) == 2


def test_a_worker_with_a_shorter_visibility_timeout_never_takes_a_live_workers_job(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """The owner refreshes its job once a second (visibility timeout 6 s: a loaded machine may delay a refresh by
    seconds); an impatient worker (0.3 s, reclaiming every 0.15 s) would find it idle for 0.3 s many times over, but
    waits as long as the live owner's own timeout:
    the match is never taken from it (an operator's `--visibility-timeout 1` beside the default workers had 11 of 30
    matches played twice at once)."""
    bots = _slow_bots(store, start_bot, ["slow-c", "slow-d"])
    specs = _tournament(store, bots)
    owner = workers.thread("owner2", concurrency=1, visibility_timeout_s=6.0, heartbeat_s=1.0)
    (first,) = wait_until(lambda: _running(store, "owner2"), "the owner to start a match")
    impatient = workers.process("impatient", concurrency=1, visibility_timeout_s=0.3, heartbeat_s=0.1)
    deliveries: set[int] = set()

    def finished() -> bool:
        deliveries.update(p["times_delivered"] for p in store.pending_details("take5")
                          if p["message_id"] and p["consumer"] == "owner2")
        return store.has_result("take5", first)

    wait_until(finished, f"match {first} to finish")
    owner.stop()
    impatient.stop()
    result = store.get_result("take5", first)
    assert result is not None and result["worker"] == "owner2"
    assert deliveries == {1}  # never reclaimed while its owner lived
    info = store.get_tournament(specs[0].tournament)
    assert info is not None and info.matches_done == len(specs) == 2


def test_a_job_that_always_fails_is_recorded_as_failed_after_max_deliveries(
        store: Store, workers: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A match that seats the same bot twice is played, but its result is refused (a platform error, not a bot
    fault), every time: after 3 deliveries it is recorded as failed, acknowledged, and the tournament finishes."""
    caplog.set_level("WARNING", logger="arena.worker.loop")
    # match 0 seats "ghost" twice: the referee plays it (both seats unreachable), the store refuses its result
    specs = _tournament(store, ["ghost", "ghost@2"],
                        edit=lambda specs: [dataclasses.replace(specs[0], seats=("ghost", "ghost")), specs[1]])
    tid = specs[0].tournament
    poison = specs[0]
    worker = workers.thread("w", concurrency=1, visibility_timeout_s=0.3, heartbeat_s=0.1, max_deliveries=3)
    info = wait_until(lambda: (t := store.get_tournament(tid)) and t.state == "finished" and t,
                      f"tournament {tid} to finish")
    worker.stop()
    assert (info.matches_done, info.matches_failed, info.matches_total) == (1, 1, 2)
    assert store.failed_matches("take5", tid) == [poison.match_id]
    assert not store.has_result("take5", poison.match_id)
    assert store.pending_jobs() == 0 and store.queued_jobs() == 0
    failures = [r for r in caplog.records if f"match {poison.match_id} failed" in r.getMessage()]
    assert len(failures) == 3  # played 3 times, never a 4th
    assert any("delivered 4 times" in r.getMessage() and "recorded as failed" in r.getMessage()
               for r in caplog.records)


def test_a_job_claimed_ahead_is_handed_back_on_stop_and_taken_at_once(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """Prefetch: a worker of concurrency 1 playing a match claims the next job ahead; when it stops, the job it
    never started is handed back (no delivery counted, idle as long as the visibility timeout), so another worker
    takes it at its first reclaim instead of 30 s later."""
    bots = _slow_bots(store, start_bot, ["slow-a", "slow-b"])
    specs = _tournament(store, bots)
    first = workers.thread("first", concurrency=1, visibility_timeout_s=30.0, heartbeat_s=0.3)
    (playing,) = wait_until(lambda: _running(store, "first"), "the first worker to start a match")
    wait_until(lambda: [p["consumer"] for p in store.pending_details("take5")] == ["first"] * 2,
               "the first worker to claim the other job ahead")
    first.stop()  # the match it plays finishes (drain); the job claimed ahead is handed back
    assert store.has_result("take5", playing)
    (ahead,) = store.pending_details("take5")
    assert (ahead["consumer"], ahead["times_delivered"]) == ("first", 0)
    assert ahead["time_since_delivered"] >= 30_000
    started = time.monotonic()
    second = workers.thread("second", concurrency=1, visibility_timeout_s=30.0, heartbeat_s=0.3)
    tid = specs[0].tournament
    wait_until(lambda: (t := store.get_tournament(tid)) and t.state == "finished", f"tournament {tid} to finish")
    assert time.monotonic() - started < 20.0  # not the 30 s visibility timeout
    second.stop()
    other = next(s.match_id for s in specs if s.match_id != playing)
    result = store.get_result("take5", other)
    assert result is not None and result["worker"] == "second" and result["deal"]["attempt"] == 0
    assert store.pending_jobs() == 0 and store.check_ladder("take5").equal


def test_the_reclaim_wait_reads_no_clock(store: Store) -> None:
    """A worker whose clock ran 60 s ahead saw every other worker's heartbeat as stale, so its short visibility
    timeout applied to their jobs: the wait is the longest timeout of the workers listed, whatever the clocks."""
    live = WorkerStatus(name="w-live", host="h", pid=1, started_at=0.0, last_seen=time.time() - 3600,
                        concurrency=1, running=(), matches_done=0, timeout_s=987.0)  # "stale" to a fast clock
    store.heartbeat(live, forget_s=7200)
    assert reclaim_idle_s(store, 2.0) == 987.0
    store.heartbeat(dataclasses.replace(live, stopped=True), forget_s=7200)  # said goodbye: not waited for
    assert reclaim_idle_s(store, 2.0) < 987.0


def test_a_worker_that_takes_a_live_workers_name_is_warned(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    """Two workers of one --name overwrite each other's heartbeat (`arena worker list` showed one, with one pid, for
    two processes): the second is warned at start; a worker that finds only its own old heartbeat, or a dead one's,
    is not (a restart after a crash keeps its name)."""
    import logging
    import os
    import socket

    now = time.time()
    other = WorkerStatus(name="box2", host="elsewhere", pid=4242, started_at=now - 60, last_seen=now - 2,
                         concurrency=3, running=(), matches_done=0, timeout_s=30.0)
    store.heartbeat(other)
    store.heartbeat(dataclasses.replace(other, name="box3", last_seen=now - 300))  # dead: its heartbeat stopped
    store.heartbeat(dataclasses.replace(other, name="box4", host=socket.gethostname(), pid=os.getpid()))
    with caplog.at_level(logging.WARNING, logger="arena.worker"):
        warn_of_namesakes(store, ["box2", "box3", "box4", "box5"])
    (warning,) = caplog.records
    assert "a worker named box2 sent a heartbeat 2 s ago (pid 4242 on elsewhere)" in warning.getMessage()
