"""How many TCP connections the web pages hold, and for how long a silent one is kept: so that no client can take
the file descriptors of the process (``arena serve --web`` shares them with the referee's gRPC service).

``guarded_http(limits)`` is the HTTP protocol class uvicorn runs (``uvicorn.Config(http=...)``): uvicorn's own h11
protocol, with three rules at the connection's start:

- at most ``per_client`` open connections from one peer address (an IPv6 /64 counts as one), and
- at most ``total`` open connections in all (``default_total``: a quarter of the process's file descriptors, at
  most ``limits.WEB_CONNECTIONS``); a connection beyond either is reset at once (its descriptor freed), and
- a request's line, headers and declared body must all come within ``first_request_s`` seconds of the
  connection's start (and, for the next request, of the end of the answer before); else the connection is reset.
  uvicorn's keep-alive timeout stops at a request's first byte, so a client sending its headers slowly (or never
  finishing them, or dripping a body the pages never read) would otherwise hold its connection for ever.

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

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.core import limits as arena_limits
from arena.web.client_limits import client_key

ACCEPT_ERROR_EVERY_S = 10.0
_UNFINISHED = (h11.IDLE, h11.SEND_BODY)  # a request whose line, headers or declared body are still coming


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
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            key = client_key({"client": self.client})
            if not counts.admit(key):
                transport.abort()  # a reset: the descriptor is freed now, no answer is written
                return
            self._counted_as = key
            self._await_request()

        def _await_request(self) -> None:
            """A request's line and headers must all come within first_request_s (from the connection's start,
            then from the end of each answer): uvicorn bounds the silence between requests only until the first
            byte, so a client sending a header a minute would hold its connection for ever."""
            self._stop_header_timer()
            self._header_timer = self.loop.call_later(limits.first_request_s, self._headers_too_slow)

        def _stop_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state in _UNFINISHED and not self.transport.is_closing():
                self.transport.abort()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._header_timer is not None and self.conn.their_state not in _UNFINISHED:
                self._stop_header_timer()  # the request is in (the pages read no body: one dripped holds nothing)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._await_request()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_header_timer()
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
