"""Scaling figures: a tournament's wall time and matches per second with 1 and 2 workers, at a
Decide deadline of 50 ms and of 1000 ms. A script that measures and prints, never a test.

Setup, all real processes on this machine:

* a private ``redis-server`` (``arena.store.redis_server.PrivateRedis``) in a temporary folder, emptied before each run;
* the three sample bots (random, heuristic, montecarlo; ``--bots`` to choose others, e.g. random,heuristic,random
  to take the CPU-bound Monte Carlo bot out) as separate processes, the same ones for every run;
* per run, ``arena serve --workers N --concurrency C`` (embedded workers, default), or with ``--separate``
  ``arena serve --workers 0`` plus N ``arena worker --concurrency C`` processes;
* the same tournament every run: the bots, k = 3 seats, ``--rounds R`` rounds (C(B, 3) matches a round, each on
  a deal of its own drawn from the tournament's secret seed), Take 5 defaults (limit 66);
* wall time from CreateTournament to the state "finished" (polled every 0.1 s), matches per second, and the faults
  recorded by bot and kind (a timeout at 50 ms is the Monte Carlo bot's budget meeting a loaded machine).

The Monte Carlo bot caps each decision at ``--budget-ms`` (default 40 ms, its own default); ``--budget-ms-50``
sets the cap used in the runs whose deadline is under 200 ms (default: the same 40 ms).

Usage: python tools/scale.py [--rounds 30] [--concurrency 4] [--workers 1,2] [--deadlines 50,1000] [--separate]
                             [--bots random,heuristic,montecarlo] [--budget-ms 40] [--budget-ms-50 40]
                             [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
import redis  # noqa: E402

from arena.match.local_bots import BotProcess, start_bot  # noqa: E402
from arena.server import auth  # noqa: E402
from arena.store.redis_server import PrivateRedis  # noqa: E402
from arena_sdk.pb import arena_pb2, arena_pb2_grpc  # noqa: E402

SAMPLE_BOTS = ("random", "heuristic", "montecarlo")
START_TIMEOUT_S = 30.0
POLL_S = 0.1


class ScaleError(RuntimeError):
    """A step of the measurement failed; the message says which."""


@dataclass
class Run:
    """One measured configuration."""

    workers: int
    concurrency: int
    deadline_ms: int
    mc_budget_ms: float
    matches: int
    wall_s: float
    matches_per_s: float
    faults: int
    faults_by_bot: dict[str, int]
    faults_by_kind: dict[str, int]


def arena_command() -> list[str]:
    script = Path(sys.executable).parent / "arena"
    return [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]


class Proc:
    """An ``arena`` subprocess; waits for a stdout line containing ``ready``; stdout drained by a thread."""

    def __init__(self, args: list[str], ready: str, log: Path) -> None:
        self.log = open(log, "a")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(arena_command() + args, stdout=subprocess.PIPE, stderr=self.log,
                                        stdin=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True)
        self.ready_line: str | None = None
        seen = threading.Event()

        def pump() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.log.write(line)
                if self.ready_line is None and ready in line:
                    self.ready_line = line.strip()
                    seen.set()
            seen.set()

        threading.Thread(target=pump, daemon=True).start()
        if not seen.wait(START_TIMEOUT_S) or self.ready_line is None:
            self.stop()
            raise ScaleError(f"`arena {' '.join(args)}` did not start; see {log}")

    def stop(self, timeout: float = 90.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def measure(redis_url: str, bots: dict[str, BotProcess], workers: int, concurrency: int, deadline_ms: int,
            rounds: int, separate: bool, mc_budget_ms: float, logs: Path) -> Run:
    """One run: a fresh (emptied) Redis, a referee with ``workers`` workers, the bots registered, one tournament
    timed from creation to its last result."""
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    client.close()
    procs: list[Proc] = []
    if not os.environ.get(auth.ADMIN_TOKEN_ENV):  # the referee's admin token (inherited), sent to CreateTournament
        os.environ[auth.ADMIN_TOKEN_ENV] = auth.new_admin_token()
    admin = auth.admin_metadata(os.environ[auth.ADMIN_TOKEN_ENV])
    os.environ["ARENA_REDIS_URL"] = redis_url  # inherited: a --redis-url argument would show its password in ps
    try:
        serve_workers = 0 if separate else workers
        serve = Proc(["serve", "--listen", "127.0.0.1:0", "--workers", str(serve_workers), "--concurrency",
                      str(concurrency), "--data-dir", str(logs / "arena-data")],
                     "listening on ", logs / "serve.log")
        procs.append(serve)
        assert serve.ready_line is not None
        server = serve.ready_line.rsplit("listening on ", 1)[1].strip()
        if separate:
            for i in range(workers):
                procs.append(Proc(["worker", "--concurrency", str(concurrency), "--name", f"scale-w{i}"],
                                  "working for redis", logs / f"worker{i}.log"))
        with grpc.insecure_channel(server) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            for name, bot in bots.items():
                stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint, game="take5"),
                                 timeout=30)
            request = arena_pb2.CreateTournamentRequest(game="take5", bots=list(bots), seats_per_match=3,
                                                        rounds=rounds, deadline_ms=deadline_ms)
            started = time.perf_counter()
            t = stub.CreateTournament(request, timeout=30, metadata=admin)
            while t.state == "running":
                time.sleep(POLL_S)
                t = stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id), timeout=30)
            wall = time.perf_counter() - started
            by_bot: Counter[str] = Counter()
            by_kind: Counter[str] = Counter()
            matches = stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=t.id, limit=t.matches_total),
                                       timeout=30).matches
            for m in matches:
                if not any(m.faults):
                    continue
                for bot_id, n in zip(m.seats, m.faults):
                    if n:
                        by_bot[bot_id] += n
                record = json.loads(stub.GetMatch(arena_pb2.GetMatchRequest(match_id=m.match_id),
                                                  timeout=30).record_json)
                by_kind.update(f["kind"] for f in record["faults"])
    except grpc.RpcError as exc:
        raise ScaleError(f"the arena refused a call: {exc.code().name}: {exc.details()}") from None
    finally:
        for proc in reversed(procs):
            proc.stop()
    return Run(workers=workers, concurrency=concurrency, deadline_ms=deadline_ms, mc_budget_ms=mc_budget_ms,
               matches=t.matches_done, wall_s=round(wall, 2), matches_per_s=round(t.matches_done / wall, 2),
               faults=t.faults, faults_by_bot=dict(by_bot), faults_by_kind=dict(by_kind))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds of the tournament (1 match each with 3 bots)")
    parser.add_argument("--concurrency", type=int, default=4, help="matches each worker runs at once")
    parser.add_argument("--workers", default="1,2", help="worker counts to measure, comma separated")
    parser.add_argument("--deadlines", default="50,1000", help="Decide deadlines to measure (ms), comma separated")
    parser.add_argument("--separate", action="store_true",
                        help="run the workers as `arena worker` processes (default: embedded in `arena serve`)")
    parser.add_argument("--budget-ms", type=float, default=40.0, help="Monte Carlo bot's cap per decision, ms")
    parser.add_argument("--budget-ms-50", type=float, default=None,
                        help="the cap in runs whose deadline is under 200 ms (default: --budget-ms)")
    parser.add_argument("--bots", default=",".join(SAMPLE_BOTS),
                        help="sample bots to start, comma separated (repeats get -2, -3 ...); 3 or more")
    parser.add_argument("--json", action="store_true", help="print the runs as JSON")
    args = parser.parse_args(argv)
    worker_counts = [int(x) for x in args.workers.split(",")]
    deadlines = [int(x) for x in args.deadlines.split(",")]
    low_budget = args.budget_ms if args.budget_ms_50 is None else args.budget_ms_50
    kinds = [b.strip() for b in args.bots.split(",") if b.strip()]
    unknown = sorted(set(kinds) - set(SAMPLE_BOTS))
    if unknown or len(kinds) < 3:
        parser.error(f"--bots needs 3 or more of {', '.join(SAMPLE_BOTS)}; got {args.bots!r}")
    names = []
    for kind in kinds:
        name, k = kind, 2
        while name in names:
            name, k = f"{kind}-{k}", k + 1
        names.append(name)
    matches_per_round = len(list(itertools.combinations(names, 3)))

    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="arena-scale-") as tmp:
        logs = Path(tmp)
        private = PrivateRedis(logs / "redis")
        url = private.start()
        bots: dict[str, BotProcess] = {}
        try:
            for budget in sorted({args.budget_ms, low_budget}):
                for name, bot in bots.items():
                    bot.stop()
                bots = {}
                for name, kind in zip(names, kinds, strict=True):
                    extra = ["--budget-ms", f"{budget:g}"] if kind == "montecarlo" else []
                    if name != kind:  # a repeated bot reports its ladder name, which registration checks
                        extra += ["--name", name]
                    bots[name] = start_bot(f"sample:{kind}", extra_args=extra)
                for deadline in deadlines:
                    if (low_budget if deadline < 200 else args.budget_ms) != budget:
                        continue
                    for workers in worker_counts:
                        print(f"measuring: {workers} worker(s) x {args.concurrency} matches, deadline {deadline} ms, "
                              f"Monte Carlo budget {budget:g} ms ...", file=sys.stderr, flush=True)
                        runs.append(measure(url, bots, workers, args.concurrency, deadline, args.rounds,
                                            args.separate, budget, logs))
        except (ScaleError, OSError, RuntimeError) as exc:
            print(f"scale failed: {exc}", file=sys.stderr)
            return 1
        finally:
            for bot in bots.values():
                bot.stop()
            private.stop()

    runs.sort(key=lambda r: (r.deadline_ms, r.workers))
    if args.json:
        print(json.dumps([asdict(r) for r in runs], indent=2))
        return 0
    mode = "`arena worker` processes" if args.separate else "embedded in `arena serve`"
    print(f"Take 5 round robin: {len(names)} sample bots ({', '.join(names)}), 3 seats, {args.rounds} rounds = "
          f"{matches_per_round * args.rounds} matches; workers {mode}, {args.concurrency} matches "
          "each at once")
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}")
    print(f"{'workers':>7} {'deadline':>9} {'MC budget':>9} {'matches':>7} {'wall':>8} {'matches/s':>9}  faults")
    for r in runs:
        faults = f"{r.faults}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(r.faults_by_kind.items()))}; "
                                  f"{', '.join(f'{k} {v}' for k, v in sorted(r.faults_by_bot.items()))})"
                                  if r.faults else "")
        print(f"{r.workers:>7} {r.deadline_ms:>6} ms {r.mc_budget_ms:>6g} ms {r.matches:>7} {r.wall_s:>6.1f} s "
              f"{r.matches_per_s:>9.2f}  {faults}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
