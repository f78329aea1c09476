"""Match specs -> Redis Stream jobs, and the worker loop that runs them (DESIGN.md "Scheduling and storage").

A tournament's matches are appended to its game's jobs stream; workers claim them through the consumer group
``workers`` (XREADGROUP), run each with the referee (``arena.referee.run_match``, up to ``concurrency`` at once,
since a match mostly waits on bots over the network), store the result and its Elo update in one atomic,
idempotent step (``Store.record_result``), then acknowledge the job.

Settling a job (what a worker does with each job it claims, in this order):

1. Delivered more than ``max_deliveries`` times (its workers kept dying, or a platform error every time): a
   *poison* job. It is recorded as failed in its tournament (``Store.drop_job(job, "failed")``, which also lets
   the tournament finish once everything else is settled) and acknowledged without running; the log says so.
2. Its result is already stored (a worker died between storing and acknowledging): acknowledged.
3. Its tournament was cancelled: acknowledged without running, counted in the tournament's matches_cancelled.
4. A seat's bot is unhealthy (and the job is not *forced*): the match is deferred, not played against a corpse;
   its job leaves the stream and is parked in the same atomic step (``Store.defer_job``), and comes back when the
   bot answers GetInfo again, or forced after ``max_deferral_s`` (``arena.bot_health``).
5. Otherwise the match is played and its result stored, then the job acknowledged. A bad config is recorded as
   failed (it can never run). A result stored now counts in the health of the match's bots
   (``arena.bot_health.charged_outcomes``: a bot that forfeited or answered no call failed; ``unhealthy_after``
   failures in a row make it unhealthy). A match interrupted by our own crash stores nothing and charges nobody:
   it is played again from scratch, and only that result counts. A tournament's match is dealt from the
   tournament's secret seed (``match_deal``: no seed is queued), with the number of times it was started before in
   the HMAC input, so a match played again after a crash of ours never deals cards its bots may have seen.

Costs of the queue: every read before a match (result stored? tournament state and seed, unhealthy seats, the seats'
bots) is one pipelined round trip (``Store.match_inputs``), plus the attempt count of a tournament's match; after
it, the result and its Elo update are one script (after one pipelined read of the ratings), then the acknowledgement
and the health of the match's bots are one transaction, in the same thread hop. A match in which no seat failed (and
none was unhealthy) can make no bot unhealthy: it frees its slot as soon as it is over, and the next match starts
while its result is stored (its job stays with the worker, refreshed and drained on stop, until settled); a match
that may make a bot unhealthy keeps its slot until its health is counted, so the next match's health check sees it.
Prefetch: while every slot plays, a worker claims one job ahead (refreshed with the running ones), started the
moment a slot frees; its pre-match reads start when it is claimed, and are made again if a match that kept its
slot settled meanwhile (they may predate a bot turning unhealthy); on stop a job claimed ahead and never started
is handed back (``Store.release_jobs``): the next reclaim of any worker takes it at once, without counting a
delivery.

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
calls the GetInfo of every unhealthy bot and queues deferred matches again (``arena.bot_health.check_bots``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import redis

from arena.bot_channels import BotChannels, BotDialer
from arena.bot_health import charged_outcomes, check_bots
from arena.config import DEFAULTS
from arena.redis_server import redact_url
from arena.store import EARLIER_DELIVERIES_FIELD, FORCED_FIELD, REDIS_ERRORS, Job, Store, WorkerStatus
from arena.tournament_hooks import after_match, sweep
from arena.tournaments import MatchSpec, deal_seed

log = logging.getLogger(__name__)

BLOCK_MS = 500  # longest wait for new jobs; bounds how long a stop request takes to be noticed
DRAIN_S = 60.0  # on stop, how long running matches may take to finish before they are cancelled (left pending)
UNREGISTERED_ENDPOINT = "127.0.0.1:1"  # a seat whose bot is not registered: nothing listens, calls fault "unreachable"
SOCKET_CONNECT_TIMEOUT_S = 5.0  # a worker's Redis connection attempt fails after this long
SOCKET_TIMEOUT_MARGIN_S = 30.0  # a worker's Redis call fails after block_ms plus this long without an answer
MISSED_HEARTBEATS = 3  # a worker is shown as not alive after this many heartbeat intervals without one
INPUTS_FRESH_S = 1.0  # a job claimed ahead uses its pre-match reads if they started at most this long ago
POKE_COALESCE_S = 0.2  # a match starting or ending brings the next heartbeat forward, at most one per this long


def enqueue_matches(store: Store, specs: Sequence[MatchSpec]) -> None:
    """Queue the matches of a tournament as jobs on their game's stream, in order."""
    store.enqueue(specs)


def default_worker_name() -> str:
    """A consumer name unique to this process: ``<host>-<pid>-<6 hex>``."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def heartbeat_interval(heartbeat_s: float, visibility_timeout_s: float) -> float:
    """Seconds between two heartbeats (and refreshes of the running jobs): ``heartbeat_s``, but at most a third of
    the visibility timeout, so that a live worker's jobs are refreshed several times before they could be
    reclaimed."""
    return min(heartbeat_s, visibility_timeout_s / 3)


class InputsAhead:
    """The pre-match reads (``Store.match_inputs``) of a job claimed ahead, started while the worker's matches
    still play (``read_ahead``), so that the job's match starts as soon as a slot frees. ``fresh()`` is the read's
    result when it succeeded less than ``INPUTS_FRESH_S`` seconds ago, else None (the job reads again)."""

    def __init__(self, store: Store, spec: MatchSpec) -> None:
        self.read_at = time.monotonic()  # when the read started: its answers are at least this fresh
        self.task: asyncio.Task[Any] = asyncio.create_task(asyncio.to_thread(
            store.match_inputs, spec.game, spec.match_id, spec.tournament, list(spec.seats)))
        self.task.add_done_callback(_consume_exception)

    async def fresh(self) -> Any:
        if time.monotonic() - self.read_at > INPUTS_FRESH_S:
            self.task.cancel()
            return None
        try:
            return await self.task
        except (Exception, asyncio.CancelledError):  # noqa: BLE001 - read again, as if nothing was read ahead
            return None

    def cancel(self) -> None:
        self.task.cancel()


def _consume_exception(task: asyncio.Task[Any]) -> None:
    """A read ahead that failed is read again by its job; its exception is not "never retrieved"."""
    if not task.cancelled():
        task.exception()


async def run_job(store: Store, job: Job, *, call_deadline_ms: int = DEFAULTS.call_deadline_ms,
                  max_deliveries: int = DEFAULTS.max_deliveries, worker: str = "",
                  unhealthy_after: int = DEFAULTS.unhealthy_after, channels: BotChannels | None = None,
                  on_played: Callable[[], None] | None = None, ahead: InputsAhead | None = None) -> str:
    """Settle one claimed job (see the module docstring for the order of the checks); its match leases its
    channels to the bots from ``channels`` (the worker's pool; None: the match's own). ``on_played`` is called
    once the match is over if storing it can make no bot unhealthy (no seat failed, none was unhealthy), so the
    worker may start its next match while this result is stored. ``ahead``: its pre-match reads, started when the
    job was claimed ahead (used when still fresh, ``InputsAhead``).

    Returns what happened: "stored" (played, result stored now), "duplicate" (the result was stored before),
    "cancelled" (tournament cancelled, not played), "failed" (poison or bad config, recorded as failed),
    "deferred" (a seat's bot is unhealthy: parked, not played), "dropped" (malformed job, acknowledged) or
    "pending" (a platform error: left pending for a reclaim; logged).
    """
    from arena.referee import SeatSpec, run_match  # the referee is only needed where matches are run
    from arena_sdk.wire import config_from_dict

    spec = job.spec
    if spec is None:
        log.error("dropping %s", job.error)
        await asyncio.to_thread(store.drop_job, job, "")
        return "dropped"
    try:
        deliveries = job.deliveries + int(job.fields.get(EARLIER_DELIVERIES_FIELD) or 0)  # before a deferral too
        if deliveries > max_deliveries:
            settled = await asyncio.to_thread(store.drop_job, job, "failed")
            if settled == 2:
                return "duplicate"
            if settled == 0:  # settled meanwhile by the worker it was reclaimed from
                return "dropped"
            log.error("match %s (job %s of %s) was delivered %d times without being settled, more than %d: "
                      "recorded as failed and acknowledged without running it", spec.match_id, job.entry_id,
                      job.game, deliveries, max_deliveries)
            return "failed"
        # every read before the match: one pipelined round trip (Store.match_inputs), made ahead when it could be
        inputs = await ahead.fresh() if ahead is not None else None
        if inputs is None:
            inputs = await asyncio.to_thread(store.match_inputs, spec.game, spec.match_id, spec.tournament,
                                             list(spec.seats))
        if inputs.has_result:
            log.info("match %s already has a stored result; acknowledging", spec.match_id)
            await asyncio.to_thread(store.ack_job, job)
            return "duplicate"
        if spec.tournament and inputs.tournament_state == "cancelled":
            settled = await asyncio.to_thread(store.drop_job, job, "cancelled")
            log.info("match %s not played: tournament %s is cancelled", spec.match_id, spec.tournament)
            return "duplicate" if settled == 2 else "cancelled"
        try:
            config = config_from_dict(spec.game, spec.config)
        except ValueError as exc:
            log.error("match %s (job %s) has a bad config and can never run: %s; recorded as failed",
                      spec.match_id, job.entry_id, exc)
            await asyncio.to_thread(store.drop_job, job, "failed")
            return "failed"
        if job.fields.get(FORCED_FIELD) != "1" and inputs.unhealthy:
            return await _defer(store, job, inputs.unhealthy)
        seats = []
        for name, bot in zip(spec.seats, inputs.bots):
            if bot is None:
                log.warning("match %s: bot %s is not registered; its seat faults as unreachable",
                            spec.match_id, name)
            seats.append(SeatSpec(name=name, endpoint=bot.endpoint if bot else UNREGISTERED_ENDPOINT,
                                  secret=bot.secret if bot else ""))
        if spec.tournament:
            seed, deal = await asyncio.to_thread(match_deal, store, spec, inputs.tournament_seed)
        else:
            seed, deal = spec.seed, None
        record = await run_match(spec.match_id, spec.game, seats, config, seed=seed,
                                 deadline_ms=spec.deadline_ms, call_deadline_ms=call_deadline_ms, channels=channels)
        result = record.result
        outcomes = charged_outcomes(record, list(spec.seats))
        if on_played is not None and not inputs.unhealthy and all(o is None for o in outcomes.values()):
            on_played()
        # every write after it: one hop to a thread (result + Elo in one script, then ack + health in one)
        stored, health = await asyncio.to_thread(_store_and_ack, store, job, spec, record, seed, deal, worker,
                                                 outcomes, unhealthy_after)
    except asyncio.CancelledError:
        log.warning("match %s cancelled; its job stays pending", spec.match_id)
        raise
    except Exception:  # a platform error, not a bot's: keep the job pending for a reclaim
        log.exception("match %s failed; its job %s stays pending (delivery %d of at most %d)", spec.match_id,
                      job.entry_id, job.deliveries, max_deliveries)
        return "pending"
    log.info("match %s %s: scores %s, ranks %s, faults %s", spec.match_id,
             "stored" if stored else "was already stored", list(result.scores), list(result.ranks),
             list(result.faults))
    if stored:
        _log_health(spec.game, spec.match_id, health, unhealthy_after)
    return "stored" if stored else "duplicate"


SETTLED = ("stored", "duplicate", "failed", "cancelled")


async def run_job_and_control(store: Store, job: Job, **kwargs: Any) -> str:
    """``run_job``, then, when the job's tournament match is settled (``SETTLED``), its tournament's controller
    (``arena.tournament_hooks.after_match``, in a thread). A controller's failure is logged and left to the next
    sweep (the match itself is settled). Returns what ``run_job`` returned."""
    outcome = await run_job(store, job, **kwargs)
    spec = job.spec
    if outcome in SETTLED and spec is not None and spec.tournament:
        try:
            await asyncio.to_thread(after_match, store, spec)
        except Exception:  # noqa: BLE001 - the match is settled; the sweep calls the controller again
            log.exception("the controller of tournament %s failed after match %s; the next sweep retries",
                          spec.tournament, spec.match_id)
    return outcome


def _store_and_ack(store: Store, job: Job, spec: MatchSpec, record: Any, seed: int, deal: dict[str, int] | None,
                   worker: str, outcomes: dict[str, str | None],
                   unhealthy_after: int) -> tuple[bool, tuple[dict[str, str | None], Any]]:
    """Store a played match's result (``Store.record_result``), acknowledge its job and, when stored now, count
    ``outcomes`` (``charged_outcomes``) in the health of its bots in the same transaction as the acknowledgement
    (``Store.ack_and_count_health``; a failure there is returned, never raised: health is advice). Returns
    (stored now, (outcomes, health changes or the exception))."""
    result = record.result
    stored = store.record_result(
        spec.game, spec.match_id, list(spec.seats), list(result.scores), list(result.ranks), list(result.faults),
        record.to_dict(), tournament_id=spec.tournament or None, seed=seed, worker=worker, deal=deal)
    if not stored:
        store.ack_job(job)
        return False, ({}, {})
    return True, (outcomes, store.ack_and_count_health(job, spec.game, spec.match_id, outcomes,
                                                       unhealthy_after=unhealthy_after))


def _log_health(game: str, match_id: str, health: tuple[dict[str, str | None], Any], unhealthy_after: int) -> None:
    """Log what counting a stored match in the health of its bots changed (``_store_and_ack``)."""
    outcomes, changes = health
    if isinstance(changes, Exception):
        log.warning("match %s: cannot count it in the health of its bots (%s: %s)", match_id,
                    type(changes).__name__, changes)
        return
    for bot, change in changes.items():
        if change == 1:
            log.warning("bot %s (%s) is unhealthy: %d failed matches in a row, the last %s; its matches are "
                        "deferred until it answers GetInfo again", bot, game, unhealthy_after, outcomes[bot])
        elif change == 2:
            log.warning("bot %s (%s) played match %s through: healthy again", bot, game, match_id)


def match_deal(store: Store, spec: MatchSpec,
               tournament_seed: int | None = None) -> tuple[int, dict[str, int] | None]:
    """The deal seed to play ``spec`` with now, and where it comes from.

    A tournament's match: ``deal_seed(tournament seed, tournament, round, deal, attempt)``, the attempt being how
    many times this match was started before (``Store.next_attempt``, counted here, before any card is dealt), so
    a match played again after a crash of ours never gets a deal that bots may have seen; returned with
    ``{"round", "deal", "table", "attempt"}``. A match outside tournaments: its spec's own seed, and ``None``.
    ``tournament_seed``: the tournament's seed when already read (``Store.match_inputs``), else it is read here.
    Raises ``LookupError`` when the tournament's seed is not stored.
    """
    if not spec.tournament:
        return spec.seed, None
    secret = tournament_seed if tournament_seed is not None else store.tournament_seed(spec.game, spec.tournament)
    if secret is None:
        raise LookupError(f"match {spec.match_id}: tournament {spec.tournament} has no stored seed to deal from")
    attempt = store.next_attempt(spec.game, spec.tournament, spec.match_id)
    return (deal_seed(secret, spec.tournament, spec.round, spec.deal, attempt),
            {"round": spec.round, "deal": spec.deal, "table": spec.table, "attempt": attempt})


async def _defer(store: Store, job: Job, sick: list[str]) -> str:
    """Park a job whose match seats an unhealthy bot (``Store.defer_job``); what ``run_job`` returns for it."""
    spec = job.spec
    assert spec is not None
    settled = await asyncio.to_thread(store.defer_job, job.game or spec.game, job.entry_id, spec.match_id,
                                      job.fields, deliveries=job.deliveries)
    if settled == 2:
        return "duplicate"
    if settled == 0:  # settled meanwhile by the worker it was reclaimed from
        return "dropped"
    log.info("match %s deferred: bot %s unhealthy; it is played once the bot answers GetInfo again",
             spec.match_id, ", ".join(sick))
    return "deferred"


class Reconnector:
    """Follows a Redis that moved: after a Redis error, ``after_error()`` asks ``resolve`` for the current URL (at
    most once every ``min_interval_s`` seconds) and, when it differs from the one in use, points ``store`` there
    (``Store.retarget``). With ``resolve=None`` it does nothing. Thread-safe (the workers call it from executor
    threads)."""

    def __init__(self, store: Store, url: str, resolve: Callable[[], str | None] | None, *,
                 min_interval_s: float = 1.0) -> None:
        self.store = store
        self.url = url
        self.resolve = resolve
        self.min_interval_s = min_interval_s
        self._lock = threading.Lock()
        self._last = float("-inf")
        self.moves = 0

    def after_error(self) -> bool:
        """Re-resolve the URL; True when the store now uses another Redis."""
        if self.resolve is None:
            return False
        with self._lock:
            if time.monotonic() - self._last < self.min_interval_s:
                return False
            self._last = time.monotonic()
            try:
                url = self.resolve()
            except Exception as exc:  # noqa: BLE001 - a resolver failure must not stop the worker
                log.warning("cannot re-resolve the Redis URL (%s: %s)", type(exc).__name__, exc)
                return False
            if not url or url == self.url:
                return False
            log.warning("Redis moved from %s to %s: the workers carry on there", redact_url(self.url),
                        redact_url(url))
            self.store.retarget(url)
            self.url = url
            self.moves += 1
            return True


class _Worker:
    """State of one worker loop: its running jobs, counts and heartbeat."""

    def __init__(self, store: Store, name: str, *, concurrency: int, visibility_timeout_s: float,
                 heartbeat_s: float, forget_s: float, reconnector: Reconnector | None = None) -> None:
        self.store = store
        self.reconnector = reconnector
        self.name = name
        self.concurrency = concurrency
        self.interval = heartbeat_interval(heartbeat_s, visibility_timeout_s)
        self.forget_s = forget_s
        self.started_at = time.time()
        self.running: dict[asyncio.Task[str], Job] = {}
        self.prefetched: list[Job] = []  # claimed while every slot plays: started as soon as one frees
        self.reads_ahead: dict[str, InputsAhead] = {}  # entry id of a prefetched job -> its pre-match reads
        self.playing: set[asyncio.Task[str]] = set()  # running tasks whose match is not over: the slots in use
        self.slot_freed = asyncio.Event()
        self.matches_done = 0
        self.poke = asyncio.Event()
        self.closing = False

    def status(self, *, stopped: bool = False) -> WorkerStatus:
        return WorkerStatus(
            name=self.name, host=socket.gethostname(), pid=os.getpid(), started_at=self.started_at,
            last_seen=time.time(), concurrency=self.concurrency,
            running=tuple(sorted(j.spec.match_id for j in self.running.values() if j.spec is not None)),
            matches_done=self.matches_done, timeout_s=MISSED_HEARTBEATS * self.interval, stopped=stopped)

    async def beat(self, *, stopped: bool = False) -> None:
        snapshot = dict(self.running)
        ahead = list(self.prefetched)
        if (snapshot or ahead) and not stopped:
            lost = await asyncio.to_thread(self.store.refresh_jobs, self.name, [*snapshot.values(), *ahead])
            for job in ahead:
                if job.entry_id in lost and job in self.prefetched:  # taken over before it started: not ours
                    self.prefetched.remove(job)
                    self.drop_read_ahead(job)
                    log.warning("worker %s: job %s, claimed ahead, is now held by %s; not playing it", self.name,
                                job.entry_id, lost.pop(job.entry_id) or "nobody (settled)")
            lost = {k: v for k, v in lost.items() if k not in {j.entry_id for j in ahead}}
            if lost:
                await self.report_lost(lost, snapshot)
        await asyncio.to_thread(self.store.heartbeat, self.status(stopped=stopped), forget_s=self.forget_s)

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
                log.warning("worker %s cannot write its heartbeat (%s: %s)", self.name, type(exc).__name__, exc)
                if isinstance(exc, redis.RedisError) and self.reconnector is not None:
                    await asyncio.to_thread(self.reconnector.after_error)
            last = asyncio.get_running_loop().time()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.poke.wait(), self.interval)
            if self.poke.is_set() and not self.closing:  # pokes soon after a beat share the next one
                await asyncio.sleep(max(0.0, last + POKE_COALESCE_S - asyncio.get_running_loop().time()))
            self.poke.clear()

    def claimed_ahead(self, jobs: Sequence[Job]) -> None:
        """Keep ``jobs`` (claimed while every slot plays) to start next, and start their pre-match reads."""
        self.prefetched.extend(jobs)
        for job in jobs:
            if job.spec is not None:
                self.reads_ahead[job.entry_id] = InputsAhead(self.store, job.spec)

    def drop_read_ahead(self, job: Job) -> None:
        ahead = self.reads_ahead.pop(job.entry_id, None)
        if ahead is not None:
            ahead.cancel()

    def free_slots(self) -> int:
        """Matches this worker may start now: ``concurrency`` minus the matches playing (a match whose result is
        being stored holds no slot), with at most ``2 * concurrency`` jobs running in all (a slow Redis)."""
        return min(self.concurrency - len(self.playing), 2 * self.concurrency - len(self.running))

    def played(self) -> None:
        """Called by a running task (``run_job``'s ``on_played``): its match is over, its slot is free; the job
        stays in ``running`` (refreshed, drained on stop) until it is settled."""
        task = asyncio.current_task()
        if task is not None and task in self.playing:
            self.playing.discard(task)
            self.slot_freed.set()

    def finished(self, task: asyncio.Task[str]) -> None:
        self.running.pop(task, None)
        if task in self.playing:  # it kept its slot until settled: it may have made a bot unhealthy
            self.playing.discard(task)
            for job in self.prefetched:  # reads ahead started before its health was counted are stale
                self.drop_read_ahead(job)
        self.slot_freed.set()
        if not task.cancelled() and task.exception() is None and task.result() == "stored":
            self.matches_done += 1
        if not self.prefetched:  # else the job claimed ahead starts now, and its start pokes
            self.poke.set()


async def worker_loop(store: Store, name: str, stop: threading.Event, *, concurrency: int = DEFAULTS.concurrency,
                      block_ms: int = BLOCK_MS, drain_s: float = DRAIN_S,
                      call_deadline_ms: int = DEFAULTS.call_deadline_ms,
                      visibility_timeout_s: float = DEFAULTS.visibility_timeout_s,
                      heartbeat_s: float = DEFAULTS.heartbeat_s, max_deliveries: int = DEFAULTS.max_deliveries,
                      forget_s: float = DEFAULTS.worker_forget_s, reconnector: Reconnector | None = None,
                      unhealthy_after: int = DEFAULTS.unhealthy_after, bot_recheck_s: float = DEFAULTS.bot_recheck_s,
                      max_deferral_s: float = DEFAULTS.max_deferral_s, channels: BotChannels | None = None) -> None:
    """Claim and run jobs as consumer ``name`` until ``stop`` is set, with at most ``concurrency`` matches at
    once: first jobs reclaimed from dead workers (idle for ``visibility_timeout_s`` seconds), then new ones.
    Every match leases its channels to the bots from ``channels`` (``arena.bot_channels``; None: a pool of this
    worker's own, closed when it stops).
    Heartbeats (and refreshes of the running jobs) every ``heartbeat_interval(heartbeat_s,
    visibility_timeout_s)`` seconds. On stop, running matches get ``drain_s`` seconds to finish; the rest are
    cancelled and stay pending (another worker reclaims them); a last heartbeat marks the worker stopped.
    After a Redis error, ``reconnector`` (when given) re-resolves the Redis URL (see ``Reconnector``).
    Bot health: see ``arena.bot_health`` for ``unhealthy_after``, ``bot_recheck_s`` and ``max_deferral_s``."""
    check_worker_options(concurrency, visibility_timeout_s, heartbeat_s, max_deliveries)
    check_health_options(unhealthy_after, bot_recheck_s, max_deferral_s)
    worker = _Worker(store, name, concurrency=concurrency, visibility_timeout_s=visibility_timeout_s,
                     heartbeat_s=heartbeat_s, forget_s=forget_s, reconnector=reconnector)
    reclaim_every = min(visibility_timeout_s / 2, 5.0)
    next_reclaim = 0.0
    group_ready = False
    beating = asyncio.create_task(worker.heartbeats(), name=f"heartbeat {name}")
    pool = BotChannels() if channels is None else channels

    def start(jobs: list[Job]) -> None:
        for job in jobs:
            task = asyncio.create_task(
                run_job_and_control(store, job, call_deadline_ms=call_deadline_ms, max_deliveries=max_deliveries,
                                    worker=name, unhealthy_after=unhealthy_after, channels=pool,
                                    on_played=worker.played, ahead=worker.reads_ahead.pop(job.entry_id, None)),
                name=f"match {job.spec.match_id if job.spec else job.entry_id}")
            worker.running[task] = job
            worker.playing.add(task)
            task.add_done_callback(worker.finished)
        if jobs:
            worker.poke.set()

    checking = asyncio.create_task(_bot_checks(store, name, bot_recheck_s, max_deferral_s, pool.dialer),
                                   name=f"bot checks {name}")
    try:
        while not stop.is_set():
            free = worker.free_slots()
            if free > 0 and worker.prefetched:  # the job claimed ahead starts at once
                start(worker.prefetched[:free])
                del worker.prefetched[:free]
                continue
            if free <= 0 and worker.prefetched:  # until a match is over or a job settled
                worker.slot_freed.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(worker.slot_freed.wait(), block_ms / 1000)
                continue
            want = max(free, 1)  # every slot playing: claim the next job ahead (prefetch)
            try:
                if not group_ready:
                    await asyncio.to_thread(store.ensure_job_group)
                    group_ready = True
                jobs: list[Job] = []
                if time.monotonic() >= next_reclaim:
                    next_reclaim = time.monotonic() + reclaim_every
                    jobs = await asyncio.to_thread(store.reclaim_jobs, name, want,
                                                   int(visibility_timeout_s * 1000))
                    for job in jobs:
                        log.warning("worker %s reclaimed job %s (match %s, delivery %d): its worker stopped "
                                    "refreshing it for %.1f s", name, job.entry_id,
                                    job.spec.match_id if job.spec else "?", job.deliveries, visibility_timeout_s)
                if not jobs:
                    jobs = await asyncio.to_thread(store.read_jobs, name, want, block_ms)
            except REDIS_ERRORS as exc:  # a cluster restarting a master may raise RedisClusterException too
                log.warning("worker %s cannot read jobs from Redis (%s); retrying in 1 s", name, exc)
                if reconnector is not None and await asyncio.to_thread(reconnector.after_error):
                    group_ready = False  # a new server: make sure its consumer group exists
                    continue
                await asyncio.sleep(1.0)
                continue
            free = worker.free_slots()  # a match may have ended during the read
            start(jobs[:max(free, 0)])
            worker.claimed_ahead(jobs[max(free, 0):])
        if worker.prefetched:  # claimed ahead, never started: handed back for another worker's next reclaim
            ahead, worker.prefetched = worker.prefetched, []
            for job in ahead:
                worker.drop_read_ahead(job)
            try:
                await asyncio.to_thread(store.release_jobs, name, ahead, int(visibility_timeout_s * 1000))
            except REDIS_ERRORS as exc:
                log.warning("worker %s cannot hand back %d jobs claimed ahead (%s); they are reclaimed after the "
                            "visibility timeout", name, len(ahead), exc)
        if worker.running:
            log.info("worker %s stopping: waiting up to %.0f s for %d running matches", name, drain_s,
                     len(worker.running))
            _, late = await asyncio.wait(set(worker.running), timeout=drain_s)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
    finally:
        checking.cancel()
        await asyncio.gather(checking, return_exceptions=True)
        worker.closing = True
        worker.poke.set()
        _, late_beat = await asyncio.wait({beating}, timeout=worker.interval + 10.0)
        for task in late_beat:  # a heartbeat stuck in Redis: give up on it
            task.cancel()
        with contextlib.suppress(*REDIS_ERRORS):
            await worker.beat(stopped=True)
        if channels is None:
            await pool.close()


async def _bot_checks(store: Store, name: str, interval_s: float, max_deferral_s: float, dialer: BotDialer) -> None:
    """Every ``interval_s`` seconds, when this worker takes the fleet's turn (``Store.claim_bot_check``), one pass
    of ``arena.bot_health.check_bots`` (bots dialed by ``dialer``); until cancelled. A failure is logged and
    tried again at the next turn."""
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
            log.warning("worker %s: bot check failed (%s: %s); trying again in %.1f s", name, type(exc).__name__,
                        exc, interval_s)
        await asyncio.sleep(interval_s)


def check_health_options(unhealthy_after: int, bot_recheck_s: float, max_deferral_s: float) -> None:
    """Raise ``ValueError`` naming the bad value: unhealthy_after < 1, bot_recheck_s <= 0, max_deferral_s < 0."""
    if unhealthy_after < 1:
        raise ValueError(f"unhealthy_after must be at least 1, got {unhealthy_after}")
    if not bot_recheck_s > 0:
        raise ValueError(f"bot recheck interval must be more than 0 s, got {bot_recheck_s}")
    if not max_deferral_s >= 0:
        raise ValueError(f"max deferral must be 0 s or more, got {max_deferral_s}")


def check_worker_options(concurrency: int, visibility_timeout_s: float, heartbeat_s: float,
                         max_deliveries: int) -> None:
    """Raise ``ValueError`` naming the bad value: concurrency < 1, a timeout or interval <= 0, max_deliveries < 1."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if not visibility_timeout_s > 0:
        raise ValueError(f"visibility timeout must be more than 0 s, got {visibility_timeout_s}")
    if not heartbeat_s > 0:
        raise ValueError(f"heartbeat interval must be more than 0 s, got {heartbeat_s}")
    if max_deliveries < 1:
        raise ValueError(f"max deliveries must be at least 1, got {max_deliveries}")


def run_workers(redis_url: str, names: Sequence[str], *, concurrency: int = DEFAULTS.concurrency,
                stop: threading.Event | None = None, block_ms: int = BLOCK_MS, drain_s: float = DRAIN_S,
                visibility_timeout_s: float = DEFAULTS.visibility_timeout_s,
                heartbeat_s: float = DEFAULTS.heartbeat_s, max_deliveries: int = DEFAULTS.max_deliveries,
                call_deadline_ms: int = DEFAULTS.call_deadline_ms,
                resolve_url: Callable[[], str | None] | None = None, unhealthy_after: int = DEFAULTS.unhealthy_after,
                bot_recheck_s: float = DEFAULTS.bot_recheck_s, max_deferral_s: float = DEFAULTS.max_deferral_s,
                bot_ca: bytes | None = None) -> None:
    """Run one worker per name (each its own consumer, heartbeat and ``concurrency`` matches), all in ONE event
    loop in the calling thread, blocking until ``stop`` is set (forever when ``None``). The workers share one
    pool of channels to the bots (``arena.bot_channels``).

    One event loop per process, because the referee's gRPC AsyncIO clients are not safe across several event
    loops in several threads of one process (grpc/grpc#25364: a loop that stops may swallow the completion events
    of another, whose calls then hang). Run extra workers in other processes (``arena worker``), or here.

    Args: as ``run_worker``; ``names`` must be distinct (at least one); ``resolve_url`` is shared by them all.
    Raises: ValueError (bad option, no or repeated names); redis.ConnectionError (Redis unreachable at start).
    """
    check_worker_options(concurrency, visibility_timeout_s, heartbeat_s, max_deliveries)
    check_health_options(unhealthy_after, bot_recheck_s, max_deferral_s)
    if not names or len(set(names)) != len(names):
        raise ValueError(f"workers need distinct names, got {list(names)}")
    # timeouts, so that a Redis that went away (or a port now held by something else) fails a call instead of
    # hanging it forever; the blocking job read waits block_ms on the server, hence the margin
    store = Store.from_url(redis_url, client_options={"socket_connect_timeout": SOCKET_CONNECT_TIMEOUT_S,
                                                      "socket_timeout": block_ms / 1000 + SOCKET_TIMEOUT_MARGIN_S})
    try:
        store.ping()
        log.info("workers %s started on %s with concurrency %d, visibility timeout %.1f s", ", ".join(names),
                 redact_url(redis_url), concurrency, visibility_timeout_s)
        reconnector = Reconnector(store, redis_url, resolve_url) if resolve_url is not None else None
        asyncio.run(_run_loops(store, list(names), stop or threading.Event(), concurrency=concurrency,
                               block_ms=block_ms, drain_s=drain_s, call_deadline_ms=call_deadline_ms,
                               visibility_timeout_s=visibility_timeout_s, heartbeat_s=heartbeat_s,
                               max_deliveries=max_deliveries, reconnector=reconnector,
                               unhealthy_after=unhealthy_after, bot_recheck_s=bot_recheck_s,
                               max_deferral_s=max_deferral_s, bot_ca=bot_ca))
        log.info("workers %s stopped", ", ".join(names))
    finally:
        store.close()


async def _run_loops(store: Store, names: list[str], stop: threading.Event, *, bot_ca: bytes | None,
                     **kwargs: Any) -> None:
    # every worker may hold an executor thread in a blocking read; leave room for store calls of the matches
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=4 + 3 * len(names) + kwargs["concurrency"],
                                                 thread_name_prefix="arena-worker-io"))
    pool = BotChannels(BotDialer(bot_ca))  # the workers of this process share their channels to the bots
    try:
        await asyncio.gather(*(worker_loop(store, name, stop, channels=pool, **kwargs) for name in names))
    finally:
        await pool.close()


def run_worker(redis_url: str, *, concurrency: int = DEFAULTS.concurrency, name: str | None = None,
               stop: threading.Event | None = None, block_ms: int = BLOCK_MS, drain_s: float = DRAIN_S,
               visibility_timeout_s: float = DEFAULTS.visibility_timeout_s,
               heartbeat_s: float = DEFAULTS.heartbeat_s, max_deliveries: int = DEFAULTS.max_deliveries,
               call_deadline_ms: int = DEFAULTS.call_deadline_ms,
               resolve_url: Callable[[], str | None] | None = None, unhealthy_after: int = DEFAULTS.unhealthy_after,
               bot_recheck_s: float = DEFAULTS.bot_recheck_s, max_deferral_s: float = DEFAULTS.max_deferral_s,
               bot_ca: bytes | None = None) -> None:
    """Run a worker on the Redis at ``redis_url``, blocking until ``stop`` is set (forever when ``None``).

    Runs an asyncio event loop in the calling thread; run at most one such loop per process (see
    ``run_workers``, which runs several workers in one loop).

    Args:
        redis_url: ``redis://host:port/db``. concurrency: matches run at once (>= 1).
        name: consumer name in the group (default ``<host>-<pid>-<6 hex>``; must be unique among live workers).
        stop: set it to stop; running matches then get ``drain_s`` seconds to finish.
        block_ms: longest wait for new jobs, ms (bounds the reaction time to ``stop``).
        visibility_timeout_s: jobs pending this long without a refresh are reclaimed from their (dead) worker, s.
        heartbeat_s: seconds between heartbeats (capped at a third of the visibility timeout).
        max_deliveries: a job delivered more often is recorded as failed and acknowledged without running.
        call_deadline_ms: deadline of GetInfo / StartMatch / EndMatch calls to the bots, ms.
        resolve_url: where the Redis is now (e.g. ``lambda: resolve_redis_url(data_dir)`` when the URL came from a
            data directory); asked again after Redis errors, and the worker follows a Redis that moved.
        unhealthy_after: failed matches in a row that make a bot unhealthy (its matches are then deferred).
        bot_recheck_s: seconds between two GetInfo calls to each unhealthy bot (by one worker of the fleet).
        max_deferral_s: a match deferred this long is played anyway, its absent bot forfeiting (``arena.bot_health``).
        bot_ca: PEM bytes of the CA bundle that the certificates of bots at ``tls://`` endpoints are verified
            against; None: the system's roots (``arena.bot_channels.BotDialer``).
    Raises:
        ValueError: concurrency < 1, a timeout or interval <= 0, max_deliveries < 1, unhealthy_after < 1,
            max_deferral_s < 0.
        redis.ConnectionError: Redis unreachable at start.
    """
    run_workers(redis_url, [name or default_worker_name()], concurrency=concurrency, stop=stop,
                block_ms=block_ms, drain_s=drain_s, visibility_timeout_s=visibility_timeout_s,
                heartbeat_s=heartbeat_s, max_deliveries=max_deliveries, call_deadline_ms=call_deadline_ms,
                resolve_url=resolve_url, unhealthy_after=unhealthy_after, bot_recheck_s=bot_recheck_s,
                max_deferral_s=max_deferral_s, bot_ca=bot_ca)
