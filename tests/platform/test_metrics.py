"""Prometheus metrics (docs/metrics.md): `arena serve --metrics` and `arena worker --metrics` as real processes on
the session's real redis-server, real bot processes over real gRPC; the endpoints are scraped over HTTP during
and after a small tournament, and their counts are compared with what the tournament stored. Plus the pure parts:
bounded labels, the address syntax, and the committed Grafana dashboard naming only metrics that exist."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from platform_helpers import wait_until
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from arena.cli import cli
from arena.core import metrics as m
from arena.store import Store
from arena.worker.metrics import QueueCollector
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
ARENA = Path(sys.executable).parent / "arena"
ILLEGAL_BOT = str(ROOT / "tests" / "bots" / "illegal_bot.py")
DASHBOARD = ROOT / "docs" / "grafana" / "arena.json"
DOC = ROOT / "docs" / "metrics.md"


class Proc:
    """An `arena` subprocess whose stdout lines are collected by a thread; stopped with SIGTERM."""

    def __init__(self, args: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        self.process = subprocess.Popen([str(ARENA), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, env=env)
        self.lines: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def line_with(self, fragment: str) -> str:
        found = wait_until(lambda: [x for x in self.lines if fragment in x] or self.process.poll() is not None,
                           f"{fragment!r} from arena {self.process.args}")
        assert isinstance(found, list), f"exited {self.process.returncode}: {self.lines}"
        return found[0]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(timeout=120)


def scrape(url: str) -> list[Any]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.status == 200
        return list(text_string_to_metric_families(answer.read().decode()))


def total(families: list[Any], name: str, **labels: str) -> float:
    """The sum of the samples ``name`` whose labels include ``labels``."""
    return sum(s.value for f in families for s in f.samples
               if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))


def sample_value(name: str, labels: dict[str, str] | None = None) -> float:
    """The sample ``name`` with exactly ``labels`` in this process's registry; 0.0 before there is one."""
    value = REGISTRY.get_sample_value(name, labels or {})
    return 0.0 if value is None else value


@pytest.fixture
def arena(redis_url: str, tmp_path: Path, start_bot) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """`arena serve --workers 0` and one `arena worker`, both with --metrics on a free loopback port."""
    serve = Proc(["serve", "--listen", "127.0.0.1:0", "--workers", "0", "--redis-url", redis_url,
                  "--data-dir", str(tmp_path), "--metrics", "127.0.0.1:0"])
    worker = None
    try:
        server = serve.line_with("listening on ").rsplit("listening on ", 1)[1].split()[0]
        serve_metrics = serve.line_with("metrics: ").split()[1]
        worker = Proc(["worker", "--redis-url", redis_url, "--name", "mw", "--concurrency", "2",
                       "--metrics", "0"])
        worker_metrics = worker.line_with("metrics: ").split("metrics: ")[1].split()[0]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/metrics", worker_metrics)  # PORT alone: loopback
        yield {"server": server, "serve_metrics": serve_metrics, "worker_metrics": worker_metrics,
               "data_dir": tmp_path, "redis_url": redis_url, "start_bot": start_bot}
    finally:
        if worker is not None:
            assert worker.stop() == 0, worker.lines
        assert serve.stop() == 0, serve.lines


def _cli(arena: dict[str, Any], *args: str) -> Any:
    env = {"ARENA_TOKEN": None, "ARENA_ADMIN_TOKEN": None, "ARENA_DATA_DIR": str(arena["data_dir"])}
    result = CliRunner(env=env).invoke(cli, [*args, "--server", arena["server"], "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_scraped_counts_equal_the_tournament(arena: dict[str, Any]) -> None:
    start_bot = arena["start_bot"]
    bots = {"m-rnd": start_bot("sample:random", extra_args=["--name", "m-rnd"]),
            "m-heur": start_bot("sample:heuristic", extra_args=["--name", "m-heur"]),
            "m-bad": start_bot(ILLEGAL_BOT, extra_args=["--name", "m-bad", "--at", "0,2"])}  # 2 faults a match
    for name, bot in bots.items():
        _cli(arena, "bot", "register", name, bot.endpoint, "--data-dir", str(arena["data_dir"]))
    before = scrape(arena["worker_metrics"])
    assert total(before, "arena_matches_finished_total") == 0
    created: list[Any] = []
    run = threading.Thread(target=lambda: created.append(_cli(
        arena, "tournament", "create", "--bots", "m-rnd,m-heur,m-bad", "--seats", "3", "--rounds", "3", "--limit",
        "10", "--wait")))
    run.start()
    seen = []  # scraped while the tournament runs: the counts only grow, never past the tournament's
    while run.is_alive():
        during = scrape(arena["worker_metrics"])
        seen.append((total(during, "arena_matches_started_total"), total(during, "arena_matches_finished_total")))
        assert 0 <= total(during, "arena_matches_playing") <= 2  # --concurrency 2
        run.join(0.05)
    assert seen and seen == sorted(seen) and all(0 <= done <= started <= 3 for started, done in seen), seen
    (t,) = created
    assert (t["state"], t["matches_done"]) == ("finished", 3)

    store = Store.from_url(arena["redis_url"])
    try:
        records = [store.get_match_record(r["match_id"]) for r in store.list_matches(tournament_id=t["id"])]
    finally:
        store.close()
    assert len(records) == 3 and all(records)
    decisions = [d for r in records for d in r["decisions"]]
    faults = [f for r in records for f in r["faults"]]
    bot_ids = {s["name"] for r in records for s in r["seats"]}
    assert len(faults) == 6 and {f["kind"] for f in faults} == {"illegal"}  # the bad bot's 2 a match

    w = scrape(arena["worker_metrics"])
    assert total(w, "arena_matches_started_total", game="take5") == 3
    assert total(w, "arena_matches_finished_total", game="take5") == t["matches_done"]
    assert total(w, "arena_matches_failed_total") == 0
    assert total(w, "arena_jobs_settled_total", game="take5", outcome="stored") == 3
    assert total(w, "arena_match_duration_seconds_count", game="take5") == 3
    assert total(w, "arena_decisions_total", game="take5") == len(decisions)
    for bot in bot_ids:
        asked = [d for r in records for d in r["decisions"] if d["latency_ms"] is not None
                 and r["seats"][d["seat"]]["name"] == bot]
        assert total(w, "arena_decision_latency_seconds_count", game="take5", bot=bot) == len(asked) > 0
        latency = total(w, "arena_decision_latency_seconds_sum", game="take5", bot=bot)
        assert latency == pytest.approx(sum(d["latency_ms"] for d in asked) / 1000, rel=1e-6, abs=1e-9)
        bot_faults = [f for r in records for f in r["faults"] if r["seats"][f["seat"]]["name"] == bot]
        assert total(w, "arena_faults_total", game="take5", bot=bot) == len(bot_faults)
    assert total(w, "arena_faults_total", bot="m-bad@test", kind="illegal") == 6
    assert total(w, "arena_forfeits_total") == sum(len(r["forfeits"]) for r in records)
    assert total(w, "arena_decisions_total", source="default") == 6  # every fault got the default action
    assert total(w, "arena_event_loop_lag_seconds_count") > 0
    assert total(w, "arena_jobs_reclaimed_total") == 0
    assert total(w, "arena_queue_up") == 1
    assert total(w, "arena_queue_length", game="take5") == 0 and total(w, "arena_jobs_pending", game="take5") == 0
    assert total(w, "arena_workers_alive") == 1 and total(w, "arena_bots_unhealthy", game="take5") == 0
    assert total(w, "arena_matches_playing", game="take5") == 0
    assert not [s for f in w for s in f.samples if "match_id" in s.labels or "tournament" in s.labels]

    # the referee: its RPCs by method and status code, a refused call included
    missing = CliRunner(env={"ARENA_DATA_DIR": str(arena["data_dir"])}).invoke(
        cli, ["match", "show", "no-such-match", "--server", arena["server"]])
    assert missing.exit_code != 0
    s = scrape(arena["serve_metrics"])
    arena_rpc = {"grpc_service": "arena.v1.Arena"}
    assert total(s, "grpc_server_handled_total", grpc_method="RegisterBot", grpc_code="OK", **arena_rpc) == 3
    assert total(s, "grpc_server_handled_total", grpc_method="CreateTournament", grpc_code="OK", **arena_rpc) == 1
    assert total(s, "grpc_server_handled_total", grpc_method="GetMatch", grpc_code="NOT_FOUND", **arena_rpc) == 1
    assert total(s, "grpc_server_handled_total") == total(s, "grpc_server_started_total")  # every call answered
    assert total(s, "grpc_server_handling_seconds_count", grpc_method="CreateTournament") == 1
    assert total(s, "arena_matches_finished_total") == 0  # no embedded worker: the referee played nothing
    assert total(s, "arena_workers_alive") == 1 and total(s, "arena_queue_length", game="take5") == 0


def test_a_bad_metrics_address_is_refused_before_anything_starts(redis_url: str) -> None:
    result = CliRunner().invoke(cli, ["worker", "--metrics", "localhost:http", "--redis-url", "redis://127.0.0.1:1"])
    assert result.exit_code == 2 and "is not HOST:PORT or PORT" in result.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["worker", "--metrics", str(port), "--redis-url", redis_url])
    assert result.exit_code == 1 and f"cannot serve metrics on {port}: that port is taken" in result.output, \
        result.output
    assert "give --metrics another port" in result.output and "Traceback" not in result.output


# --- pure parts -------------------------------------------------------------------------------------------------


def test_bounded_label_keeps_the_first_values_then_other() -> None:
    label = m.BoundedLabel(3)
    assert [label.value(v) for v in ("a", "b", "a", "c", "d", "b", "e")] == ["a", "b", "a", "c", "other", "b",
                                                                             "other"]
    assert label.kept == {"a", "b", "c"}
    with pytest.raises(ValueError, match="at least 1"):
        m.BoundedLabel(0)
    assert m.game_label("no-such-game") == "other"


@pytest.mark.parametrize(("text", "parsed"), [
    ("9464", ("127.0.0.1", 9464)), ("0.0.0.0:9464", ("0.0.0.0", 9464)), ("[::1]:0", ("::1", 0)),
    (" localhost:9100 ", ("localhost", 9100)),
])
def test_metrics_address(text: str, parsed: tuple[str, int]) -> None:
    assert m.parse_metrics_address(text) == parsed


@pytest.mark.parametrize("text", ["", ":9464", "host:", "host:70000", "::1:9464", "a b:1", "host:-1"])
def test_bad_metrics_address(text: str) -> None:
    with pytest.raises(ValueError, match="is not HOST:PORT or PORT"):
        m.parse_metrics_address(text)


def _exported_names() -> set[str]:
    """Every sample name the arena's metrics can export (counters with _total, histograms with their series)."""
    import arena.server.metrics  # noqa: F401 - the RPC metrics
    import arena.worker.metrics as wm

    names = {m.QUEUE_LENGTH, m.JOBS_PENDING, m.MATCHES_DEFERRED, m.BOTS_UNHEALTHY, m.WORKERS_ALIVE, m.QUEUE_UP,
             m.MATCHES_PLAYING._name}
    for metric in (m.MATCHES_STARTED, m.MATCHES_FINISHED, m.MATCHES_FAILED, m.JOBS_SETTLED, m.MATCH_DURATION,
                   m.DECISIONS, m.DECISION_LATENCY, m.FAULTS, m.FORFEITS, m.JOBS_RECLAIMED, m.LOOP_LAG,
                   m.RPC_STARTED, m.RPC_HANDLED, m.RPC_SECONDS):
        base = metric._name
        if metric._type == "counter":
            names.add(base + "_total")
        else:
            names |= {base + "_bucket", base + "_count", base + "_sum"}
    assert wm.QueueCollector  # the queue gauges' collector exists
    return names


def test_grafana_dashboard_is_valid_json_naming_only_exported_metrics() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["title"] and dashboard["panels"]
    names = _exported_names()
    used: set[str] = set()
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            used |= set(re.findall(r"\b((?:arena|grpc_server)_[a-z_]+)", target["expr"]))
    assert used and used <= names, sorted(used - names)
    # every metric the doc lists is one that exists, and every family exported is in the doc
    documented = set(re.findall(r"`((?:arena|grpc_server)_[a-z_]+)`", DOC.read_text()))
    families = {re.sub(r"_(total|bucket|count|sum)$", "", n) for n in names}
    assert documented and documented <= names | families, sorted(documented - names - families)
    assert families <= documented | {re.sub(r"_total$", "", n) for n in documented}, sorted(families - documented)


# --- the parts, in this process ---------------------------------------------------------------------------------


def test_rpc_interceptor_counts_status_codes_and_never_labels_unserved_methods(arena_server) -> None:  # type: ignore[no-untyped-def]
    server, stub = arena_server()
    labels = {"grpc_type": "unary", "grpc_service": "arena.v1.Arena"}

    def handled(method: str, code: str) -> float:
        return sample_value("grpc_server_handled_total", {**labels, "grpc_method": method, "grpc_code": code})

    ok = handled("ListBots", "OK")
    refused = {code: handled("RemoveBot", code) for code in ("NOT_FOUND", "PERMISSION_DENIED", "UNAUTHENTICATED")}
    stub.ListBots(arena_pb2.ListBotsRequest(game="take5"))
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:  # no token: refused by the servicer
        with pytest.raises(grpc.RpcError) as refusal:
            arena_pb2_grpc.ArenaStub(channel).RemoveBot(arena_pb2.RemoveBotRequest(game="take5", bot="nobody"))
        nope = channel.unary_unary("/arena.v1.Arena/NoSuchMethod", request_serializer=lambda b: b,
                                   response_deserializer=lambda b: b)
        with pytest.raises(grpc.RpcError) as unserved:
            nope(b"")
    code = refusal.value.code().name
    assert code in refused
    assert unserved.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert handled("ListBots", "OK") == ok + 1
    assert {c: handled("RemoveBot", c) - before for c, before in refused.items()} == \
        {c: float(c == code) for c in refused}
    assert sample_value("grpc_server_handling_seconds_count", {**labels, "grpc_method": "ListBots"}) >= 1
    served = {s.labels.get("grpc_method") for f in REGISTRY.collect() for s in f.samples}
    assert "NoSuchMethod" not in served  # a caller's made-up name never becomes a series


def test_loop_lag_sees_a_blocked_event_loop() -> None:
    async def block() -> None:
        watcher = asyncio.create_task(m.watch_loop_lag(tick_s=0.05))
        await asyncio.sleep(0.12)  # a few on-time ticks
        time.sleep(0.3)  # the loop is blocked: the pending tick wakes at least 0.25 s late
        await asyncio.sleep(0.12)
        watcher.cancel()

    before_sum, before_count = sample_value("arena_event_loop_lag_seconds_sum"), \
        sample_value("arena_event_loop_lag_seconds_count")
    asyncio.run(block())
    assert sample_value("arena_event_loop_lag_seconds_count") - before_count >= 2
    assert sample_value("arena_event_loop_lag_seconds_sum") - before_sum >= 0.2  # at least 0.3 - 0.05 s late


def test_queue_gauges_say_when_redis_does_not_answer(redis_url: str, dead_endpoint: str) -> None:
    dead = Store.from_url(f"redis://{dead_endpoint}/0", client_options={"socket_connect_timeout": 1})
    live = Store.from_url(redis_url)
    try:
        down = {f.name: f for f in QueueCollector(dead).collect()}
        assert list(down) == ["arena_queue_up"] and down["arena_queue_up"].samples[0].value == 0
        up = {f.name: f for f in QueueCollector(live).collect()}
        assert up["arena_queue_up"].samples[0].value == 1
        assert {s.labels["game"] for s in up["arena_queue_length"].samples} == set(live.job_games())
        assert up["arena_workers_alive"].samples[0].value == 0  # an empty Redis: no worker
    finally:
        dead.close()
        live.close()


def test_bots_past_the_label_cap_are_counted_as_other(start_bot, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from arena.match.referee import SeatSpec, run_match_sync
    from arena.worker.metrics import match_stored

    bot = start_bot("sample:random")
    seats = [SeatSpec(name=f"cap-{i}@1", endpoint=bot.endpoint) for i in range(3)]
    record = run_match_sync("metrics-cap", "take5", seats, seed=7)
    monkeypatch.setattr(m, "BOT_LABELS", m.BoundedLabel(1))
    before = {bot: sample_value("arena_decision_latency_seconds_count", {"game": "take5", "bot": bot})
              for bot in ("cap-0@1", "other")}
    match_stored(record)
    per_seat = [sum(1 for d in record.decisions if d["seat"] == s and d["latency_ms"] is not None) for s in range(3)]
    assert sample_value("arena_decision_latency_seconds_count", {"game": "take5", "bot": "cap-0@1"}) - \
        before["cap-0@1"] == per_seat[0] > 0
    assert sample_value("arena_decision_latency_seconds_count", {"game": "take5", "bot": "other"}) - \
        before["other"] == per_seat[1] + per_seat[2]
    assert sample_value("arena_decisions_total", {"game": "take5", "bot": "cap-1@1", "source": "bot"}) == 0
    assert m.BOT_LABELS.kept == {"cap-0@1"}


def test_metrics_connections_are_counted_per_peer() -> None:
    """Every loopback address is one peer (a local process could take connections from any of 127.0.0.0/8), an
    IPv6 address counts as its /64; a peer holds at most METRICS_CONNECTIONS_PER_CLIENT, so another peer (a
    Prometheus elsewhere) keeps room, up to METRICS_CONNECTIONS in all."""
    from arena.core import limits
    from arena_sdk.peers import PeerShare, client_address

    assert {client_address(a) for a in ("127.0.0.1", "127.0.0.3", "::1", "::ffff:127.0.0.9")} == {"loopback"}
    assert client_address("2001:db8::1") == client_address("2001:db8::ffff") == "2001:db8::/64"
    assert client_address("10.0.0.7") == "10.0.0.7" and client_address("not an address") == "not an address"
    server = m._BoundedServer.__new__(m._BoundedServer)  # its accounting alone, no socket
    server.slots = threading.BoundedSemaphore(limits.METRICS_CONNECTIONS)
    server.by_client = PeerShare(limits.METRICS_CONNECTIONS_PER_CLIENT)
    assert all(server._take("loopback") for _ in range(limits.METRICS_CONNECTIONS_PER_CLIENT))
    assert not server._take("loopback") and server._take("10.0.0.7")  # a Prometheus elsewhere keeps room
    server._give_back("loopback")
    assert server._take("loopback") and server.by_client.held() == {"loopback": limits.METRICS_CONNECTIONS_PER_CLIENT,
                                                                    "10.0.0.7": 1}


def _scrape_from(source: str, port: int) -> bytes:
    """GET /metrics from the loopback address ``source`` (127.0.0.2 is another peer than 127.0.0.1)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)) as s:
        s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_idle_connections_cannot_take_the_metrics_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stranger opening connections to --metrics holds at most METRICS_CONNECTIONS_PER_CLIENT of them (the
    process's threads and descriptors are the referee's too), from any loopback address: one more is closed at
    once, and a client dripping its request a byte at a time is closed once the whole request has not come within
    METRICS_READ_S."""
    from arena.core import limits

    endpoint = m.MetricsEndpoint("127.0.0.1:0")
    endpoint.start()
    idle = []
    try:
        threads = threading.active_count()
        for _ in range(limits.METRICS_CONNECTIONS_PER_CLIENT + 20):
            idle.append(socket.create_connection(("127.0.0.1", endpoint.port), timeout=5))
        time.sleep(0.3)
        assert threading.active_count() - threads <= limits.METRICS_CONNECTIONS_PER_CLIENT
        over = idle[-1]
        over.settimeout(2)
        assert over.recv(1) == b""  # closed by the server at once, not held
        with contextlib.suppress(OSError):  # every loopback address is one peer: 127.0.0.2 gets no more room
            assert not _scrape_from("127.0.0.2", endpoint.port).startswith(b"HTTP/1.0 200")
        for s in idle:
            s.close()
        monkeypatch.setattr(limits, "METRICS_READ_S", 1.0)  # read at each connection's start: the drip's deadline
        drip = socket.create_connection(("127.0.0.1", endpoint.port), timeout=5)
        t0 = time.monotonic()
        with contextlib.suppress(OSError):
            for byte in b"GET /metrics HTTP/1.0\r\nX-Slow: " + b"a" * 100:  # a byte every 0.1 s, never ends
                drip.sendall(bytes([byte]))
                time.sleep(0.1)
        assert time.monotonic() - t0 < 4  # cut off after about METRICS_READ_S, not fed for ever
        drip.close()
        wait_until(lambda: threading.active_count() <= threads, "the connections to be closed", timeout=10)
        with urllib.request.urlopen(endpoint.url, timeout=5) as answered:
            assert answered.status == 200
    finally:
        for s in idle:
            s.close()
        endpoint.stop()
