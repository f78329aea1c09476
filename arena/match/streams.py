"""The referee's side of the match stream (``arena.v1.Bot.PlayMatch``, bot.proto "The match stream"): one
bidirectional stream per seat and match, made to look like the seat's stub.

``SeatStream`` has the stub's ``StartMatch``, ``Decide`` and ``EndMatch`` with the stub's call signature
(``call(request, timeout=s, metadata=..., wait_for_ready=...)``); each returns a ``StreamCall``, an awaitable with
``add_done_callback`` and ``cancel`` like a ``grpc.aio`` unary call, so ``arena.match.running.RunningMatch`` asks a
seat the same way on either path, with the same fault kinds, details, lag retries and reconnection:

* the request is put on the stream (a ``RefereeMessage`` with its ``deadline_ms``) and the call waits for the
  answer for ``timeout`` seconds, the deadline the referee enforces itself; then it fails with
  DEADLINE_EXCEEDED ("timeout"), and an answer that comes later, or carries a sequence nobody waits for, is dropped
  (``dropped`` counts them); a call that timed out while such messages came (not late answers) fails with a
  ``StreamTimeout``, which says how many and what the last one was, so the fault tells the bot what it did wrong;
* a message that answers nothing the referee asked on the stream (a sequence it never sent, a second answer to a
  request already answered, no answer at all; not the first late answer to a request whose call is over) is drawn
  from the stream's budget of ``MAX_UNASKED_MESSAGES`` (``unasked`` counts them); past it the referee ends the
  stream and fails the call waiting on it, or else the seat's next call, with a ``StreamCut`` (UNAVAILABLE: an
  ``unreachable`` fault, not asked again on a new stream), and the call after opens a new stream;
* a ``StepFailure`` answer fails the call with its status code, as the unary call's error status would;
* an answer whose bytes are not a ``BotMessage`` answers the oldest waiting call with an ``UndecodableAnswer``
  (a ``malformed`` fault);
* a stream that ends or breaks fails every waiting call with its status (UNAVAILABLE when the bot went away, also
  when grpc core calls the dropped connection INTERNAL or UNKNOWN and the channel is no longer READY, or ended the
  stream without one, or, after answers, ended it as the referee wrote and grpc core says INTERNAL with
  ``CORE_ENDED``: an ``unreachable`` fault; RESOURCE_EXHAUSTED for an answer over the size limit, an
  ``error``); the next call opens a new stream (``wait_for_ready`` as the call asks), and the referee sends it a
  complete view, as after any unanswered decision. So does the call after one that timed out on a stream that
  never brought an answer (a stream still waiting for its bot to come back);
* a bot whose GetInfo says it serves the match stream though it does not implement ``PlayMatch`` refuses the
  stream with UNIMPLEMENTED, or, when grpc was still writing the first request, the referee sees INTERNAL
  ("Internal error from Core"): a stream that ends either way before any answer is checked once per seat with a
  stream the referee writes nothing on (``PROBE_S``); when that one is refused with UNIMPLEMENTED, the calls
  waiting and every later one of the seat fail at once with ``StreamNotServed`` (UNIMPLEMENTED, ``NOT_SERVED``),
  no stream opened: the referee then calls the seat through the unary calls (``RunningMatch``). The same check
  gives a bot that refuses every stream at once with another status (a wrong bot secret checked before reading)
  that status, not grpc core's INTERNAL.

The stream's call metadata (the bot secret) is that of the first call that opens it.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Generator
from typing import Any

import grpc
import grpc.aio

from arena.core import limits
from arena.core.text import cut
from arena.match.bot_stub import UndecodableAnswer
from arena.match.stream_status import (
    MAX_UNASKED_MESSAGES,
    NOT_SERVED,
    StreamCut,
    StreamNotServed,
    StreamStatus,
    StreamTimeout,
    status_code,
)
from arena.match.stream_writer import CLOSE, Timed, Writer
from arena_sdk.pb import bot_pb2

log = logging.getLogger("arena.match.referee")

# BotMessage answer field -> the step it answers (None: answered by sequence)
_STEP_OF_ANSWER = {"started": bot_pb2.MATCH_STEP_START, "decision": bot_pb2.MATCH_STEP_DECIDE,
                   "ended": bot_pb2.MATCH_STEP_END}
# statuses of a stream that ended without a word from the bot: the stream broke, an ``unreachable`` fault
_BROKEN = (None, grpc.StatusCode.OK, grpc.StatusCode.CANCELLED)
# statuses grpc core gives a stream both when its connection dropped (a killed bot) and when the bot refused it at
# once (a wrong secret): the channel's state tells them apart
_CORE = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
# what grpc core says in place of the bot's status when the bot's side ended while the referee was still writing
# (a stream that had brought answers: the bot ended it, with OK or otherwise; the next request goes on a new one)
CORE_ENDED = "Internal error from Core"
# How long (s) the referee waits for the status of its check whether a bot implements PlayMatch (a stream it writes
# nothing on; a bot that does not refuses it at once with UNIMPLEMENTED, one that does waits for a request); so do
# registration and `arena play` before a bot plays (arena.match.bot_checks.stream_refusal)
PROBE_S = 0.5


def _step_name(step: int) -> str:
    """A ``MatchStep`` number's name ("MATCH_STEP_START"), or the number when it is none of them."""
    try:
        return str(bot_pb2.MatchStep.Name(bot_pb2.MatchStep.ValueType(step)))  # ValueError when unknown
    except ValueError:
        return str(step)


class _Inbox:
    """What the referee expects on one stream of a seat: the calls waiting for an answer (``waiting``, by (step,
    sequence), oldest first), the requests whose call ended without one (``late``: the first answer to one is
    dropped without being counted), and how many more messages answering nothing asked the bot may send
    (``credit``, see ``MAX_UNASKED_MESSAGES``; ``unasked`` counts those it sent)."""

    __slots__ = ("waiting", "late", "credit", "unasked")

    def __init__(self) -> None:
        self.waiting: collections.OrderedDict[tuple[int, int], StreamCall] = collections.OrderedDict()
        self.late: set[tuple[int, int]] = set()
        self.credit = MAX_UNASKED_MESSAGES
        self.unasked = 0


class StreamCall:
    """One request on a match stream, awaited like a ``grpc.aio`` unary call: ``await call`` gives the answer
    message (or an ``UndecodableAnswer``) or raises ``StreamStatus``. A done callback (``add_done_callback``) is
    called with the call as soon as it is over (answered, failed, timed out or cancelled, also when the task
    awaiting it is cancelled), in that same turn of the event loop."""

    __slots__ = ("future", "timer", "stream", "key", "callbacks", "stray")

    def __init__(self, stream: SeatStream, key: tuple[int, int], timeout_s: float) -> None:
        loop = stream.loop
        self.stream = stream
        self.key = key
        self.future: asyncio.Future[Any] = loop.create_future()
        self.timer = loop.call_later(timeout_s, self._expire, timeout_s)
        self.callbacks: list[Callable[[Any], None]] | None = None
        # messages answering nothing waiting that came while this call waited: (how many, the last one's answer
        # field or None, its sequence); None while none came (see _dispatch)
        self.stray: tuple[int, str | None, int] | None = None

    def _expire(self, timeout_s: float) -> None:
        if not self.future.done():
            stream = self.stream
            stream.forget(self)
            if self.stray is None:
                status = StreamStatus(grpc.StatusCode.DEADLINE_EXCEEDED, f"no answer within {timeout_s * 1000:.0f} ms")
            else:
                status = self._stray_timeout(timeout_s, self.stray)
            self.future.set_exception(status)
            self._done()
            if not stream.answered:  # never reached the bot (still connecting): the next call opens a new stream
                stream.close()

    def _stray_timeout(self, timeout_s: float, stray: tuple[int, str | None, int]) -> StreamTimeout:
        count, which, sequence = stray
        step, asked = self.key
        decide = step == bot_pb2.MATCH_STEP_DECIDE
        if which in ("decision", "failure"):
            last = f"a {which} for sequence {sequence}"
            if decide:
                last += f"; a {which} must carry the sequence of the decide it answers"
        elif which is not None and which.startswith("failure for step"):
            last = f"a {which}"
            if decide:
                last += "; a failure answering a decide says step MATCH_STEP_DECIDE and the decide's sequence"
        elif which is None:
            last = "a message with no answer set"
        else:
            last = f"a `{which}` answer"
        sent = "1 message" if count == 1 else f"{count} messages"
        dropped = "was dropped" if count == 1 else "were dropped"
        return StreamTimeout(timeout_s, asked if decide else None,
                             f"the bot sent {sent} on the match stream meanwhile that answered no request waiting "
                             f"and {dropped} (the last: {last})")

    def answer(self, response: Any) -> None:
        if not self.future.done():
            self.timer.cancel()
            self.future.set_result(response)
            self._done()

    def fail(self, status: StreamStatus) -> None:
        if not self.future.done():
            self.timer.cancel()
            self.future.set_exception(status)
            self._done()

    def _done(self) -> None:
        callbacks, self.callbacks = self.callbacks, None
        for callback in callbacks or ():
            try:
                callback(self)
            except Exception:  # noqa: BLE001 - as asyncio does with a failing done callback: logged, never raised
                log.exception("a done callback of a match stream call raised")

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        if self.future.done():  # over already: called at once
            callback(self)
        elif self.callbacks is None:
            self.callbacks = [callback]
        else:
            self.callbacks.append(callback)

    def cancel(self) -> bool:
        self.timer.cancel()
        self.stream.forget(self)
        cancelled = self.future.cancel()
        if self.future.cancelled():  # by this call, or with the task that awaited it (``__await__``)
            self._done()
        return cancelled

    def __await__(self) -> Generator[Any, None, Any]:
        try:
            return (yield from self.future.__await__())
        except asyncio.CancelledError:  # the awaiting task was cancelled, and with it the future: the call is over
            self.cancel()  # (its timer, its place among the stream's waiting calls, its done callbacks)
            raise


class SeatStream:
    """The match stream of one seat, opened on first use through ``stub`` (a ``GuardedBotStub``), reopened after it
    broke; ``connected()`` says whether the seat's channel is READY. Belongs to the running event loop. See the
    module docstring."""

    def __init__(self, stub: Any, seat: int, name: str, connected: Callable[[], bool] = lambda: False) -> None:
        self.stub = stub
        self.connected = connected  # True while the channel to the bot is READY (a broken stream: the bot's doing)
        self.seat = seat
        self.name = name  # for log lines: "bot x at host:port"
        self.loop = asyncio.get_running_loop()
        self.call: Any = None  # the grpc.aio stream call, None until opened or after it broke
        self.outbox: Writer | None = None  # the referee's side of the open stream
        self.reader: asyncio.Task[None] | None = None
        self.inbox = _Inbox()  # what the open stream (or the last one) expects
        self.opened = 0  # streams opened so far
        self.answered = False  # the stream now open has brought an answer
        self.dropped = 0  # answers dropped: late, or for a sequence nobody waits for
        self.unasked = 0  # of those, the messages that answered nothing asked (MAX_UNASKED_MESSAGES), on every stream
        self.cut: StreamCut | None = None  # a stream the referee ended with no call waiting: the next call's fault
        self.metadata: Any = None  # the call metadata of the stream opened last
        self.serves: bool | None = None  # whether the bot implements PlayMatch, once checked (None: not checked)
        self.refused: StreamStatus | None = None  # the bot's refusal of the last check of its stream (``_refusal``)
        self._decide = bot_pb2.RefereeMessage()  # see decide_request
        self._decide_request = self._decide.decide

    @property
    def waiting(self) -> collections.OrderedDict[tuple[int, int], StreamCall]:
        """The calls waiting for an answer on the open stream (or the last one), by (step, sequence)."""
        return self.inbox.waiting

    def decide_request(self, template: bot_pb2.DecideRequest) -> bot_pb2.DecideRequest:
        """The seat's reusable Decide request (a copy of ``template``), held inside this stream's reusable
        ``RefereeMessage``: ``Decide`` of that very request sends that message as it is, without copying the
        request into a new one. The caller refills it for each decision."""
        self._decide_request.CopyFrom(template)
        return self._decide_request

    # the stub's methods
    def StartMatch(self, request: bot_pb2.StartMatchRequest, **kwargs: Any) -> StreamCall:  # noqa: N802 - stub API
        return self._ask(bot_pb2.RefereeMessage(start=request), (bot_pb2.MATCH_STEP_START, 0), **kwargs)

    def Decide(self, request: bot_pb2.DecideRequest, **kwargs: Any) -> StreamCall:  # noqa: N802 - stub API
        if request is self._decide_request:  # the request inside the reusable message (decide_request)
            message = self._decide
        else:
            message = bot_pb2.RefereeMessage(decide=request)
        return self._ask(message, (bot_pb2.MATCH_STEP_DECIDE, request.sequence), **kwargs)

    def EndMatch(self, request: bot_pb2.EndMatchRequest, **kwargs: Any) -> StreamCall:  # noqa: N802 - stub API
        """The end, and the end of the referee's side of the stream (the bot's then ends too)."""
        call = self._ask(bot_pb2.RefereeMessage(end=request), (bot_pb2.MATCH_STEP_END, 0), **kwargs)
        if self.outbox is not None:  # None: the call failed at once (a stream the referee ended)
            self.outbox.put(CLOSE)
        return call

    def _ask(self, message: bot_pb2.RefereeMessage, key: tuple[int, int], *, timeout: float,
             metadata: Any = None, wait_for_ready: bool | None = None) -> StreamCall:
        if self.cut is not None:  # the last stream was ended for its junk while no call waited: this one fails
            call = StreamCall(self, key, timeout)
            call.fail(self.cut)
            self.cut = None
            return call
        if self.call is None:
            if self.serves is False:  # the bot does not implement PlayMatch: no stream, the call fails at once
                call = StreamCall(self, key, timeout)
                call.fail(StreamNotServed())
                return call
            self._open(metadata, wait_for_ready)
        message.deadline_ms = max(1, round(timeout * 1000))
        call = StreamCall(self, key, timeout)
        inbox = self.inbox
        old = inbox.waiting.get(key)
        if old is not None:  # asked again (the same request): the earlier call is over (its answer: a late one)
            old.cancel()
        inbox.waiting[key] = call
        if inbox.credit < MAX_UNASKED_MESSAGES:
            inbox.credit += 1
        assert self.outbox is not None
        if self.outbox.busy or not self.answered:
            # not written (serialised) at once: behind another write, or on a stream that may still be connecting
            # (a bot coming back); the caller reuses its decide message, so a snapshot waits instead, and
            # deadline_ms is what is left of the deadline when grpc serialises it (sends it)
            if message is self._decide:
                snapshot = bot_pb2.RefereeMessage()
                snapshot.CopyFrom(message)
                message = snapshot
            self.outbox.put(Timed(message, time.monotonic() + timeout))
        else:
            self.outbox.put(message)
        return call

    def forget(self, call: StreamCall) -> None:
        """The call is over without an answer (its deadline passed, or it was cancelled or asked again)."""
        inbox = self.inbox
        if inbox.waiting.get(call.key) is call:
            del inbox.waiting[call.key]
            inbox.late.add(call.key)  # its answer may still come: dropped, but not counted as unasked

    def _open(self, metadata: Any, wait_for_ready: bool | None) -> None:
        self.inbox = _Inbox()  # this stream's calls: failed when it breaks, not the next one's
        self.metadata = metadata
        self.call = self.stub.PlayMatch(metadata=metadata, wait_for_ready=wait_for_ready)
        self.outbox = Writer(self.call)
        self.reader = self.loop.create_task(self._read(self.call, self.inbox))
        self.opened += 1
        self.answered = False

    async def _read(self, call: Any, inbox: _Inbox) -> None:
        status: StreamStatus = StreamStatus(grpc.StatusCode.UNAVAILABLE, "the bot ended the match stream")
        waiting = inbox.waiting
        read = False  # the stream brought a message
        try:
            while True:
                message = await call.read()
                if message is grpc.aio.EOF:
                    break
                read = True
                if self._dispatch(message, inbox):  # it answered nothing asked: drawn from the stream's budget
                    inbox.credit -= 1
                    if inbox.credit < 0:
                        status = StreamCut(inbox.unasked)
                        log.warning("seat %d (%s): %s", self.seat, self.name, status.details())
                        call.cancel()
                        if self.call is call and not waiting:  # nobody to fail: the seat's next call is
                            self.cut = status
                        break
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            details = exc.details() if hasattr(exc, "details") else str(exc)
            if code in _BROKEN or (code in _CORE and not self.connected()):  # the connection went
                code = grpc.StatusCode.UNAVAILABLE
            elif read and code in _CORE and details == CORE_ENDED:  # the bot ended the stream while it was written
                code, details = grpc.StatusCode.UNAVAILABLE, f"the bot ended the match stream ({details})"
            said = ("the match stream broke" if code == grpc.StatusCode.UNAVAILABLE  # the connection went
                    else "the bot ended the match stream" if read else "the bot refused the match stream")
            status = StreamStatus(code, f"{said}: {details or code.name}")
            if not read and (code == grpc.StatusCode.UNIMPLEMENTED or code in _CORE):
                status = await self._refusal() or status
        except asyncio.CancelledError:
            status = StreamStatus(grpc.StatusCode.CANCELLED, "the match stream was closed")
            raise
        finally:
            if self.call is call:  # the next call opens a new stream
                self.call = None
                if self.outbox is not None:
                    self.outbox.stop()
                self.outbox = None
            waiters = list(waiting.values())
            waiting.clear()
            for waiter in waiters:
                waiter.fail(status)

    async def _refusal(self) -> StreamStatus | None:
        """Why the bot refuses the match stream, asked with a stream the referee writes nothing on (so no write of
        the referee's races the bot's status): ``StreamNotServed`` when it refuses that one with UNIMPLEMENTED (it
        does not implement PlayMatch), its own status when it refuses it with another (PERMISSION_DENIED for a wrong bot
        secret, which grpc core may have turned into INTERNAL on a stream the referee was writing), None when the
        check gets no status within ``PROBE_S`` (the bot waits for a request: it serves the stream) or one that
        tells nothing (OK, CANCELLED, INTERNAL). Asked once per seat, and again after each refusal of another kind
        than UNIMPLEMENTED (a bot refusing answers the check at once; one restarted right may serve now)."""
        if self.serves is None or self.refused is not None:
            probe = self.stub.PlayMatch(metadata=self.metadata, wait_for_ready=False)
            try:
                code = await asyncio.wait_for(probe.code(), PROBE_S)
                details = await probe.details()
            except (TimeoutError, grpc.RpcError):
                code, details = None, ""
            finally:
                probe.cancel()
            self.serves = code != grpc.StatusCode.UNIMPLEMENTED
            self.refused = None
            if not self.serves:
                log.warning("seat %d (%s): %s; called through the unary calls instead", self.seat, self.name,
                            NOT_SERVED)
            elif code is not None and code not in _BROKEN and code not in _CORE:
                self.refused = StreamStatus(code, f"the bot refused the match stream: {details or code.name}")
        if self.serves is False:
            return StreamNotServed()
        return self.refused

    def _dispatch(self, message: Any, inbox: _Inbox) -> bool:
        """Give ``message`` (a ``BotMessage`` or an ``UndecodableAnswer``) to the call of ``inbox``'s stream
        waiting for it, or drop it. True when it answered nothing the referee asked on that stream (counted in
        ``unasked``; not the first answer to a request whose call is over). A few dict and set look-ups: a flood
        costs the referee grpc's receiving and little more per message."""
        waiting = inbox.waiting
        if inbox is self.inbox:
            self.answered = True
        if isinstance(message, UndecodableAnswer):  # answers the oldest request waiting
            if waiting:
                _, call = waiting.popitem(last=False)
                call.answer(message)
                return False
            which, sequence, key = "undecodable", 0, None
        else:
            which = message.WhichOneof("answer")
            sequence = message.sequence
            if which == "failure":
                failure = message.failure
                key = (failure.step, sequence if failure.step == bot_pb2.MATCH_STEP_DECIDE else 0)
                found = waiting.pop(key, None)
                if found is not None:
                    code = status_code(failure.code) or grpc.StatusCode.UNKNOWN
                    found.fail(StreamStatus(code if code != grpc.StatusCode.OK else grpc.StatusCode.UNKNOWN,
                                           cut(failure.message, limits.BOT_STATUS_TEXT)))
                    return False
                if failure.step != bot_pb2.MATCH_STEP_DECIDE:  # for a fault's detail: which step it said
                    which = f"failure for step {_step_name(failure.step)}"
            else:
                step = _STEP_OF_ANSWER.get(which) if which is not None else None
                key = (step, sequence if step == bot_pb2.MATCH_STEP_DECIDE else 0) if step else (0, 0)
                found = waiting.pop(key, None)
                if found is not None:
                    found.answer(getattr(message, str(which)))
                    return False
        self.dropped += 1
        if key in inbox.late:  # the first answer to a request whose call is over: late, not counted
            inbox.late.discard(key)
            log.debug("seat %d (%s): dropped a late match stream answer (%s, sequence %d)", self.seat, self.name,
                      which, sequence)
            return False
        self.unasked += 1
        inbox.unasked += 1
        for call in waiting.values():  # what came instead of their answer, for their fault's detail
            call.stray = (1 if call.stray is None else call.stray[0] + 1, which, sequence)
        log.debug("seat %d (%s): dropped a match stream message answering nothing asked (%s, sequence %d)",
                  self.seat, self.name, which, sequence)
        return True

    async def finish(self, timeout_s: float) -> None:
        """Wait at most ``timeout_s`` for the stream to end (after ``EndMatch``: the bot ends its side)."""
        reader = self.reader
        if reader is not None and not reader.done():
            await asyncio.wait([reader], timeout=timeout_s)

    def close(self) -> None:
        """End the stream: close the referee's side and cancel the call (every waiting call fails)."""
        if self.outbox is not None:
            self.outbox.stop()
        if self.call is not None:
            self.call.cancel()
        if self.reader is not None:
            self.reader.cancel()
        self.call = self.outbox = None
