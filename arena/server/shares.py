"""``ClientShares``: each client's share of the Arena service, counted from the moment a call's method may run until
the call is over, its answer sent.

The referee's methods run in a pool of ``RPC_THREADS`` threads (``arena.server.app``). Without shares, one client's
heavy reads (a ``ListMatches`` of 1,000 matches costs milliseconds of a thread and ~390 KB of answer) take every
thread while others wait, and a client that never reads its answers (an HTTP/2 window held at 0) keeps each answer
in the referee's memory until its connection closes, as many as it opens calls. A call is counted until grpc.aio
says it is done, which for such a client is when its connection goes: so it holds at most ``limit`` answers at
once, and its further calls wait on the server's loop (no thread, no answer) for at most ``wait_s`` seconds, then
end with RESOURCE_EXHAUSTED. Calls of other clients never wait for its calls.

A client is ``arena_sdk.peers.peer_address`` of the call: an IPv4 address, an IPv6 /64, every loopback address
together (a local process can connect from any of them). The web app is a client of its own, whatever its address:
its calls carry the referee's web key (``WEB_KEY_METADATA``; ``arena serve --web`` gives its pages the key, a
separate ``arena web`` has it from ``ARENA_WEB_KEY``), so no local process can take the pages' share, and its
share is larger (its own limits share it among its visitors). A client's calls that wait are at most ``waiting``:
beyond them a call is refused at once (a waiting call holds its request in memory).

``StreamShares`` caps the other services' answer streams (health Watch, reflection) per client the same way.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from arena.core.limits import WEB_KEY_METADATA
from arena_sdk.guard import metadata_value, secret_matches
from arena_sdk.peers import PeerShare, peer_address

WEB_CLIENT = "web app"  # the client name of calls that carry the web key


class ClientShares:
    """At most ``limit`` calls of one client admitted at once (``admit``; ``web_limit`` for the web app's, known by
    ``web_key``, none when ""); the next ones wait in the order they came for at most ``wait_s`` seconds each, at
    most ``waiting`` of them per client (``2 * limit`` by default). Lives on one event loop (the grpc.aio server's):
    not thread-safe."""

    def __init__(self, limit: int, wait_s: float, *, web_key: str = "", web_limit: int = 0,
                 waiting: int = 0) -> None:
        self.limit = max(1, limit)
        self.wait_s = wait_s
        self.web_key = web_key
        self.web_limit = max(1, web_limit or limit)
        self.waiting = max(1, waiting or 2 * self.limit)
        self._held: dict[str, int] = {}
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    def client_of(self, context: Any) -> str:
        """The client a call counts for: ``WEB_CLIENT`` when it carries the web key, else its peer address."""
        if self.web_key and secret_matches(metadata_value(context, WEB_KEY_METADATA), self.web_key):
            return WEB_CLIENT
        return peer_address(context.peer() or "")

    def held(self) -> dict[str, int]:
        """Client -> calls admitted and not yet over (a copy)."""
        return dict(self._held)

    async def admit(self, method_name: str, context: Any) -> None:
        """Admit the call of ``context`` (a ``grpc.aio`` servicer context) in its client's share (``client_of``),
        waiting for a place when the share is full; the place is given back once the call is over (its done
        callback). Aborts the call with RESOURCE_EXHAUSTED when no place came within ``wait_s`` seconds, and at once
        when ``waiting`` calls of the client wait already."""
        client = self.client_of(context)
        limit = self.web_limit if client == WEB_CLIENT else self.limit
        held, queue = self._held.get(client, 0), self._waiting.get(client)
        if held < limit and not queue:
            self._held[client] = held + 1
        elif queue is not None and len(queue) >= self.waiting:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"{limit} calls of this client are under way and {len(queue)} wait, its share of the "
                                f"arena's service: {method_name} refused; retry later")
        elif not await self._wait(client):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"{limit} calls of this client are under way (answers not yet sent or read), "
                                f"its share of the arena's service; {method_name} waited {self.wait_s:g} s for one "
                                f"of them to end: retry later")
        context.add_done_callback(lambda _context: self._leave(client))

    async def _wait(self, client: str) -> bool:
        """Wait for a place of ``client`` handed over by ``_leave``: True when one came, False after ``wait_s``."""
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self._waiting.setdefault(client, deque())
        queue.append(place)
        try:
            await asyncio.wait_for(asyncio.shield(place), self.wait_s)
        except TimeoutError:
            pass
        except BaseException:  # the call ended while it waited (its client left)
            if self._stop_waiting(client, queue, place):
                self._leave(client)  # handed over as it ended: passed on
            raise
        return self._stop_waiting(client, queue, place)

    def _stop_waiting(self, client: str, queue: deque[asyncio.Future[None]], place: asyncio.Future[None]) -> bool:
        """Whether ``place`` was handed over; out of ``client``'s queue either way."""
        if place.done():
            return True
        queue.remove(place)
        if not queue and self._waiting.get(client) is queue:
            del self._waiting[client]
        return False

    def _leave(self, client: str) -> None:
        """A call of ``client`` is over: its place goes to the longest waiting call of the client, else back."""
        queue = self._waiting.get(client)
        if queue:
            queue.popleft().set_result(None)
            if not queue:
                del self._waiting[client]
            return
        held = self._held.get(client, 0) - 1
        if held > 0:
            self._held[client] = held
        else:
            self._held.pop(client, None)


class HeavyReads:
    """At most ``at_once`` heavy reads (``methods``: answers of up to a thousand matches, a match record, a
    tournament's standings...) run at once in the whole service, each from the moment its method starts in a
    thread until it has returned (not until its answer is read: a client that never reads holds no place; nor
    until its client cancels it: a cancelled read holds its place until its thread is done). The referee's
    workers share this process and its GIL (8 threads of ``ListMatches`` of 1,000 matches took 60 matches from
    about 5 s to 16 s on 2 cores; one at a time, 1.35 times as long as alone: docs/operators/security.md). Calls
    that wait do so on the server's loop (no thread), each client's in the order they came and the clients in turn
    (round robin), so a client with many calls waiting delays another's next read by at most one of its own; after
    ``wait_s`` seconds a call ends with RESOURCE_EXHAUSTED. Lives on one event loop (the grpc.aio server's): not
    thread-safe."""

    def __init__(self, methods: frozenset[str], at_once: int, wait_s: float,
                 client_of: Callable[[Any], str]) -> None:
        self.methods = methods
        self.at_once = max(1, at_once)
        self.wait_s = wait_s
        self.client_of = client_of
        self.running = 0
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}  # in turn order: first waiting client first

    async def enter(self, method_name: str, context: Any) -> Callable[[], None] | None:
        """Wait for a place when ``method_name`` is a heavy read (None at once for any other method); the
        callable that gives the place back once the method has returned (``AsyncAdmit``'s contract). Aborts the
        call with RESOURCE_EXHAUSTED when no place came within ``wait_s``."""
        if method_name not in self.methods:
            return None
        if self.running < self.at_once and not self._waiting:
            self.running += 1
            return self._leave
        client = self.client_of(context)
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(client, deque()).append(place)
        try:
            await asyncio.wait_for(asyncio.shield(place), self.wait_s)
        except TimeoutError:
            pass
        except BaseException:  # the call ended while it waited
            if not self._drop(client, place):
                self._leave()  # handed over as it ended: passed on
            raise
        if self._drop(client, place):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"the arena's heavy reads are all under way ({self.at_once} at once, every client's "
                                f"in turn); {method_name} waited {self.wait_s:g} s: retry later")
        return self._leave

    def _drop(self, client: str, place: asyncio.Future[None]) -> bool:
        """Take ``place`` out of ``client``'s queue unless it was handed over: True when it was still waiting."""
        if place.done():
            return False
        queue = self._waiting[client]
        queue.remove(place)
        if not queue:
            del self._waiting[client]
        return True

    def _leave(self) -> None:
        """A heavy read has returned: its place goes to the first waiting call of the next client in turn (that
        client then goes to the end of the turn), else back."""
        if not self._waiting:
            self.running -= 1
            return
        client = next(iter(self._waiting))
        queue = self._waiting.pop(client)
        queue.popleft().set_result(None)
        if queue:
            self._waiting[client] = queue  # to the end of the turn


class StreamShares(grpc.aio.ServerInterceptor):
    """At most ``limit`` answer streams open at once per client (``peer_address``) on a ``grpc.aio`` server: the
    methods whose answers stream (the health service's Watch, reflection), which take no place in ``ClientShares``
    and hold memory as long as their client keeps them open (a review opened 64,000 reflection streams from one
    address: +1.6 GB). One more is refused at once with RESOURCE_EXHAUSTED. Other methods pass untouched."""

    def __init__(self, limit: int) -> None:
        self._open = PeerShare(limit)  # the per-address count of arena_sdk.guard

    def open(self) -> dict[str, int]:
        """Client -> answer streams open now (a copy)."""
        return self._open.held()

    async def intercept_service(self, continuation: Callable[[Any], Awaitable[Any]],
                                handler_call_details: Any) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None or not handler.response_streaming:
            return handler
        if handler.unary_stream is not None:
            return handler._replace(unary_stream=self._capped(handler.unary_stream))
        return handler._replace(stream_stream=self._capped(handler.stream_stream))

    def _capped(self, behaviour: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """``behaviour`` (a coroutine function writing with ``context.write``, or an async generator function: the
        grpc.aio servicers' kinds) counted in its client's streams; any other kind as it is."""
        if inspect.iscoroutinefunction(behaviour):
            async def capped(request: Any, context: Any) -> Any:
                client = await self._enter(context)
                try:
                    return await behaviour(request, context)
                finally:
                    self._open.leave(client)

            return capped
        if inspect.isasyncgenfunction(behaviour):
            async def capped_answers(request: Any, context: Any) -> AsyncIterator[Any]:
                client = await self._enter(context)
                try:
                    async for answer in behaviour(request, context):
                        yield answer
                finally:
                    self._open.leave(client)

            return capped_answers
        return behaviour

    async def _enter(self, context: Any) -> str:
        client = peer_address(context.peer() or "")
        if not self._open.take(client):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"{self._open.limit} answer streams of this client are open (health Watch, "
                                f"reflection), its share of the arena's service: close one first")
        return client
