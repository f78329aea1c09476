"""The ratios of ``make bench``: each figure measured beside its floor in the same run, repetitions
interleaved (echo, referee, direct and queued matches, engines, one after the other, then again), so that the load
of other jobs on a shared machine hits both sides of a ratio alike. Each figure is the median of the repetitions,
with their min and max; a ratio is computed within each repetition (whose two sides alternate in ``SLICES``
slices), then its median taken.

Figures (``REPORT`` lists them in the printed order):

* ``stream_vs_stream_echo``: refereed Take 5 decisions/s on the match stream (``Bot.PlayMatch``, one stream per seat;
  the same games as below) / messages/s of a bare ``grpc.aio`` streaming echo client with one stream to each of the
  4 echo servers, one message in flight on each; the messages are real DecideRequests in their RefereeMessage
  (``STREAM_PAYLOADS``). Target >= 0.7.
* ``stream_cpu_vs_stream_echo``: CPU of this process per decision on the stream / per streaming echo message.
  Target <= 1.3. ``stream_bot_cpu_vs_stream_echo``: CPU of the 4 bots per decision on the stream / of the 4 echo
  servers per streaming echo message. Target <= 1.3. ``stream_cpu_vs_paced`` and ``stream_bot_cpu_vs_paced``: the
  same against the streaming echo in rounds (a message on each of the 4 streams, then the 4 echoes) paced to the
  referee's decisions/s on the stream: the floor at the referee's rate and shape. ``stream_bot_cpu_vs_protocol``:
  the bots' CPU per decision on the stream / that of 4 protocol-only bots (``bench_protocol_bot.py``: the
  generated code alone, served as the SDK serves, a random card) on the same games: what the SDK's own work costs
  in the process; ``protocol_bot_cpu_vs_paced``: the protocol-only bot against the paced echo server.
* ``match_cpu_stream_vs_local`` and ``match_cpu_unary_vs_local``: CPU per complete 4-seat Take 5 match of every
  process it takes (this one and the 4 bots), on the stream and on the unary calls, / CPU per match of the same
  bot class (``RandomBot``) played in this process with ``arena_sdk.play_game`` (no referee, no network). Target
  for the stream <= 20.
* ``referee_vs_echo`` (and every figure below without "stream"): the unary path (``RefereeOptions(match_stream=
  False)``). Refereed Take 5 decisions/s (complete 4-seat games between 4 ``sample:random`` processes:
  every turn asks the four seats at once, so at most 4 calls are in flight) / calls/s of a bare ``grpc.aio`` echo
  client with 4 calls in flight, one to each of 4 echo server processes (``bench_echo_server.py``: raw bytes, no
  protobuf, no application code). Target >= 0.7.
* ``referee_cpu_vs_echo``: CPU of this process (``time.process_time``: the referee runs in-process, with gRPC's
  own threads) per Decide call / CPU of this process per echo call. Target <= 1.3.
* ``bot_cpu_vs_echo``: CPU of the 4 bot processes per Decide call / CPU of the 4 echo server processes per echo
  call (utime + stime of ``/proc/<pid>/stat``). Target <= 1.3.
* ``referee_vs_barrier``, ``referee_cpu_vs_barrier``, ``bot_cpu_vs_barrier``: the same against an echo client
  that calls in rounds (4 calls at once, the next 4 when all have answered: the shape of a simultaneous turn, with
  nothing between rounds). The part of the gap to the plain echo that the rounds themselves cost (idle gaps that
  put the gRPC threads to sleep and wake them, the slowest of 4 setting the pace) is no referee or SDK code.
* ``referee_cpu_vs_paced`` and ``bot_cpu_vs_paced``: the referee's and the bots' CPU per decision against the echo
  client's and servers' CPU per call with the echo paced to the referee's decisions/s (``bench_floor``): gRPC's
  CPU per call grows as the call rate falls (every call wakes threads that a busier process keeps awake), and the
  echo above runs about twice as fast as the referee, so these are the ratios at equal rates. Beside them, the
  referee's and the SDK's CPU per decision without any gRPC (``bench_floor.inprocess_phase``: the same games, the
  bots in process) and how much of the measured CPU the sum "paced echo + own work" explains.
* ``queued_vs_direct_c1`` / ``_c4``: matches/s of trivial matches (4-seat Take 5, one hand, the same 4 random
  bots) through the Redis queue (a worker of concurrency 1 or 4, running for the whole repetition as an arena's
  worker does, claims, plays, stores and acknowledges each) / the same matches played directly with ``run_match``,
  1 or 4 at a time. Both in the steady state: a slice of n matches counts n - 1 matches from the first completion
  (settled, for the queue) to the last, so neither the enqueueing nor the first match's start (a cost per batch,
  not per match) counts. Target >= 0.95.
* ``queue_cpu_ms_c1`` / ``_c4``: CPU per queued match minus CPU per direct match (all processes, ms): what the queue
  itself costs per match. Target <= 1.5 ms. A difference of two totals of about 45 ms each: on a loaded machine
  ``make bench-queue`` measures the queue's work alone as well (``tools/bench_queue.py``).
* ``direct_vs_queued_cpu_c4`` (and ``_c1``, in the JSON): CPU per match of every process it takes (this one, the
  4 bots, redis-server) played directly / queued. Four trivial matches at a time keep both cores of a 2-core machine
  busy, so the matches/s ratio at concurrency 4 can be no better than this CPU ratio: what the queue costs is the
  CPU of its Redis commands (redis-py and the server), the record's packing and the thread hops, on the same cores.
* ``take5_hands_per_s`` / ``taki_games_per_s``: engine speed, 4 seats, random legal players, per CPU second of
  this process (one thread).

Every refereed match (referee, direct and queued) leases its channels to the bots from one pool
(``arena.match.channels``), as the matches of a worker process do: one HTTP/2 connection per bot for the whole run.

Usage: python tools/bench_ratios.py [--reps 5] [--seconds 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_echo_server import METHOD as ECHO_METHOD  # noqa: E402
from bench_echo_server import STREAM_METHOD as ECHO_STREAM_METHOD  # noqa: E402
from bench_floor import InProcessBots, inprocess_phase, paced_echo_phase  # noqa: E402
from bench_taki import bench as bench_taki  # noqa: E402

from arena.core.gc_tuning import tune_for_matches  # noqa: E402
from arena.core.specs import MatchSpec  # noqa: E402
from arena.match.channels import BotChannels  # noqa: E402
from arena.match.local_bots import BotProcess, started_bots  # noqa: E402
from arena.match.record import SeatSpec  # noqa: E402
from arena.match.referee import RefereeOptions, run_match
from arena.store import Store  # noqa: E402
from arena.store.redis_server import PrivateRedis  # noqa: E402
from arena.worker import job as match_job
from arena.worker import loop as scheduler  # noqa: E402
from arena.worker.settings import WorkerSettings  # noqa: E402
from arena_sdk import play_game  # noqa: E402
from arena_sdk.games import take5  # noqa: E402
from arena_sdk.games.take5 import wire as take5_wire  # noqa: E402
from arena_sdk.games.taki.state import TakiConfig  # noqa: E402
from arena_sdk.pb import bot_pb2  # noqa: E402
from sample_bots.random_bot import RandomBot  # noqa: E402

GAME = "take5"
SEATS = 4
ECHO_PAYLOAD = bytes(200)  # about a serialised DecideRequest
CLK_TCK = os.sysconf("SC_CLK_TCK")
TRIVIAL = {"limit": 1}  # a trivial match: one hand
BOT_START_S = 120.0  # a loaded shared machine can take long to start 4 Python processes
SLICES = 4  # alternations of the two sides of a ratio within one repetition
UNARY = RefereeOptions(match_stream=False)  # the referee's unary path (StartMatch, Decide, EndMatch)
STREAM = RefereeOptions()  # the match stream (bots that serve it: the SDK's)


def decide_requests(num_players: int, count: int) -> list[bot_pb2.DecideRequest]:
    """Real card-choice requests of seat 0 from random games (varied hands and rows)."""
    rnd = random.Random(7)
    requests: list[bot_pb2.DecideRequest] = []
    while len(requests) < count:
        state = take5.new_game(num_players, seed=rnd.randrange(2**32))
        while not take5.is_over(state) and len(requests) < count:
            if take5.decision_kind(state, 0) == take5.CHOOSE_CARD:
                requests.append(bot_pb2.DecideRequest(
                    match_id="bench", seat=0, kind=bot_pb2.TAKE5_CHOOSE_CARD,
                    take5=take5_wire.view_to_proto(take5.observe(state, 0))))
            for seat in take5.pending_seats(state):
                state = take5.apply(state, seat, rnd.choice(take5.legal_actions(state, seat)))
    return requests


# the streaming echo's messages: real DecideRequests as the referee sends them on the stream (RefereeMessage)
STREAM_PAYLOADS = [bot_pb2.RefereeMessage(decide=r, deadline_ms=1000).SerializeToString()
                   for r in decide_requests(SEATS, 200)]


def proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system, every thread) used so far by process ``pid`` (``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2:].split()  # after "pid (comm) ": state is fields[0]; utime, stime 11, 12
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_of(pids: Sequence[int]) -> float:
    return sum(proc_cpu_s(p) for p in pids)


@dataclass
class EchoServers:
    """Echo server processes (``bench_echo_server.py``), or other servers of ``tools`` that print ``ready`` and
    their address once they listen (``bench_protocol_bot.py``)."""

    processes: list[subprocess.Popen] = field(default_factory=list)
    endpoints: list[str] = field(default_factory=list)
    script: str = "bench_echo_server.py"
    ready: str = "echo listening on "

    def start(self, count: int) -> None:
        for _ in range(count):
            p = subprocess.Popen([sys.executable, "-u", str(ROOT / "tools" / self.script)],
                                 stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
            self.processes.append(p)
        for p in self.processes:
            assert p.stdout is not None
            line = p.stdout.readline()
            if not line.startswith(self.ready):
                raise RuntimeError(f"{self.script} did not start: {line!r}")
            self.endpoints.append(line.split()[-1])

    def stop(self) -> None:
        for p in self.processes:
            p.terminate()
        for p in self.processes:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]


async def echo_phase(endpoints: Sequence[str], server_pids: Sequence[int], seconds: float,
                     barrier: bool = False) -> dict[str, float]:
    """A grpc.aio client keeping one call in flight to each endpoint for ``seconds``: calls, wall seconds, CPU
    seconds of this process and of the servers. ``barrier``: in rounds instead, one call to each endpoint at
    once and the next round when all have answered (the shape of a simultaneous Take 5 turn, with no referee
    work between rounds)."""
    channels = [grpc.aio.insecure_channel(e) for e in endpoints]
    try:
        calls = [c.unary_unary(ECHO_METHOD) for c in channels]
        for call in calls:  # connected and warm before the clock starts
            await call(ECHO_PAYLOAD, timeout=5)
        cpu0, srv0, t0 = time.process_time(), cpu_of(server_pids), time.perf_counter()
        end = t0 + seconds

        async def lane(call: Any) -> int:
            n = 0
            while time.perf_counter() < end:
                await call(ECHO_PAYLOAD, timeout=5)
                n += 1
            return n

        async def rounds() -> int:
            n = 0
            while time.perf_counter() < end:
                in_flight = [call(ECHO_PAYLOAD, timeout=5) for call in calls]
                for c in in_flight:
                    await c
                n += len(in_flight)
            return n

        n = await rounds() if barrier else sum(await asyncio.gather(*(lane(c) for c in calls)))
        wall, cpu, srv = time.perf_counter() - t0, time.process_time() - cpu0, cpu_of(server_pids) - srv0
    finally:
        for c in channels:
            await c.close()
    return {"calls": n, "wall": wall, "cpu": cpu, "peer_cpu": srv}


@contextlib.asynccontextmanager
async def echo_streams(endpoints: Sequence[str]) -> AsyncIterator[list[Any]]:
    """One bidirectional stream to the streaming echo at each endpoint, connected and warm (one message through each)
    before the caller's clock starts; ended and closed after."""
    channels = [grpc.aio.insecure_channel(e) for e in endpoints]
    try:
        streams = [c.stream_stream(ECHO_STREAM_METHOD)() for c in channels]
        for stream in streams:
            await stream.write(STREAM_PAYLOADS[0])
            await stream.read()
        yield streams
        for stream in streams:
            await stream.done_writing()
    finally:
        for c in channels:
            await c.close()


async def stream_echo_phase(endpoints: Sequence[str], server_pids: Sequence[int], seconds: float) -> dict[str, float]:
    """A grpc.aio client with one bidirectional stream to each endpoint, one message in flight on each (write, then
    read the echo), for ``seconds``; the messages are real DecideRequests (``STREAM_PAYLOADS``): messages, wall
    seconds, CPU seconds of this process and of the servers."""
    async with echo_streams(endpoints) as streams:
        cpu0, srv0, t0 = time.process_time(), cpu_of(server_pids), time.perf_counter()
        end = t0 + seconds

        async def lane(stream: Any, start: int) -> int:
            n = 0
            payloads = STREAM_PAYLOADS
            while time.perf_counter() < end:
                await stream.write(payloads[(start + n) % len(payloads)])
                await stream.read()
                n += 1
            return n

        n = sum(await asyncio.gather(*(lane(s, 50 * i) for i, s in enumerate(streams))))
        wall, cpu, srv = time.perf_counter() - t0, time.process_time() - cpu0, cpu_of(server_pids) - srv0
    return {"calls": n, "wall": wall, "cpu": cpu, "peer_cpu": srv}


async def paced_stream_phase(endpoints: Sequence[str], server_pids: Sequence[int], messages_per_s: float,
                             seconds: float) -> dict[str, float]:
    """The streaming echo in rounds (one message on each stream, then every echo read), paced to ``messages_per_s``
    in all (the referee's decisions/s on the stream), for ``seconds``: the floor at the referee's rate and shape."""
    async with echo_streams(endpoints) as streams:
        loop = asyncio.get_running_loop()
        interval = len(streams) / messages_per_s
        cpu0, srv0, t0 = time.process_time(), cpu_of(server_pids), time.perf_counter()
        end = t0 + seconds
        n = 0
        next_round = loop.time()
        while time.perf_counter() < end:
            for i, stream in enumerate(streams):
                await stream.write(STREAM_PAYLOADS[(n + 50 * i) % len(STREAM_PAYLOADS)])
            for stream in streams:
                await stream.read()
            n += len(streams)
            next_round = max(next_round + interval, loop.time())
            await asyncio.sleep(next_round - loop.time())
        wall, cpu, srv = time.perf_counter() - t0, time.process_time() - cpu0, cpu_of(server_pids) - srv0
    return {"calls": n, "wall": wall, "cpu": cpu, "peer_cpu": srv}


def inprocess_matches_phase(seconds: float) -> dict[str, float]:
    """Complete 4-seat Take 5 games between ``RandomBot`` objects with ``arena_sdk.play_game`` (no network, no
    referee process), for ``seconds`` (at least one): games and CPU seconds of this process."""
    cpu0, t0 = time.process_time(), time.perf_counter()
    games = 0
    while not games or time.perf_counter() - t0 < seconds:
        play_game([RandomBot() for _ in range(SEATS)], seed=random.getrandbits(32), game=GAME,
                  match_id=f"local-{games}")
        games += 1
    return {"games": games, "cpu": time.process_time() - cpu0}


async def paced_phase(endpoints: Sequence[str], server_pids: Sequence[int], calls_per_s: float,
                      seconds: float) -> dict[str, float]:
    """``bench_floor.paced_echo_phase`` on fresh channels to the echo servers (connected before the clock starts)."""
    channels = [grpc.aio.insecure_channel(e) for e in endpoints]
    try:
        calls = [c.unary_unary(ECHO_METHOD) for c in channels]
        for call in calls:
            await call(ECHO_PAYLOAD, timeout=5)
        return await paced_echo_phase(calls, ECHO_PAYLOAD, calls_per_s, seconds, lambda: cpu_of(server_pids))
    finally:
        for c in channels:
            await c.close()


async def referee_phase(seats: Sequence[SeatSpec], bot_pids: Sequence[int], seconds: float,
                        tag: str, pool: BotChannels, options: RefereeOptions = UNARY) -> dict[str, float]:
    """Complete 4-seat Take 5 games (to 66) through the referee (``options``: the unary path or the match stream),
    back to back, until ``seconds`` have passed (at least one), on the channels of ``pool`` (as a worker's matches):
    Decide calls, wall seconds, CPU seconds of this process and of the bots, matches."""
    cpu0, bots0, t0 = time.process_time(), cpu_of(bot_pids), time.perf_counter()
    calls = faults = matches = 0
    while not matches or time.perf_counter() - t0 < seconds:
        record = await run_match(f"{tag}-{matches}", GAME, seats, seed=random.getrandbits(32), channels=pool,
                                 options=options)
        calls += sum(1 + d.get("retries", 0) for d in record.decisions if d["latency_ms"] is not None)
        faults += len(record.faults)
        matches += 1
    wall, cpu, bots = time.perf_counter() - t0, time.process_time() - cpu0, cpu_of(bot_pids) - bots0
    return {"calls": calls, "wall": wall, "cpu": cpu, "peer_cpu": bots, "faults": faults, "matches": matches}


def steady_seconds(ends: Sequence[float]) -> float:
    """Seconds from the first of ``ends`` (completion times) to the last: the time ``len(ends) - 1`` matches take
    in the steady state, without the time to fill the pipeline (the first match) or to enqueue."""
    return max(ends) - min(ends)


async def direct_phase(seats: Sequence[SeatSpec], n: int, concurrency: int, tag: str, pool: BotChannels) -> float:
    """``steady_seconds`` of ``n`` trivial matches played with ``run_match``, ``concurrency`` at a time, on the
    channels of ``pool``."""
    config = take5.Take5Config(**TRIVIAL)
    todo = iter(range(n))
    ends: list[float] = []

    async def lane() -> None:
        for i in todo:
            await run_match(f"{tag}-{i:04d}", GAME, seats, config, seed=i, channels=pool)
            ends.append(time.perf_counter())

    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return steady_seconds(ends)


class QueueWorker:
    """One worker (``scheduler.worker_loop`` of ``concurrency``, in this event loop, its matches on the channels
    of ``pool``) that runs for the whole of a repetition's queued slices, as a worker of the arena does: started
    (and its start-up checks done) before the first slice is timed, idle between slices. ``batch`` enqueues
    trivial matches and waits until every one is settled."""

    def __init__(self, store: Store, bot_ids: Sequence[str], concurrency: int, tag: str, pool: BotChannels) -> None:
        self.store, self.bot_ids, self.concurrency, self.tag, self.pool = store, bot_ids, concurrency, tag, pool
        self.settled: list[str] = []
        self.ends: list[float] = []  # when each job of the current batch was settled
        self.wanted = 0
        self.done = asyncio.Event()
        self.stop = threading.Event()
        self.task: asyncio.Task[None] | None = None
        self._run_job = match_job.run_job

    async def __aenter__(self) -> QueueWorker:
        run_job = self._run_job

        async def counted(*args: Any, **kwargs: Any) -> str:
            outcome = await run_job(*args, **kwargs)
            self.settled.append(outcome)
            self.ends.append(time.perf_counter())
            if len(self.settled) >= self.wanted:
                self.done.set()
            return outcome

        match_job.run_job = counted  # type: ignore[assignment]
        self.task = asyncio.create_task(scheduler.worker_loop(
            self.store, f"bench-{self.tag}", self.stop, WorkerSettings(concurrency=self.concurrency, block_ms=50),
            channels=self.pool))
        await self.batch(self.concurrency, "warm")  # its start-up (group, bot checks, first claims) is done
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.stop.set()
        try:
            assert self.task is not None
            await self.task
        finally:
            match_job.run_job = self._run_job  # type: ignore[assignment]

    async def batch(self, n: int, tag: str) -> float:
        """Enqueue ``n`` trivial matches, wait until every one is settled (stored and acknowledged) and return the
        ``steady_seconds`` of their settling. Raises ``RuntimeError`` when a match was not stored."""
        specs = [MatchSpec(match_id=f"{self.tag}-{tag}-{i:04d}", game=GAME, seats=tuple(self.bot_ids), seed=i,
                           config=dict(TRIVIAL)) for i in range(n)]
        self.settled, self.ends, self.wanted = [], [], n
        self.done.clear()
        await asyncio.to_thread(self.store.enqueue, specs)
        await self.done.wait()
        if self.settled.count("stored") != n:
            raise RuntimeError(f"queued matches: expected {n} stored, got {self.settled}")
        return steady_seconds(self.ends)


async def queue_slices(store: Store, bot_ids: Sequence[str], seats: Sequence[SeatSpec], pids: Sequence[int], rep: int,
                       matches_c1: int, matches_c4: int, pool: BotChannels,
                       profile: cProfile.Profile | None = None) -> dict[str, float]:
    """One repetition's direct and queued slices (ABBA order) at concurrency 1 and 4: per side and concurrency the
    steady seconds, matches counted, CPU (this process + ``pids``, s) and matches played, summed over the slices.
    ``profile`` (when given) runs during the queued slices only."""
    q: dict[str, float] = {}
    for c, n in ((1, matches_c1), (4, matches_c4)):
        chunk = max(2 * c + 1, n // SLICES)
        async with QueueWorker(store, bot_ids, c, f"q{c}-{rep}", pool) as queue:
            for i in range(SLICES):
                for side in ("direct", "queued")[::1 if i % 2 == 0 else -1]:
                    cpu0 = time.process_time() + cpu_of(pids)
                    if side == "direct":
                        elapsed = await direct_phase(seats, chunk, c, f"d{c}-{rep}-{i}", pool)
                    else:
                        if profile is not None:
                            profile.enable()
                        elapsed = await queue.batch(chunk, str(i))
                        if profile is not None:
                            profile.disable()
                    cpu = time.process_time() + cpu_of(pids) - cpu0
                    _add(q, {f"{side}_c{c}": elapsed, f"{side}_c{c}_matches": chunk - 1,
                             f"{side}_c{c}_cpu": cpu, f"{side}_c{c}_played": chunk})
    return q


def engine_phase(seconds: float) -> dict[str, float]:
    """Take 5 hands and Taki games (4 seats, random legal players) per CPU second of this process (one thread;
    steadier than wall time on a shared machine)."""
    rnd = random.Random(1)
    config = take5.Take5Config(limit=1)
    hands = 0
    t0, cpu0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        state = take5.new_game(SEATS, config, seed=rnd.randrange(2**32))
        while not take5.is_over(state):
            for seat in take5.pending_seats(state):
                state = take5.apply(state, seat, rnd.choice(take5.legal_actions(state, seat)))
        hands += 1
    take5_rate = hands / (time.process_time() - cpu0)
    taki = bench_taki(SEATS, seconds, TakiConfig(), uniform=False)
    return {"take5_hands_per_s": take5_rate, "taki_games_per_s": taki["games_per_cpu_s"]}


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    unit: str
    target: str = ""
    digits: int = 2


REPORT = (
    Figure("stream_vs_stream_echo", "stream: decisions/s / streaming echo messages/s (4 in flight)", "ratio",
           ">= 0.7"),
    Figure("stream_decisions_per_s", "  referee decisions/s on the match stream", "1/s", digits=0),
    Figure("stream_echo_per_s", "  streaming echo messages/s", "1/s", digits=0),
    Figure("stream_cpu_vs_stream_echo", "stream: referee CPU per decision / streaming echo client CPU", "ratio",
           "<= 1.3"),
    Figure("stream_cpu_us", "  referee CPU per decision on the match stream", "us", digits=0),
    Figure("stream_echo_client_cpu_us", "  streaming echo client CPU per message", "us", digits=0),
    Figure("stream_bot_cpu_vs_stream_echo", "stream: bot CPU per decision / streaming echo server CPU", "ratio",
           "<= 1.3"),
    Figure("stream_bot_cpu_us", "  sample:random CPU per decision on the match stream", "us", digits=0),
    Figure("stream_echo_server_cpu_us", "  streaming echo server CPU per message", "us", digits=0),
    Figure("stream_cpu_vs_paced", "stream: referee CPU / echo client CPU, rounds at its rate", "ratio"),
    Figure("stream_paced_client_cpu_us", "  streaming echo client CPU per message, rounds, paced", "us", digits=0),
    Figure("stream_bot_cpu_vs_paced", "stream: bot CPU / echo server CPU, rounds at its rate", "ratio"),
    Figure("stream_paced_server_cpu_us", "  streaming echo server CPU per message, rounds, paced", "us", digits=0),
    Figure("stream_bot_cpu_vs_protocol", "stream: bot CPU / protocol-only bot CPU (the SDK's own share)", "ratio"),
    Figure("protocol_bot_cpu_us", "  protocol-only bot CPU per decision (no SDK)", "us", digits=0),
    Figure("protocol_bot_cpu_vs_paced", "  protocol-only bot CPU / echo server CPU, rounds at its rate", "ratio"),
    Figure("match_cpu_stream_vs_local", "CPU per match, stream / in process (play_game)", "ratio", "<= 20"),
    Figure("match_cpu_unary_vs_local", "CPU per match, unary / in process (play_game)", "ratio"),
    Figure("match_cpu_ms_stream", "  CPU per 4-seat match, all processes, match stream", "ms", digits=1),
    Figure("match_cpu_ms_unary", "  CPU per 4-seat match, all processes, unary calls", "ms", digits=1),
    Figure("match_cpu_ms_local", "  CPU per 4-seat match in process (play_game, 4 RandomBots)", "ms", digits=2),
    Figure("referee_vs_echo", "unary: referee decisions/s / echo calls/s (4 in flight)", "ratio", ">= 0.7"),
    Figure("referee_decisions_per_s", "  referee decisions/s", "1/s", digits=0),
    Figure("echo_calls_per_s", "  echo calls/s", "1/s", digits=0),
    Figure("referee_cpu_vs_echo", "unary: referee CPU per decision / echo client CPU per call", "ratio", "<= 1.3"),
    Figure("referee_cpu_us", "  referee CPU per decision", "us", digits=0),
    Figure("echo_client_cpu_us", "  echo client CPU per call", "us", digits=0),
    Figure("bot_cpu_vs_echo", "unary: bot CPU per decision / echo server CPU per call", "ratio", "<= 1.3"),
    Figure("bot_cpu_us", "  sample:random CPU per decision", "us", digits=0),
    Figure("echo_server_cpu_us", "  echo server CPU per call", "us", digits=0),
    Figure("referee_vs_barrier", "referee decisions/s / echo in rounds of 4 calls/s", "ratio"),
    Figure("barrier_calls_per_s", "  echo in rounds of 4 (wait for all, then 4 more) calls/s", "1/s", digits=0),
    Figure("referee_cpu_vs_barrier", "referee CPU per decision / echo-in-rounds client CPU", "ratio"),
    Figure("barrier_client_cpu_us", "  echo-in-rounds client CPU per call", "us", digits=0),
    Figure("bot_cpu_vs_barrier", "bot CPU per decision / echo-in-rounds server CPU", "ratio"),
    Figure("barrier_server_cpu_us", "  echo-in-rounds server CPU per call", "us", digits=0),
    Figure("referee_cpu_vs_paced", "referee CPU per decision / echo client CPU at the referee's rate", "ratio"),
    Figure("paced_client_cpu_us", "  echo client CPU per call, paced to the referee's calls/s", "us", digits=0),
    Figure("paced_calls_per_s", "  paced echo calls/s (the referee's decisions/s)", "1/s", digits=0),
    Figure("referee_own_cpu_us", "  referee CPU per decision without gRPC (bots in process)", "us", digits=0),
    Figure("referee_explained", "  (paced echo client + referee without gRPC) / referee", "ratio"),
    Figure("bot_cpu_vs_paced", "bot CPU per decision / echo server CPU at the referee's rate", "ratio"),
    Figure("paced_server_cpu_us", "  echo server CPU per call, paced to the referee's calls/s", "us", digits=0),
    Figure("sdk_cpu_us", "  SDK CPU per decision without gRPC (Decide handler in process)", "us", digits=0),
    Figure("bot_explained", "  (paced echo server + SDK without gRPC) / bot", "ratio"),
    Figure("queued_vs_direct_c1", "queued / direct matches/s, concurrency 1", "ratio", ">= 0.95"),
    Figure("queued_c1", "  queued matches/s, concurrency 1", "1/s", digits=1),
    Figure("direct_c1", "  direct matches/s, concurrency 1", "1/s", digits=1),
    Figure("queued_vs_direct_c4", "queued / direct matches/s, concurrency 4", "ratio", ">= 0.95"),
    Figure("queued_c4", "  queued matches/s, concurrency 4", "1/s", digits=1),
    Figure("direct_c4", "  direct matches/s, concurrency 4", "1/s", digits=1),
    Figure("queue_cpu_ms_c1", "queue CPU per match beyond a direct one, c1 (all processes)", "ms", "<= 1.5"),
    Figure("queue_cpu_ms_c4", "queue CPU per match beyond a direct one, c4 (all processes)", "ms"),
    Figure("direct_vs_queued_cpu_c4", "direct / queued CPU per match, c4 (ceiling when CPU-bound)", "ratio"),
    Figure("direct_cpu_ms_c4", "  CPU per direct match (this process + bots + redis-server)", "ms", digits=1),
    Figure("queued_cpu_ms_c4", "  CPU per queued match (the same processes)", "ms", digits=1),
    Figure("take5_hands_per_s", "engine: Take 5 hands/s (4 seats)", "1/s", digits=0),
    Figure("taki_games_per_s", "engine: Taki games/s (4 seats)", "1/s", digits=0),
)


def summarise(reps: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Median, min and max of every figure over the repetitions."""
    out = {}
    for key in reps[0]:
        values = [r[key] for r in reps]
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}
    return out


def print_ratios(summary: dict[str, dict[str, float]], commit: str = "") -> None:
    n = next(iter(summary.values()))["n"]
    sys.stdout.flush()
    print(f"Ratios (median of {n} interleaved repetitions, min..max){' at ' + commit if commit else ''}")
    print(f"  {'figure':<62} {'median':>9} {'min':>9} {'max':>9}  target")
    for f in REPORT:
        s = summary.get(f.key)
        if s is None:
            continue
        fmt = f"{{:>9.{f.digits}f}}"
        print(f"  {f.label:<62} {fmt.format(s['median'])} {fmt.format(s['min'])} {fmt.format(s['max'])}  "
              f"{f.target or f.unit}", flush=True)


def registered_bots(stack: ExitStack, tmp: Path) -> tuple[list[BotProcess], Store, list[str], list[SeatSpec]]:
    """``SEATS`` ``sample:random`` processes registered (as ``bench<i>@1.0``) on a private redis-server in ``tmp``,
    all stopped by ``stack``: (the bots, the store, their bot ids, their seats)."""
    bots = stack.enter_context(started_bots(["sample:random"] * SEATS, timeout=BOT_START_S))
    redis_server = stack.enter_context(PrivateRedis(tmp))
    store = Store.from_url(redis_server.url)
    stack.callback(store.close)
    bot_ids = []
    for i, b in enumerate(bots):
        store.register_bot(GAME, f"bench{i}", b.endpoint, version="1.0")
        bot_ids.append(f"bench{i}@1.0")
    return bots, store, bot_ids, [SeatSpec(f"bench{i}@1.0", b.endpoint) for i, b in enumerate(bots)]


def measure(reps: int, seconds: float, matches_c1: int, matches_c4: int,
            progress: Callable[[str], None] = lambda s: None) -> list[dict[str, float]]:
    """Run the interleaved repetitions; one dict of figures per repetition. Sets the collector's thresholds of a
    worker process (``arena worker``, where matches run) in this process first."""
    tune_for_matches()
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        echo = EchoServers()
        stack.callback(echo.stop)
        echo.start(SEATS)
        protocol = EchoServers(script="bench_protocol_bot.py", ready="protocol-bot listening on ")
        stack.callback(protocol.stop)
        protocol.start(SEATS)
        bots, store, bot_ids, seats = registered_bots(stack, Path(tmp))
        bot_pids = [b.process.pid for b in bots]
        return asyncio.run(_measure(echo, seats, bot_pids, store, bot_ids, reps, seconds, matches_c1, matches_c4,
                                    progress, protocol))


def _add(total: dict[str, float], part: dict[str, float]) -> None:
    for k, v in part.items():
        total[k] = total.get(k, 0.0) + v


async def _measure(echo: EchoServers, seats: list[SeatSpec], bot_pids: list[int], store: Store, bot_ids: list[str],
                   reps: int, seconds: float, matches_c1: int, matches_c4: int,
                   progress: Callable[[str], None], protocol: EchoServers) -> list[dict[str, float]]:
    """Each repetition alternates its two sides in ``SLICES`` slices (ABBA order), so that a burst of load from
    other jobs falls on both sides of a ratio alike. Matches lease their channels to the bots from one pool, as
    the matches of a worker process do (``arena.match.channels``). ``protocol``: the protocol-only bots."""
    pool = BotChannels()
    try:
        return await _repetitions(echo, seats, bot_pids, store, bot_ids, reps, seconds, matches_c1, matches_c4,
                                  progress, pool, protocol)
    finally:
        await pool.close()


async def _repetitions(echo: EchoServers, seats: list[SeatSpec], bot_pids: list[int], store: Store,
                       bot_ids: list[str], reps: int, seconds: float, matches_c1: int, matches_c4: int,
                       progress: Callable[[str], None], pool: BotChannels,
                       protocol: EchoServers) -> list[dict[str, float]]:
    await referee_phase(seats, bot_pids, 0.2, "warm", pool)  # imports, first connections
    await referee_phase(seats, bot_pids, 0.2, "warm-stream", pool, STREAM)
    bare = [SeatSpec(f"protocol{i}@1.0", endpoint) for i, endpoint in enumerate(protocol.endpoints)]
    await referee_phase(bare, protocol.pids, 0.2, "warm-protocol", pool, STREAM)
    inprocess = InProcessBots(RandomBot)
    queue_pids = [*bot_pids, int(store.client.info("server")["process_id"])]  # the CPU a match costs, but ours
    out = []
    for rep in range(reps):
        e: dict[str, float] = {}
        b: dict[str, float] = {}
        r: dict[str, float] = {}
        p: dict[str, float] = {}
        se: dict[str, float] = {}
        sr: dict[str, float] = {}
        sp: dict[str, float] = {}
        pb: dict[str, float] = {}
        for i in range(SLICES):
            for side in ("echo", "stream_echo", "barrier", "referee", "stream")[::1 if i % 2 == 0 else -1]:
                if side == "stream_echo":
                    _add(se, await stream_echo_phase(echo.endpoints, echo.pids, seconds / SLICES))
                elif side == "stream":
                    part = await referee_phase(seats, bot_pids, seconds / SLICES, f"s{rep}-{i}", pool, STREAM)
                    _add(sr, part)  # then the streaming echo at this slice's rate, in rounds
                    _add(sp, await paced_stream_phase(echo.endpoints, echo.pids, part["calls"] / part["wall"],
                                                      seconds / SLICES / 2))
                    _add(pb, await referee_phase(bare, protocol.pids, seconds / SLICES / 2, f"p{rep}-{i}", pool,
                                                 STREAM))  # the same games, the bots without the SDK
                elif side == "echo":
                    _add(e, await echo_phase(echo.endpoints, echo.pids, seconds / SLICES))
                elif side == "barrier":
                    _add(b, await echo_phase(echo.endpoints, echo.pids, seconds / SLICES / 2, barrier=True))
                else:
                    part = await referee_phase(seats, bot_pids, seconds / SLICES, f"r{rep}-{i}", pool)
                    _add(r, part)  # then the echo at this slice's rate
                    _add(p, await paced_phase(echo.endpoints, echo.pids, part["calls"] / part["wall"],
                                              seconds / SLICES / 2))
        own = await inprocess_phase(inprocess, seconds / 3, f"i{rep}")
        local = inprocess_matches_phase(seconds / 4)
        q = await queue_slices(store, bot_ids, seats, queue_pids, rep, matches_c1, matches_c4, pool)
        eng = engine_phase(seconds / 6)
        figures = {
            "referee_decisions_per_s": r["calls"] / r["wall"], "echo_calls_per_s": e["calls"] / e["wall"],
            "referee_cpu_us": r["cpu"] / r["calls"] * 1e6, "echo_client_cpu_us": e["cpu"] / e["calls"] * 1e6,
            "bot_cpu_us": r["peer_cpu"] / r["calls"] * 1e6, "echo_server_cpu_us": e["peer_cpu"] / e["calls"] * 1e6,
            "referee_faults": r["faults"],
            "barrier_calls_per_s": b["calls"] / b["wall"], "barrier_client_cpu_us": b["cpu"] / b["calls"] * 1e6,
            "barrier_server_cpu_us": b["peer_cpu"] / b["calls"] * 1e6,
        }
        for c in (1, 4):
            figures[f"direct_c{c}"] = q[f"direct_c{c}_matches"] / q[f"direct_c{c}"]
            figures[f"queued_c{c}"] = q[f"queued_c{c}_matches"] / q[f"queued_c{c}"]
            figures[f"queued_vs_direct_c{c}"] = figures[f"queued_c{c}"] / figures[f"direct_c{c}"]
            for side in ("direct", "queued"):
                figures[f"{side}_cpu_ms_c{c}"] = q[f"{side}_c{c}_cpu"] / q[f"{side}_c{c}_played"] * 1e3
            figures[f"direct_vs_queued_cpu_c{c}"] = figures[f"direct_cpu_ms_c{c}"] / figures[f"queued_cpu_ms_c{c}"]
            figures[f"queue_cpu_ms_c{c}"] = figures[f"queued_cpu_ms_c{c}"] - figures[f"direct_cpu_ms_c{c}"]
        figures.update({
            "stream_decisions_per_s": sr["calls"] / sr["wall"], "stream_echo_per_s": se["calls"] / se["wall"],
            "stream_cpu_us": sr["cpu"] / sr["calls"] * 1e6, "stream_echo_client_cpu_us": se["cpu"] / se["calls"] * 1e6,
            "stream_bot_cpu_us": sr["peer_cpu"] / sr["calls"] * 1e6,
            "stream_echo_server_cpu_us": se["peer_cpu"] / se["calls"] * 1e6, "stream_faults": sr["faults"],
            "match_cpu_ms_stream": (sr["cpu"] + sr["peer_cpu"]) / sr["matches"] * 1e3,
            "match_cpu_ms_unary": (r["cpu"] + r["peer_cpu"]) / r["matches"] * 1e3,
            "match_cpu_ms_local": local["cpu"] / local["games"] * 1e3,
        })
        figures["stream_paced_client_cpu_us"] = sp["cpu"] / sp["calls"] * 1e6
        figures["stream_paced_server_cpu_us"] = sp["peer_cpu"] / sp["calls"] * 1e6
        figures["stream_cpu_vs_paced"] = figures["stream_cpu_us"] / figures["stream_paced_client_cpu_us"]
        figures["stream_bot_cpu_vs_paced"] = figures["stream_bot_cpu_us"] / figures["stream_paced_server_cpu_us"]
        figures["protocol_bot_cpu_us"] = pb["peer_cpu"] / pb["calls"] * 1e6
        figures["stream_bot_cpu_vs_protocol"] = figures["stream_bot_cpu_us"] / figures["protocol_bot_cpu_us"]
        figures["protocol_bot_cpu_vs_paced"] = figures["protocol_bot_cpu_us"] / figures["stream_paced_server_cpu_us"]
        figures["stream_vs_stream_echo"] = figures["stream_decisions_per_s"] / figures["stream_echo_per_s"]
        figures["stream_cpu_vs_stream_echo"] = figures["stream_cpu_us"] / figures["stream_echo_client_cpu_us"]
        figures["stream_bot_cpu_vs_stream_echo"] = (figures["stream_bot_cpu_us"]
                                                    / figures["stream_echo_server_cpu_us"])
        figures["match_cpu_stream_vs_local"] = figures["match_cpu_ms_stream"] / figures["match_cpu_ms_local"]
        figures["match_cpu_unary_vs_local"] = figures["match_cpu_ms_unary"] / figures["match_cpu_ms_local"]
        figures["referee_vs_echo"] = figures["referee_decisions_per_s"] / figures["echo_calls_per_s"]
        figures["referee_cpu_vs_echo"] = figures["referee_cpu_us"] / figures["echo_client_cpu_us"]
        figures["bot_cpu_vs_echo"] = figures["bot_cpu_us"] / figures["echo_server_cpu_us"]
        figures["referee_vs_barrier"] = figures["referee_decisions_per_s"] / figures["barrier_calls_per_s"]
        figures["referee_cpu_vs_barrier"] = figures["referee_cpu_us"] / figures["barrier_client_cpu_us"]
        figures["bot_cpu_vs_barrier"] = figures["bot_cpu_us"] / figures["barrier_server_cpu_us"]
        figures.update({
            "paced_calls_per_s": p["calls"] / p["wall"], "paced_client_cpu_us": p["cpu"] / p["calls"] * 1e6,
            "paced_server_cpu_us": p["peer_cpu"] / p["calls"] * 1e6,
            "referee_own_cpu_us": (own["cpu"] - own["sdk_cpu"]) / own["calls"] * 1e6,
            "sdk_cpu_us": own["sdk_cpu"] / own["calls"] * 1e6,
        })
        figures["referee_cpu_vs_paced"] = figures["referee_cpu_us"] / figures["paced_client_cpu_us"]
        figures["bot_cpu_vs_paced"] = figures["bot_cpu_us"] / figures["paced_server_cpu_us"]
        figures["referee_explained"] = ((figures["paced_client_cpu_us"] + figures["referee_own_cpu_us"])
                                        / figures["referee_cpu_us"])
        figures["bot_explained"] = (figures["paced_server_cpu_us"] + figures["sdk_cpu_us"]) / figures["bot_cpu_us"]
        figures.update(eng)
        out.append(figures)
        f = figures
        progress(f"repetition {rep + 1}/{reps}: stream {f['stream_vs_stream_echo']:.2f}, "
                 f"CPU {f['stream_cpu_vs_stream_echo']:.2f}, bot CPU {f['stream_bot_cpu_vs_stream_echo']:.2f}, "
                 f"match CPU x{f['match_cpu_stream_vs_local']:.1f} (unary x{f['match_cpu_unary_vs_local']:.1f}); "
                 f"unary referee/echo {figures['referee_vs_echo']:.2f}, "
                 f"CPU {figures['referee_cpu_vs_echo']:.2f}, bot CPU {figures['bot_cpu_vs_echo']:.2f}, "
                 f"queued/direct {figures['queued_vs_direct_c1']:.2f} / {figures['queued_vs_direct_c4']:.2f}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions (default 5)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of echo and of referee per repetition")
    parser.add_argument("--matches", type=int, default=40, help="trivial matches per repetition, queued and "
                        "direct each, at concurrency 1 (twice as many at 4), in 4 slices")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    reps = measure(args.reps, args.seconds, args.matches, 2 * args.matches,
                   progress=lambda s: print(s, file=sys.stderr, flush=True))
    summary = summarise(reps)
    if args.json:
        print(json.dumps({"summary": summary, "repetitions": reps}, indent=2))
    else:
        print_ratios(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
