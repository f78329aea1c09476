"""``ClientShares``: each client's share of the Arena service, counted from the moment a call's method may run until
the call is over, its answer sent.

The referee's methods run in a pool of ``RPC_THREADS`` threads (``arena.server.app``). Without shares, one client's
heavy reads (a ``ListMatches`` of 1,000 matches costs milliseconds of a thread and ~390 KB of answer) take every
thread while others wait, and a client that never reads its answers (an HTTP/2 window held at 0) keeps each answer
in the referee's memory until its connection closes, as many as it opens calls. A call is counted until grpc.aio
says it is done, which for such a client is when its connection goes: so it holds at most ``limit`` answers at
once, and its further calls wait on the server's loop (no thread, no answer) for at most ``wait_s`` seconds, then
end with RESOURCE_EXHAUSTED. Calls of other clients never wait for its calls.

A client is ``arena_sdk.guard.peer_address`` of the call: an IPv4 address, an IPv6 /64, every loopback address
together (so the web app and the CLI on the referee's machine share one).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import grpc

from arena_sdk.guard import peer_address


class ClientShares:
    """At most ``limit`` calls of one client admitted at once (``admit``); the next ones wait in the order they came
    for at most ``wait_s`` seconds each. Lives on one event loop (the grpc.aio server's): not thread-safe."""

    def __init__(self, limit: int, wait_s: float) -> None:
        self.limit = max(1, limit)
        self.wait_s = wait_s
        self._held: dict[str, int] = {}
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    def held(self) -> dict[str, int]:
        """Client -> calls admitted and not yet over (a copy)."""
        return dict(self._held)

    async def admit(self, method_name: str, context: Any) -> None:
        """Admit the call of ``context`` (a ``grpc.aio`` servicer context) in its client's share, waiting for a
        place when the share is full; the place is given back once the call is over (its done callback). Aborts
        the call with RESOURCE_EXHAUSTED when no place came within ``wait_s`` seconds."""
        client = peer_address(context.peer() or "")
        held = self._held.get(client, 0)
        if held < self.limit and not self._waiting.get(client):
            self._held[client] = held + 1
        elif not await self._wait(client):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"{self.limit} calls of this client are under way (answers not yet sent or read), "
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
