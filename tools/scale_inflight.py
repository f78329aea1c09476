"""Matches in flight on one worker process (``make scale-inflight``): a script that measures and prints, never a test.

Setup, all real processes on this machine:

* a private ``redis-server`` (``arena.store.redis_server.PrivateRedis``) in a temporary folder, emptied per step;
* ``--bots`` (4) processes of ``tools/scale_think_bot.py``, each answering every decision with a random legal
  action after ``--think-ms`` (500) ms of sleep, served with ``--bot-threads`` threads (default: twice the seats it
  plays at the largest step, plus 64, since a bot without a secret serves one address with half its threads: a bot
  process is never short of threads; ``--bot-threads 32`` shows the SDK's old default);
* this process is the worker: ``arena.worker.loop.run_loops`` (what ``arena worker`` runs) with one worker of
  concurrency N in this process's one event loop, its matches queued on the Redis Stream as a tournament's are:
  4-seat Take 5 hands (``limit=1``), a Decide deadline of ``--deadline-ms`` (2000) ms.

Per step N (``--inflight``, default 50,100,200,400,800): enough matches are queued to keep N in flight; after a
warm-up of ``--warmup`` seconds (every slot filled, the first matches under way), a window of ``--window`` seconds
is measured, then the worker stops (running matches drain). Printed per step:

* decisions/s in the window (each match's decisions spread evenly over its wall time, counted by overlap), and the
  ideal: N x the decisions per second of think time of the same matches (a match's rounds, i.e. its distinct
  (hand, turn, kind) asks, each taking one think time, all seats of a round asked at once), and their ratio;
* the event loop's lag p50 / p99, ms (a task asking to sleep 10 ms, and how late it wakes), in the window;
* faults and forfeits charged in the matches overlapping the window (a bot that only sleeps deserves none);
* CPU in the window, % of one core: this worker process, the bot processes together, redis-server;
* where the ratio goes: "occupied", the matches playing in the window on average / N (below 1: slots waiting
  between a match's end and the next match's start), and "round", the wall time per round of the matches that
  ended in the window (the think time when nothing else costs). ratio ~ occupied x think time / round.

``--size quick`` (the default of ``make scale-inflight SIZE=quick``) measures 50,200,400 with short windows.

Usage: python tools/scale_inflight.py [--inflight 50,100,200,400,800] [--think-ms 500] [--deadline-ms 2000]
                                      [--window 20] [--warmup 25] [--bots 4] [--bot-threads N] [--size full|quick]
                                      [--profile FILE] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import arena.match.referee as referee  # noqa: E402
from arena.core.gc_tuning import tune_for_matches  # noqa: E402
from arena.core.specs import MatchSpec  # noqa: E402
from arena.match.local_bots import BotProcess, start_bots  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.store.redis_server import PrivateRedis  # noqa: E402
from arena.worker import loop as scheduler  # noqa: E402
from arena.worker.settings import WorkerSettings  # noqa: E402
from arena_sdk.server import PEER_SHARE_DIVISOR  # noqa: E402

GAME = "take5"
SEATS = 4
HAND = {"limit": 1}  # one hand of Take 5 per match: about 11 rounds of asks
CLK_TCK = os.sysconf("SC_CLK_TCK")
LAG_TICK_S = 0.01
THINK_BOT = str(ROOT / "tools" / "scale_think_bot.py")
# the warm-up: a worker starts at most 32 matches at once and one more with every match that ends well
# (arena.worker.admission.TimeoutBrake), about doubling per match length (5 s here): 800 in flight takes ~25 s
SIZES = {"full": ("50,100,200,400,800", 20.0, 25.0), "quick": ("50,200,400", 10.0, 20.0)}


def proc_cpu_s(pid: int) -> float:
    """utime + stime of process ``pid``, seconds (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


@dataclass
class Played:
    """One match as the worker played it: wall start and end (perf_counter s), decisions, rounds, faults."""

    start: float
    end: float
    decisions: int
    rounds: int
    faults: int
    forfeits: int
    fault_kinds: tuple[str, ...] = ()


@dataclass
class Step:
    """The figures of one step (see the module docstring)."""

    inflight: int
    matches: int
    decisions_per_s: float
    ideal_per_s: float
    ratio: float
    lag_p50_ms: float
    lag_p99_ms: float
    lag_max_ms: float
    faults: int
    forfeits: int
    fault_kinds: dict[str, int]
    worker_cpu_pct: float
    bots_cpu_pct: float
    redis_cpu_pct: float
    occupied: float  # matches playing in the window on average / n (the rest: slots between two matches)
    round_ms: float  # wall time per round of the matches that ended in the window (ideal: the think time; NaN: none)


class Recorder:
    """Wraps ``arena.match.referee.run_match`` (what the worker's jobs call) to note every match played."""

    def __init__(self) -> None:
        self.played: list[Played] = []
        self._original = referee.run_match

    def __enter__(self) -> Recorder:
        original = self._original

        async def noted(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            record = await original(*args, **kwargs)
            asked = [d for d in record.decisions if d.get("latency_ms") is not None]
            rounds = len({(d["hand"], d["turn"], d["kind"]) for d in record.decisions})
            self.played.append(Played(start, time.perf_counter(), len(asked), rounds, len(record.faults),
                                      len(record.forfeits), tuple(f.kind for f in record.faults)))
            return record

        referee.run_match = noted  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: Any) -> None:
        referee.run_match = self._original  # type: ignore[assignment]


async def lag_monitor(samples: list[float], stop: asyncio.Event) -> None:
    """Append how late (s) each ``LAG_TICK_S`` sleep of this loop woke, until ``stop`` is set."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        t0 = loop.time()
        await asyncio.sleep(LAG_TICK_S)
        samples.append(max(0.0, loop.time() - t0 - LAG_TICK_S))


def percentile(values: list[float], p: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def measure_step(store: Store, bot_ids: list[str], bot_pids: list[int], redis_pid: int, n: int,
                       think_s: float, deadline_ms: int, warmup_s: float, window_s: float, tag: str,
                       profile: cProfile.Profile | None = None) -> Step:
    """One step: ``n`` matches in flight on one worker of this process (``scheduler.run_loops``); ``profile``, when
    given, runs in the window (this thread: the event loop, where the referee and the worker loop run)."""
    match_s = 12 * think_s  # about 11 rounds of one think time each, and some slack
    count = n * (math.ceil((warmup_s + window_s) / match_s) + 2)
    specs = [MatchSpec(match_id=f"{tag}-{i:06d}", game=GAME, seats=tuple(bot_ids), seed=i, config=dict(HAND),
                       deadline_ms=deadline_ms) for i in range(count)]
    await asyncio.to_thread(store.enqueue, specs)
    settings = WorkerSettings(concurrency=n, drain_s=60.0)
    stop = threading.Event()
    lag: list[float] = []
    lag_stop = asyncio.Event()
    with Recorder() as recorder:
        worker = asyncio.create_task(scheduler.run_loops(store, [f"scale-{tag}"], stop, settings))
        monitor = asyncio.create_task(lag_monitor(lag, lag_stop))
        await asyncio.sleep(warmup_s)
        lag.clear()
        t1, cpu1 = time.perf_counter(), time.process_time()
        bots1, redis1 = sum(proc_cpu_s(p) for p in bot_pids), proc_cpu_s(redis_pid)
        if profile is not None:
            profile.enable()
        await asyncio.sleep(window_s)
        if profile is not None:
            profile.disable()
        t2, cpu2 = time.perf_counter(), time.process_time()
        bots2, redis2 = sum(proc_cpu_s(p) for p in bot_pids), proc_cpu_s(redis_pid)
        window_lag = list(lag)
        stop.set()
        await worker
        lag_stop.set()
        await monitor
    done = 0.0
    overlapping = [m for m in recorder.played if m.end > t1 and m.start < t2]
    playing_s = sum(min(m.end, t2) - max(m.start, t1) for m in overlapping)
    ended = [m for m in overlapping if t1 <= m.end <= t2]
    round_s = sum(m.end - m.start for m in ended) / sum(m.rounds for m in ended) if ended else math.nan
    for m in overlapping:
        done += m.decisions * (min(m.end, t2) - max(m.start, t1)) / max(m.end - m.start, 1e-9)
    per_think_s = (sum(m.decisions for m in recorder.played) / (sum(m.rounds for m in recorder.played) * think_s)
                   if recorder.played else math.nan)
    ideal = n * per_think_s
    wall = t2 - t1
    return Step(inflight=n, matches=len(overlapping), decisions_per_s=round(done / wall, 1),
                ideal_per_s=round(ideal, 1), ratio=round(done / wall / ideal, 3),
                lag_p50_ms=round(percentile(window_lag, 50) * 1000, 2),
                lag_p99_ms=round(percentile(window_lag, 99) * 1000, 2),
                lag_max_ms=round(max(window_lag, default=math.nan) * 1000, 1),
                faults=sum(m.faults for m in overlapping), forfeits=sum(m.forfeits for m in overlapping),
                fault_kinds=dict(Counter(k for m in overlapping for k in m.fault_kinds)),
                worker_cpu_pct=round((cpu2 - cpu1) / wall * 100, 1),
                bots_cpu_pct=round((bots2 - bots1) / wall * 100, 1),
                redis_cpu_pct=round((redis2 - redis1) / wall * 100, 1),
                occupied=round(playing_s / wall / n, 3), round_ms=round(round_s * 1000, 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="full",
                        help="full: 50..800 with 20 s windows; quick: 50,200,400 with 10 s windows")
    parser.add_argument("--inflight", default=None, help="matches in flight per step, comma separated")
    parser.add_argument("--think-ms", type=float, default=500.0, help="every bot's think time per decision, ms")
    parser.add_argument("--deadline-ms", type=int, default=2000, help="Decide deadline, ms")
    parser.add_argument("--window", type=float, default=None, help="measured seconds per step")
    parser.add_argument("--warmup", type=float, default=None, help="seconds before the window of each step")
    parser.add_argument("--bots", type=int, default=SEATS, help="bot processes (>= 4; each match seats 4)")
    parser.add_argument("--bot-threads", type=int, default=None,
                        help="threads of each bot's server (default: the largest step + 64)")
    parser.add_argument("--profile", default=None,
                        help="write a cProfile of the event loop's thread in the windows to this file")
    parser.add_argument("--json", action="store_true", help="print the steps as JSON")
    args = parser.parse_args(argv)
    tune_for_matches()  # as ``arena worker`` does (``run_workers``)
    inflight_s, window_s, warmup_s = SIZES[args.size]
    steps = [int(x) for x in (args.inflight or inflight_s).split(",")]
    window_s = args.window if args.window is not None else window_s
    warmup_s = args.warmup if args.warmup is not None else warmup_s
    if args.bots < SEATS:
        parser.error(f"--bots must be at least {SEATS}")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stopped: the bots and the Redis stop too
    # a bot without a secret serves one address (the referee's here) with at most half its threads (PEER_SHARE_DIVISOR)
    threads = args.bot_threads or PEER_SHARE_DIVISOR * (max(steps) * SEATS // args.bots + 64)
    results: list[Step] = []
    profile = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory(prefix="arena-inflight-") as tmp:
        private = PrivateRedis(Path(tmp) / "redis")
        url = private.start()
        bots: list[BotProcess] = []
        try:
            bots = start_bots([THINK_BOT] * args.bots, extra_args=["--think-ms", f"{args.think_ms:g}",
                                                                   "--max-workers", str(threads)], timeout=120)
            store = scheduler.worker_store(url, WorkerSettings(concurrency=max(steps)))
            redis_pid = int(store.client.info("server")["process_id"])
            for i, n in enumerate(steps):
                store.client.flushall()
                bot_ids = []
                for b, bot in enumerate(bots):
                    store.register_bot(GAME, f"think{b}", bot.endpoint, version="1.0")
                    bot_ids.append(f"think{b}@1.0")
                seats = [bot_ids[(i + k) % len(bot_ids)] for k in range(SEATS)]
                print(f"measuring {n} matches in flight ({warmup_s:g} s warm-up, {window_s:g} s window) ...",
                      file=sys.stderr, flush=True)
                results.append(asyncio.run(measure_step(
                    store, seats, [b.process.pid for b in bots], redis_pid, n, args.think_ms / 1000,
                    args.deadline_ms, warmup_s, window_s, f"s{i}", profile)))
            store.close()
        finally:
            for bot in bots:
                bot.stop()
            private.stop()
    if profile is not None:
        profile.dump_stats(args.profile)
    if args.json:
        print(json.dumps([asdict(s) for s in results], indent=2))
        return 0
    print(f"One worker process, 4-seat Take 5 hands against {args.bots} bot processes ({threads} threads each) that "
          f"answer after {args.think_ms:g} ms; deadline {args.deadline_ms} ms; {os.cpu_count()} cores; "
          f"window {window_s:g} s per step")
    print(f"{'in flight':>9} {'matches':>7} {'decisions/s':>11} {'ideal':>8} {'ratio':>6} {'lag p50':>8} "
          f"{'lag p99':>8} {'lag max':>8} {'faults':>6} {'forfeits':>8} {'CPU worker':>10} {'bots':>6} {'redis':>6} "
          f"{'occupied':>8} {'round':>8}")
    for s in results:
        print(f"{s.inflight:>9} {s.matches:>7} {s.decisions_per_s:>11.1f} {s.ideal_per_s:>8.1f} {s.ratio:>6.3f} "
              f"{s.lag_p50_ms:>5.1f} ms {s.lag_p99_ms:>5.1f} ms {s.lag_max_ms:>5.0f} ms {s.faults:>6} "
              f"{s.forfeits:>8} {s.worker_cpu_pct:>9.0f}% {s.bots_cpu_pct:>5.0f}% {s.redis_cpu_pct:>5.0f}% "
              f"{s.occupied:>8.3f} " + (f"{s.round_ms:>5.0f} ms" if math.isfinite(s.round_ms) else f"{'-':>8}")
              + (f"  ({', '.join(f'{k} {v}' for k, v in sorted(s.fault_kinds.items()))})" if s.faults else ""))
    if results:
        print(f"(median ratio {statistics.median(s.ratio for s in results):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
