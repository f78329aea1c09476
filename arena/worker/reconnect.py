"""A worker that follows its Redis when it moved (``arena serve`` restarted its private redis-server on another
port, found again through the data folder): ``Reconnector``, used by ``arena.worker.loop`` after a Redis error."""

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
