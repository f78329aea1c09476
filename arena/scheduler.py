"""Match specs -> Redis Stream jobs, and the worker loop that runs them (DESIGN.md "Scheduling and storage").

A tournament's matches are appended to the stream ``arena:jobs``; workers claim them through the consumer group
``workers`` (XREADGROUP), run each with the referee (``arena.referee.run_match``, up to ``concurrency`` at once,
since a match mostly waits on bots over the network), store the result and its Elo update in one atomic,
idempotent step (``Store.record_result``), then acknowledge the job. A job whose result is already stored is just
acknowledged. A job that fails for a reason other than a bot (a platform bug, Redis going away) is left pending in
the group, unacknowledged, so that a later reclaim can hand it to another worker.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import uuid
from collections.abc import Sequence

import redis

from arena.config import DEFAULTS
from arena.redis_server import redact_url
from arena.store import Job, Store
from arena.tournaments import MatchSpec

log = logging.getLogger(__name__)

BLOCK_MS = 500  # longest wait for new jobs; bounds how long a stop request takes to be noticed
DRAIN_S = 60.0  # on stop, how long running matches may take to finish before they are cancelled (left pending)
UNREGISTERED_ENDPOINT = "127.0.0.1:1"  # a seat whose bot is not registered: nothing listens, calls fault "unreachable"


def enqueue_matches(store: Store, specs: Sequence[MatchSpec]) -> None:
    """Queue the matches of a tournament as jobs on the stream, in order."""
    store.enqueue(specs)


def default_worker_name() -> str:
    """A consumer name unique to this process: ``<host>-<pid>-<6 hex>``."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


async def run_job(store: Store, job: Job, *, call_deadline_ms: int = DEFAULTS.call_deadline_ms) -> bool:
    """Run one claimed job to completion: referee the match, store the result atomically, acknowledge.

    Returns True when the job was acknowledged (result stored now or before, or a malformed job dropped), False
    when it was left pending because of an error that is not a bot's (logged).
    """
    from arena.referee import SeatSpec, run_match  # the referee is only needed where matches are run
    from arena_sdk.wire import config_from_dict

    spec = job.spec
    if spec is None:
        log.error("dropping %s", job.error)
        await asyncio.to_thread(store.ack_job, job.entry_id)
        return True
    try:
        if await asyncio.to_thread(store.has_result, spec.game, spec.match_id):
            log.info("match %s already has a stored result; acknowledging", spec.match_id)
            await asyncio.to_thread(store.ack_job, job.entry_id)
            return True
        try:
            config = config_from_dict(spec.game, spec.config)
        except ValueError as exc:
            log.error("dropping job %s: match %s has a bad config: %s", job.entry_id, spec.match_id, exc)
            await asyncio.to_thread(store.ack_job, job.entry_id)
            return True
        seats = []
        for name in spec.seats:
            bot = await asyncio.to_thread(store.get_bot, spec.game, name)
            if bot is None:
                log.warning("match %s: bot %s is not registered; its seat faults as unreachable",
                            spec.match_id, name)
            seats.append(SeatSpec(name=name, endpoint=bot.endpoint if bot else UNREGISTERED_ENDPOINT))
        record = await run_match(spec.match_id, spec.game, seats, config, seed=spec.seed,
                                 deadline_ms=spec.deadline_ms, call_deadline_ms=call_deadline_ms)
        result = record.result
        stored = await asyncio.to_thread(
            store.record_result, spec.game, spec.match_id, list(spec.seats), list(result.scores),
            list(result.ranks), list(result.faults), record.to_dict(), tournament_id=spec.tournament or None,
        )
        await asyncio.to_thread(store.ack_job, job.entry_id)
    except asyncio.CancelledError:
        log.warning("match %s cancelled; its job stays pending", spec.match_id)
        raise
    except Exception:  # a platform error, not a bot's: keep the job pending for a reclaim
        log.exception("match %s failed; its job %s stays pending", spec.match_id, job.entry_id)
        return False
    log.info("match %s %s: scores %s, ranks %s, faults %s", spec.match_id,
             "stored" if stored else "was already stored", list(result.scores), list(result.ranks),
             list(result.faults))
    return True


async def worker_loop(store: Store, name: str, stop: threading.Event, *, concurrency: int = DEFAULTS.concurrency,
                      block_ms: int = BLOCK_MS, drain_s: float = DRAIN_S,
                      call_deadline_ms: int = DEFAULTS.call_deadline_ms) -> None:
    """Claim and run jobs as consumer ``name`` until ``stop`` is set, with at most ``concurrency`` matches at
    once. On stop, running matches get ``drain_s`` seconds to finish; the rest are cancelled and stay pending."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    running: set[asyncio.Task[bool]] = set()
    group_ready = False
    while not stop.is_set():
        free = concurrency - len(running)
        if free <= 0:
            await asyncio.wait(running, timeout=block_ms / 1000, return_when=asyncio.FIRST_COMPLETED)
            continue
        try:
            if not group_ready:
                await asyncio.to_thread(store.ensure_job_group)
                group_ready = True
            jobs = await asyncio.to_thread(store.read_jobs, name, free, block_ms)
        except redis.RedisError as exc:
            log.warning("worker %s cannot read jobs from Redis (%s); retrying in 1 s", name, exc)
            await asyncio.sleep(1.0)
            continue
        for job in jobs:
            task = asyncio.create_task(run_job(store, job, call_deadline_ms=call_deadline_ms),
                                       name=f"match {job.spec.match_id if job.spec else job.entry_id}")
            running.add(task)
            task.add_done_callback(running.discard)
    if running:
        log.info("worker %s stopping: waiting up to %.0f s for %d running matches", name, drain_s, len(running))
        _, late = await asyncio.wait(set(running), timeout=drain_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)


def run_worker(redis_url: str, *, concurrency: int = DEFAULTS.concurrency, name: str | None = None,
               stop: threading.Event | None = None, block_ms: int = BLOCK_MS, drain_s: float = DRAIN_S) -> None:
    """Run a worker on the Redis at ``redis_url``, blocking until ``stop`` is set (forever when ``None``).

    Args:
        redis_url: ``redis://host:port/db``. concurrency: matches run at once (>= 1).
        name: consumer name in the group (default ``<host>-<pid>-<6 hex>``).
        stop: set it to stop; running matches then get ``drain_s`` seconds to finish.
        block_ms: longest wait for new jobs, ms (bounds the reaction time to ``stop``).
    Raises:
        ValueError: concurrency < 1. redis.ConnectionError: Redis unreachable at start.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    store = Store.from_url(redis_url)
    try:
        store.ping()
        name = name or default_worker_name()
        log.info("worker %s started on %s with concurrency %d", name, redact_url(redis_url), concurrency)
        asyncio.run(worker_loop(store, name, stop or threading.Event(), concurrency=concurrency,
                                block_ms=block_ms, drain_s=drain_s))
        log.info("worker %s stopped", name)
    finally:
        store.close()
