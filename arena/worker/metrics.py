"""What the workers tell Prometheus (the metric objects: ``arena.core.metrics``; names and labels:
``docs/metrics.md``): the matches they start, store and fail, the decisions, latencies, faults and forfeits of
every stored match, the jobs they reclaim, and the queue itself, read from Redis at every scrape
(``QueueCollector``).

The decision, fault and forfeit counters are taken from the match record when its result is stored now
(``match_stored``), so over a tournament they equal what its stored records hold: a match played twice (after a
reclaim) is counted once, a match that was interrupted not at all.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from arena.core import metrics as m
from arena.match.record import FAULT_KINDS, FORFEIT_REASONS, SOURCES, MatchRecord
from arena.store import REDIS_ERRORS, Job, Store

log = logging.getLogger(__name__)

QUEUE_TIMEOUT_S = 2.0  # a scrape's Redis reads give up after this long (the queue gauges then go missing)
OUTCOMES = ("stored", "duplicate", "cancelled", "failed", "deferred", "dropped", "pending")  # of ``run_job``
FAILED_REASONS = {"failed": "failed", "pending": "platform_error"}  # job outcome -> MATCHES_FAILED reason


def _closed(value: str, allowed: Sequence[str]) -> str:
    return value if value in allowed else m.OTHER


@contextlib.contextmanager
def match_playing(game: str) -> Iterator[None]:
    """Around the play of one match of ``game``: counts it started, and playing until the block is left."""
    label = m.game_label(game)
    m.MATCHES_STARTED.labels(label).inc()
    playing = m.MATCHES_PLAYING.labels(label)
    playing.inc()
    try:
        yield
    finally:
        playing.dec()


def match_stored(record: MatchRecord) -> None:
    """The result of ``record`` was stored now: count the match, its duration, and its decisions (with the
    latency of every asked one), faults and forfeits under the bots of their seats."""
    game = m.game_label(record.game)
    bots = [m.bot_label(seat.name) for seat in record.seats]
    m.MATCHES_FINISHED.labels(game).inc()
    m.MATCH_DURATION.labels(game).observe(max(0.0, record.duration_s))
    latency = {bot: m.DECISION_LATENCY.labels(game, bot) for bot in {*bots, m.OTHER}}
    decided: collections.Counter[tuple[str, str]] = collections.Counter()
    for decision in record.decisions:
        seat = decision.get("seat")
        bot = bots[seat] if isinstance(seat, int) and 0 <= seat < len(bots) else m.OTHER
        decided[bot, _closed(str(decision.get("source")), SOURCES)] += 1
        latency_ms = decision.get("latency_ms")
        if isinstance(latency_ms, (int, float)) and not isinstance(latency_ms, bool):
            latency[bot].observe(max(0.0, latency_ms / 1000))
    for (bot, source), count in decided.items():
        m.DECISIONS.labels(game, bot, source).inc(count)
    for fault in record.faults:
        bot = bots[fault.seat] if 0 <= fault.seat < len(bots) else m.OTHER
        m.FAULTS.labels(game, bot, _closed(fault.kind, FAULT_KINDS)).inc()
    for forfeit in record.forfeits:
        bot = bots[forfeit.seat] if 0 <= forfeit.seat < len(bots) else m.OTHER
        m.FORFEITS.labels(game, bot, _closed(forfeit.reason, FORFEIT_REASONS)).inc()


def job_settled(job: Job, outcome: str) -> None:
    """``run_job`` settled ``job`` with ``outcome`` (``OUTCOMES``): count it, and as a failed match when it
    failed (``FAILED_REASONS``)."""
    game = m.game_label(job.spec.game if job.spec is not None else job.game)
    m.JOBS_SETTLED.labels(game, _closed(outcome, OUTCOMES)).inc()
    reason = FAILED_REASONS.get(outcome)
    if reason is not None:
        m.MATCHES_FAILED.labels(game, reason).inc()


def jobs_reclaimed(jobs: Iterable[Job]) -> None:
    """A worker reclaimed ``jobs`` from a worker taken for dead."""
    for job in jobs:
        m.JOBS_RECLAIMED.labels(m.game_label(job.game)).inc()


class QueueCollector(Collector):
    """The queue's gauges, read from Redis when Prometheus scrapes (a few round trips per scrape): per game the
    jobs in its stream (``arena_queue_length``), those claimed and not settled (``arena_jobs_pending``), the
    deferred matches (``arena_matches_deferred``) and the unhealthy bots (``arena_bots_unhealthy``); the workers
    alive (``arena_workers_alive``); and ``arena_queue_up``, 0 when Redis did not answer (the other gauges are then
    left out of that scrape)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def describe(self) -> Iterator[Any]:
        yield from self._families()

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, ...]:
        return (
            GaugeMetricFamily(m.QUEUE_LENGTH, "Match jobs in the game's jobs stream, claimed or not.",
                              labels=["game"]),
            GaugeMetricFamily(m.JOBS_PENDING, "Match jobs claimed by a worker and not settled yet.",
                              labels=["game"]),
            GaugeMetricFamily(m.MATCHES_DEFERRED, "Matches parked while a seat's bot is unhealthy.",
                              labels=["game"]),
            GaugeMetricFamily(m.BOTS_UNHEALTHY, "Bots marked unhealthy: their matches are deferred until they "
                              "answer GetInfo again.", labels=["game"]),
            GaugeMetricFamily(m.WORKERS_ALIVE, "Workers of the fleet whose last heartbeat is recent."),
        )

    def collect(self) -> Iterator[Any]:
        queued, pending, deferred, unhealthy, alive = self._families()
        up = GaugeMetricFamily(m.QUEUE_UP, "1 when this scrape could read the queue from Redis, else 0.")
        try:
            for game in self.store.job_games():
                length, claimed = self.store.stream_figures(game)
                queued.add_metric([game], length)
                pending.add_metric([game], claimed)
                deferred.add_metric([game], self.store.deferred_count(game))
                unhealthy.add_metric([game], len(self.store.unhealthy_bots(game)))
            now = time.time()
            alive.add_metric([], sum(1 for w in self.store.list_workers() if w.alive(now)))
        except REDIS_ERRORS as exc:
            log.warning("metrics: cannot read the queue from Redis (%s: %s)", type(exc).__name__, exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield from (queued, pending, deferred, unhealthy, alive, up)


class QueueGauges:
    """``QueueCollector`` on a Store of its own (short timeouts), in the default registry until ``close``."""

    def __init__(self, redis_url: str) -> None:
        self.store = Store.from_url(redis_url, client_options={"socket_connect_timeout": QUEUE_TIMEOUT_S,
                                                                "socket_timeout": QUEUE_TIMEOUT_S})
        self.collector = QueueCollector(self.store)
        REGISTRY.register(self.collector)

    def close(self) -> None:
        REGISTRY.unregister(self.collector)
        self.store.close()


class MetricsExport:
    """What ``--metrics ADDRESS`` runs in ``arena serve`` and ``arena worker``: the HTTP endpoint of this process's
    metrics (``arena.core.metrics.MetricsEndpoint``) and the queue's gauges read from the Redis at ``redis_url``
    (``QueueGauges``). ``url`` is where Prometheus scrapes; ``close`` stops both.

    Raises ``ValueError`` for a bad address, ``OSError`` when it cannot be bound.
    """

    def __init__(self, address: str, redis_url: str) -> None:
        self.endpoint = m.MetricsEndpoint(address)
        self.endpoint.start()
        try:
            self.queue = QueueGauges(redis_url)
        except BaseException:
            self.endpoint.stop()
            raise

    @property
    def url(self) -> str:
        return self.endpoint.url

    def close(self) -> None:
        self.queue.close()
        self.endpoint.stop()
