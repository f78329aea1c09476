"""Workers in separate OS processes sharing one tournament, and their heartbeats through ListWorkers (issue 3,
items 1 and 6). Real redis-server, real worker and bot processes, real gRPC."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from platform_helpers import SLOW_BOT, rpc_error, wait_until

from arena.store import Store, results_log_key
from arena.worker import loop as scheduler
from arena.worker.settings import WorkerSettings
from arena_sdk.pb import arena_pb2, bot_pb2


def _workers(stub: Any) -> dict[str, arena_pb2.WorkerInfo]:
    return {w.name: w for w in stub.ListWorkers(arena_pb2.ListWorkersRequest()).workers}


def test_two_worker_processes_share_one_tournament_and_count_each_match_once(
        arena_server: Any, start_bot: Callable[..., Any], store: Store, workers: Any) -> None:
    _server, stub = arena_server()
    for name in ("s1", "s2", "s3"):  # every Decide takes 0.1 s: a match lasts ~1 s
        stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name=name, endpoint=start_bot(SLOW_BOT, extra_args=["--sleep", "0.1", "--name", name]).endpoint,
            game="take5"))
    left = workers.process("left", concurrency=1, heartbeat_s=0.3)
    right = workers.process("right", concurrency=1, heartbeat_s=0.3)
    wait_until(lambda: {"left", "right"} <= {n for n, w in _workers(stub).items() if w.alive},
               "both worker processes to send a heartbeat")
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["s1", "s2", "s3"], seats_per_match=2, rounds=2,
        config=bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=1))))
    assert t.matches_total == 6
    done = wait_until(lambda: (x := stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))).state == "finished"
                      and x, f"tournament {t.id} to finish; logs:\n{left.log()}\n{right.log()}")
    assert (done.matches_done, done.faults) == (6, 0)
    by_worker: dict[str, int] = {}
    for i in range(6):
        result = store.get_result("take5", f"{t.id}-{i:06d}")
        assert result is not None
        by_worker[result["worker"]] = by_worker.get(result["worker"], 0) + 1
    assert set(by_worker) == {"left", "right"} and sum(by_worker.values()) == 6  # both ran matches
    assert store.client.llen(results_log_key("take5")) == 6
    assert {e.bot: e.matches for e in stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries} == {
        "s1@test": 4, "s2@test": 4, "s3@test": 4}
    assert stub.RebuildLadder(arena_pb2.RebuildLadderRequest(game="take5")).equal
    # the heartbeats count the same matches
    seen = wait_until(lambda: (w := _workers(stub)) and sum(w[n].matches_done for n in ("left", "right")) == 6
                      and w, "the heartbeats to count every match")
    assert {n: seen[n].matches_done for n in ("left", "right")} == by_worker
    w = seen["left"]
    assert w.alive and w.concurrency == 1 and w.pid == left.process.pid and w.host
    assert w.started_at <= w.last_seen <= time.time() + 1 and list(w.running) == []
    left.stop()
    right.kill()
    stopped = wait_until(lambda: (w := _workers(stub)) and not w["left"].alive and not w["right"].alive and w,
                         "both workers to show as not alive")
    assert stopped["left"].matches_done == by_worker["left"]


def test_embedded_workers_send_heartbeats_and_say_goodbye(arena_server: Any) -> None:
    server, stub = arena_server(workers=2, concurrency=3, heartbeat_s=0.2)
    listed = wait_until(lambda: len(w := _workers(stub)) == 2 and all(x.alive for x in w.values()) and w,
                        "two embedded workers' heartbeats")
    assert all(w.concurrency == 3 and w.pid == os.getpid() and w.matches_done == 0 for w in listed.values())
    assert sorted(n[-3:] for n in listed) == ["-w0", "-w1"]
    server.stop()
    store = Store.from_url(server.redis_url)
    try:
        gone = store.list_workers()
        assert len(gone) == 2 and all(w.stopped and not w.alive(time.time()) for w in gone)
    finally:
        store.close()


def test_bad_worker_options_are_refused(redis_url: str) -> None:
    for kwargs, message in [({"concurrency": 0}, "concurrency"), ({"visibility_timeout_s": 0}, "visibility"),
                            ({"heartbeat_s": -1}, "heartbeat"), ({"max_deliveries": 0}, "max deliveries")]:
        with pytest.raises(ValueError, match=message):
            scheduler.run_worker(redis_url, WorkerSettings(**kwargs))
    with pytest.raises(ValueError, match="distinct names"):
        scheduler.run_workers(redis_url, ["a", "a"])


def test_list_workers_is_empty_without_workers(arena_server: Any) -> None:
    _server, stub = arena_server()
    assert list(stub.ListWorkers(arena_pb2.ListWorkersRequest()).workers) == []
    code, _ = rpc_error(lambda: stub.GetMatch(arena_pb2.GetMatchRequest(match_id="")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_worker_list_keeps_a_dead_worker_while_jobs_are_claimed_under_its_name(arena_server: Any,
                                                                                store: Store) -> None:
    """A worker that died (or was stopped at once) with matches claimed is listed, not alive, with how many wait to
    be taken back (the queue's pending entries under its name, ``WorkerInfo.jobs_held``, whatever the visibility
    timeout), and its stale running list is not shown; a dead one holding nothing is hidden, and the note says
    so."""
    from click.testing import CliRunner

    from arena.cli import cli
    from arena.core.specs import MatchSpec
    from arena.store import WorkerStatus

    server, _stub = arena_server()
    now = time.time()
    store.enqueue([MatchSpec(match_id=f"held-{i}", game="take5", seats=("a@1", "b@1"), seed=i) for i in range(3)])
    store.ensure_job_group()
    assert len(store.read_jobs("dead-busy", 2, 50)) == 2  # claimed, never settled: its process died
    for name, running in (("dead-busy", ("held-0",)), ("dead-idle", ("held-9",))):  # held-9: settled long ago
        store.heartbeat(WorkerStatus(name=name, host="h", pid=1, started_at=now - 900, last_seen=now - 600,
                                     concurrency=2, running=running, matches_done=0, timeout_s=15.0))
    address = ["--server", f"127.0.0.1:{server.port}"]
    listed = CliRunner().invoke(cli, ["worker", "list", "--json", *address])
    assert listed.exit_code == 0, listed.output
    shown = {w["name"]: w for w in json.loads(listed.stdout)}
    assert set(shown) == {"dead-busy"} and shown["dead-busy"]["jobs_held"] == 2 and not shown["dead-busy"]["alive"]
    text = " ".join(CliRunner(env={"COLUMNS": "250"}).invoke(cli, ["worker", "list", *address]).stdout.split())
    assert "no: 2 matches to take back" in text and "held-0" not in text, text
    assert "1 dead worker(s) with no match left to take back hidden, see --all" in text, text
    every = CliRunner().invoke(cli, ["worker", "list", "--all", "--json", *address]).stdout
    assert {"dead-busy", "dead-idle"} <= {w["name"] for w in json.loads(every)}
