"""The Arena service's heavy reads (``arena.server.app.HEAVY_READS``) over real gRPC: one at a time in the whole
service, so that a flood of them never holds the GIL the embedded workers need for long, while other calls are
answered meanwhile. The gate's own rules (turns between clients, refusal after the wait, cancelled calls) are
tested in ``test_client_shares.py``; the effect on matches is measured by hand (``docs/operators/security.md``)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from arena.server import lists
from arena.server.app import HEAVY_READS
from arena_sdk.pb import arena_pb2


def test_heavy_reads_run_one_at_a_time_while_other_calls_are_answered(arena_server: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"ListMatches", "GetMatch", "GetStandings"} <= HEAVY_READS and "GetTournament" not in HEAVY_READS
    _server, stub = arena_server()
    lock = threading.Lock()
    state = {"running": 0, "most": 0, "done": 0}
    real = lists.list_matches

    def slow_list(servicer: Any, request: Any, context: Any) -> Any:
        with lock:
            state["running"] += 1
            state["most"] = max(state["most"], state["running"])
        try:
            time.sleep(0.15)  # a read of 1,000 matches, stretched
            return real(servicer, request, context)
        finally:
            with lock:
                state["running"] -= 1
                state["done"] += 1

    monkeypatch.setattr(lists, "list_matches", slow_list)
    with ThreadPoolExecutor(6) as pool:
        reads = [pool.submit(stub.ListMatches, arena_pb2.ListMatchesRequest(page_size=1000), timeout=30)
                 for _ in range(6)]
        while not state["running"]:
            time.sleep(0.01)
        info = stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest(), timeout=10)  # no heavy read: not in their queue
        done_when_answered = state["done"]
        answers = [r.result() for r in reads]
    assert info.arena_id
    assert done_when_answered < 6  # answered while heavy reads still waited
    assert state["most"] == 1 and state["done"] == 6
    assert all(list(a.matches) == [] for a in answers)
