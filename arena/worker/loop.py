"""Match specs -> Redis Stream jobs, and the worker loop that runs them (DESIGN.md "Scheduling and storage").

A tournament's matches are appended to its game's jobs stream; workers claim them through the consumer group
``workers`` (XREADGROUP), run each with the referee (``arena.match.referee.run_match``, up to ``concurrency`` at once,
since a match mostly waits on bots over the network), store the result and its Elo update in one atomic,
idempotent step (``Store.record_result``), then acknowledge the job.

Settling one claimed job (the checks, the match, the writes after it, their costs, the prefetch):
``arena.worker.job``.

A job that fails for a reason other than a bot (a platform bug, Redis going away) is left pending in the group,
unacknowledged. Reclaim: every worker periodically claims the jobs that have stayed pending without a refresh for
``visibility_timeout_s`` (their worker is taken for dead: SIGKILL, a lost machine) and runs them again; each such
claim counts as a delivery. A live worker refreshes the idle time of the jobs it is running at every heartbeat
(every ``min(heartbeat_s, visibility_timeout_s / 3)`` seconds), so a long match never loses its job and the
visibility timeout can stay short. Should a stalled worker lose a job anyway, the match is stored once: the result
script refuses a second result of the same match id.

Redis moving: a worker whose Redis URL came from a data directory (``arena worker --data-dir D`` on the machine of
``arena serve``) is given a resolver (``resolve_url``); after a Redis error it re-resolves the URL (at most once a
second) and, when the private Redis came back on another port, carries on there (``Store.retarget``).

Heartbeat: each worker writes its status (host, pid, start time, concurrency, running match ids, matches stored)
at every refresh and when a match starts or ends; ``Store.list_workers`` reads them (``arena worker list``).

Bot checks: every ``bot_recheck_s`` seconds one worker of the fleet (the first to take ``Store.claim_bot_check``)
calls the GetInfo of every unhealthy bot and queues deferred matches again (``arena.worker.health.check_bots``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import redis

from arena.core.config import DEFAULTS
from arena.core.gc_tuning import tune_for_matches
from arena.core.metrics import watch_loop_lag
from arena.core.specs import MatchSpec
from arena.match.channels import BotChannels, BotDialer
from arena.match.loop_lag import hold_loop_lag, release_loop_lag
from arena.store import REDIS_ERRORS, Job, MatchInputs, Store, WorkerStatus
from arena.store.redis_urls import redact_url
from arena.tournaments.controllers import sweep
from arena.worker.admission import LagGate, TimeoutBrake
from arena.worker.fleet import default_worker_name, heartbeat_interval, reclaim_idle_s, warn_of_namesakes
from arena.worker.health import check_bots
from arena.worker.job import InputsAhead, read_inputs, run_job_and_control
from arena.worker.live import LiveHub
from arena.worker.metrics import jobs_reclaimed
from arena.worker.reconnect import Reconnector, RedisOutage
from arena.worker.settings import WorkerSettings

log = logging.getLogger(__name__)

SOCKET_CONNECT_TIMEOUT_S = 5.0  # a worker's Redis connection attempt fails after this long
SOCKET_TIMEOUT_MARGIN_S = 30.0  # a worker's Redis call fails after block_ms plus this long without an answer
MISSED_HEARTBEATS = 3  # a worker is shown as not alive after this many heartbeat intervals without one
POKE_COALESCE_S = 0.2  # a match starting or ending brings the next heartbeat forward, at most one per this long
MATCH_IO_THREADS = 32  # at most this many Redis calls of one process's matches at once (each takes about 1 ms)
SPARE_CONNECTIONS = 4  # Redis connections beyond the executor's threads (the calling thread's own calls)


def io_threads(workers: int, concurrency: int) -> int:
    """Threads of the executor that makes a worker process's Redis calls (``run_loops``): three per worker (its
    blocking job read, its heartbeat, its bot checks), four spare, and one per match up to ``MATCH_IO_THREADS``.
    A match calls Redis two or three times in its life, about a millisecond each, so matches beyond that wait for a
    thread rather than each holding one, and a Redis connection (redis-py's pool refuses more than it was made
    for: ``worker_store``)."""
    return 4 + 3 * workers + min(concurrency, MATCH_IO_THREADS)


def _with_inputs(store: Store, claim: Callable[..., list[Job]],
                 *args: Any) -> tuple[list[Job], dict[str, tuple[float, MatchInputs]]]:
    """``claim(*args)`` (``Store.read_jobs`` or ``Store.reclaim_jobs``) and the claimed jobs' pre-match reads
    (``arena.worker.job.read_inputs``), in the calling thread: one thread hop for both."""
    jobs = claim(*args)
    return jobs, read_inputs(store, jobs)


def enqueue_matches(store: Store, specs: Sequence[MatchSpec]) -> None:
    """Queue the matches of a tournament as jobs on their game's stream, in order."""
    store.enqueue(specs)


class _Worker:
    """State of one worker loop: its running jobs, counts and heartbeat, and the steps of its loop."""

    def __init__(self, store: Store, name: str, settings: WorkerSettings, *, pool: BotChannels | None = None,
                 reconnector: Reconnector | None = None) -> None:
        self.store = store
        self.reconnector = reconnector
        self.name = name
        self.settings = settings
        self.pool = pool  # the channels to the bots that its matches lease (None: each match its own)
        self.live = LiveHub(store)  # publishes its matches for the viewer, all in one write per period
        self.concurrency = settings.concurrency
        self.interval = heartbeat_interval(settings.heartbeat_s, settings.visibility_timeout_s)
        self.forget_s = settings.forget_s
        self.reclaim_every = min(settings.visibility_timeout_s / 2, 5.0)
        self.next_reclaim = 0.0
        self.group_ready = False  # the consumer group of the jobs streams is known to exist
        self.outage = RedisOutage(name)  # how a Redis that does not answer is told in its log
        self.started_at = time.time()
        self.running: dict[asyncio.Task[str], Job] = {}
        self.prefetched: list[Job] = []  # claimed while every slot plays: started as soon as one frees
        self.reads_ahead: dict[str, InputsAhead] = {}  # entry id of a claimed job not started -> its pre-match reads
        self.health_epoch = 0  # matches settled that kept their slot (their health may have changed a bot's)
        self.playing: set[asyncio.Task[str]] = set()  # running tasks whose match is not over: the slots in use
        self.slot_freed = asyncio.Event()
        self.matches_done = 0
        self.poke = asyncio.Event()
        self.closing = False
        self.gate = LagGate(name, settings.busy_lag_ms, settings.concurrency)  # no new match while the loop is late
        self.brake = TimeoutBrake(name, settings.concurrency)  # fewer matches at once while many bots time out

    def status(self, *, stopped: bool = False) -> WorkerStatus:
        return WorkerStatus(
            name=self.name, host=socket.gethostname(), pid=os.getpid(), started_at=self.started_at,
            last_seen=time.time(), concurrency=self.concurrency,
            running=tuple(sorted(j.spec.match_id for j in self.running.values() if j.spec is not None)),
            matches_done=self.matches_done, timeout_s=MISSED_HEARTBEATS * self.interval, stopped=stopped,
            max_deferral_s=self.settings.max_deferral_s)

    async def beat(self, *, stopped: bool = False) -> None:
        snapshot = dict(self.running)
        ahead = list(self.prefetched)
        refresh = [*snapshot.values(), *ahead] if not stopped else []
        lost = await asyncio.to_thread(self.store.refresh_and_beat, self.name, refresh,  # one hop, one round trip
                                       self.status(stopped=stopped), forget_s=self.forget_s)
        if refresh:
            for job in ahead:
                if job.entry_id in lost and job in self.prefetched:  # taken over before it started: not ours
                    self.prefetched.remove(job)
                    self.drop_read_ahead(job)
                    log.warning("worker %s: job %s, claimed ahead, is now held by %s; not playing it", self.name,
                                job.entry_id, lost.pop(job.entry_id) or "nobody (settled)")
            lost = {k: v for k, v in lost.items() if k not in {j.entry_id for j in ahead}}
            if lost:
                await self.report_lost(lost, snapshot)

    def _still_running(self, task: asyncio.Task[str]) -> bool:
        return not task.done() and task in self.running

    async def report_lost(self, lost: dict[str, str], snapshot: dict[asyncio.Task[str], Job]) -> None:
        """Log the jobs a refresh found no longer pending for this worker (``Store.refresh_jobs``).

        Most are a benign race: the match finished, and its job was settled by this worker, between the snapshot
        of the running jobs and the refresh; or the match ended here (its job left pending after a platform
        error) and another worker took the job over. Those are logged at debug level. Only a job that another
        worker holds, checked again, while its match still runs here is a warning: this worker was taken for
        dead (it stalled for longer than the visibility timeout), and the match is played twice (stored once).
        """
        tasks = {job.entry_id: (task, job) for task, job in snapshot.items()}
        for entry_id, holder in lost.items():
            task, job = tasks[entry_id]
            match_id = job.spec.match_id if job.spec else "?"
            if holder and self._still_running(task):
                holder = await asyncio.to_thread(self.store.job_holder, job)  # settled meanwhile by this one?
            if holder and holder != self.name and self._still_running(task):
                log.warning("worker %s: job %s (match %s) was reclaimed by worker %s while its match still runs "
                            "here (this worker looked dead: no refresh for the visibility timeout); the match is "
                            "stored once, by whoever finishes first", self.name, entry_id, match_id, holder)
            else:
                log.debug("worker %s: job %s (match %s) was settled or handed over as its match ended here "
                          "(now held by %s)", self.name, entry_id, match_id, holder or "nobody: settled")

    async def heartbeats(self) -> None:
        """Beat every ``interval`` seconds, and at once when poked (a match started or ended), until ``closing``
        is set (and poked). Stopped by that flag, not by cancellation: Python 3.11's ``wait_for`` may swallow a
        cancellation that arrives as its inner wait completes."""
        while not self.closing:
            try:
                await self.beat()
            except Exception as exc:  # noqa: BLE001 - the heartbeat must outlive any one failure
                say = functools.partial(self.outage.failed, "heartbeat") if isinstance(exc, REDIS_ERRORS) \
                    else log.warning
                say("worker %s cannot write its heartbeat (%s: %s)", self.name, type(exc).__name__, exc)
                if isinstance(exc, redis.RedisError) and self.reconnector is not None:
                    await asyncio.to_thread(self.reconnector.after_error)
            last = asyncio.get_running_loop().time()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.poke.wait(), self.interval)
            if self.poke.is_set() and not self.closing:  # pokes soon after a beat share the next one
                await asyncio.sleep(max(0.0, last + POKE_COALESCE_S - asyncio.get_running_loop().time()))
            self.poke.clear()

    def claimed_ahead(self, jobs: Sequence[Job]) -> None:
        """Keep ``jobs`` (claimed while every slot plays) to start next, and start their pre-match reads unless
        the claim made them."""
        self.prefetched.extend(jobs)
        for job in jobs:
            if job.spec is not None and job.entry_id not in self.reads_ahead:
                self.reads_ahead[job.entry_id] = InputsAhead(self.store, job.spec)

    def drop_read_ahead(self, job: Job) -> None:
        ahead = self.reads_ahead.pop(job.entry_id, None)
        if ahead is not None:
            ahead.cancel()

    def free_slots(self) -> int:
        """Matches this worker may start now: ``concurrency`` (lowered by the ``TimeoutBrake`` while many bots time
        out) minus the matches playing (a match whose result is being stored holds no slot), with at most ``2 *
        concurrency`` jobs running in all (a slow Redis); none while the event loop is late (``LagGate``) and a
        match plays."""
        free = min(self.brake.limit - len(self.playing), 2 * self.concurrency - len(self.running))
        if free > 0 and self.playing and self.gate.busy(len(self.playing)):
            return 0
        return free

    def played(self, record: Any, slot_free: bool) -> None:
        """Called by a running task (``run_job``'s ``on_played``) once its match is over: the timeouts of the match
        go to the ``TimeoutBrake``; with ``slot_free`` its slot is free, the job staying in ``running``
        (refreshed, drained on stop) until it is settled."""
        self.brake.played(record)
        task = asyncio.current_task()
        if slot_free and task is not None and task in self.playing:
            self.playing.discard(task)
            self.slot_freed.set()

    def finished(self, task: asyncio.Task[str]) -> None:
        self.running.pop(task, None)
        if task in self.playing:  # it kept its slot until settled: it may have made a bot unhealthy
            self.playing.discard(task)
            self.health_epoch += 1  # a claim under way read before that: its reads are dropped
            for job in self.prefetched:  # reads ahead started before its health was counted are stale
                self.drop_read_ahead(job)
        self.slot_freed.set()
        if not task.cancelled() and task.exception() is None and task.result() == "stored":
            self.matches_done += 1
        if not self.prefetched:  # else the job claimed ahead starts now, and its start pokes
            self.poke.set()


    def start(self, jobs: Sequence[Job]) -> None:
        """Start a task settling each job (``run_job_and_control``), each holding a slot until its match is over."""
        settings = self.settings
        for job in jobs:
            task = asyncio.create_task(
                run_job_and_control(self.store, job, settings=settings, worker=self.name, channels=self.pool,
                                    on_played=self.played, ahead=self.reads_ahead.pop(job.entry_id, None),
                                    live=self.live),
                name=f"match {job.spec.match_id if job.spec else job.entry_id}")
            self.running[task] = job
            self.playing.add(task)
            task.add_done_callback(self.finished)
        if jobs:
            self.poke.set()

    async def claim(self, want: int) -> list[Job] | None:
        """Up to ``want`` jobs: those of dead workers (looked for every ``reclaim_every`` seconds), else new ones
        (waiting at most ``block_ms``). None after a Redis error, which is logged; the next claim is then made
        at once when the Redis moved (``Reconnector``), else after 1 s."""
        store, name, settings = self.store, self.name, self.settings
        try:
            if not self.group_ready:
                await asyncio.to_thread(store.ensure_job_group)
                self.group_ready = True
            jobs: list[Job] = []
            epoch = self.health_epoch
            if time.monotonic() >= self.next_reclaim:
                self.next_reclaim = time.monotonic() + self.reclaim_every
                idle_s = await asyncio.to_thread(reclaim_idle_s, store, settings.visibility_timeout_s)
                jobs, reads = await asyncio.to_thread(_with_inputs, store, store.reclaim_jobs, name, want,
                                                      int(idle_s * 1000))
                jobs_reclaimed(jobs)
                for job in jobs:
                    log.warning("worker %s reclaimed job %s (match %s, delivery %d): its worker (another, or this one "
                                "across a Redis outage) stopped, handed it back unplayed or left it unrefreshed for "
                                "%.1f s", name, job.entry_id, job.spec.match_id if job.spec else "?",
                                job.deliveries, idle_s)
            if not jobs:
                jobs, reads = await asyncio.to_thread(_with_inputs, store, store.read_jobs, name, want,
                                                      settings.block_ms)
            self.outage.answered()
            if epoch == self.health_epoch:  # else a match's health was counted meanwhile: the jobs read again
                for job in jobs:
                    if job.spec is not None and job.entry_id in reads:
                        self.reads_ahead[job.entry_id] = InputsAhead(store, job.spec, reads[job.entry_id])
            return jobs
        except REDIS_ERRORS as exc:  # a cluster restarting a master may raise RedisClusterException too
            self.outage.failed("claim", "worker %s cannot read jobs from Redis (%s); retrying every second", name,
                               exc)
            if self.reconnector is not None and await asyncio.to_thread(self.reconnector.after_error):
                self.group_ready = False  # a new server: make sure its consumer group exists
                return None
            await asyncio.sleep(1.0)
            return None

    async def step(self) -> None:
        """One turn of the loop: start the jobs claimed ahead when slots are free, else wait (at most ``block_ms``)
        for a slot; with nothing claimed ahead, claim jobs for the free slots (or one ahead when every slot plays)
        and start those that fit."""
        free = self.free_slots()
        if self.prefetched:
            if free > 0:  # the job claimed ahead starts at once
                self.start(self.prefetched[:free])
                del self.prefetched[:free]
            else:  # until a match is over or a job settled
                self.slot_freed.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.slot_freed.wait(), self.settings.block_ms / 1000)
            return
        jobs = await self.claim(max(free, 1))  # every slot playing: claim the next job ahead (prefetch)
        if jobs:
            free = max(self.free_slots(), 0)  # a match may have ended during the read
            self.start(jobs[:free])
            self.claimed_ahead(jobs[free:])

    async def hand_back(self) -> None:
        """On stop: the jobs claimed ahead and never started go back to the group (``Store.release_jobs``), for
        another worker's next reclaim."""
        if not self.prefetched:
            return
        ahead, self.prefetched = self.prefetched, []
        for job in ahead:
            self.drop_read_ahead(job)
        try:
            await asyncio.to_thread(self.store.release_jobs, self.name, ahead,
                                    int(self.settings.visibility_timeout_s * 1000))
        except REDIS_ERRORS as exc:
            log.warning("worker %s cannot hand back %d jobs claimed ahead (%s); they are reclaimed after the "
                        "visibility timeout", self.name, len(ahead), exc)

    async def drain(self) -> None:
        """On stop: running matches get ``drain_s`` seconds to finish; the rest are cancelled (left pending)."""
        if not self.running:
            return
        drain_s = self.settings.drain_s
        log.info("worker %s stopping: waiting up to %.0f s for %d running matches", self.name, drain_s,
                 len(self.running))
        _, late = await asyncio.wait(set(self.running), timeout=drain_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    async def stop_beating(self, beating: asyncio.Task[None]) -> None:
        """End the heartbeat task (given up on when stuck in Redis) and write the last heartbeat: stopped."""
        self.closing = True
        self.poke.set()
        _, late_beat = await asyncio.wait({beating}, timeout=self.interval + 10.0)
        for stuck in late_beat:  # a heartbeat stuck in Redis: give up on it
            stuck.cancel()
        with contextlib.suppress(*REDIS_ERRORS):
            await self.beat(stopped=True)


async def worker_loop(store: Store, name: str, stop: threading.Event, settings: WorkerSettings | None = None, *,
                      reconnector: Reconnector | None = None, channels: BotChannels | None = None) -> None:
    """Claim and run jobs as consumer ``name`` until ``stop`` is set, with at most ``settings.concurrency``
    matches at once: first jobs reclaimed from dead workers (idle for ``visibility_timeout_s`` seconds), then new
    ones. Every match leases its channels to the bots from ``channels`` (``arena.match.channels``; None: a pool of
    this worker's own, closed when it stops).
    Heartbeats (and refreshes of the running jobs) every ``heartbeat_interval(heartbeat_s,
    visibility_timeout_s)`` seconds. On stop, running matches get ``drain_s`` seconds to finish; the rest are
    cancelled and stay pending (another worker reclaims them); a last heartbeat marks the worker stopped.
    After a Redis error, ``reconnector`` (when given) re-resolves the Redis URL (see ``Reconnector``).
    Bot health: see ``arena.worker.health`` for ``unhealthy_after``, ``bot_recheck_s`` and ``max_deferral_s``.
    ``settings`` None: ``WorkerSettings()``, the defaults."""
    settings = WorkerSettings() if settings is None else settings
    pool = BotChannels() if channels is None else channels
    worker = _Worker(store, name, settings, pool=pool, reconnector=reconnector)
    worker.gate.lag = hold_loop_lag()
    beating = asyncio.create_task(worker.heartbeats(), name=f"heartbeat {name}")
    checking = asyncio.create_task(_bot_checks(store, name, settings.bot_recheck_s, settings.max_deferral_s,
                                               pool.dialer, worker.outage), name=f"bot checks {name}")
    try:
        while not stop.is_set():
            await worker.step()
        await worker.hand_back()
        await worker.drain()
    finally:
        checking.cancel()
        await asyncio.gather(checking, return_exceptions=True)
        await worker.stop_beating(beating)
        await worker.live.aclose()
        release_loop_lag(worker.gate.lag)
        if channels is None:
            await pool.close()


async def _bot_checks(store: Store, name: str, interval_s: float, max_deferral_s: float, dialer: BotDialer,
                      outage: RedisOutage) -> None:
    """Every ``interval_s`` seconds, when this worker takes the fleet's turn (``Store.claim_bot_check``), one pass
    of ``arena.worker.health.check_bots`` (bots dialed by ``dialer``); until cancelled. A failure is logged (a Redis
    error through ``outage``) and tried again at the next turn."""
    while True:
        try:
            if await asyncio.to_thread(store.claim_bot_check, name, interval_s):
                await asyncio.to_thread(sweep, store)  # controlled tournaments: make up for a lost hook call
                report = await check_bots(store, store.job_games(), max_deferral_s=max_deferral_s,
                                          probe_timeout_s=DEFAULTS.verify_timeout_s, dialer=dialer)
                if report.recovered or report.released or report.forced:
                    log.info("worker %s: bot check: %d bots probed, %d healthy again, %d deferred matches queued "
                             "again, %d forced", name, report.probed, report.recovered, report.released,
                             report.forced)
        except Exception as exc:  # noqa: BLE001 - the checks must outlive any one failure (Redis restarting)
            say = functools.partial(outage.failed, "bot check") if isinstance(exc, REDIS_ERRORS) else log.warning
            say("worker %s: bot check failed (%s: %s); trying again in %.1f s", name, type(exc).__name__, exc,
                interval_s)
        await asyncio.sleep(interval_s)


def worker_store(redis_url: str, settings: WorkerSettings, workers: int = 1) -> Store:
    """The ``Store`` of a worker process running ``workers`` workers: with timeouts, so that a Redis that went away
    (or a port now held by something else) fails a call instead of hanging it forever (the blocking job read waits
    ``block_ms`` on the server, hence the margin ``SOCKET_TIMEOUT_MARGIN_S``), and a connection pool with room for
    every thread of the executor (``io_threads``) plus ``SPARE_CONNECTIONS``, however high the concurrency."""
    return Store.from_url(redis_url, client_options={
        "socket_connect_timeout": SOCKET_CONNECT_TIMEOUT_S,
        "socket_timeout": settings.block_ms / 1000 + SOCKET_TIMEOUT_MARGIN_S,
        "max_connections": io_threads(workers, settings.concurrency) + SPARE_CONNECTIONS})


def run_workers(redis_url: str, names: Sequence[str], settings: WorkerSettings | None = None, *,
                stop: threading.Event | None = None, resolve_url: Callable[[], str | None] | None = None) -> None:
    """Run one worker per name (each its own consumer, heartbeat and ``concurrency`` matches), all in ONE event
    loop in the calling thread, blocking until ``stop`` is set (forever when ``None``). The workers share one
    pool of channels to the bots (``arena.match.channels``).

    One event loop per process, because the referee's gRPC AsyncIO clients are not safe across several event
    loops in several threads of one process (grpc/grpc#25364: a loop that stops may swallow the completion events
    of another, whose calls then hang). Run extra workers in other processes (``arena worker``), or here.

    Args: as ``run_worker``; ``names`` must be distinct (at least one); ``resolve_url`` is shared by them all.
    Raises: ValueError (no or repeated names);
    redis.ConnectionError (Redis unreachable at start).
    """
    settings = WorkerSettings() if settings is None else settings
    if not names or len(set(names)) != len(names):
        raise ValueError(f"workers need distinct names, got {list(names)}")
    store = worker_store(redis_url, settings, len(names))
    try:
        store.ping()
        warn_of_namesakes(store, names)
        log.info("workers %s started on %s with concurrency %d, visibility timeout %.1f s", ", ".join(names),
                 redact_url(redis_url), settings.concurrency, settings.visibility_timeout_s)
        reconnector = Reconnector(store, redis_url, resolve_url) if resolve_url is not None else None
        tune_for_matches()
        asyncio.run(run_loops(store, list(names), stop or threading.Event(), settings, reconnector))
        log.info("workers %s stopped", ", ".join(names))
    finally:
        store.close()


async def run_loops(store: Store, names: list[str], stop: threading.Event, settings: WorkerSettings,
                    reconnector: Reconnector | None = None) -> None:
    """The workers of ``run_workers`` in the running event loop (the only one of this process): one
    ``worker_loop`` per name, sharing one pool of channels to the bots, until ``stop`` is set. Sets the loop's
    default executor (the threads of the workers' Redis calls, ``io_threads``; ``store`` should come from
    ``worker_store``, whose connection pool has room for them all)."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=io_threads(len(names), settings.concurrency),
                                                 thread_name_prefix="arena-worker-io"))
    pool = BotChannels(BotDialer(settings.bot_ca))  # the workers of this process share their channels to the bots
    lag = asyncio.create_task(watch_loop_lag(), name="loop lag")  # arena_event_loop_lag_seconds
    try:
        await asyncio.gather(*(worker_loop(store, name, stop, settings, reconnector=reconnector, channels=pool)
                               for name in names))
    finally:
        lag.cancel()
        await pool.close()


def run_worker(redis_url: str, settings: WorkerSettings | None = None, *, name: str | None = None,
               stop: threading.Event | None = None, resolve_url: Callable[[], str | None] | None = None) -> None:
    """Run a worker on the Redis at ``redis_url``, blocking until ``stop`` is set (forever when ``None``).

    Runs an asyncio event loop in the calling thread; run at most one such loop per process (see
    ``run_workers``, which runs several workers in one loop).

    Args:
        redis_url: ``redis://host:port/db``.
        settings: its options (``WorkerSettings``; None: the defaults of ``arena.core.config.DEFAULTS``).
        name: consumer name in the group (default ``<host>-<pid>-<6 hex>``; must be unique among live workers).
        stop: set it to stop; running matches then get ``settings.drain_s`` seconds to finish.
        resolve_url: where the Redis is now (e.g. ``lambda: resolve_redis_url(data_dir)`` when the URL came from a
            data directory); asked again after Redis errors, and the worker follows a Redis that moved.
    Raises:
        redis.ConnectionError: Redis unreachable at start.
    """
    run_workers(redis_url, [name or default_worker_name()], settings, stop=stop, resolve_url=resolve_url)
