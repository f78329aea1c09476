"""Fair shares of the web app per client: no one address can take the pages from everyone else.

``ClientLimiter`` is ASGI middleware that counts every HTTP request against its client (``client_key``: the peer's
IP address as uvicorn gives it, which behind a trusted proxy is the address the proxy forwarded; an IPv6 /64 is one
client, as one machine usually holds a whole /64) and answers **429 Too Many Requests**, with a ``Retry-After``
header, when that client has

- ``at_once`` requests still being answered (a browser opens at most 6 connections per site, so a page never
  needs more than a few), or ``pages_at_once`` of them that make a page or an answer (everything but the static
  files of ``/static/`` and ``/docs/``): a page costs the app up to tens of milliseconds, and one address asking
  for many at once would hold its event loop from everyone (a browser asks for one page at a time per tab), or
- used its rate (``rate``: a ``limits`` rate string such as ``"100/second;3000/minute"``, counted in moving
  windows by the ``limits`` library; every limit of the string must have room).

A refused request costs the app a counter check and never reaches a route, so a flood from one address is held
to its share while other clients' pages answer as before. ``/api/`` paths get the refusal as JSON
(``{"error", "status": 429}``), pages as a short HTML page. The defaults (``arena.core.limits``) leave room for
several people behind one shared address (a NAT) following live matches, which poll once a second each.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter
from dataclasses import dataclass

from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.core import limits as arena_limits
from arena_sdk.peers import client_address


@dataclass(frozen=True)
class ClientLimits:
    """The share of one client: at most ``at_once`` requests being answered (0: no such limit) and at most
    ``rate`` requests per window (a ``limits`` rate string, e.g. ``"100/second;3000/minute"``; "": no rate
    limit). Raises ``ValueError`` for a negative ``at_once`` or a rate string ``limits`` cannot parse."""

    at_once: int = arena_limits.WEB_CLIENT_AT_ONCE
    rate: str = arena_limits.WEB_CLIENT_RATE
    pages_at_once: int = arena_limits.WEB_CLIENT_PAGES_AT_ONCE

    def __post_init__(self) -> None:
        if self.at_once < 0 or self.pages_at_once < 0:
            raise ValueError(f"at_once and pages_at_once must be 0 (no limit) or more, not {self.at_once}, "
                             f"{self.pages_at_once}")
        if self.rate:
            parse_many(self.rate)  # raises ValueError for a malformed rate

    @property
    def enabled(self) -> bool:
        return self.at_once > 0 or self.pages_at_once > 0 or bool(self.rate)


STATIC_PREFIXES = ("/static/", "/docs/")  # files served as they are: cheap, and a page loads several at once


def is_page(path: str) -> bool:
    """Whether a request for ``path`` makes a page or an answer (``/api/``), as opposed to a static file."""
    return not path.startswith(STATIC_PREFIXES)


def client_key(scope: Scope) -> str:
    """The client a request counts against (``arena_sdk.peers.client_address`` of its peer: an IPv4 address, an
    IPv6 /64 network, "loopback" for every loopback address); ``"?"`` when the server gives no peer (a Unix
    socket)."""
    client = scope.get("client")
    if not client:
        return "?"
    return client_address(str(client[0]))


class ClientLimiter:
    """ASGI middleware holding every client of ``app`` to ``limits`` (see the module docstring). Thread-safe:
    the counts of requests being answered are kept under a lock, the rates by ``limits``' memory storage."""

    def __init__(self, app: ASGIApp, limits: ClientLimits) -> None:
        self.app = app
        self.limits = limits
        self.rates: list[RateLimitItem] = parse_many(limits.rate) if limits.rate else []
        self.windows = MovingWindowRateLimiter(MemoryStorage())
        # requests being answered now: per client (key) and, for pages, per (key, "page")
        self.answering: Counter[str | tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self.refused = 0  # requests answered 429 so far (tests, operators)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = client_key(scope)
        counted = self._counts(key, is_page(str(scope.get("path", ""))))
        refusal = self._admit(key, counted)
        if refusal is not None:
            self.refused += 1
            await self._refuse(scope, send, *refusal)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._release(counted)

    def _counts(self, key: str, page: bool) -> list[tuple[str | tuple[str, str], int, str]]:
        """The counts a request of ``key`` takes while it is answered: (count key, most at once, what it counts)."""
        out: list[tuple[str | tuple[str, str], int, str]] = []
        if self.limits.at_once:
            out.append((key, self.limits.at_once, "requests"))
        if page and self.limits.pages_at_once:
            out.append(((key, "page"), self.limits.pages_at_once, "pages (not static files)"))
        return out

    def _release(self, counted: list[tuple[str | tuple[str, str], int, str]]) -> None:
        with self._lock:
            for name, _most, _what in counted:
                self.answering[name] -= 1
                if self.answering[name] <= 0:
                    del self.answering[name]

    def _admit(self, key: str, counted: list[tuple[str | tuple[str, str], int, str]]) -> tuple[str, int] | None:
        """None when ``key`` may have one more request now (taking ``counted``), else (why, seconds to wait)."""
        with self._lock:
            for name, most, what in counted:
                if self.answering[name] >= most:
                    return f"at most {most} {what} of one address are answered at once", 1
            for name, _most, _what in counted:
                self.answering[name] += 1
        for item in self.rates:
            if not self.windows.hit(item, "web", key):
                self._release(counted)
                reset = self.windows.get_window_stats(item, "web", key).reset_time
                wait = max(1, math.ceil(reset - time.time()))
                return f"at most {item.amount} requests of one address per {_window(item)}", wait
        return None

    async def _refuse(self, scope: Scope, send: Send, why: str, wait: int) -> None:
        message = f"too many requests from your address ({why}); try again in {wait} s"
        if str(scope.get("path", "")).startswith("/api/"):
            body = json.dumps({"error": message, "status": 429}).encode()
            kind = b"application/json"
        else:
            body = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
                    f'content="width=device-width, initial-scale=1"><meta http-equiv="refresh" content="{wait}">'
                    f"<title>429 Too many requests</title></head><body><h1>Too many requests</h1><p>{message}; "
                    f"this page reloads by itself.</p></body></html>").encode()
            kind = b"text/html; charset=utf-8"
        start: Message = {"type": "http.response.start", "status": 429,
                          "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                                      (b"retry-after", str(wait).encode())]}
        await send(start)
        await send({"type": "http.response.body", "body": body})


def _window(item: RateLimitItem) -> str:
    """"second", "10 seconds", "minute"... of a rate item."""
    unit = item.GRANULARITY.name
    return unit if item.multiples == 1 else f"{item.multiples} {unit}s"
