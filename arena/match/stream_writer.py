"""How the referee writes on one match stream (``arena.match.streams``): ``Writer`` puts its messages on a
``grpc.aio`` stream call in order, one at a time, without a task of its own; ``Timed`` is a message whose
``deadline_ms`` is stamped when grpc serialises it."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Any

import grpc

from arena_sdk.pb import bot_pb2

log = logging.getLogger("arena.match.referee")
CLOSE = object()  # the end of the referee's side of a stream


class Timed:
    """A ``RefereeMessage`` whose ``deadline_ms`` is stamped when grpc serialises it (``SerializeToString``, the
    match stream's request serializer, called once the stream is started: the bot reached), as what is left then of
    the deadline due at ``due`` (``time.monotonic()`` s), at least 1 ms; so a request that waited for its bot to come
    back, or behind another write, tells the bot the time it has from when it gets the request."""

    __slots__ = ("message", "due")

    def __init__(self, message: bot_pb2.RefereeMessage, due: float) -> None:
        self.message = message
        self.due = due

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name, called by the stub's serializer
        self.message.deadline_ms = max(1, round((self.due - time.monotonic()) * 1000))
        return self.message.SerializeToString()


class Writer:
    """Writes the referee's messages on one ``grpc.aio`` stream call, in order and one at a time (grpc core takes
    one message at a time per call), without a task of its own: a write starts in the turn of the event loop that
    asks for it (the message goes to grpc core at once) and is resumed by the done callback of the future it
    waits on (grpc's send completion), as a task would be; the next message waits in ``pending`` meanwhile.
    ``CLOSE`` ends the referee's side (``done_writing``). A write that fails is dropped with the rest: the
    stream's reader sees the call's status and fails the calls waiting on it, as with a request iterator."""

    __slots__ = ("call", "pending", "busy", "closed")

    def __init__(self, call: Any) -> None:
        self.call = call
        self.pending: collections.deque[Any] = collections.deque()
        self.busy = False  # a write is in progress
        self.closed = False  # nothing more is written (the side is closed, or the stream broke)

    def put(self, message: Any) -> None:
        if self.closed:
            return
        if self.busy:
            self.pending.append(message)
        else:
            self._start(message)

    def stop(self) -> None:
        """Write nothing more (the stream is gone); a write in progress ends with the call."""
        self.closed = True
        self.pending.clear()

    def _start(self, message: Any) -> None:
        self.busy = True
        if message is CLOSE:
            self.closed = True
            self.pending.clear()
            self._step(self.call.done_writing())
        else:
            self._step(self.call.write(message))

    def _step(self, coro: Any) -> None:
        try:
            waited = coro.send(None)
        except StopIteration:
            self.busy = False
            if self.pending and not self.closed:
                self._start(self.pending.popleft())
            return
        except (Exception, asyncio.CancelledError) as exc:  # the call broke or was cancelled: its reader says so
            self.busy = False
            self.stop()
            log.debug("a match stream write failed: %r", exc)
            if not isinstance(exc, grpc.RpcError | asyncio.CancelledError) and not self.call.done():
                self.call.cancel()  # as grpc does when a request iterator raises
            return
        if waited is None:  # a bare yield: resume in the next turn
            asyncio.get_running_loop().call_soon(self._step, coro)
        else:  # an asyncio future (grpc's completion of the write, or its wait for the call to start)
            waited._asyncio_future_blocking = False
            waited.add_done_callback(lambda _: self._step(coro))
