"""`make web-bench`: how long the web pages take to answer, beside the gRPC reads they wrap, measured in the same run.

A private arena in a temporary folder (``arena serve --web``: its own redis-server, one embedded worker), the
sample bots as processes, one finished round robin of each game, and ``arena web`` as a process of its own; then,
for each page of ``arena web`` (and the ladder of ``arena serve --web`` too, whose pages share the referee's
process and its interpreter lock), the median (and p95) over
``--requests`` sequential requests on one keep-alive HTTP connection, and beside it the median of the gRPC read
calls that page makes, called the same way over one channel:

* ladder (``/ladder/take5``): GetLadder, plus ListMatches of each bot (its history and faults per match);
* bot (``/bots/NAME``): ListBots, ListMatches, GetLadder and GetMatch of its revealed recent matches;
* tournament (``/tournaments/ID``): GetTournament, GetStandings, ListMatches (and the seed check);
* a match of each game (``/matches/ID``), when the match viewer is installed: GetMatch.

A measurement, never a test: it prints numbers. Usage: python tools/web_bench.py [--requests N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
import httpx2 as httpx  # noqa: E402 - the HTTP client the dev extra installs

from arena.match.local_bots import started_bots  # noqa: E402
from arena_sdk.pb import arena_pb2, arena_pb2_grpc  # noqa: E402

ARENA = Path(sys.executable).parent / "arena"
BOTS = [("random", "take5"), ("heuristic", "take5"), ("taki-random", "taki"), ("taki-heuristic", "taki")]


def timed(call: Callable[[], Any], n: int) -> dict[str, float]:
    """Median and p95 of ``n`` sequential calls, milliseconds (after 5 warm-up calls)."""
    for _ in range(5):
        call()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"median_ms": statistics.median(times), "p95_ms": times[int(0.95 * (len(times) - 1))]}


def arena(data_dir: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["ARENA_DATA_DIR"] = str(data_dir)
    done = subprocess.run([str(ARENA), *args], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per page (and calls per read)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    options = parser.parse_args()
    n = options.requests
    folder = Path(tempfile.mkdtemp(prefix="web-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    serve = subprocess.Popen([str(ARENA), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(folder),
                              "--workers", "1", "--web", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert serve.stdout is not None
        url = server = ""
        for line in serve.stdout:
            if line.startswith("web pages: "):
                url = line.split()[-1].rstrip("/")
            if "listening on " in line:
                server = line.rsplit("listening on ", 1)[1].split()[0]
                break
        with started_bots([f"sample:{b}" for b, _ in BOTS]) as bots:
            for (_, game), bot in zip(BOTS, bots):
                arena(folder, "bot", "register", bot.name, bot.endpoint, "--game", game, "--server", server)
            tournaments = {}
            for game in ("take5", "taki"):
                names = ",".join(b.name for (_, g), b in zip(BOTS, bots) if g == game)
                out = arena(folder, "tournament", "create", "--game", game, "--bots", names, "--seats", "2",
                            "--rounds", "6", "--wait", "--json", "--server", server)
                tournaments[game] = json.loads(out)["id"]
            web = subprocess.Popen([str(ARENA), "web", "--listen", "127.0.0.1:0", "--server", server],
                                   stdout=subprocess.PIPE, text=True, env=env)
            try:
                assert web.stdout is not None
                own = web.stdout.readline().split("serving ", 1)[1].split()[0].rstrip("/")
                results = measure_all(own, server, tournaments, n)
                with httpx.Client(base_url=url, timeout=60) as client:
                    results["ladder via arena serve --web"] = {
                        "page": timed(lambda: client.get("/ladder/take5"), n), "reads": results[
                            "ladder /ladder/take5"]["reads"], "what": "the same page, served by arena serve --web"}
            finally:
                web.terminate()
                web.wait(timeout=60)
    finally:
        serve.terminate()
        serve.wait(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
    if options.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"web page answer times of `arena web`, {n} sequential requests each (one keep-alive connection), "
              f"beside the gRPC reads each page makes ({n} times, one channel), same run; milliseconds")
        print(f"{'page':<28}{'page median':>12}{'page p95':>10}{'reads median':>14}  reads")
        for name, r in results.items():
            page = r.get("page") or {}
            print(f"{name:<28}{page.get('median_ms', float('nan')):>12.2f}{page.get('p95_ms', float('nan')):>10.2f}"
                  f"{r['reads']['median_ms']:>14.2f}  {r['what']}")
    return 0


def measure_all(url: str, server: str, tournaments: dict[str, str], n: int) -> dict[str, Any]:
    channel = grpc.insecure_channel(server)
    stub = arena_pb2_grpc.ArenaStub(channel)
    out: dict[str, Any] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        def page(path: str) -> Callable[[], Any]:
            def get() -> None:
                answer = client.get(path)
                assert answer.status_code == 200, (path, answer.status_code)
            return get

        ladder = stub.GetLadder(arena_pb2.GetLadderRequest(game="take5"))
        bots = [e.bot for e in ladder.entries]

        def ladder_reads() -> None:
            stub.GetLadder(arena_pb2.GetLadderRequest(game="take5"))
            for bot in bots:
                stub.ListMatches(arena_pb2.ListMatchesRequest(bot=bot, page_size=200))

        out["ladder /ladder/take5"] = {"page": timed(page("/ladder/take5"), n), "reads": timed(ladder_reads, n),
                                       "what": f"GetLadder + {len(bots)} x ListMatches"}
        out["ladder GetLadder alone"] = {"page": None, "reads": timed(
            lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")), n), "what": "GetLadder"}
        bot = bots[0]
        recent = stub.ListMatches(arena_pb2.ListMatchesRequest(bot=bot, page_size=200)).matches

        def bot_reads() -> None:
            stub.ListBots(arena_pb2.ListBotsRequest(page_size=1000))
            stub.ListMatches(arena_pb2.ListMatchesRequest(bot=bot, page_size=200))
            stub.GetLadder(arena_pb2.GetLadderRequest(game="take5"))
            for m in recent[:20]:
                stub.GetMatch(arena_pb2.GetMatchRequest(match_id=m.match_id))

        out[f"bot /bots/{bot}"] = {"page": timed(page(f"/bots/{bot}"), n), "reads": timed(bot_reads, n),
                                   "what": f"ListBots + ListMatches + GetLadder + {min(20, len(recent))} x GetMatch"}
        tid = tournaments["take5"]

        def tournament_reads() -> None:
            stub.GetTournament(arena_pb2.GetTournamentRequest(id=tid))
            stub.GetStandings(arena_pb2.GetStandingsRequest(id=tid))
            stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, page_size=50))
            stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, page_size=1000))

        out[f"tournament /tournaments/{tid}"] = {"page": timed(page(f"/tournaments/{tid}"), n),
                                                 "reads": timed(tournament_reads, n),
                                                 "what": "GetTournament + GetStandings + 2 x ListMatches"}
        for game, tid in tournaments.items():
            first = stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, page_size=1)).matches[0]
            match_id = first.match_id
            shown = client.get(f"/matches/{match_id}").status_code == 200
            out[f"match /matches/{match_id} ({game})"] = {
                "page": timed(page(f"/matches/{match_id}"), n) if shown else None,
                "reads": timed(lambda m=match_id: stub.GetMatch(arena_pb2.GetMatchRequest(match_id=m)), n),
                "what": "GetMatch" + ("" if shown else " (no match viewer installed: page not measured)")}
    channel.close()
    return out


if __name__ == "__main__":
    sys.exit(main())
