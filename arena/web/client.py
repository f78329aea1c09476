"""The web app's client of the referee's ``arena.v1.Arena`` service: read calls only, over ``grpc.aio``.

The pages never touch Redis: every fact they show comes from one of the Arena read methods (List*, Get*), which
are public and filtered by the referee's secrecy rules (README "Security model"). No token is held or sent here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio

from arena.core.limits import WEB_KEY_METADATA
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

READ_TIMEOUT_S = 10.0  # one read call; the referee answers reads in milliseconds
# read calls under way at once (more wait here): within the referee's share for the web app (its RPC_WEB_SHARE) and
# its 64 calls per connection, so a page that fans out (a bot's matches) never has calls refused for the number
READ_AT_ONCE = 16
# The referee is "down" for the pages when a call fails with one of these: the page answers 503 and retries (the
# last two: up but busy, e.g. this web app's share of the referee's service full: arena.server.shares).
DOWN_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                        grpc.StatusCode.RESOURCE_EXHAUSTED})
READ_METHODS = frozenset({"ListBots", "GetTournament", "ListTournaments", "GetStandings", "ListMatches", "GetMatch",
                          "GetSprt", "GetLadder", "ListWorkers", "GetArenaInfo", "GetLiveMatch"})


class ArenaReadError(Exception):
    """A read call failed: ``code`` (``grpc.StatusCode``), ``method`` (e.g. "GetLadder") and the referee's
    one-line ``detail``."""

    def __init__(self, method: str, code: grpc.StatusCode, detail: str) -> None:
        super().__init__(f"{method}: {code.name}: {detail}")
        self.method = method
        self.code = code
        self.detail = detail


class ArenaDown(ArenaReadError):
    """The referee did not answer (UNAVAILABLE), or not in time (DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED): pages
    answer 503 and retry by themselves."""


class ArenaNotFound(ArenaReadError):
    """The referee answered NOT_FOUND (an unknown bot, tournament or match): pages answer 404."""


class ArenaDataLoss(ArenaReadError):
    """The referee answered DATA_LOSS (a stored match record that cannot be decoded): pages answer 422 saying so,
    and the bot page leaves that record out of its statistics."""


@dataclass
class ArenaReader:
    """Read calls of the Arena service at ``server`` ("host:port"); over TLS when ``tls_ca`` (PEM) is given;
    each carries ``web_key`` when given (the referee's web key: ``arena.server.shares``); at most ``READ_AT_ONCE``
    under way at once (the others wait their turn).

    ``await reader.call("GetLadder", arena_pb2.GetLadderRequest(game=...))`` answers the reply message or raises
    ``ArenaDown``, ``ArenaNotFound``, ``ArenaDataLoss`` or ``ArenaReadError``. Only the public read methods
    (``READ_METHODS``) may be called: a ``ValueError`` refuses any other. The channel opens on first use inside the
    running event loop and reconnects by itself when the referee comes back.
    """

    server: str
    tls_ca: bytes | None = None
    timeout_s: float = READ_TIMEOUT_S
    web_key: str = field(default="", repr=False)
    _channel: grpc.aio.Channel | None = field(default=None, repr=False)
    _stub: Any = field(default=None, repr=False)
    _turns: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(READ_AT_ONCE), repr=False)

    def stub(self) -> Any:
        """The ``arena.v1.Arena`` stub (``grpc.aio``), opening the channel when none is open."""
        if self._channel is None:
            options = [("grpc.initial_reconnect_backoff_ms", 200), ("grpc.max_reconnect_backoff_ms", 2000)]
            if self.tls_ca is not None:
                credentials = grpc.ssl_channel_credentials(root_certificates=self.tls_ca)
                self._channel = grpc.aio.secure_channel(self.server, credentials, options=options)
            else:
                self._channel = grpc.aio.insecure_channel(self.server, options=options)
            self._stub = arena_pb2_grpc.ArenaStub(self._channel)
        return self._stub

    async def call(self, method: str, request: Any) -> Any:
        """``Arena.<method>(request)``; raises as the class docstring says."""
        if method not in READ_METHODS:
            raise ValueError(f"{method} is not a public read method of the Arena service")
        metadata = ((WEB_KEY_METADATA, self.web_key),) if self.web_key else None
        try:
            await asyncio.wait_for(self._turns.acquire(), self.timeout_s)
        except TimeoutError:
            raise ArenaDown(method, grpc.StatusCode.DEADLINE_EXCEEDED,
                            f"{READ_AT_ONCE} reads of this web app were under way for {self.timeout_s:g} s") from None
        try:
            return await getattr(self.stub(), method)(request, timeout=self.timeout_s, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            code, detail = exc.code(), exc.details() or ""
            if code in DOWN_CODES:
                raise ArenaDown(method, code, detail) from None
            if code == grpc.StatusCode.NOT_FOUND:
                raise ArenaNotFound(method, code, detail) from None
            if code == grpc.StatusCode.DATA_LOSS:
                raise ArenaDataLoss(method, code, detail) from None
            raise ArenaReadError(method, code, detail) from None
        finally:
            self._turns.release()

    async def pages(self, method: str, request: Any, field: str, most: int) -> list[Any]:
        """The entries (``field``) of the pages of the list ``method`` asked with ``request``, in order, at most
        ``most`` of them. Raises as ``call``, and ``ArenaReadError`` when the referee repeats a page token."""
        out: list[Any] = []
        seen: set[str] = set()
        page = type(request)()
        page.CopyFrom(request)
        while True:
            reply = await self.call(method, page)
            out.extend(getattr(reply, field))
            token = reply.next_page_token
            if not token or len(out) >= most:
                return out[:most]
            if token in seen:
                raise ArenaReadError(method, grpc.StatusCode.INTERNAL, "the referee repeated a page token")
            seen.add(token)
            page.page_token = token

    async def running_matches(self, prefix: str = "") -> list[str]:
        """Ids (starting with ``prefix``) of the matches live workers are playing now, as their heartbeats say
        (``ListWorkers``; at most 10,000 workers read), sorted. Raises as ``call``."""
        return (await self.workers_playing(prefix))[1]

    async def workers_playing(self, prefix: str = "") -> tuple[int, list[str]]:
        """(how many workers are alive, ``running_matches(prefix)``), from one read of ``ListWorkers``. Raises as
        ``call``."""
        workers = await self.pages("ListWorkers", arena_pb2.ListWorkersRequest(page_size=1000), "workers", 10_000)
        alive = [w for w in workers if w.alive]
        return len(alive), sorted({m for w in alive for m in w.running if m.startswith(prefix)})

    async def close(self) -> None:
        """Close the channel (the next call opens a new one)."""
        if self._channel is not None:
            await self._channel.close()
        self._channel = None
        self._stub = None
