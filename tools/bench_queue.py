"""The queue's own cost alone (``make bench-queue``): the queued and direct matches of ``make bench``'s ratios
(``bench_ratios``: trivial 4-seat Take 5 hands between 4 ``sample:random`` processes; a worker of concurrency 1 or
4 in this process claims, plays, stores and acknowledges each, against the same matches played with ``run_match``),
without the echo and referee phases, so that a change to the queue can be measured in a minute. A script that
measures and prints, never a test.

Printed: queued / direct matches/s at concurrency 1 and 4 and the CPU per match of every process a match takes
(this one, the 4 bots, redis-server), queued and direct, with the difference: what the queue costs per match
(target <= 1.5 ms at concurrency 1). ``--profile FILE`` writes a cProfile of this process's queued slices.

Usage: python tools/bench_queue.py [--reps 5] [--matches 40] [--profile FILE] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_ratios import BOT_START_S, GAME, SEATS, SLICES, QueueWorker, cpu_of, direct_phase  # noqa: E402

from arena.match.channels import BotChannels  # noqa: E402
from arena.match.local_bots import started_bots  # noqa: E402
from arena.match.record import SeatSpec  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.store.redis_server import PrivateRedis  # noqa: E402

QUEUE_TARGET_MS = 1.5  # CPU per match beyond a direct one, all processes


async def queue_repetitions(seats: list[SeatSpec], store: Store, bot_ids: list[str], pids: list[int], reps: int,
                            matches_c1: int, matches_c4: int,
                            profile: cProfile.Profile | None = None) -> list[dict[str, float]]:
    """``reps`` repetitions of the queued and direct slices (ABBA order, as ``bench_ratios``); per repetition the
    matches/s and CPU per match (ms, this process + ``pids``) of each side at concurrency 1 and 4."""
    pool = BotChannels()
    out = []
    try:
        await direct_phase(seats, 3, 1, "warm", pool)
        for rep in range(reps):
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
                            for key, value in ((f"{side}_c{c}", elapsed), (f"{side}_c{c}_matches", chunk - 1),
                                               (f"{side}_c{c}_cpu", cpu), (f"{side}_c{c}_played", chunk)):
                                q[key] = q.get(key, 0.0) + value
            figures: dict[str, float] = {}
            for c in (1, 4):
                for side in ("direct", "queued"):
                    figures[f"{side}_c{c}"] = q[f"{side}_c{c}_matches"] / q[f"{side}_c{c}"]
                    figures[f"{side}_cpu_ms_c{c}"] = q[f"{side}_c{c}_cpu"] / q[f"{side}_c{c}_played"] * 1e3
                figures[f"queued_vs_direct_c{c}"] = figures[f"queued_c{c}"] / figures[f"direct_c{c}"]
                figures[f"queue_cpu_ms_c{c}"] = figures[f"queued_cpu_ms_c{c}"] - figures[f"direct_cpu_ms_c{c}"]
            print(f"repetition {rep + 1}/{reps}: queued/direct {figures['queued_vs_direct_c1']:.2f} / "
                  f"{figures['queued_vs_direct_c4']:.2f}, queue CPU per match {figures['queue_cpu_ms_c1']:.2f} / "
                  f"{figures['queue_cpu_ms_c4']:.2f} ms", file=sys.stderr, flush=True)
            out.append(figures)
    finally:
        await pool.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions (default 5)")
    parser.add_argument("--matches", type=int, default=40,
                        help="matches per repetition and side at concurrency 1 (twice as many at 4)")
    parser.add_argument("--profile", default=None, help="write a cProfile of the queued slices to this file")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    profile = cProfile.Profile() if args.profile else None
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        bots = stack.enter_context(started_bots(["sample:random"] * SEATS, timeout=BOT_START_S))
        redis_server = stack.enter_context(PrivateRedis(Path(tmp)))
        store = Store.from_url(redis_server.url)
        stack.callback(store.close)
        bot_ids = []
        for i, b in enumerate(bots):
            store.register_bot(GAME, f"bench{i}", b.endpoint, version="1.0")
            bot_ids.append(f"bench{i}@1.0")
        seats = [SeatSpec(f"bench{i}@1.0", b.endpoint) for i, b in enumerate(bots)]
        pids = [b.process.pid for b in bots] + [int(store.client.info("server")["process_id"])]
        reps = asyncio.run(queue_repetitions(seats, store, bot_ids, pids, args.reps, args.matches,
                                             2 * args.matches, profile))
    if profile is not None:
        profile.dump_stats(args.profile)
    summary = {k: {"median": statistics.median(r[k] for r in reps), "min": min(r[k] for r in reps),
                   "max": max(r[k] for r in reps)} for k in reps[0]}
    if args.json:
        print(json.dumps({"summary": summary, "repetitions": reps}, indent=2))
        return 0
    print(f"Queue cost (median of {len(reps)} interleaved repetitions, min..max)")
    rows = [("queued_vs_direct_c1", "queued / direct matches/s, concurrency 1", ">= 0.95"),
            ("queued_c1", "  queued matches/s, concurrency 1", "1/s"), ("direct_c1", "  direct matches/s", "1/s"),
            ("queue_cpu_ms_c1", "queue CPU per match beyond direct, c1 (all processes)",
             f"<= {QUEUE_TARGET_MS} ms"),
            ("queued_cpu_ms_c1", "  CPU per queued match, c1", "ms"), ("direct_cpu_ms_c1", "  CPU per direct match",
                                                                         "ms"),
            ("queued_vs_direct_c4", "queued / direct matches/s, concurrency 4", ">= 0.95"),
            ("queue_cpu_ms_c4", "queue CPU per match beyond direct, c4 (all processes)", "ms"),
            ("queued_cpu_ms_c4", "  CPU per queued match, c4", "ms"), ("direct_cpu_ms_c4", "  CPU per direct match",
                                                                         "ms")]
    for key, label, target in rows:
        s = summary[key]
        print(f"  {label:<58} {s['median']:>8.2f} {s['min']:>8.2f} {s['max']:>8.2f}  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
