"""Benchmarks (``make bench``): a script that measures and prints, never a timed test.

By default (about 3-4 minutes on a 2-core machine), the performance figures, each beside its floor in the same run
(``tools/bench_ratios.py``; median of ``--reps`` interleaved repetitions, with min and max):

* the match stream: referee decisions/s / bare grpc.aio streaming echo messages/s, both at 4 in flight; referee CPU
  per decision / streaming echo client CPU per message; sample-bot CPU per decision / streaming echo server CPU;
* whole matches: CPU per 4-seat Take 5 match of every process (referee and bots), on the match stream and on the
  unary calls, beside the same bots played in process (``arena_sdk.play_game``);
* the unary path: referee decisions/s / bare grpc.aio echo calls/s, both at 4 calls in flight; referee CPU per
  decision / echo client CPU per call; sample-bot CPU per decision / echo server CPU per call;
* where the floor is (``tools/bench_floor.py``): the same two CPU ratios with the echo paced to the referee's
  decisions/s, and the referee's and the SDK's CPU per decision without any gRPC (bots in process);
* queued / direct matches/s of trivial matches at concurrency 1 and 4, and direct / queued CPU per match (every
  process a match takes: the ratio's ceiling when the matches keep the cores busy);
* engine speed: Take 5 hands/s and Taki games/s at 4 seats;
* storage (``tools/bench_storage.py``): bytes per stored 4-seat Take 5 match (packed record, Redis memory,
  appendonly file) and what a million matches take;
* the ladder (``tools/bench_ladder.py``): GetLadder answer times over gRPC with ``--ladder-matches`` (100,000)
  synthetic stored results, warm (fit and elo) and while refreshing, and the cold background refresh (the batch
  fit with its bootstrap: about 5 minutes of CPU at 100,000 matches, so this part takes 10 minutes or more;
  ``--ladder-matches 0`` skips it).

``--details`` adds the older tables: engine games/s at 4 and 10 seats (Taki at 2, 4, 10), sequential Decide calls
per second with latency p50/p99 against each sample bot beside a bare echo, and refereed matches between heuristic
and Monte Carlo bots.

Usage: python tools/bench.py [--reps N] [--seconds S] [--details] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_ladder import bench_ladder, print_ladder  # noqa: E402
from bench_ratios import decide_requests, measure, print_ratios, summarise  # noqa: E402
from bench_storage import bench_storage, print_storage  # noqa: E402
from bench_taki import bench as bench_taki  # noqa: E402

from arena.match.local_bots import start_bot, started_bots  # noqa: E402
from arena.match.record import SeatSpec  # noqa: E402
from arena.match.referee import run_match_sync
from arena_sdk.games import take5  # noqa: E402
from arena_sdk.games.taki.state import TakiConfig  # noqa: E402
from arena_sdk.pb import bot_pb2, bot_pb2_grpc  # noqa: E402


def random_game(num_players: int, rnd: random.Random, config: take5.Take5Config | None = None) -> int:
    """Play one complete game with random legal actions; returns the number of decisions taken."""
    state = take5.new_game(num_players, config, seed=rnd.randrange(2**32))
    decisions = 0
    while not take5.is_over(state):
        for seat in take5.pending_seats(state):
            state = take5.apply(state, seat, rnd.choice(take5.legal_actions(state, seat)))
            decisions += 1
    return decisions


def bench_engine(num_players: int, seconds: float, *, one_hand: bool = False) -> dict:
    """Take 5 complete games (or single hands: a limit of 1 ends every game after its first hand) per second."""
    rnd = random.Random(1)
    config = take5.Take5Config(limit=1) if one_hand else None
    games = decisions = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        decisions += random_game(num_players, rnd, config)
        games += 1
    return {"seats": num_players, "unit": "hands" if one_hand else "games", "games": games,
            "seconds": round(elapsed, 2), "games_per_s": round(games / elapsed, 1),
            "decisions_per_s": round(decisions / elapsed)}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def latency_summary(name: str, latencies_ms: list[float], elapsed: float) -> dict:
    return {"name": name, "calls": len(latencies_ms), "calls_per_s": round(len(latencies_ms) / elapsed),
            "p50_ms": round(percentile(latencies_ms, 50), 3), "p99_ms": round(percentile(latencies_ms, 99), 3),
            "mean_ms": round(statistics.fmean(latencies_ms), 3)}


def timed_calls(call, seconds: float) -> tuple[list[float], float]:
    latencies = []
    start = time.perf_counter()
    while (now := time.perf_counter()) - start < seconds:
        call()
        latencies.append((time.perf_counter() - now) * 1000)
    return latencies, time.perf_counter() - start


def bench_echo(seconds: float) -> dict:
    """A bare unary echo: generic handler on raw bytes, no serialisation, no application code."""
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(lambda request, context: request)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary("/bench.Echo/Echo")
            payload = bytes(200)  # about the size of a serialised DecideRequest
            echo(payload, timeout=5)
            latencies, elapsed = timed_calls(lambda: echo(payload, timeout=5), seconds)
    finally:
        server.stop(0)
    return latency_summary("bare unary echo", latencies, elapsed)


def bench_bot(sample: str, seconds: float, requests: list[bot_pb2.DecideRequest]) -> dict:
    bot = start_bot(f"sample:{sample}")
    try:
        with grpc.insecure_channel(bot.endpoint) as channel:
            stub = bot_pb2_grpc.BotStub(channel)
            stub.StartMatch(bot_pb2.StartMatchRequest(
                match_id="bench", game="take5", seat=0, num_players=4,
                player_names=["a", "b", "c", "d"]), timeout=5)
            it = iter(range(10**9))
            latencies, elapsed = timed_calls(
                lambda: stub.Decide(requests[next(it) % len(requests)], timeout=5), seconds)
    finally:
        bot.stop()
    return latency_summary(f"Decide on sample:{sample} (separate process)", latencies, elapsed)


def bench_matches(sample: str, seats: int, matches: int) -> dict:
    """Complete refereed matches between ``seats`` processes of one sample bot: decisions per second of wall time
    (each Take 5 turn asks every seat at once) and the latency of every Decide as the referee saw it."""
    with started_bots([f"sample:{sample}"] * seats) as bots:
        specs = [SeatSpec(f"{sample}-{i}", b.endpoint) for i, b in enumerate(bots)]
        latencies: list[float] = []
        faults = 0
        start = time.perf_counter()
        for m in range(matches):
            record = run_match_sync(f"bench-{m}", "take5", specs, take5.Take5Config(), seed=m)
            latencies += [d["latency_ms"] for d in record.decisions if d["latency_ms"] is not None]
            faults += len(record.faults)
        elapsed = time.perf_counter() - start
    summary = latency_summary(f"{matches} refereed matches, {seats} x sample:{sample}", latencies, elapsed)
    summary["faults"] = faults
    return summary


def commit() -> str:
    """The commit of the tree being measured ("abc1234", "+" when it has uncommitted changes), or ""."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + ("+" if dirty else "")


def details(seconds: float) -> dict:
    results: dict = {"engine": [], "taki": [], "grpc": []}
    for n in (4, 10):
        results["engine"].append(bench_engine(n, seconds, one_hand=True))
        results["engine"].append(bench_engine(n, seconds))
    for n in (2, 4, 10):
        results["taki"].append(bench_taki(n, seconds, TakiConfig(), uniform=False))
    requests = decide_requests(4, 500)
    results["grpc"].append(bench_echo(seconds))
    for sample in ("random", "heuristic", "montecarlo"):
        results["grpc"].append(bench_bot(sample, seconds, requests))
    results["matches"] = [bench_matches("heuristic", 4, 10), bench_matches("montecarlo", 4, 2)]
    return results


def print_details(results: dict) -> None:
    print("Engine: Take 5 with random players (one core); a game runs to 66 bullheads")
    for r in results["engine"]:
        print(f"  {r['seats']:>2} seats: {r['games_per_s']:>8} {r['unit']}/s  {r['decisions_per_s']:>9} decisions/s"
              f"  ({r['games']} {r['unit']} in {r['seconds']} s)")
    print("Engine: complete Taki games with random legal players (one core)")
    for r in results["taki"]:
        print(f"  {r['seats']:>2} seats: {r['games_per_s']:>8} games/s  {r['decisions_per_s']:>9} decisions/s"
              f"  ({r['decisions_per_game']} decisions per game)")
    print("gRPC over loopback, one client, sequential calls")
    for r in results["grpc"]:
        print(f"  {r['name']:<48} {r['calls_per_s']:>7} calls/s  p50 {r['p50_ms']:>7} ms  "
              f"p99 {r['p99_ms']:>7} ms")
    print("Refereed matches (all seats asked at once each turn; latency as the referee measured it)")
    for r in results["matches"]:
        print(f"  {r['name']:<48} {r['calls_per_s']:>7} decisions/s  p50 {r['p50_ms']:>7} ms  "
              f"p99 {r['p99_ms']:>7} ms  faults {r['faults']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions of the ratios (default 5)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="seconds of echo and of referee per repetition (default 3); --details: per item")
    parser.add_argument("--matches", type=int, default=30,
                        help="trivial matches per queued and per direct run at concurrency 1, twice as many at 4 "
                             "(default 30)")
    parser.add_argument("--stored", type=int, default=10, help="matches stored for the storage figures")
    parser.add_argument("--ladder-matches", type=int, default=100_000,
                        help="stored results for the ladder figures (default 100000; 0 skips them)")
    parser.add_argument("--details", action="store_true", help="add the older per-item tables")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    args = parser.parse_args()

    rev = commit()
    progress = (lambda s: None) if args.json else (lambda s: print(s, file=sys.stderr, flush=True))
    reps = measure(args.reps, args.seconds, args.matches, 2 * args.matches, progress=progress)
    results: dict = {"commit": rev, "ratios": summarise(reps), "repetitions": reps}
    if not args.json:  # at once: the ratios are the long part
        print_ratios(results["ratios"], rev)
    results["storage"] = bench_storage(args.stored)
    if not args.json:
        print_storage(results["storage"])
    if args.ladder_matches:
        results["ladder"] = bench_ladder(args.ladder_matches, progress=progress)
        if not args.json:
            print_ladder(results["ladder"])
    if args.details:
        results["details"] = details(args.seconds)
        if not args.json:
            print_details(results["details"])
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
