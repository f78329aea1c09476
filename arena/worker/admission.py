"""A worker's admission of new matches, by its event loop's lateness (``LagGate``) and by its bots' timeouts
(``TimeoutBrake``): a ``--concurrency`` above what the machine keeps up with costs throughput, not bots' faults."""

from __future__ import annotations

import asyncio
import logging
import statistics
import time
from typing import Any

from arena.match.loop_lag import LoopLag

log = logging.getLogger("arena.worker.loop")

BUSY_WINDOW_S = 1.0  # the event loop's lateness counts over this window (``LagGate.busy``)
WARN_EVERY_S = 60.0  # a busy spell is logged (info) at most this often (the others at debug level)


class LagGate:
    """Whether worker ``name`` may start another match: not while its event loop was late by more than
    ``limit_ms`` in the last ``BUSY_WINDOW_S`` (``arena.match.loop_lag.LoopLag``, set as ``lag`` while the worker
    runs; None: never busy). A late loop makes every running match's calls late, and past the referee's lag
    threshold a bot's timeout is excused only ``lag_retries`` times: the matches playing go on, the next ones wait.
    ``limit_ms`` 0: never busy. A busy spell is logged (info) at most once per ``WARN_EVERY_S``: a late loop may be
    the machine's other work as well as the worker's matches; the ``TimeoutBrake`` warns when bots are charged."""

    def __init__(self, name: str, limit_ms: float, concurrency: int) -> None:
        self.name = name
        self.limit_ms = limit_ms
        self.concurrency = concurrency
        self.lag: LoopLag | None = None
        self.held_back = False  # in a busy spell
        self.spells = 0  # busy spells so far
        self.warned_at = -WARN_EVERY_S  # monotonic time of the last warning

    def busy(self, playing: int) -> bool:
        """True while the event loop is too late to start a match (``playing``: the matches playing, for the
        log)."""
        if self.lag is None or self.limit_ms <= 0:
            return False
        late_ms = self.lag.max_since(asyncio.get_running_loop().time() - BUSY_WINDOW_S) * 1000
        busy = late_ms > self.limit_ms
        if busy != self.held_back:
            self.held_back = busy
            if busy:
                self.spells += 1
                now = time.monotonic()
                warn = now - self.warned_at >= WARN_EVERY_S
                self.warned_at = now if warn else self.warned_at
                log.log(logging.INFO if warn else logging.DEBUG,
                        "worker %s: its event loop was %.0f ms late (over %.0f ms; a busy machine, or more matches "
                        "than it keeps up with): no new match starts until it keeps up (%d playing of at most %d; "
                        "%d such spells so far, said at most once a minute)", self.name, late_ms, self.limit_ms,
                        playing, self.concurrency, self.spells)
            else:
                log.debug("worker %s keeps up again (%d playing): matches start again", self.name, playing)
        return busy


BRAKE_BOTS = 2  # a match whose seats of at least this many bots timed out applies the brake
BRAKE_EVERY_S = 1.0  # the brake halves the limit at most this often (a wave of matches ending together is one)
BRAKE_FLOOR = 32  # the brake's start and least limit (a worker of lower --concurrency is never held back by it)


def overloaded(record: Any) -> bool:
    """Whether match ``record`` (a ``MatchRecord``) looks played by an overloaded worker rather than by slow bots:
    the seats of at least ``BRAKE_BOTS`` different bots timed out, and every seat was slow, either timing out or
    answering in a median time of at least half the deadline. Bots that time out beside seats that answer at once
    are slow on their own, and cannot hold a worker's matches down."""
    timed_out = {f.seat for f in record.faults if f.kind == "timeout"}
    if len({record.seats[s].name for s in timed_out}) < BRAKE_BOTS:
        return False
    latencies: dict[int, list[float]] = {}
    for d in record.decisions:
        if d.get("latency_ms") is not None:
            latencies.setdefault(d["seat"], []).append(d["latency_ms"])
    slow_ms = record.deadline_ms / 2
    return all(seat in timed_out or statistics.median(latencies.get(seat) or [slow_ms]) >= slow_ms
               for seat in range(len(record.seats)))


class TimeoutBrake:
    """The number of matches worker ``name`` may play at once, ``limit``, between ``floor`` (``BRAKE_FLOOR``, or
    ``concurrency`` when less) and ``concurrency``, as TCP's congestion window. It starts at ``floor`` and, up to a
    threshold (``concurrency`` at first), grows by one with every match that does not look played by an
    overloaded worker (``overloaded``: many bots timing out, every seat slow): about doubling per match length, so
    a first batch of a thousand matches never starts at once. Such a match sets the threshold to half the limit
    (never under ``floor``) and the limit to it (at most once per ``BRAKE_EVERY_S``); above the threshold the limit
    grows by one per ``limit`` good matches only. More matches at once than the machine (the worker, or bots that
    share its CPU) answers in time then cost throughput rather than faults charged to every bot, and bots that time
    out on purpose hold a worker at ``floor`` matches at most. The first halving is logged as a warning."""

    def __init__(self, name: str, concurrency: int) -> None:
        self.name = name
        self.concurrency = concurrency
        self.floor = min(concurrency, BRAKE_FLOOR)
        self.window = float(self.floor)  # the limit, with the fractions of congestion avoidance
        self.threshold = float(concurrency)  # below it, one more per good match; above, one per window of them
        self.braked_at = -BRAKE_EVERY_S  # monotonic time of the last halving
        self.halvings = 0

    @property
    def limit(self) -> int:
        return int(self.window)

    def played(self, record: Any) -> None:
        """A match of this worker is over (``record``, a ``MatchRecord``): count it."""
        if overloaded(record):
            now = time.monotonic()
            if now - self.braked_at >= BRAKE_EVERY_S and self.window > self.floor:
                self.braked_at = now
                self.halvings += 1
                self.threshold = self.window = float(max(self.floor, self.limit // 2))
                log.log(logging.WARNING if self.halvings == 1 else logging.INFO,
                        "worker %s: every seat of match %s was slow or timed out: at most %d matches at once for "
                        "now (of --concurrency %d; more as matches end well)", self.name, record.match_id,
                        self.limit, self.concurrency)
        elif self.window < self.concurrency:
            self.window = min(float(self.concurrency),
                              self.window + (1.0 if self.window < self.threshold else 1.0 / self.window))
