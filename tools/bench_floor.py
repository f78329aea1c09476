"""Where the floor is: the parts of ``make bench``'s ratios that are not gRPC's.

Two measurements that ``bench_ratios.py`` puts beside its ratios, in the same repetitions:

* ``inprocess_phase``: complete 4-seat Take 5 games through the real referee (``arena.match.referee.run_match``), its
  bots in this process: every Decide goes to a real ``arena_sdk`` ``BotServicer`` of the sample random bot, called
  directly (the request serialised and parsed as gRPC would, no channel, no thread, no socket). What it costs per
  decision is the referee's own work (engine, views, validation, records: ``referee_own_cpu_us``) and the SDK's
  own work (parse the request, complete and check the view, ask the bot, encode the answer: ``sdk_cpu_us``),
  each without any gRPC.
* ``paced_echo_phase``: the echo client of ``bench_ratios`` in rounds of 4 calls (one to each echo server, as a
  Take 5 turn asks its 4 seats), paced to a given number of calls per second. gRPC's CPU per call depends on the
  call rate: a process that is woken for every call pays the thread wake-ups (poller, completion queue, thread
  pool, GIL hand-offs) per call, while a busy one shares them between calls. The echo of ``bench_ratios`` runs as
  fast as it can (about 3 times the referee's rate on 2 cores), so its CPU per call is lower than what the same
  bare gRPC costs at the referee's rate. Paced to the referee's rate, it is the floor at that rate.

Then ``referee CPU ~ paced echo client CPU + referee_own_cpu_us`` and ``bot CPU ~ paced echo server CPU +
sdk_cpu_us`` if nothing else costs: ``bench_ratios`` prints how much of each the sum explains.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

import grpc

from arena.match.record import SeatSpec
from arena.match.referee import run_match
from arena_sdk.pb import bot_pb2
from arena_sdk.server import BotServicer

GAME = "take5"
SEATS = 4
ROUND = 4  # calls per round of the paced echo: one to each of the 4 echo servers


class _Context:
    """What ``BotServicer`` uses of a ``grpc.ServicerContext``: ``abort`` (raises) and the call metadata."""

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise RuntimeError(f"the in-process bot answered {code.name}: {details}")

    def invocation_metadata(self) -> tuple[()]:
        return ()


class _Answered:
    """A Decide call that has its answer already: awaitable, with the two call methods the referee uses."""

    __slots__ = ("response",)

    def __init__(self, response: Any) -> None:
        self.response = response

    def add_done_callback(self, callback: Any) -> None:
        callback(self)

    def cancel(self) -> bool:
        return False

    def __await__(self) -> Any:
        return self.response
        yield  # a generator: awaiting it returns at once


class _Stub:
    """The ``BotStub`` calls of the referee, answered by ``bots.servicer`` in this thread. Serialising the request
    and parsing the answer (what gRPC's serializers do on the referee's side) count as the referee's; parsing the
    request, the handler and serialising the answer as the SDK's (``bots.sdk_cpu_s``)."""

    def __init__(self, bots: InProcessBots) -> None:
        self.bots = bots

    def _serve(self, method: str, request: Any, response_cls: Any) -> Any:
        data = request.SerializeToString()
        t0 = time.thread_time()
        handler = getattr(self.bots.servicer, method)
        answer = handler(type(request).FromString(data), self.bots.context).SerializeToString()
        self.bots.sdk_cpu_s += time.thread_time() - t0
        return response_cls.FromString(answer)

    def Decide(self, request: Any, **_: Any) -> _Answered:
        self.bots.decides += 1
        return _Answered(self._serve("Decide", request, bot_pb2.DecideResponse))

    async def StartMatch(self, request: Any, **_: Any) -> Any:
        return self._serve("StartMatch", request, bot_pb2.StartMatchResponse)

    async def EndMatch(self, request: Any, **_: Any) -> Any:
        return self._serve("EndMatch", request, bot_pb2.EndMatchResponse)


class _Channel:
    """The channel of a ``_Lease``: always connected."""

    @staticmethod
    def get_state() -> grpc.ChannelConnectivity:
        return grpc.ChannelConnectivity.READY


class _Lease:
    """A ``BotLease`` of the in-process bots: always connected, the unary calls."""

    serves_match_stream = False
    channel = _Channel()

    def __init__(self, endpoint: str, stub: _Stub) -> None:
        self.endpoint = endpoint
        self.stub = stub


class InProcessBots:
    """Stands in for ``arena.match.channels.BotChannels`` (``lease``/``release``/``retire``): every endpoint leads to
    one ``BotServicer`` of ``bot_cls`` in this process. ``sdk_cpu_s``: CPU seconds spent in it; ``decides``: Decide
    calls made."""

    def __init__(self, bot_cls: type) -> None:
        self.servicer = BotServicer(bot_cls)
        self.context = _Context()
        self.sdk_cpu_s = 0.0
        self.decides = 0
        self._stub = _Stub(self)

    def lease(self, endpoint: str) -> _Lease:
        return _Lease(endpoint, self._stub)

    def release(self, lease: _Lease) -> None:
        pass

    def retire(self, lease: _Lease) -> None:
        pass


async def inprocess_phase(bots: InProcessBots, seconds: float, tag: str) -> dict[str, float]:
    """Complete 4-seat Take 5 games through the referee against ``bots`` (in process) for ``seconds`` (at least
    one game): Decide calls, CPU seconds of this thread in all, and of it in the SDK."""
    seats = [SeatSpec(f"inproc{i}@1.0", f"inprocess:{i}") for i in range(SEATS)]
    sdk0, calls0 = bots.sdk_cpu_s, bots.decides
    cpu0, t0 = time.thread_time(), time.perf_counter()
    games = 0
    while not games or time.perf_counter() - t0 < seconds:
        record = await run_match(f"{tag}-{games}", GAME, seats, seed=random.getrandbits(32),
                                 channels=bots)  # type: ignore[arg-type]
        if record.faults:
            raise RuntimeError(f"in-process match {record.match_id}: unexpected faults {record.faults[:2]}")
        games += 1
    return {"calls": bots.decides - calls0, "cpu": time.thread_time() - cpu0, "sdk_cpu": bots.sdk_cpu_s - sdk0}


async def paced_echo_phase(calls: Sequence[Any], payload: bytes, calls_per_s: float, seconds: float,
                           server_cpu: Any) -> dict[str, float]:
    """Rounds of one call on each of ``calls`` (echo multicallables; 4 in ``bench_ratios``) at ``calls_per_s`` in
    all, for ``seconds``: calls, wall seconds, CPU seconds of this process and of the servers (``server_cpu()``,
    their CPU seconds so far). A round that falls behind starts at once (no catching up in bursts)."""
    interval = len(calls) / calls_per_s
    cpu0, srv0, t0 = time.process_time(), server_cpu(), time.perf_counter()
    end = t0 + seconds
    n = 0
    loop = asyncio.get_running_loop()
    next_round = loop.time()
    while time.perf_counter() < end:
        in_flight = [call(payload, timeout=5) for call in calls]
        for c in in_flight:
            await c
        n += len(in_flight)
        next_round = max(next_round + interval, loop.time())
        await asyncio.sleep(next_round - loop.time())
    wall = time.perf_counter() - t0
    return {"calls": n, "wall": wall, "cpu": time.process_time() - cpu0, "peer_cpu": server_cpu() - srv0}
