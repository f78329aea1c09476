"""``arena sprt`` end to end (issue 10 item 3): a real redis-server, a real Arena server with workers, real bot
processes over gRPC. One bot NAME registered as version 1 (random play) and version 2 (the heuristic sample's
play), which is far stronger; the SPRT must end with H1, through the CLI, and again when the worker playing it is
SIGKILLed halfway and another takes over."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from platform_helpers import HERE, wait_until

from arena.cli import cli
from arena.cli.app import admin_signer
from arena.server.app import ArenaServer
from arena.store import Store
from arena.store.keys import jobs_key
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

SPRT_BOT = str(HERE / "bots" / "sprt_bot.py")
ARENA = str(Path(sys.executable).parent / "arena")
ELO1 = 100.0  # H1 of these tests: V2 is 100 Elo better (it is far more: it ends in a few blocks)
MAX_BLOCKS = 40


@pytest.fixture
def versions(start_bot: Callable[..., Any]) -> tuple[str, str]:
    """Endpoints of sprtbot version 1 (random play) and version 2 (heuristic play), two bot processes."""
    weak = start_bot(SPRT_BOT, extra_args=["--bot-version", "1", "--play", "random"])
    strong = start_bot(SPRT_BOT, extra_args=["--bot-version", "2", "--play", "heuristic"])
    return weak.endpoint, strong.endpoint


def _register(stub: arena_pb2_grpc.ArenaStub, weak: str, strong: str) -> None:
    first = stub.RegisterBot(arena_pb2.RegisterBotRequest(name="sprtbot", endpoint=weak, game="take5"))
    assert first.bot_id == "sprtbot@1"
    second = stub.RegisterBot(arena_pb2.RegisterBotRequest(name="sprtbot", endpoint=strong, game="take5",
                                                           owner_token=first.owner_token))
    assert second.bot_id == "sprtbot@2"


def _ended(stub: arena_pb2_grpc.ArenaStub, tid: str) -> arena_pb2.Sprt:
    """The SPRT once its tournament has ended (the seed revealed: every delivered match settled)."""
    return wait_until(lambda: (s := stub.GetSprt(arena_pb2.GetSprtRequest(id=tid))).tournament.seed_hex and s,
                      f"SPRT {tid} to end")


def _check_blocks(stub: arena_pb2_grpc.ArenaStub, s: arena_pb2.Sprt) -> list[Any]:
    """Every counted block's two tables (match ids 2b and 2b + 1): V1 and V2 at the same seat; on duplicate deals
    the same deal (tables 0 and 1), on unique deals deals 2b and 2b + 1 (table 0 each); returns the matches."""
    tid = s.tournament.id
    matches = list(stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, limit=1000)).matches)
    assert len(matches) == s.tournament.matches_done and all(m.revealed for m in matches)
    by_block: dict[int, dict[int, Any]] = {}
    for m in matches:
        index = int(m.match_id.rsplit("-", 1)[1])
        by_block.setdefault(index // 2, {})[index % 2] = m
    complete = [b for b, tables in by_block.items() if len(tables) == 2]
    assert len(complete) >= s.blocks
    unique = s.tournament.deals == "unique"
    for b in complete:
        t0, t1 = by_block[b][0], by_block[b][1]
        seat = list(t0.seats).index(s.v1)
        assert list(t1.seats)[seat] == s.v2 and t0.round == t1.round == 0
        if unique:
            assert (t0.deal, t0.table, t1.deal, t1.table) == (2 * b, 0, 2 * b + 1, 0) and t0.seed != t1.seed
        else:
            assert (t0.deal, t0.table, t1.deal, t1.table) == (b, 0, b, 1)
            if t0.attempt == t1.attempt:
                assert t0.seed == t1.seed  # the same cards at both tables
    return matches


def test_arena_sprt_decides_h1_for_a_stronger_v2(arena_server: Callable[..., tuple[ArenaServer, Any]],
                                                 versions: tuple[str, str], store: Store) -> None:
    server, stub = arena_server(workers=2, concurrency=4)
    _register(stub, *versions)
    result = CliRunner().invoke(cli, [
        "--admin-token", server.admin_token, "sprt", "sprtbot@1", "sprtbot@2", "--elo0", "0", "--elo1", str(ELO1),
        "--max-blocks", str(MAX_BLOCKS), "--window", "4", "--deadline-ms", "2000", "--ladder",
        "--server", f"127.0.0.1:{server.port}", "--json"], prog_name="arena")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["verdict"] == "H1" and out["llr"] >= out["upper"] > 0 and "upper bound" in out["reason"]
    assert (out["deals"], out["ladder_counted"]) == ("unique", True)  # open registration: unique deals by default
    assert 1 <= out["blocks"] < MAX_BLOCKS and sum(out["counts"]) == out["blocks"] and out["blocks_void"] == 0
    # it reports once the matches still being played after the verdict have ended: the test is over, its seed shown
    assert out["state"] == "finished" and out["tournament"]["seed_hex"], out["tournament"]
    assert out["elo"] is None or out["elo"] == "inf" or out["elo"] > ELO1 / 2
    print(f"e2e SPRT: {out['blocks']} blocks, LLR {out['llr']:.3f} in [{out['lower']:.3f}, {out['upper']:.3f}], "
          f"verdict {out['verdict']}, Elo {out['elo']} +/- {out['elo_margin']}, counts {out['counts']}")
    s = _ended(stub, out["id"])
    assert s.verdict == "H1" and s.blocks == out["blocks"] and s.tournament.state == "finished"
    matches = _check_blocks(stub, s)
    ladder = {e.bot: e for e in stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries}
    assert ladder["sprtbot@1"].matches == ladder["sprtbot@2"].matches == len(matches)  # they count on the ladder
    assert ladder["sprtbot@2"].rating > ladder["sprtbot@1"].rating
    # `arena sprt show` reads it back; a round robin is not an SPRT
    shown = CliRunner().invoke(cli, ["sprt", "show", out["id"], "--server", f"127.0.0.1:{server.port}"],
                               prog_name="arena")
    assert shown.exit_code == 0 and "verdict: V2 is better: accept H1" in shown.stdout, shown.output
    assert f"blocks {s.blocks}" in shown.stdout and s.tournament.seed_hex in shown.stdout


def test_sprt_survives_a_killed_worker(arena_server: Callable[..., tuple[ArenaServer, Any]], workers: Any,
                                       versions: tuple[str, str], store: Store) -> None:
    _, stub = arena_server(workers=0)
    _register(stub, *versions)
    first = workers.process("sprt-w1", concurrency=2)
    s = stub.CreateSprt(arena_pb2.CreateSprtRequest(game="take5", v1="sprtbot@1", v2="sprtbot@2", elo0=0.0,
                                                    elo1=ELO1, window=3, max_blocks=MAX_BLOCKS, deadline_ms=2000,
                                                    deals="duplicate"))
    tid = s.tournament.id  # frozen as soon as it plays (not after a first block): the test must not decide before

    def text(value: Any) -> str:
        return value.decode() if isinstance(value, bytes) else str(value)

    def held() -> set[str]:  # the matches of the jobs delivered to the first worker and not settled (pending)
        ids = [p["message_id"] for p in store.pending_details("take5") if text(p["consumer"]) == "sprt-w1"]
        entries = [store.client.xrange(jobs_key("take5"), i, i) for i in ids]
        return {text(v) for entry in entries for _, fields in entry for k, v in fields.items() if text(k) == "match"}

    def playing() -> set[str]:  # held, and started: its heartbeat lists it (a job claimed ahead keeps its deal),
        # and not stored yet (a match stays listed until it is acknowledged, after its result is stored: the reclaim
        # of a stored one only acknowledges it)
        running = {m for w in store.list_workers() if w.name == "sprt-w1" for m in w.running}
        return {m for m in running & held() if not store.has_result("take5", m)}

    wait_until(lambda: bool(playing()), "the first worker to be playing a match")
    unfinished: set[str] = set()
    for _ in range(20):  # frozen, it settles nothing more: what it plays now is what a reclaim plays again
        first.process.send_signal(signal.SIGSTOP)
        unfinished = playing()
        if unfinished:
            break
        first.process.send_signal(signal.SIGCONT)
        wait_until(lambda: bool(playing()), "the first worker to be playing a match")
    first.kill()
    assert stub.GetSprt(arena_pb2.GetSprtRequest(id=tid)).verdict == ""
    workers.process("sprt-w2", concurrency=2)
    s = _ended(stub, tid)
    assert s.verdict == "H1" and s.blocks_void == 0 and sum(s.counts) == s.blocks
    matches = _check_blocks(stub, s)
    # every match the killed worker held unfinished and that counts was played again, on a new deal (attempt 1)
    again = [m for m in matches if m.match_id in unfinished]
    assert all(m.attempt >= 1 for m in again), [(m.match_id, m.attempt) for m in again]
    assert unfinished, "the killed worker held no unfinished match"
    print(f"e2e SPRT with a killed worker: {s.blocks} blocks, LLR {s.llr:.3f}, verdict {s.verdict}")


def test_ctrl_c_detaches_and_show_watch_reattaches(arena_server: Callable[..., tuple[ArenaServer, Any]],
                                                   start_bot: Callable[..., Any]) -> None:
    server, stub = arena_server(workers=1, concurrency=2)
    # bots that think 10 ms a card: the test cannot reach its verdict before the Ctrl-C, even on a loaded machine
    weak, strong = (start_bot(SPRT_BOT, extra_args=["--bot-version", v, "--play", play, "--think-ms", "10"])
                    for v, play in (("1", "random"), ("2", "heuristic")))
    _register(stub, weak.endpoint, strong.endpoint)
    address = f"127.0.0.1:{server.port}"
    process = subprocess.Popen(
        [ARENA, "--admin-token", server.admin_token, "sprt", "sprtbot@1", "sprtbot@2", "--elo1", str(ELO1),
         "--window", "2", "--server", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # a run started with `&` ignores SIGINT
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("SPRT t") and "sprtbot@2 (V2) against sprtbot@1 (V1)" in first, first
        tid = first.split()[1].rstrip(":")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert f"`arena sprt show {tid} --watch` follows it again" in err and f"arena sprt cancel {tid}" in err
    assert "Traceback" not in err
    # the test goes on without its CLI; `arena sprt show ID --watch` follows it to the verdict
    shown = CliRunner().invoke(cli, ["sprt", "show", tid, "--watch", "--server", address], prog_name="arena")
    assert shown.exit_code == 0, shown.output
    assert "verdict: V2 is better: accept H1" in shown.stdout and "LLR +" in shown.stdout
    assert stub.GetSprt(arena_pb2.GetSprtRequest(id=tid)).verdict == "H1"


def test_with_a_field_no_bot_sees_a_deal_twice(arena_server: Callable[..., tuple[ArenaServer, Any]],
                                                versions: tuple[str, str], start_bot: Callable[..., Any]) -> None:
    server, stub = arena_server(workers=2, concurrency=4)
    _register(stub, *versions)
    for name in ("field-a", "field-b"):
        bot = start_bot("sample:random", extra_args=["--name", name])
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint, game="take5"))
    address = f"127.0.0.1:{server.port}"
    result = CliRunner().invoke(cli, [
        "--admin-token", server.admin_token, "sprt", "sprtbot@1", "sprtbot@2", "--field", "field-a,field-b",
        "--elo1", str(ELO1), "--max-blocks", str(MAX_BLOCKS), "--window", "4", "--server", address, "--json"],
        prog_name="arena")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["verdict"] == "H1" and out["seats"] == 2 and out["field"] == ["field-a@1.0", "field-b@1.0"]
    s = _ended(stub, out["id"])
    matches = _check_blocks(stub, s)
    for m in matches:  # V1 and V2 never meet: each sits with one field bot, the other field bot at the other table
        assert {s.v1, s.v2} - set(m.seats) and len(set(m.seats) & {"field-a@1.0", "field-b@1.0"}) == 1
    verified = CliRunner().invoke(cli, ["tournament", "verify", out["id"], "--server", address], prog_name="arena")
    assert verified.exit_code == 0 and "no bot received a deal twice" in verified.stdout, verified.output
    print(f"e2e SPRT with a field: {out['blocks']} blocks, counts {out['counts']}, LLR {out['llr']:.3f}, "
          f"Elo {out['elo']} +/- {out['elo_margin']}")


def test_the_referee_restarts_and_the_cli_follows_to_the_verdict(redis_url: str, versions: tuple[str, str]) -> None:
    """`arena serve` (an Arena server with its embedded worker) stopped after the first block and started again on
    the same address: the test goes on from Redis and the following CLI waits for the referee and sees the
    verdict."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    server = ArenaServer(address, redis_url, workers=1, concurrency=2)
    server.start()
    token = server.admin_token
    process = None
    channel = grpc.insecure_channel(address)
    try:
        stub = arena_pb2_grpc.ArenaStub(grpc.intercept_channel(channel, admin_signer(channel, token)))
        _register(stub, *versions)
        process = subprocess.Popen(
            [ARENA, "--admin-token", token, "sprt", "sprtbot@1", "sprtbot@2", "--elo1", str(ELO1), "--window", "2",
             "--server", address, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tid = wait_until(lambda: [t.id for t in stub.ListTournaments(arena_pb2.ListTournamentsRequest()).tournaments],
                         "the SPRT to be created")[0]
        wait_until(lambda: stub.GetSprt(arena_pb2.GetSprtRequest(id=tid)).blocks >= 1, "a first block")
        server.stop()
        time.sleep(1.5)  # the CLI's polls (every 0.5 s) fail meanwhile: without its retry it would exit 1 here
        server = ArenaServer(address, redis_url, workers=1, concurrency=2, admin_token=token)
        server.start()
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        result = json.loads(out)
        assert result["id"] == tid and result["verdict"] == "H1" and sum(result["counts"]) == result["blocks"]
    finally:
        if process is not None and process.poll() is None:
            process.kill()
        channel.close()
        server.stop()
