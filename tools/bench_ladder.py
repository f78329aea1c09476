"""The ladder's answer time with many stored matches (part of ``make bench``).

A private redis-server (in a temporary folder) is filled with ``--matches`` synthetic stored results of a
realistic shape, written in the stored format with pipelined commands (not played): ``--bots`` bots of known
strengths (400 Elo from first to last), 4 seats, duplicate deals (each deal at min(4, bots // 4) tables, hand j at
seat j, no bot twice in a deal, like the tournament deal plan), deal luck per hand, game scores with ties; each
result is the result JSON, its results-log entry, the game's match index and the live ladder (Elo applied in log
order, ladder stats), as ``Store.record_result`` leaves them. The match records (the replays) are left out: the
ladder never reads them.

Then a real ``ArenaServer`` (no workers) answers GetLadder over gRPC:

* elo, first call (no pairwise counts cached yet: answered at once, a background refresh starts);
* fit, cold: the background refresh (pairwise counts, compact matches, the batch fit with
  ``ladder_replicates`` bootstrap replicates) until GetLadder counts every stored result; the fit's own time;
* fit and elo with a warm cache: median (min, max) of ``--reps`` answer times;
* reading and parsing every stored result (what the compact matches spare a refresh) against decoding them;
* after ``--more`` new results: the stale answer, what the refresh reads (only the new results), and the
  answer times while the server refits in the background.

Usage: python tools/bench_ladder.py [--matches 100000] [--bots 16] [--reps 7] [--more 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.ladder.cache import RatingsCache  # noqa: E402
from arena.ladder.fits import decode_matches  # noqa: E402
from arena.ratings import elo_deltas  # noqa: E402
from arena.ratings.ladder import ladder_replicates  # noqa: E402
from arena.server.app import ArenaServer  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.store.keys import (  # noqa: E402
    ladder_key,
    ladder_stats_key,
    matches_index_key,
    ratings_fit_key,
    ratings_matches_key,
    result_key,
    results_log_key,
)
from arena.store.redis_server import PrivateRedis  # noqa: E402
from arena_sdk.pb import arena_pb2, arena_pb2_grpc  # noqa: E402

GAME = "take5"
SEATS = 4


def _competition_ranks(scores: list[int]) -> list[int]:
    return [1 + sum(1 for o in scores if o < s) for s in scores]


def fill(store: Store, matches: int, bots: int, *, first: int = 0, seed: int = 1,
         ratings: dict[str, float] | None = None) -> dict[str, float]:
    """Store ``matches`` synthetic results (module docstring) after the first ``first`` ones; returns the live
    ratings after them (pass them back in to continue)."""
    rnd = random.Random(seed + first)
    names = [f"bot{i:02d}@1.0" for i in range(bots)]
    strength = {b: 2.3 * (1 - 2 * i / max(1, bots - 1)) for i, b in enumerate(names)}  # logits: ~400 Elo span
    tables = max(1, min(SEATS, bots // SEATS))
    ratings = dict(ratings or {})
    stats: dict[str, float] = {}
    pipe = store.client.pipeline(transaction=False)
    k = first
    deal = first // tables
    while k < first + matches:
        luck = [rnd.gauss(0.0, 0.75) for _ in range(SEATS)]
        order = rnd.sample(names, SEATS * tables)
        for t in range(tables):
            if k >= first + matches:
                break
            seats = order[t * SEATS:(t + 1) * SEATS]
            scores = [max(0, round(12 - 4 * (strength[b] + luck[j] + rnd.gauss(0, 1.0))))
                      for j, b in enumerate(seats)]
            ranks = _competition_ranks(scores)
            before = [ratings.get(b, 1500.0) for b in seats]
            deltas = elo_deltas(before, ranks, 32.0)
            mid = f"t{1 + k // 2000}-{k:06d}"
            result = {"match_id": mid, "game": GAME, "tournament": f"t{1 + k // 2000}", "seats": seats,
                      "scores": scores, "ranks": ranks, "faults": [0] * SEATS, "ratings_before": before,
                      "deltas": deltas, "k": 32.0, "stored_at": time.time(), "seed": 10_000_000 + deal,
                      "worker": "bench", "deal": {"round": 0, "deal": deal, "table": t, "attempt": 0}}
            pipe.set(result_key(GAME, mid), json.dumps(result))
            pipe.rpush(results_log_key(GAME), mid)
            pipe.zadd(matches_index_key(GAME), {mid: k + 1})
            for b, r, d, s, rank in zip(seats, before, deltas, scores, ranks):
                ratings[b] = r + d
                stats[f"matches:{b}"] = stats.get(f"matches:{b}", 0) + 1
                stats[f"wins:{b}"] = stats.get(f"wins:{b}", 0) + (rank == 1)
                stats[f"score_sum:{b}"] = stats.get(f"score_sum:{b}", 0.0) + s
            k += 1
            if k % 2000 == 0:
                pipe.execute()
        deal += 1
    pipe.execute()
    pipe.zadd(ladder_key(GAME), ratings)
    for field, value in stats.items():
        if field.startswith("score_sum:"):
            pipe.hincrbyfloat(ladder_stats_key(GAME), field, value)
        else:
            pipe.hincrby(ladder_stats_key(GAME), field, int(value))
    pipe.execute()
    return ratings


def _timed(call: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def _spread(times: list[float]) -> dict[str, float]:
    return {"median_ms": round(1000 * statistics.median(times), 1), "min_ms": round(1000 * min(times), 1),
            "max_ms": round(1000 * max(times), 1), "n": len(times)}


def _wait_counted(stub: Any, method: str, count: int, timeout: float) -> tuple[float, Any]:
    start = time.perf_counter()
    while True:
        reply = stub.GetLadder(arena_pb2.GetLadderRequest(game=GAME, method=method), timeout=30)
        if reply.results_counted >= count:
            return time.perf_counter() - start, reply
        if time.perf_counter() - start > timeout:
            raise RuntimeError(f"the {method} ladder still counts {reply.results_counted} of {count} results "
                               f"after {timeout:.0f} s")
        time.sleep(0.2)


def bench_ladder(matches: int = 100_000, bots: int = 16, reps: int = 7, more: int = 1000,
                 timeout: float = 3600.0, progress: Any = None) -> dict[str, Any]:
    """Fill, serve and measure (module docstring); returns the figures (seconds and ms)."""
    say = progress or (lambda s: None)
    out: dict[str, Any] = {"matches": matches, "bots": bots, "seats": SEATS,
                           "replicates": ladder_replicates(matches)}
    with tempfile.TemporaryDirectory() as tmp, PrivateRedis(Path(tmp)) as redis_server:
        store = Store.from_url(redis_server.url)
        say(f"ladder: storing {matches} synthetic results ({bots} bots, {SEATS} seats, duplicate deals)")
        seconds, ratings = _timed(lambda: fill(store, matches, bots))
        out["fill_s"] = round(seconds, 1)
        out["fill_results_per_s"] = round(matches / seconds)
        cache = RatingsCache(store)
        seconds, results = _timed(lambda: sum(1 for _ in cache._read_results(GAME, 0, matches)))
        out["read_all_results_s"] = round(seconds, 2)
        assert results == matches, f"read {results} of {matches} results"
        server = ArenaServer("127.0.0.1:0", redis_server.url, workers=0, verify_bots=False)
        port = server.start()
        import grpc

        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = arena_pb2_grpc.ArenaStub(channel)
        try:
            seconds, reply = _timed(lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game=GAME), timeout=30))
            out["elo_first_answer_ms"] = round(1000 * seconds, 1)
            out["elo_first_counted"] = reply.results_counted
            seconds, reply = _timed(lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game=GAME, method="fit"),
                                                           timeout=30))
            out["fit_first_answer_ms"] = round(1000 * seconds, 1)
            say(f"ladder: cold refresh of {matches} results (fit with {out['replicates']} replicates) ...")
            seconds, reply = _wait_counted(stub, "fit", matches, timeout)
            out["cold_refresh_s"] = round(seconds + out["fit_first_answer_ms"] / 1000, 1)
            doc = json.loads(store.client.get(ratings_fit_key(GAME)))
            out["fit_s"] = round(doc["seconds"], 1)
            out["fit_cpu_s"] = round(doc.get("cpu_seconds", 0.0), 1)
            out["deal_sd_elo"] = round(doc["deal_sd"], 1)
            out["margins_elo"] = [round(e.margin, 1) for e in reply.entries]
            out["ratings_elo"] = [round(e.rating, 1) for e in reply.entries]
            out["order_correct"] = [e.bot for e in reply.entries] == sorted(e.bot for e in reply.entries)
            raw = store.client.execute_command("GET", ratings_matches_key(GAME), NEVER_DECODE=[])
            out["compact_matches_bytes"] = len(raw)
            seconds, _ = _timed(lambda: decode_matches(raw))
            out["decode_compact_matches_s"] = round(seconds, 2)
            fit_times = [_timed(lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game=GAME, method="fit"),
                                                        timeout=30))[0] for _ in range(reps)]
            out["fit_warm"] = _spread(fit_times)
            _wait_counted(stub, "elo", matches, timeout)
            elo_times = [_timed(lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game=GAME), timeout=30))[0]
                         for _ in range(reps)]
            out["elo_warm"] = _spread(elo_times)
            say(f"ladder: {more} more results, then the stale answer and what an incremental refresh reads ...")
            fill(store, more, bots, first=matches, ratings=ratings)
            seconds, reply = _timed(lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game=GAME, method="fit"),
                                                           timeout=30))
            out["stale_answer_ms"] = round(1000 * seconds, 1)
            out["stale_answer_counted"] = [reply.results_counted, reply.results_stored]
            seconds, n = _timed(lambda: sum(1 for _ in cache._read_results(GAME, matches, matches + more)))
            assert n == more
            out["read_new_results_s"] = round(seconds, 3)
            elo_times = [_timed(lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game=GAME), timeout=30))[0]
                         for _ in range(reps)]
            out["elo_during_refresh"] = _spread(elo_times)
            fit_times = [_timed(lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game=GAME, method="fit"),
                                                        timeout=30))[0] for _ in range(reps)]
            out["fit_during_refresh"] = _spread(fit_times)
        finally:
            channel.close()
            server.stop()
            store.close()
    return out


def print_ladder(r: dict[str, Any]) -> None:
    print(f"Ladder answer time with {r['matches']} stored matches ({r['bots']} bots, {r['seats']} seats, duplicate "
          f"deals; filled at {r['fill_results_per_s']} results/s)")
    print(f"  GetLadder fit, warm cache:   median {r['fit_warm']['median_ms']} ms "
          f"(min {r['fit_warm']['min_ms']}, max {r['fit_warm']['max_ms']}, {r['fit_warm']['n']} calls)")
    print(f"  GetLadder elo, warm cache:   median {r['elo_warm']['median_ms']} ms "
          f"(min {r['elo_warm']['min_ms']}, max {r['elo_warm']['max_ms']}); first call, nothing cached: "
          f"{r['elo_first_answer_ms']} ms")
    print(f"  cold refresh (background):   {r['cold_refresh_s']} s, of which the fit {r['fit_s']} s "
          f"({r['fit_cpu_s']} s CPU; {r['replicates']} bootstrap replicates); fit's first answer meanwhile "
          f"{r['fit_first_answer_ms']} ms")
    print(f"  reading every stored result: {r['read_all_results_s']} s; decoding the compact copy: "
          f"{r['decode_compact_matches_s']} s ({r['compact_matches_bytes']} bytes)")
    print(f"  after {r['stale_answer_counted'][1] - r['stale_answer_counted'][0]} more results: the stale fit "
          f"answers in {r['stale_answer_ms']} ms (counts {r['stale_answer_counted'][0]} of "
          f"{r['stale_answer_counted'][1]}); its refresh reads only them: {r['read_new_results_s']} s; while it "
          f"refits in the server: fit {r['fit_during_refresh']['median_ms']} ms, elo "
          f"{r['elo_during_refresh']['median_ms']} ms (medians; max {r['fit_during_refresh']['max_ms']}, "
          f"{r['elo_during_refresh']['max_ms']})")
    print(f"  fit: deal-luck sd {r['deal_sd_elo']} Elo, margins {min(r['margins_elo'])}..{max(r['margins_elo'])} "
          f"Elo, true order recovered: {r['order_correct']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=100_000, help="stored results (default 100000)")
    parser.add_argument("--bots", type=int, default=16, help="bots (default 16)")
    parser.add_argument("--reps", type=int, default=7, help="warm answer timings of each method (default 7)")
    parser.add_argument("--more", type=int, default=1000, help="results added for the incremental refresh")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    args = parser.parse_args()
    progress = (lambda s: None) if args.json else (lambda s: print(s, file=sys.stderr, flush=True))
    r = bench_ladder(args.matches, args.bots, args.reps, args.more, progress=progress)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print_ladder(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
