"""`make chaos`: a real arena plays a tournament of each game while its own parts are killed.

What runs, all real processes on loopback, in a temporary folder:

- a private ``redis-server`` with appendonly persistence (``arena.store.redis_server.PrivateRedis``), owned by this
  script;
- ``arena serve`` (the referee, with embedded workers) on a fixed port, finding that Redis through ``--data-dir``;
- extra ``arena worker`` processes (``--data-dir`` too, so they follow the Redis);
- sample bots of both games, registered through the Arena service; one round robin of each game is created
  (``ARENA_ADMIN_TOKEN`` is set for everything started here and sent with the organiser calls).

While the tournaments run, kills are injected at evenly spaced points of their progress, cycling through the kinds:
``worker`` (SIGKILL of an extra worker, preferably while it runs matches; a new worker takes its place), ``referee``
(SIGKILL of ``arena serve`` with its embedded workers; restarted on the same port) and ``redis`` (SIGKILL of
redis-server; restarted on the same port and data folder, so everything it acknowledged comes back from the
appendonly file). Then it waits for both tournaments to finish and checks, per game:

- matches lost: 0 (every match of the tournament stored; none given up as failed, none cancelled);
- duplicates: 0 (each match id once in the results log and in the tournament);
- ladder equals rebuild: yes (``Store.check_ladder``: the live Elo ladder equals the one recomputed from the log);
- no bot marked unhealthy (a fault of ours is never charged to a bot).

It prints the kills injected by kind, the matches re-run (jobs reclaimed from a killed worker, from the workers'
logs), the faults in the stored results (the bots' own, e.g. a timeout on a loaded machine) and the verdict. Exit
code 0 when every check passed, 1 otherwise (2 for a setup error). ``run_chaos`` is also called by
``tests/platform/test_chaos_small.py`` with a smaller plan.

``--cluster`` (``make chaos-cluster``): the same run on a private 3-master Redis Cluster
(``arena.store.redis_cluster.PrivateRedisCluster``, appendonly on every node) instead of one redis-server: the referee
and the workers get its ``redis+cluster://`` URL through ``ARENA_REDIS_URL``, and each ``redis`` kill is a SIGKILL of
one master (the next one each time), restarted on the same port, folder and cluster config, so it rejoins the
cluster with its slots and everything it acknowledged. While it is down its slots cannot be served (no replicas),
so the clients must ride out refused and failed calls, as with a lone Redis restarting.

Environment: CHAOS_KILLS (kills of each kind, default 3), CHAOS_KEEP=1 keeps the temporary folder (logs).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `python tools/chaos.py` from a checkout finds arena/

import grpc  # noqa: E402
import redis  # noqa: E402
from redis.exceptions import ClusterDownError, RedisClusterException, TryAgainError  # noqa: E402

from arena.match import local_bots  # noqa: E402
from arena.store import Store, results_log_key, tournament_matches_key  # noqa: E402
from arena.store.redis_cluster import PrivateRedisCluster  # noqa: E402
from arena.store.redis_server import PrivateRedis  # noqa: E402
from arena.store.redis_urls import redact_url  # noqa: E402
from arena_sdk.pb import arena_pb2, arena_pb2_grpc  # noqa: E402
from arena_sdk.wire import config_from_dict, config_to_proto  # noqa: E402

KINDS = ("worker", "referee", "redis")
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0
RECLAIM_RE = re.compile(r"reclaimed job \S+ \(match (\S+), delivery \d+\)")
ADMIN_TOKEN_ENV = "ARENA_ADMIN_TOKEN"
# what a read sees while a Redis (or a cluster master) restarts: refused, timed out, loading, slots not served
REDIS_AWAY = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, ClusterDownError, TryAgainError,
              RedisClusterException)
T = TypeVar("T")


class ChaosError(RuntimeError):
    """The arena could not be set up or did not finish in time; the message says which part."""


@dataclass(frozen=True)
class ChaosPlan:
    """What to run and what to kill.

    Attributes:
        take5_bots, taki_bots: (ladder name, sample bot spec) of each game's round robin.
        seats: seats per match. take5_matches, taki_matches: at least this many matches in each round robin (its
            rounds are chosen for it, from a dry run: the count per round depends on the deal plan).
        take5_config, taki_config: rule options in JSON form (``arena_sdk.wire.config_to_dict``; {} = defaults).
        serve_workers: workers embedded in ``arena serve``. extra_workers: ``arena worker`` processes.
        concurrency: matches each worker runs at once. visibility_timeout_s: a dead worker's job is reclaimed
            after this long, seconds.
        kills: the kinds to inject, in order (``KINDS``): the first once ``first_kill_at`` of the matches are
            settled, each next one ``kill_gap_s`` seconds after the arena recovered from the previous one (so a
            match is not killed in every one of its ``max_deliveries`` deliveries: that would be a poison job,
            given up); none after the tournaments finished.
        timeout_s: the whole run must finish within this, seconds.
        cluster: run on a private Redis Cluster of ``cluster_masters`` masters instead of one redis-server; a
            ``redis`` kill then hits one master (in turn).
    """

    take5_bots: tuple[tuple[str, str], ...] = (
        ("chaos-random", "sample:random"), ("chaos-heuristic", "sample:heuristic"),
        ("chaos-random-2", "sample:random"), ("chaos-heuristic-2", "sample:heuristic"))
    taki_bots: tuple[tuple[str, str], ...] = (
        ("chaos-taki-random", "sample:taki-random"), ("chaos-taki-heuristic", "sample:taki-heuristic"),
        ("chaos-taki-random-2", "sample:taki-random"))
    seats: int = 3
    take5_matches: int = 300
    taki_matches: int = 900  # Taki matches are short: enough of them that every kill comes before the end
    take5_config: dict[str, Any] = field(default_factory=dict)
    taki_config: dict[str, Any] = field(default_factory=dict)
    serve_workers: int = 1
    extra_workers: int = 2
    concurrency: int = 2
    visibility_timeout_s: float = 3.0
    kills: tuple[str, ...] = KINDS * 3
    first_kill_at: float = 0.05
    kill_gap_s: float = 4.0
    timeout_s: float = 900.0
    cluster: bool = False
    cluster_masters: int = 3


@dataclass
class GameCheck:
    """The checks of one game's tournament after the chaos."""

    game: str
    tournament: str
    matches_total: int
    matches_stored: int
    lost: int
    duplicates: int
    ladder_equal: bool
    faults: int
    unhealthy: list[str]
    index_agrees: bool = True  # the tournament's match index holds exactly the match ids of the results log

    @property
    def ok(self) -> bool:
        return (self.lost == 0 and self.duplicates == 0 and self.ladder_equal and not self.unhealthy
                and self.index_agrees)


@dataclass
class ChaosReport:
    """What a chaos run did and found: kills by kind, matches interrupted by a kill (the killed worker or referee
    was running them), matches in flight while Redis was killed (their workers live on), matches re-run
    (reclaimed from a dead worker: from the workers' logs), the per-game checks, the wall time, and where the logs
    are."""

    kills: collections.Counter[str] = field(default_factory=collections.Counter)
    interrupted: set[str] = field(default_factory=set)
    redis_in_flight: set[str] = field(default_factory=set)
    rerun: set[str] = field(default_factory=set)
    games: list[GameCheck] = field(default_factory=list)
    wall_s: float = 0.0
    work_dir: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.games) and all(g.ok for g in self.games)

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {self.kills[k]}" for k in KINDS)
        lines = [f"chaos summary ({self.wall_s:.0f} s):",
                 f"  kills injected: {sum(self.kills.values())} ({kinds})",
                 f"  matches running in a killed worker or referee: {len(self.interrupted)}; in flight while Redis "
                 f"was killed: {len(self.redis_in_flight)}; matches re-run (reclaimed after a kill): "
                 f"{len(self.rerun)}"]
        for g in self.games:
            lines.append(
                f"  {g.game} tournament {g.tournament}: {g.matches_stored}/{g.matches_total} matches stored, "
                f"lost {g.lost}, duplicates {g.duplicates}, ladder equals rebuild: {'yes' if g.ladder_equal else 'NO'}"
                f", unhealthy bots: {len(g.unhealthy)}{' (' + ', '.join(g.unhealthy) + ')' if g.unhealthy else ''}"
                f", faults in the stored results: {g.faults}"
                + ("" if g.index_agrees else ", the tournament's match index DIFFERS from the results log"))
        lines.append(f"  result: {'PASS' if self.ok else 'FAIL'}")
        return "\n".join(lines)


def _arena_command() -> list[str]:
    script = Path(sys.executable).parent / "arena"
    return [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Arena:
    """The processes of one chaos run; every one started is stopped by ``close``."""

    def __init__(self, plan: ChaosPlan, work_dir: Path, say: Callable[[str], None]) -> None:
        self.plan = plan
        self.work = work_dir
        self.data_dir = work_dir / "data"
        self.logs = work_dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.say = say
        self.token = secrets.token_urlsafe(32)
        self.env = {k: v for k, v in os.environ.items() if k != "ARENA_REDIS_URL"}
        self.env.update({ADMIN_TOKEN_ENV: self.token, "PYTHONUNBUFFERED": "1"})
        self.port = _free_port()
        self.server = f"127.0.0.1:{self.port}"
        self.redis: PrivateRedis | None = None
        self.cluster: PrivateRedisCluster | None = None
        self.cluster_kills = 0
        self.serve: subprocess.Popen[bytes] | None = None
        self.serve_runs = 0
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.worker_runs = 0
        self.bots: list[local_bots.BotProcess] = []
        self.store: Store | None = None
        self.channel: grpc.Channel | None = None

    # -- processes -----------------------------------------------------------------------------------------------

    def _spawn(self, label: str, args: list[str]) -> subprocess.Popen[bytes]:
        with open(self.logs / f"{label}.log", "ab") as log:
            return subprocess.Popen(_arena_command() + ["-v"] + args, cwd=ROOT, env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def start_redis(self) -> None:
        if self.plan.cluster:  # the referee and workers find it through ARENA_REDIS_URL, not the data folder
            self.cluster = PrivateRedisCluster(self.work / "cluster", masters=self.plan.cluster_masters)
            url = self.cluster.start()
            self.env["ARENA_REDIS_URL"] = url
        else:
            self.redis = PrivateRedis(self.data_dir)
            url = self.redis.start()
        if self.store is None:
            self.store = Store.from_url(url, client_options={"socket_connect_timeout": 2, "socket_timeout": 10})

    def start_serve(self) -> None:
        self.serve_runs += 1
        label = f"serve-{self.serve_runs}"
        self.serve = self._spawn(label, [
            "serve", "--listen", self.server, "--data-dir", str(self.data_dir), "--workers",
            str(self.plan.serve_workers), "--concurrency", str(self.plan.concurrency), "--visibility-timeout",
            str(self.plan.visibility_timeout_s)])
        deadline = time.monotonic() + START_TIMEOUT_S
        while "listening on" not in (self.logs / f"{label}.log").read_text(errors="replace"):
            if self.serve.poll() is not None or time.monotonic() > deadline:
                raise ChaosError(f"arena serve did not start; see {self.logs / f'{label}.log'}")
            time.sleep(0.05)

    def start_worker(self, wait: bool = True) -> str:
        """Start an ``arena worker``; with ``wait``, until its first heartbeat."""
        self.worker_runs += 1
        name = f"chaos-w{self.worker_runs}"
        self.workers[name] = self._spawn(name, [
            "worker", "--name", name, "--data-dir", str(self.data_dir), "--concurrency", str(self.plan.concurrency),
            "--visibility-timeout", str(self.plan.visibility_timeout_s)])
        if wait:
            self.wait_workers()
        return name

    def wait_workers(self) -> None:
        """Wait until every worker process started is up (has sent a heartbeat), or fail if one exited: a worker
        finds Redis when it starts, so Redis must not be killed before."""
        def up() -> bool:
            beating = {w.name for w in self.read(self.db.list_workers) if w.alive(time.time())}
            for name, proc in self.workers.items():
                if proc.poll() is None and name not in beating:
                    return False
                if proc.poll() is not None and proc.returncode not in (-signal.SIGKILL, 0):
                    raise ChaosError(f"worker {name} exited with {proc.returncode}; see {self.logs / name}.log")
            return True

        self.wait(up, "the workers' first heartbeats")

    def start_bots(self) -> dict[str, local_bots.BotProcess]:
        """Start every sample bot of the plan at once (``--name NAME``, as registration checks the name); returns
        name -> process."""
        bots = list(self.plan.take5_bots) + list(self.plan.taki_bots)
        started: dict[str, local_bots.BotProcess] = {}
        with concurrent.futures.ThreadPoolExecutor(len(bots)) as pool:
            futures = {name: pool.submit(local_bots.start_bot, spec, extra_args=["--name", name])
                       for name, spec in bots}
            problems = []
            for name, future in futures.items():
                try:
                    started[name] = future.result()
                    self.bots.append(started[name])
                except Exception as exc:  # noqa: BLE001 - reported below; the others are stopped by close()
                    problems.append(f"{name}: {exc}")
        if problems:
            raise ChaosError("sample bots did not start: " + "; ".join(problems))
        return started

    def close(self) -> None:
        """Stop everything: the referee and workers first (SIGTERM; running matches finish while the bots are
        up), then the bots and Redis."""
        procs = ([self.serve] if self.serve else []) + list(self.workers.values())
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for bot in self.bots:
            bot.stop()
        if self.channel is not None:
            self.channel.close()
        if self.store is not None:
            self.store.close()
        if self.redis is not None:
            self.redis.stop()
        if self.cluster is not None:
            self.cluster.stop()

    @property
    def redis_url(self) -> str:
        """The Redis URL for messages: its password redacted."""
        return redact_url(self.cluster.url if self.cluster else self.redis.url if self.redis else "?")

    # -- reading, with Redis coming and going ------------------------------------------------------------------

    @property
    def db(self) -> Store:
        assert self.store is not None
        return self.store

    def read(self, call: Callable[[], T], patience_s: float = 60.0) -> T:
        """``call()``, tried again while Redis is away (restarting), for up to ``patience_s`` seconds."""
        deadline = time.monotonic() + patience_s
        while True:
            try:
                return call()
            except REDIS_AWAY:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def wait(self, predicate: Callable[[], Any], what: str, timeout: float = START_TIMEOUT_S) -> Any:
        deadline = time.monotonic() + timeout
        while not (value := predicate()):
            if time.monotonic() > deadline:
                raise ChaosError(f"gave up waiting {timeout:.0f} s for {what}")
            time.sleep(0.05)
        return value

    def stub(self) -> arena_pb2_grpc.ArenaStub:
        if self.channel is None:
            self.channel = grpc.insecure_channel(self.server)
        return arena_pb2_grpc.ArenaStub(self.channel)

    def admin(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)  # the organiser calls' metadata (proto/arena.proto)

    # -- the kills -----------------------------------------------------------------------------------------------

    def _running(self, pids: Iterable[int] | None = None, names: Iterable[str] | None = None) -> set[str]:
        now = time.time()
        want_pids, want_names = set(pids or ()), set(names or ())
        out: set[str] = set()
        for w in self.read(self.db.list_workers):
            if w.alive(now) and (w.pid in want_pids or w.name in want_names):
                out.update(w.running)
        return out

    def _busy(self, running: Callable[[], set[str]], patience_s: float = 2.0) -> set[str]:
        """What ``running()`` shows, waiting up to ``patience_s`` for it to show a match (a kill then interrupts
        one)."""
        deadline = time.monotonic() + patience_s
        while not (now := running()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return now

    def kill_worker(self) -> set[str]:
        alive = [n for n, p in self.workers.items() if p.poll() is None]
        if not alive:
            self.start_worker()
            alive = [n for n, p in self.workers.items() if p.poll() is None]
        victim = max(alive, key=lambda n: len(self._running(names=[n])))
        running = self._busy(lambda: self._running(names=[victim]))
        proc = self.workers[victim]
        proc.kill()
        proc.wait()
        self.say(f"  SIGKILL worker {victim} (pid {proc.pid}) running {sorted(running) or 'nothing'}; starting "
                 f"another")
        self.start_worker(wait=False)
        return running

    def kill_referee(self) -> set[str]:
        assert self.serve is not None
        pid = self.serve.pid
        running = self._busy(lambda: self._running(pids=[pid]))
        self.serve.kill()
        self.serve.wait()
        self.say(f"  SIGKILL arena serve (pid {pid}) with its workers running {sorted(running) or 'nothing'}; "
                 f"restarting it on {self.server}")
        self.start_serve()
        return running

    def kill_redis(self) -> set[str]:
        if self.cluster is not None:
            return self.kill_cluster_master()
        assert self.redis is not None and self.redis.process is not None
        self.wait_workers()
        running = self._running(pids=[p.pid for p in self.workers.values()] + [self.serve.pid if self.serve else 0])
        port = self.redis.port
        self.redis.process.kill()
        self.redis.process.wait()
        self.redis.process = None
        self.start_redis()
        self.say(f"  SIGKILL redis-server (port {port}) while {len(running)} matches ran; restarted on port "
                 f"{self.redis.port} from its appendonly file")
        if self.redis.port != port:
            self.say(f"  note: the port changed ({port} -> {self.redis.port}); the workers follow it through the "
                     "data folder")
            self.db.retarget(self.redis.url)
        return running

    def kill_cluster_master(self) -> set[str]:
        """SIGKILL one master of the cluster (the next one each time) and restart it on the same port, folder and
        cluster config (``PrivateRedisCluster.restart_node``: back once the cluster is ready again)."""
        assert self.cluster is not None
        self.wait_workers()
        running = self._running(pids=[p.pid for p in self.workers.values()] + [self.serve.pid if self.serve else 0])
        node = self.cluster_kills % self.cluster.masters
        self.cluster_kills += 1
        down = time.monotonic()
        self.cluster.restart_node(node)
        self.say(f"  SIGKILL cluster master {node} (port {self.cluster.ports[node]}) while {len(running)} matches "
                 f"ran; restarted from its appendonly file, cluster ready again after "
                 f"{time.monotonic() - down:.1f} s")
        return running

    def inject(self, kind: str) -> set[str]:
        return {"worker": self.kill_worker, "referee": self.kill_referee, "redis": self.kill_redis}[kind]()


def _create_tournament(arena: Arena, game: str, bots: list[str], matches: int, config: dict[str, Any]) -> Any:
    """A round robin of ``game`` with at least ``matches`` matches (rounds from a dry run of one round)."""
    request = arena_pb2.CreateTournamentRequest(game=game, bots=bots, seats_per_match=arena.plan.seats, rounds=1,
                                                dry_run=True)
    if config:
        request.config.CopyFrom(config_to_proto(game, config_from_dict(game, config)))
    per_round = arena.stub().CreateTournament(request, metadata=arena.admin(), timeout=30).matches_total
    request.rounds = max(1, -(-matches // max(1, per_round)))
    request.dry_run = False
    return arena.stub().CreateTournament(request, metadata=arena.admin(), timeout=30)


def _check_game(arena: Arena, game: str, tournament_id: str) -> GameCheck:
    """Lost, duplicated, ladder: what the store holds of one game's tournament after the chaos."""
    db = arena.db
    info = arena.read(lambda: db.get_tournament(tournament_id))
    if info is None:
        raise ChaosError(f"tournament {tournament_id} of {game} is gone from Redis")
    log = [m for m in arena.read(lambda: db.client.lrange(results_log_key(game), 0, -1))
           if m.startswith(f"{tournament_id}-")]
    indexed = arena.read(lambda: db.client.zrange(tournament_matches_key(game, tournament_id), 0, -1))
    stored = set(log)
    check = arena.read(lambda: db.check_ladder(game))
    unhealthy = sorted(arena.read(lambda: db.unhealthy_bots(game)))
    return GameCheck(game=game, tournament=tournament_id, matches_total=info.matches_total,
                     matches_stored=len(stored), lost=info.matches_total - len(stored),
                     duplicates=len(log) - len(stored), ladder_equal=check.equal, faults=info.faults,
                     unhealthy=unhealthy, index_agrees=sorted(indexed) == sorted(stored))


def _reruns(logs: Path) -> set[str]:
    out: set[str] = set()
    for path in logs.glob("*.log"):
        out.update(RECLAIM_RE.findall(path.read_text(errors="replace")))
    return out


def run_chaos(plan: ChaosPlan, work_dir: Path | None = None, say: Callable[[str], None] = print) -> ChaosReport:
    """Run the chaos of ``plan`` in ``work_dir`` (a new temporary folder when None; kept) and return the report.
    Raises ``ChaosError`` when the arena cannot be set up or the tournaments do not finish within
    ``plan.timeout_s``; every process started is stopped in any case."""
    for kind in plan.kills:
        if kind not in KINDS:
            raise ValueError(f"unknown kill kind {kind!r}; kinds: {', '.join(KINDS)}")
    started = time.monotonic()
    work = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="arena-chaos-"))
    report = ChaosReport(work_dir=str(work))
    arena = Arena(plan, work, say)
    try:
        arena.start_redis()
        if plan.cluster:
            say(f"Redis Cluster of {plan.cluster_masters} masters (appendonly) in {work / 'cluster'} at "
                f"{arena.redis_url}")
        else:
            say(f"redis-server (appendonly) in {arena.data_dir} at {arena.redis_url}")
        arena.start_serve()
        say(f"arena serve on {arena.server}: {plan.serve_workers} embedded workers; {plan.extra_workers} extra "
            f"arena workers; {plan.concurrency} matches each; visibility timeout {plan.visibility_timeout_s:g} s")
        for _ in range(plan.extra_workers):
            arena.start_worker()
        bots = arena.start_bots()
        registered: dict[str, list[str]] = {"take5": [], "taki": []}
        for game, names in (("take5", plan.take5_bots), ("taki", plan.taki_bots)):
            for name, _ in names:
                request = arena_pb2.RegisterBotRequest(name=name, endpoint=bots[name].endpoint, game=game)
                registered[game].append(arena.stub().RegisterBot(request, timeout=30).bot_id)
        tournaments = {
            "take5": _create_tournament(arena, "take5", registered["take5"], plan.take5_matches, plan.take5_config),
            "taki": _create_tournament(arena, "taki", registered["taki"], plan.taki_matches, plan.taki_config),
        }
        total = sum(t.matches_total for t in tournaments.values())
        say("tournaments: " + ", ".join(f"{g} {t.id} ({t.matches_total} matches)" for g, t in tournaments.items()))
        n = len(plan.kills)
        deadline = started + plan.timeout_s
        last_kill = float("-inf")

        def settled() -> tuple[int, bool]:
            infos = [arena.read(lambda tid=t.id: arena.db.get_tournament(tid)) for t in tournaments.values()]
            done = sum(i.matches_done + i.matches_failed + i.matches_cancelled for i in infos if i is not None)
            return done, all(i is not None and i.state != "running" for i in infos)

        next_kill = 0
        while True:
            done, finished = settled()
            if finished:
                break
            if next_kill < n and done >= plan.first_kill_at * total and \
                    time.monotonic() - last_kill >= plan.kill_gap_s:
                kind = plan.kills[next_kill]
                say(f"kill {next_kill + 1}/{n} ({kind}) at {done}/{total} matches settled:")
                hit = arena.inject(kind)
                if kind == "redis":
                    report.redis_in_flight |= hit
                else:
                    report.interrupted |= hit
                report.kills[kind] += 1
                next_kill += 1
                last_kill = time.monotonic()  # after the restart: the arena's recovery starts now
                continue
            if time.monotonic() > deadline:
                raise ChaosError(f"the tournaments did not finish within {plan.timeout_s:.0f} s ({done}/{total})")
            time.sleep(0.1)
        if next_kill < n:
            say(f"the tournaments finished before kills {next_kill + 1}..{n} could be injected")
        report.games = [_check_game(arena, g, t.id) for g, t in tournaments.items()]
        report.rerun = _reruns(arena.logs)
    finally:
        arena.close()
        report.wall_s = time.monotonic() - started
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Take 5 and Taki round robins on a real arena while its workers, "
                                     "referee and Redis are SIGKILLed; nothing lost, nothing counted twice?")
    parser.add_argument("--cluster", action="store_true",
                        help="run on a private 3-master Redis Cluster; the Redis kills hit its masters in turn")
    args = parser.parse_args(argv)
    kills = int(os.environ.get("CHAOS_KILLS", "3"))
    plan = ChaosPlan(kills=KINDS * kills, cluster=args.cluster)
    keep = os.environ.get("CHAOS_KEEP") == "1"
    work = Path(tempfile.mkdtemp(prefix="arena-chaos-"))
    target = "Redis Cluster (3 masters)" if args.cluster else "Redis"
    print(f"make chaos{'-cluster' if args.cluster else ''}: a Take 5 and a Taki round robin on a real arena while "
          f"{len(plan.kills)} kills hit its workers, its referee and its {target} (logs in {work})", flush=True)
    try:
        report = run_chaos(plan, work, say=lambda line: print(line, flush=True))
    except (ChaosError, OSError, grpc.RpcError) as exc:
        print(f"chaos failed to run: {exc}; logs in {work}", file=sys.stderr)
        return 2
    print(report.summary(), flush=True)
    if report.ok and not keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"logs kept in {work}", flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
