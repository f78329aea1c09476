"""How many TCP connections the web pages hold, and for how long a silent one is kept: so that no client can take
the file descriptors of the process (``arena serve --web`` shares them with the referee's gRPC service).

``guarded_http(limits)`` is the HTTP protocol class uvicorn runs (``uvicorn.Config(http=...)``): uvicorn's own h11
protocol, with three rules at the connection's start:

- at most ``per_client`` open connections from one peer address (an IPv6 /64 counts as one), and
- at most ``total`` open connections in all (``default_total``: a quarter of the process's file descriptors, at
  most ``limits.WEB_CONNECTIONS``); a connection beyond either is reset at once (its descriptor freed), and
- a connection that sends nothing within ``first_request_s`` seconds is closed (uvicorn's keep-alive timeout
  covers the time between requests, not the time before the first one).

The peer is the TCP peer: behind a reverse proxy it is the proxy, so ``per_client`` must leave room for the
proxy's connection pool (``arena web --client-connections``). ``quiet_accept_errors()`` keeps asyncio's error for an
``accept`` that failed (no descriptor left) to one log line per ``ACCEPT_ERROR_EVERY_S`` seconds, instead of a
traceback per attempt.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.core import limits as arena_limits
from arena.web.client_limits import client_key

ACCEPT_ERROR_EVERY_S = 10.0


def default_total() -> int:
    """Connections the pages may hold in all: a quarter of this process's file descriptor limit (the soft one),
    at most ``limits.WEB_CONNECTIONS``, at least 64."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return arena_limits.WEB_CONNECTIONS
    return max(64, min(arena_limits.WEB_CONNECTIONS, soft // 4))


@dataclass(frozen=True)
class ConnectionLimits:
    """Open connections allowed per peer address (``per_client``) and in all (``total``), and the seconds a new
    connection has to send its first bytes (``first_request_s``). Raises ``ValueError`` for a value below 1."""

    per_client: int = arena_limits.WEB_CONNECTIONS_PER_CLIENT
    total: int = field(default_factory=default_total)
    first_request_s: float = arena_limits.WEB_FIRST_REQUEST_S

    def __post_init__(self) -> None:
        if self.per_client < 1 or self.total < 1 or self.first_request_s <= 0:
            raise ValueError(f"connection limits must be positive: {self}")


class ConnectionCounts:
    """The open connections of one server, per peer address and in all (thread-safe)."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.open: Counter[str] = Counter()
        self.total = 0
        self.refused = 0
        self._lock = threading.Lock()

    def admit(self, key: str) -> bool:
        with self._lock:
            if self.total >= self.limits.total or self.open[key] >= self.limits.per_client:
                self.refused += 1
                return False
            self.open[key] += 1
            self.total += 1
            return True

    def release(self, key: str) -> None:
        with self._lock:
            self.total -= 1
            self.open[key] -= 1
            if self.open[key] <= 0:
                del self.open[key]


def guarded_http(limits: ConnectionLimits) -> tuple[type[asyncio.Protocol], ConnectionCounts]:
    """(uvicorn's h11 protocol under ``limits``, as a class for ``uvicorn.Config(http=...)``; the counts it keeps)."""
    counts = ConnectionCounts(limits)

    class GuardedH11Protocol(H11Protocol):
        _counted_as: str | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            key = client_key({"client": self.client})
            if not counts.admit(key):
                transport.abort()  # a reset: the descriptor is freed now, no answer is written
                return
            self._counted_as = key
            # the first bytes must come within first_request_s: uvicorn's keep-alive timer closes a silent
            # connection, and the first data received cancels it
            self.timeout_keep_alive_task = self.loop.call_later(limits.first_request_s,
                                                                self.timeout_keep_alive_handler)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._counted_as is not None:
                counts.release(self._counted_as)
                self._counted_as = None
            super().connection_lost(exc)

    return GuardedH11Protocol, counts


class _AcceptErrorFilter(logging.Filter):
    """Lets through one "socket.accept() out of system resource" record of asyncio per ``ACCEPT_ERROR_EVERY_S``
    seconds, without its traceback, with how many were held back."""

    def __init__(self) -> None:
        super().__init__()
        self.last = 0.0
        self.held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if "socket.accept() out of system resource" not in str(record.msg):
            return True
        now = time.monotonic()
        if now - self.last < ACCEPT_ERROR_EVERY_S:
            self.held += 1
            return False
        record.msg = (f"cannot accept web connections: no file descriptor left ({self.held} more such errors "
                      f"in the last {ACCEPT_ERROR_EVERY_S:.0f} s)")
        record.args, record.exc_info, record.exc_text = (), None, None
        self.last, self.held = now, 0
        return True


_FILTER = _AcceptErrorFilter()


def quiet_accept_errors(logger: Any = None) -> None:
    """Install the accept-error filter on asyncio's logger (once per process)."""
    target = logger or logging.getLogger("asyncio")
    if _FILTER not in target.filters:
        target.addFilter(_FILTER)
