"""The queue's own cost alone (``make bench-queue``): the queued and direct matches of ``make bench``'s ratios
(``bench_ratios``: trivial 4-seat Take 5 hands between 4 ``sample:random`` processes; a worker of concurrency 1 or
4 in this process claims, plays, stores and acknowledges each, against the same matches played with ``run_match``),
without the echo and referee phases, so that a change to the queue can be measured in a minute. A script that
measures and prints, never a test.

Printed: queued / direct matches/s at concurrency 1 and 4 and the CPU per match of every process a match takes
(this one, the 4 bots, redis-server), queued and direct, with the difference: what the queue costs per match
(target <= 1.5 ms at concurrency 1). On a loaded machine that difference of two CPU totals of ~45 ms each is
noisy, so the queue's own work is also measured alone (``queue_ops``): what a worker does for one match besides
playing it (claim the job, the pre-match reads, settle the played match, the heartbeat and refresh its start and
end bring forward), ``--ops`` times in a row with one real record, CPU of this process and of redis-server per
match. ``--profile FILE`` writes a cProfile of this process's queued slices.

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

from bench_ratios import (  # noqa: E402
    GAME,
    TRIVIAL,
    direct_phase,
    proc_cpu_s,
    queue_slices,
    registered_bots,
)

from arena.core.gc_tuning import tune_for_matches  # noqa: E402
from arena.core.specs import MatchSpec  # noqa: E402
from arena.match.channels import BotChannels  # noqa: E402
from arena.match.record import MatchRecord, SeatSpec  # noqa: E402
from arena.match.referee import run_match_sync  # noqa: E402
from arena.store import Store, WorkerStatus  # noqa: E402
from arena.worker import job as match_job  # noqa: E402
from arena.worker.health import charged_outcomes  # noqa: E402
from arena_sdk.games import take5  # noqa: E402

QUEUE_TARGET_MS = 1.5  # CPU per match beyond a direct one, all processes


def queue_ops(store: Store, bot_ids: list[str], record: MatchRecord, n: int, redis_pid: int,
              tag: str) -> dict[str, float]:
    """CPU per match (ms) of the worker's queue work alone, ``n`` matches one after the other in this thread: enqueue
    (not counted), then per match what ``run_job`` and the worker loop do around ``run_match`` (``read_jobs``,
    ``match_inputs``, ``_store_and_ack`` with ``record``, one ``refresh_and_beat``: a start and an end each bring
    one forward, coalesced). Returns this process's and redis-server's CPU per match, ms."""
    specs = [MatchSpec(match_id=f"ops{tag}-{i:05d}", game=GAME, seats=tuple(bot_ids), seed=i, config=dict(TRIVIAL))
             for i in range(n)]
    store.enqueue(specs)
    store.ensure_job_group()
    status = WorkerStatus(name="ops", host="h", pid=1, started_at=time.time(), last_seen=time.time(),
                          concurrency=1, running=(), matches_done=0, timeout_s=30.0)
    cpu0, redis0 = time.process_time(), proc_cpu_s(redis_pid)
    for _ in range(n):
        [job] = store.read_jobs("ops", 1, 50)
        assert job.spec is not None
        inputs = store.match_inputs(GAME, job.spec.match_id, "", list(job.spec.seats))
        outcomes = charged_outcomes(record, list(job.spec.seats))
        stored, _ = match_job._store_and_ack(store, job, job.spec, record, job.spec.seed, None, "ops", outcomes,
                                             3, inputs.ratings or None)
        assert stored
        store.refresh_and_beat("ops", [job], status)
    return {"ops_cpu_ms": (time.process_time() - cpu0) / n * 1e3,
            "ops_redis_cpu_ms": (proc_cpu_s(redis_pid) - redis0) / n * 1e3}


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
            q = await queue_slices(store, bot_ids, seats, pids, rep, matches_c1, matches_c4, pool, profile)
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
    parser.add_argument("--ops", type=int, default=300, help="matches of the queue's work alone (default 300)")
    parser.add_argument("--profile", default=None, help="write a cProfile of the queued slices to this file")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    tune_for_matches()  # the collector's thresholds of a worker process (``arena worker``), where matches run
    profile = cProfile.Profile() if args.profile else None
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        bots, store, bot_ids, seats = registered_bots(stack, Path(tmp))
        pids = [b.process.pid for b in bots] + [int(store.client.info("server")["process_id"])]
        record = run_match_sync("ops-record", GAME, seats, take5.Take5Config(**TRIVIAL), seed=1)
        ops = [queue_ops(store, bot_ids, record, args.ops, pids[-1], str(k)) for k in range(3)]
        reps = asyncio.run(queue_repetitions(seats, store, bot_ids, pids, args.reps, args.matches,
                                             2 * args.matches, profile)) if args.reps else []
    if profile is not None:
        profile.dump_stats(args.profile)
    summary = {k: {"median": statistics.median(r[k] for r in rs), "min": min(r[k] for r in rs),
                   "max": max(r[k] for r in rs)} for rs in (reps, ops) if rs for k in rs[0]}
    if args.json:
        print(json.dumps({"summary": summary, "repetitions": reps}, indent=2))
        return 0
    print(f"Queue cost (median of {len(reps)} interleaved repetitions, min..max; the queue's work alone: 3 runs of "
          f"{args.ops} matches)")
    rows = [("ops_cpu_ms", "queue's work alone: worker CPU per match", "ms"),
            ("ops_redis_cpu_ms", "queue's work alone: redis-server CPU per match", "ms"),
            ("queued_vs_direct_c1", "queued / direct matches/s, concurrency 1", ">= 0.95"),
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
        if key not in summary:
            continue
        s = summary[key]
        print(f"  {label:<58} {s['median']:>8.2f} {s['min']:>8.2f} {s['max']:>8.2f}  {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
