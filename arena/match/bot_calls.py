"""The calls of one running match to its bots, for ``arena.match.running.RunningMatch`` (a base of it, ``BotCalls``):
one call of any method with its waits for a bot that restarts on its port (``_call``), and the waves of Decide calls
(``_ask``), whose timeouts while the event loop was late (``arena.match.loop_lag``) are asked again. Each call's fault
kind and detail come from ``arena.match.call_outcome``; the rules are those of ``docs/failure-policy.md``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from arena.match.bot_stub import UndecodableAnswer
from arena.match.call_outcome import call_outcome, status_code
from arena.match.loop_lag import LoopLag
from arena.match.record import Limits, SeatSpec
from arena.match.stream_status import StreamCut, StreamNotServed
from arena_sdk.pb import bot_pb2

log = logging.getLogger("arena.match.referee")  # the referee's work: one logger name for operators' filters

RECONNECT_MIN_S = 0.005  # a call that found its bot unreachable is tried again while this much of its deadline is left
RECONNECT_TRIES = 5  # at most this many calls per decision (a bot that comes back and goes again, and again)


@dataclass(slots=True)
class _Answer:
    response: bot_pb2.DecideResponse | None
    fault_kind: str | None
    detail: str
    latency_ms: float
    retry_lag_ms: list[float]


def _mark_done(done_at: list[float], index: int, call: Any) -> None:
    """Done callback of a Decide call: when its answer (or fault) came in."""
    done_at[index] = time.perf_counter()


class _Arrivals:
    """The done callbacks of one wave of Decide calls (``mark(index, call)``): when each answer (or fault) came in
    (``done_at``, ``time.perf_counter()``), and ``all_in``, a future done once every call of the wave is over, so
    that the referee wakes once per wave rather than once per answer."""

    __slots__ = ("done_at", "left", "all_in")

    def __init__(self, loop: asyncio.AbstractEventLoop, calls: int) -> None:
        self.done_at = [0.0] * calls
        self.left = calls
        self.all_in: asyncio.Future[None] = loop.create_future()

    def mark(self, index: int, call: Any) -> None:
        self.done_at[index] = time.perf_counter()
        self.left -= 1
        if self.left <= 0 and not self.all_in.done():
            self.all_in.set_result(None)


class BotCalls:
    """The calls to the bots of a ``RunningMatch`` (which holds the attributes annotated here, one entry per seat)."""

    match_id: str
    seats: tuple[SeatSpec, ...]
    lag: LoopLag
    limits: Limits
    stubs: list[Any]
    channels: list[grpc.aio.Channel]
    undecodable_logged: set[tuple[int, str]]
    reached: list[bool]
    outages: list[int]
    metadata: list[tuple[tuple[str, str], ...] | None]
    decide_calls: list[Any]
    call_options: list[dict[str, Any]]
    if TYPE_CHECKING:
        @property
        def deadline_ms(self) -> int: ...  # RunningMatch's: options.deadline_ms

    def _connection_went(self, seat: int) -> None:
        """The seat's connection went during the match (whoever answers now may be another process): overridden
        where the match's channels come from a pool."""

    def _unary_from_now(self, seat: int) -> bool:
        """The seat's match stream was refused as not served (``StreamNotServed``): call its bot through the unary
        calls from now on, and return True, when the match can (``RunningMatch``); False: it stays as it is. A
        refused StartMatch or EndMatch is asked again within its deadline (``_call``); a refused Decide is charged
        (``_ask``: asked again, it would get a second deadline)."""
        return False

    def _connected(self, seat: int) -> bool:
        return self.channels[seat].get_state() == grpc.ChannelConnectivity.READY

    def _check_connection(self, seat: int) -> None:
        """Before a call of the seat's bot: a channel that is not READY (re)connects for it, so whatever answers may
        be another process than the one whose GetInfo was checked (a connection lost between two calls comes back
        without any error): ``_connection_went``. Costs a tenth of a microsecond."""
        if not self._connected(seat):
            self._connection_went(seat)

    def _may_wait(self, seat: int) -> bool:
        """True when a call that finds the seat's bot unreachable waits for it to come back (a restart on its
        port): its bot has answered in this match, and fewer than ``max_consecutive_timeouts`` (3 when 0) calls in
        a row have waited for it in vain. A bot never reached, or gone for good, fails at once."""
        return self.reached[seat] and self.outages[seat] < (self.limits.max_consecutive_timeouts or 3)

    def _reached(self, seat: int, kind: str | None, error: grpc.RpcError | None, waited: bool) -> None:
        """Keep whether the seat's bot answered this call (any answer, or an error status of its own)."""
        if kind == "unreachable":
            self.outages[seat] += waited
        elif error is None or status_code(error) != grpc.StatusCode.DEADLINE_EXCEEDED:
            self.reached[seat] = True
            self.outages[seat] = 0

    def _log_undecodable(self, seat: int, method: str, response: Any) -> None:
        """One warning line per seat and method in a match: the bot answered bytes that are not the message."""
        key = (seat, method)
        level = logging.DEBUG if key in self.undecodable_logged else logging.WARNING
        self.undecodable_logged.add(key)
        s = self.seats[seat]
        log.log(level, "match %s: seat %d (bot %s at %s): %s; recorded as a malformed fault", self.match_id, seat,
                s.name, s.endpoint, response.describe(method))

    async def _call(self, method: str, seat: int, request: Any, timeout_ms: int) -> tuple[Any, str | None, str]:
        """Call ``method`` of the seat's bot under a deadline of ``timeout_ms``; a bot found unreachable is waited
        for (the call tried again, waiting for it to come back) while the deadline lasts. Returns (answer or None,
        fault kind or None, detail)."""
        extra = {"metadata": self.metadata[seat]} if self.metadata[seat] else {}
        self._check_connection(seat)
        call = getattr(self.stubs[seat], method)
        deadline = time.perf_counter() + timeout_ms / 1000
        unreachable: grpc.RpcError | None = None
        response: Any = None
        error: grpc.RpcError | None = None
        for _ in range(RECONNECT_TRIES):
            left = deadline - time.perf_counter()
            try:
                response = await call(request, timeout=max(left, RECONNECT_MIN_S),
                                      wait_for_ready=True if unreachable is not None else None, **extra)
                error = None
            except grpc.RpcError as exc:
                error = exc
                if isinstance(exc, StreamNotServed) and self._unary_from_now(seat):  # asked again, unary
                    call = getattr(self.stubs[seat], method)
                    continue
                if (status_code(exc) == grpc.StatusCode.UNAVAILABLE and not isinstance(exc, StreamCut)
                        and self._may_wait(seat) and deadline - time.perf_counter() > RECONNECT_MIN_S):
                    unreachable = unreachable or exc
                    continue
            break
        if unreachable is not None:  # whatever answered after may be another process
            self._connection_went(seat)
        kind, detail = call_outcome(method, response, error, unreachable, self._connected(seat), timeout_ms)
        self._reached(seat, kind, error, unreachable is not None)
        if isinstance(response, UndecodableAnswer):
            self._log_undecodable(seat, method, response)
        return (response if kind is None else None), kind, detail


    async def _wait_for_unreachable(self, seats: list[int], requests: list[bot_pb2.DecideRequest],
                                    starts: list[float], calls: list[Any], done_at: list[float],
                                    responses: list[Any], errors: list[grpc.RpcError | None],
                                    unreachable: list[grpc.RpcError | None]) -> None:
        """Call again, all at once, the Decides of ``seats`` whose first call found the bot unreachable
        (``errors[j]`` UNAVAILABLE), waiting for it to come back (``wait_for_ready``) for what is left of the
        deadline that started at ``starts[j]`` (``time.perf_counter()`` when the first call of ``seats[j]``
        started), when ``_may_wait``; at most ``RECONNECT_TRIES``
        calls in all (never one whose stream the referee itself ended, a ``StreamCut``). Fills ``responses``,
        ``errors``, ``unreachable`` (the first UNAVAILABLE of each call made again) and ``done_at`` in place; every
        call made is appended to ``calls`` (cancelled with the others)."""
        deadline_s = self.deadline_ms / 1000
        for _ in range(RECONNECT_TRIES - 1):
            retry = []
            for j, seat in enumerate(seats):
                exc = errors[j]
                left = deadline_s - (time.perf_counter() - starts[j])
                if (exc is None or status_code(exc) != grpc.StatusCode.UNAVAILABLE or isinstance(exc, StreamCut)
                        or left <= RECONNECT_MIN_S or not self._may_wait(seat)):
                    continue
                unreachable[j] = unreachable[j] or exc
                call = self.decide_calls[seat](requests[j], **{**self.call_options[seat], "timeout": left,
                                                              "wait_for_ready": True})
                call.add_done_callback(functools.partial(_mark_done, done_at, j))
                calls.append(call)
                retry.append((j, call))
            if not retry:
                return
            for j, call in retry:
                try:
                    responses[j], errors[j] = await call, None
                except grpc.RpcError as exc:
                    errors[j] = exc

    def _decide_outcome(self, seat: int, response: Any, error: grpc.RpcError | None,
                        unreachable: grpc.RpcError | None) -> tuple[Any, str | None, str]:
        """(the answer or None, fault kind or None, detail) of one Decide call of ``seat`` (``call_outcome``)."""
        if unreachable is not None:  # its connection went: whatever answered after may be another process
            self._connection_went(seat)
        if error is None and response is not None and not isinstance(response, UndecodableAnswer):
            if not self.reached[seat] or self.outages[seat]:  # an answer: call_outcome's, without the calls
                self._reached(seat, None, None, False)
            return response, None, ""
        kind, detail = call_outcome("Decide", response, error, unreachable,
                                    unreachable is not None and self._connected(seat), self.deadline_ms)
        self._reached(seat, kind, error, unreachable is not None)
        if isinstance(response, UndecodableAnswer):
            self._log_undecodable(seat, "Decide", response)
        return (response if kind is None else None), kind, detail

    async def _ask(self, seats: list[int], requests: list[bot_pb2.DecideRequest]) -> list[_Answer]:
        """Ask every seat of ``seats`` its request at once (one gRPC call each, no task of ours; every request is
        made before the first call starts, so no bot is charged the referee's work on the others' views), and
        wait for every answer or fault. Each answer's latency counts from its own call's start. A call that finds
        its bot unreachable is made again, waiting for the bot to come back (``wait_for_ready``) for what is left
        of its deadline, so a bot restarting on its port costs at most that decision. A timeout while the event
        loop was late is asked again (same request) with the others of its wave, at most ``lag_retries`` times
        (``docs/failure-policy.md``)."""
        loop = asyncio.get_running_loop()
        threshold_ms = self.limits.excuse_threshold_ms(self.deadline_ms)
        answers: list[_Answer | None] = [None] * len(seats)
        lags: list[list[float]] = [[] for _ in seats]
        todo = list(range(len(seats)))
        while todo:
            since = loop.time()
            starts = [0.0] * len(todo)
            arrivals = _Arrivals(loop, len(todo))
            done_at = arrivals.done_at
            calls = []
            mark = arrivals.mark
            for j, i in enumerate(todo):
                seat = seats[i]
                self._check_connection(seat)
                starts[j] = time.perf_counter()  # the call's own start: its latency and deadline count from it
                call = self.decide_calls[seat](requests[i], **self.call_options[seat])
                call.add_done_callback(functools.partial(mark, j))
                calls.append(call)
            again = []
            responses: list[Any] = [None] * len(todo)
            errors: list[grpc.RpcError | None] = [None] * len(todo)
            unreachable: list[grpc.RpcError | None] = [None] * len(todo)
            try:
                await arrivals.all_in  # every call of the wave is over: each await below has its answer
                failed = False
                for j in range(len(todo)):
                    try:
                        responses[j] = await calls[j]
                    except grpc.RpcError as exc:
                        errors[j] = exc
                        failed = True
                if failed:  # some may have found their bot unreachable
                    await self._wait_for_unreachable([seats[i] for i in todo], [requests[i] for i in todo],
                                                     starts, calls, done_at, responses, errors, unreachable)
            except BaseException:  # cancelled: no call of ours outlives the match
                for call in calls:
                    call.cancel()
                raise
            for j, i in enumerate(todo):
                seat = seats[i]
                if isinstance(errors[j], StreamNotServed):  # its next calls go through the unary calls; this
                    self._unary_from_now(seat)  # decision is charged (asked again, it would get a second deadline)
                response, kind, detail = self._decide_outcome(seat, responses[j], errors[j], unreachable[j])
                latency_ms = round(((done_at[j] or time.perf_counter()) - starts[j]) * 1000, 1)  # a record keeps it
                if kind == "timeout" and len(lags[i]) < self.limits.lag_retries:
                    lag_ms = round(self.lag.max_since(since) * 1000, 3)  # as recorded, so replay agrees
                    if lag_ms > threshold_ms:  # the referee was late, not (necessarily) the bot: ask again
                        lags[i].append(lag_ms)
                        log.info("match %s: seat %d's Decide #%d timed out while the referee was %.0f ms late; "
                                 "asking again", self.match_id, seat, requests[i].sequence, lag_ms)
                        again.append(i)
                        continue
                if lags[i] and kind == "timeout":
                    detail += (f" (asked {len(lags[i]) + 1} times; the referee's lateness excused the first "
                               f"{len(lags[i])})")
                answers[i] = _Answer(response, kind, detail, latency_ms, lags[i])
            todo = again
        return answers  # type: ignore[return-value]
