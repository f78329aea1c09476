"""Workers on a real redis-server running real matches between sample bot processes."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from arena.core.seeds import deal_seed
from arena.store import Store, TournamentInfo, jobs_key
from arena.tournaments.round_robin import round_robin
from arena.worker import loop as scheduler
from arena.worker.settings import WorkerSettings

WAIT_S = 120.0  # a hang guard, not a speed requirement


@pytest.fixture
def store(redis_url: str) -> Iterator[Store]:
    s = Store.from_url(redis_url)
    yield s
    s.close()


class Worker:
    """``run_worker`` in a thread; ``stop()`` sets its stop event and joins it."""

    def __init__(self, redis_url: str, concurrency: int = 2) -> None:
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=scheduler.run_worker, args=(redis_url, WorkerSettings(concurrency=concurrency, block_ms=100)),
            kwargs={"stop": self.stop_event, "name": "test-worker"},
            daemon=True,
        )
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(timeout=WAIT_S)
        assert not self.thread.is_alive(), "the worker did not honour its stop event"


def _wait_finished(store: Store, tournament_id: str) -> TournamentInfo:
    deadline = time.monotonic() + WAIT_S
    while True:
        info = store.get_tournament(tournament_id)
        assert info is not None
        if info.state == "finished" or time.monotonic() > deadline:
            return info
        time.sleep(0.05)


def _create(store: Store, bots: list[str], k: int, rounds: int = 1, seed: int = 11,
            config: dict[str, Any] | None = None) -> list[Any]:
    tid = store.next_tournament_id()
    config = config if config is not None else {"limit": 20}
    specs = round_robin(tid, "take5", bots, k, rounds, seed, config, deadline_ms=1000)
    store.create_tournament(TournamentInfo(
        id=tid, game="take5", bots=tuple(bots), seats_per_match=k, rounds=rounds, seed=seed, config=config,
        deadline_ms=1000, matches_total=len(specs), created_at=time.time()))
    scheduler.enqueue_matches(store, specs)
    return specs


def test_a_worker_runs_a_round_robin_between_bot_processes(redis_url: str, store: Store,
                                                           start_bot: Callable[..., Any]) -> None:
    bots = {"rand-a": start_bot("sample:random"), "rand-b": start_bot("sample:random"),
            "heur": start_bot("sample:heuristic")}
    for name, bot in bots.items():
        store.register_bot("take5", name, bot.endpoint)
    specs = _create(store, sorted(bots), k=2, rounds=2)
    assert len(specs) == 6  # C(3,2) pairs x 2 rounds, each on a deal of its own
    worker = Worker(redis_url, concurrency=3)
    try:
        info = _wait_finished(store, specs[0].tournament)
    finally:
        worker.stop()
    assert (info.state, info.matches_done, info.matches_total, info.faults) == ("finished", 6, 6, 0)
    assert store.pending_jobs() == 0 and store.queued_jobs() == 0
    for spec in specs:
        record = store.get_match_record(spec.match_id)
        assert record is not None
        assert [s["name"] for s in record["seats"]] == list(spec.seats)
        result = store.get_result("take5", spec.match_id)
        assert result is not None and result["scores"] == record["result"]["scores"]
        # the deal: keyed by the tournament's secret seed (11 here), first attempt; none of it was queued
        assert spec.seed == 0 and result["deal"] == {"round": spec.round, "deal": spec.deal, "table": 0, "attempt": 0}
        assert record["seed"] == result["seed"] == deal_seed(11, spec.tournament, spec.round, spec.deal, 0)
        assert record["config"]["limit"] == 20
        assert max(result["scores"]) >= 20  # the game ran until the limit
    ladder = store.ladder("take5")
    assert {e.bot: e.matches for e in ladder} == {"rand-a": 4, "rand-b": 4, "heur": 4}
    assert sum(e.rating for e in ladder) == pytest.approx(1500.0 * 3, abs=1e-6)
    assert store.rebuild_ladder("take5") == ladder


def test_a_job_whose_result_is_stored_is_only_acknowledged(redis_url: str, store: Store,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    specs = _create(store, ["a", "b"], k=2, rounds=2)
    for spec in specs:  # results already stored (e.g. by a worker that died before its XACK)
        assert store.record_result("take5", spec.match_id, list(spec.seats), [1, 2], [1, 2], [0, 0],
                                   {"marker": "first"}, tournament_id=spec.tournament)
    before = store.ladder("take5")
    caplog.set_level(logging.INFO, logger="arena.worker.loop")
    worker = Worker(redis_url)
    try:
        deadline = time.monotonic() + WAIT_S
        while store.queued_jobs() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.stop()
    assert store.queued_jobs() == 0 and store.pending_jobs() == 0
    assert store.ladder("take5") == before
    assert all(store.get_match_record(s.match_id) == {"marker": "first"} for s in specs)
    assert sum("already has a stored result" in r.getMessage() for r in caplog.records) == len(specs)
    info = store.get_tournament(specs[0].tournament)
    assert info is not None and info.matches_done == 2


def test_an_unregistered_bot_plays_as_unreachable_and_the_match_completes(
        redis_url: str, store: Store, start_bot: Callable[..., Any]) -> None:
    store.register_bot("take5", "here", start_bot("sample:heuristic").endpoint)
    specs = _create(store, ["here", "ghost"], k=2)
    worker = Worker(redis_url)
    try:
        info = _wait_finished(store, specs[0].tournament)
    finally:
        worker.stop()
    assert info.state == "finished" and info.faults > 0
    for spec in specs:
        result = store.get_result("take5", spec.match_id)
        assert result is not None
        ghost = result["seats"].index("ghost")
        assert result["faults"][ghost] > 0 and result["faults"][1 - ghost] == 0


def test_malformed_jobs_are_dropped_and_acknowledged(redis_url: str, store: Store) -> None:
    store.ensure_job_group()
    raw = redis.Redis.from_url(redis_url)
    raw.xadd(jobs_key("take5"), {"spec": "{broken"})
    bad_config = round_robin("t1", "take5", ["a", "b"], 2, 1, seed=1, config={"limit": -3})[0]
    raw.xadd(jobs_key("take5"), {"spec": json.dumps(bad_config.to_dict())})
    raw.close()
    worker = Worker(redis_url)
    try:
        deadline = time.monotonic() + WAIT_S
        while store.queued_jobs() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.stop()
    assert store.queued_jobs() == 0 and store.pending_jobs() == 0
    assert not store.has_result("take5", bad_config.match_id)


def test_a_worker_stops_when_told_and_leaves_unclaimed_jobs_queued(redis_url: str, store: Store) -> None:
    worker = Worker(redis_url)
    worker.stop()
    _create(store, ["a", "b"], k=2, rounds=2)
    assert store.queued_jobs() == 2 and store.pending_jobs() == 0


def test_bad_concurrency_is_refused(redis_url: str) -> None:
    with pytest.raises(ValueError, match="concurrency"):
        scheduler.run_worker(redis_url, WorkerSettings(concurrency=0))


# -- the heartbeat's refresh and jobs it no longer holds --------------------------------------------------------


class _RacingStore(Store):
    """A real store that runs ``race`` (in the refresh's thread) just before the refresh script: what other
    workers and this worker's own matches do between the heartbeat's snapshot of the running jobs and its
    refresh, made to happen every time."""

    race: Callable[[], None] = staticmethod(lambda: None)

    def refresh_and_beat(self, consumer: str, jobs: Any, status: Any, **kwargs: Any) -> dict[str, str]:
        self.race()
        return super().refresh_and_beat(consumer, jobs, status, **kwargs)


def _beat_during(redis_url: str, race: Callable[[Store, Any, threading.Event], None]) -> None:
    """Worker "w1" runs one match (a task waiting on an event); one heartbeat beats while ``race(store, job,
    finish)`` happens; ``finish.set()`` ends the match (the call returns once it has ended)."""
    racing = _RacingStore.from_url(redis_url)
    try:
        _create(racing, ["a", "b"], 2)

        async def scenario() -> None:
            (job,) = racing.read_jobs("w1", 1, 100)
            worker = scheduler._Worker(racing, "w1", WorkerSettings(concurrency=1, visibility_timeout_s=30.0,
                                                                    heartbeat_s=5.0, forget_s=60.0))
            finish = threading.Event()
            ended = threading.Event()

            async def match() -> str:
                await asyncio.to_thread(finish.wait, WAIT_S)
                return "pending"

            task = asyncio.create_task(match())
            worker.running[task] = job
            task.add_done_callback(worker.finished)
            task.add_done_callback(lambda _t: ended.set())

            def race_once() -> None:
                race(racing, job, finish)
                if finish.is_set():
                    assert ended.wait(WAIT_S), "the match did not end"

            racing.race = race_once  # type: ignore[method-assign]
            await worker.beat()
            racing.race = lambda: None  # type: ignore[method-assign]
            finish.set()
            await task

        asyncio.run(scenario())
    finally:
        racing.close()


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and r.name == "arena.worker.loop"]


def test_a_job_handed_over_as_its_match_ends_here_is_no_warning(redis_url: str,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """The match ends here (its job left pending after a platform error) and worker w2 takes the job over, both
    between the snapshot and the refresh: a benign race, logged at debug level, not a warning."""
    caplog.set_level(logging.DEBUG, logger="arena.worker.loop")

    def race(store: Store, job: Any, finish: threading.Event) -> None:
        finish.set()
        assert [j.entry_id for j in store.reclaim_jobs("w2", 1, 0)] == [job.entry_id]

    _beat_during(redis_url, race)
    assert _warnings(caplog) == []
    assert any("handed over as its match ended here (now held by w2)" in r.getMessage() for r in caplog.records)


def test_a_job_settled_here_during_the_refresh_is_no_warning(redis_url: str,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="arena.worker.loop")

    def race(store: Store, job: Any, finish: threading.Event) -> None:
        finish.set()
        store.ack_job(job)

    _beat_during(redis_url, race)
    assert _warnings(caplog) == []
    assert any("(now held by nobody: settled)" in r.getMessage() for r in caplog.records)


def test_a_job_reclaimed_while_its_match_still_runs_here_is_a_warning(redis_url: str,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="arena.worker.loop")

    def race(store: Store, job: Any, finish: threading.Event) -> None:
        assert [j.entry_id for j in store.reclaim_jobs("w2", 1, 0)] == [job.entry_id]
        assert store.job_holder(job) == "w2"

    _beat_during(redis_url, race)
    (warning,) = _warnings(caplog)
    assert "was reclaimed by worker w2 while its match still runs here" in warning
