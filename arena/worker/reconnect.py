"""A worker that follows its Redis when it moved (``arena serve`` restarted its private redis-server on another
port, found again through the data folder): ``Reconnector``, used by ``arena.worker.loop`` after a Redis error; and
how a worker tells of a Redis outage without a warning a second (``RedisOutage``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from arena.store import Store
from arena.store.redis_urls import redact_url

log = logging.getLogger("arena.worker.loop")  # the worker loop's log, where its operators look for these lines


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


REDIS_WARN_EVERY_S = 30.0  # in a Redis outage, each kind of failure of a worker is logged (warning) at most this often


class RedisOutage:
    """What worker ``name`` says of a Redis that does not answer: each kind of failure (``failed(what, ...)``: its
    job reads, its heartbeats, its bot checks) as a warning at most once per ``REDIS_WARN_EVERY_S`` while the
    outage lasts (the rest at debug level: an operator review counted a warning a second), and, at the first call
    that works again (``answered()``), one line saying Redis answers again and after how long. Used from the
    worker's event loop only."""

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.clock = clock
        self.since: float | None = None  # when the outage began (monotonic s), None while Redis answers
        self.warned: dict[str, float] = {}  # kind of failure -> when last said as a warning

    def failed(self, what: str, message: str, *args: object) -> None:
        """Log ``message % args`` (which names ``what`` failed) at warning level unless that kind was said within
        ``REDIS_WARN_EVERY_S``, then at debug level."""
        now = self.clock()
        if self.since is None:
            self.since = now
        due = now - self.warned.get(what, -REDIS_WARN_EVERY_S) >= REDIS_WARN_EVERY_S
        if due:
            self.warned[what] = now
        log.log(logging.WARNING if due else logging.DEBUG, message + " (said again every %.0f s while it lasts)",
                *args, REDIS_WARN_EVERY_S)

    def answered(self) -> None:
        """A call to Redis worked: the end of an outage, when one was under way, is said once."""
        if self.since is not None:
            log.warning("worker %s: Redis answers again, after %.0f s", self.name, self.clock() - self.since)
            self.since = None
            self.warned.clear()
