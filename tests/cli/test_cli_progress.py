"""What the CLI shows of a tournament's progress (failed matches; when `--wait` / `--watch` stop), how it reports
a refused tournament, and options from ARENA_* variables, against a scripted Arena server.

The server is a real gRPC server on loopback serving ``arena.v1.Arena`` with a test servicer that answers from a
script (tournament states the real server reaches only after failed deliveries, or refusals it gives only when
bots are down) and records every request, so each test controls exactly what the CLI sees.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner, Result

from arena.cli import BOTS_DOWN_HINT, cli
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

ARENA = Path(sys.executable).parent / "arena"
BOTS_DOWN = "bots not answering: alpha@1.0 at 127.0.0.1:1 (UNAVAILABLE), beta@1.0 at 127.0.0.1:2 (UNAVAILABLE)"


def tournament(**fields: Any) -> arena_pb2.Tournament:
    base: dict[str, Any] = dict(id="t7", game="take5", bots=["alpha@1.0", "beta@1.0", "gamma@1.0"],
                                seats_per_match=3, rounds=6, matches_total=6, state="running",
                                formula="C(3,3) subset x 6 rounds = 6", deadline_ms=1000)
    base.update(fields)
    return arena_pb2.Tournament(**base)


class ScriptedArena(arena_pb2_grpc.ArenaServicer):
    """Answers GetTournament with ``states`` in turn (the last one again and again), ListTournaments with all of
    them, CreateTournament with ``created`` or, when ``refusal`` is set, that status; records the requests."""

    def __init__(self) -> None:
        self.states: list[arena_pb2.Tournament] = [tournament()]
        self.created: arena_pb2.Tournament = tournament()
        self.refusal: tuple[grpc.StatusCode, str] | None = None
        self.requests: list[tuple[str, Any]] = []
        self._lock = threading.Lock()
        self._next = 0

    def _record(self, method: str, request: Any) -> None:
        with self._lock:
            self.requests.append((method, request))

    def calls(self, method: str) -> list[Any]:
        with self._lock:
            return [r for m, r in self.requests if m == method]

    def GetTournament(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._record("GetTournament", request)
        with self._lock:
            state = self.states[min(self._next, len(self.states) - 1)]
            self._next += 1
        return state

    def ListTournaments(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._record("ListTournaments", request)
        return arena_pb2.ListTournamentsResponse(tournaments=[self.states[-1]])

    def CreateTournament(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._record("CreateTournament", request)
        if self.refusal is not None:
            context.abort(*self.refusal)
        if request.dry_run:
            return tournament(id="", state="planned", matches_total=self.created.matches_total)
        return self.created

    def GetStandings(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._record("GetStandings", request)
        return arena_pb2.Standings(tournament_id=request.id)

    def GetLadder(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._record("GetLadder", request)
        return arena_pb2.Ladder(game=request.game, entries=[
            arena_pb2.LadderEntry(rank=1, bot="alpha@1.0", rating=1516.0, matches=1, wins=1, mean_score=3.0),
            arena_pb2.LadderEntry(rank=2, bot="beta@1.0", rating=1484.0, matches=1, wins=0, mean_score=9.0)])


@pytest.fixture
def arena() -> Iterator[tuple[ScriptedArena, str]]:
    servicer = ScriptedArena()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    arena_pb2_grpc.add_ArenaServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield servicer, f"127.0.0.1:{port}"
    finally:
        server.stop(None)


def run(server: str, *args: str, env: dict[str, str] | None = None) -> Result:
    """The CLI against the scripted arena, with a data dir of its own: an admin token saved in ./.arena by an
    arena served from the working folder would otherwise be signed with (and this arena offers no signed calls)."""
    with tempfile.TemporaryDirectory() as data_dir:
        return CliRunner(env={"COLUMNS": "200", "ARENA_DATA_DIR": data_dir, **(env or {})}).invoke(
            cli, [*args, "--server", server])


# --- failed matches ---------------------------------------------------------------------------------------------


def test_status_shows_failed_matches(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    servicer.states = [tournament(state="finished", matches_done=4, matches_failed=2)]
    result = run(server, "tournament", "status", "t7")
    assert result.exit_code == 0, result.output
    progress = [line for line in result.stdout.splitlines() if "│ progress" in line]
    assert len(progress) == 1 and "4/6 matches (2 failed" in progress[0], result.stdout
    data = json.loads(run(server, "tournament", "status", "t7", "--json").stdout)
    assert (data["matches_done"], data["matches_failed"], data["matches_cancelled"]) == (4, 2, 0)


def test_no_failed_matches_say_nothing_of_failures(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    servicer.states = [tournament(state="finished", matches_done=6)]
    result = run(server, "tournament", "status", "t7")
    assert result.exit_code == 0 and "6/6 matches" in result.stdout
    assert "failed" not in result.stdout
    assert json.loads(run(server, "tournament", "status", "t7", "--json").stdout)["matches_failed"] == 0


def test_list_shows_failed_matches(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    servicer.states = [tournament(state="finished", matches_done=5, matches_failed=1)]
    result = run(server, "tournament", "list")
    assert result.exit_code == 0, result.output
    row = [line for line in result.stdout.splitlines() if line.startswith("│ t7 ")]
    assert len(row) == 1 and "5/6 (1 failed)" in row[0], result.stdout
    assert json.loads(run(server, "tournament", "list", "--json").stdout)[0]["matches_failed"] == 1


@pytest.mark.timeout(30)  # before the fix --watch polled forever: the state never left "running"
def test_watch_stops_once_done_cancelled_and_failed_make_the_total(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    servicer.states = [tournament(matches_done=1),
                       tournament(matches_done=3, matches_failed=2, matches_cancelled=1)]  # still "running"
    result = run(server, "tournament", "status", "t7", "--watch", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["matches_done"], data["matches_failed"], data["matches_cancelled"]) == (3, 2, 1)
    assert len(servicer.calls("GetTournament")) == 2  # no poll after the settling answer


@pytest.mark.timeout(30)
def test_create_wait_stops_once_every_match_is_settled(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    servicer.created = tournament(matches_done=0)
    servicer.states = [tournament(matches_done=5, matches_failed=1)]
    result = run(server, "tournament", "create", "--bots", "alpha,beta,gamma", "--wait")
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("tournament t7 running: 5/6 matches, 1 failed, 0 faults"), result.stdout
    assert len(servicer.calls("GetTournament")) == 1


def test_watch_of_a_finished_tournament_does_not_poll(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    servicer.states = [tournament(state="cancelled", matches_done=2, matches_cancelled=4)]
    result = run(server, "tournament", "status", "t7", "--watch", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["state"] == "cancelled"
    assert len(servicer.calls("GetTournament")) == 1


def test_sigterm_while_watching_says_the_tournament_keeps_running(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena  # the tournament stays "running" with 1/6 done: --watch would wait forever
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = subprocess.Popen([str(ARENA), "tournament", "status", "t7", "--watch", "--server", server],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        end = time.monotonic() + 30
        while len(servicer.calls("GetTournament")) < 2:  # watching: it polled at least once
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143
    assert err.strip().splitlines() == ["stopped watching; tournament t7 keeps running on the server "
                                        "(`arena tournament status t7 --watch` follows it, `arena tournament cancel "
                                        "t7` stops it; running the create again makes a second one)"]


# --- refusals ---------------------------------------------------------------------------------------------------


def test_create_refused_because_bots_do_not_answer_is_one_line_with_a_hint(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    servicer.refusal = (grpc.StatusCode.FAILED_PRECONDITION, BOTS_DOWN)
    result = run(server, "tournament", "create", "--bots", "alpha,beta", "--no-wait")
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert lines == [f"Error: {BOTS_DOWN} (FAILED_PRECONDITION); {BOTS_DOWN_HINT}"]


def test_other_refusals_get_no_bots_hint(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    servicer.refusal = (grpc.StatusCode.NOT_FOUND, "no take5 bot named delta")
    result = run(server, "tournament", "create", "--bots", "alpha,delta", "--no-wait")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == ["Error: no take5 bot named delta (NOT_FOUND)"]


# --- option values -------------------------------------------------------------------------------------------------


def test_deadline_and_limit_bounds_are_accepted(arena: tuple[ScriptedArena, str]) -> None:
    servicer, server = arena
    for deadline in ("10", "60000"):
        result = run(server, "tournament", "create", "--bots", "alpha,beta", "--deadline-ms", deadline,
                     "--limit", "1000", "--dry-run")
        assert result.exit_code == 0, result.output
    requests = servicer.calls("CreateTournament")
    assert [r.deadline_ms for r in requests] == [10, 60000]
    assert all(r.config.take5.limit == 1000 for r in requests)


def test_options_from_ARENA_variables_named_after_the_long_option(arena: tuple[ScriptedArena, str]) -> None:
    _, server = arena
    ladder = run(server, "ladder", env={"ARENA_LADDER_JSON": "1"})
    assert ladder.exit_code == 0, ladder.output
    assert [e["bot"] for e in json.loads(ladder.stdout)["entries"]] == ["alpha@1.0", "beta@1.0"]

    servicer, _ = arena
    created = run(server, "tournament", "create", env={
        "ARENA_TOURNAMENT_CREATE_BOTS": "alpha,beta", "ARENA_TOURNAMENT_CREATE_DRY_RUN": "1",
        "ARENA_TOURNAMENT_CREATE_DEADLINE_MS": "250", "ARENA_TOURNAMENT_CREATE_VARIANT": "known-cards draft",
        "ARENA_TOURNAMENT_CREATE_JSON": "true"})
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["state"] == "planned"
    (request,) = servicer.calls("CreateTournament")
    assert list(request.bots) == ["alpha", "beta"] and request.dry_run and request.deadline_ms == 250
    assert request.config.take5.known_cards and request.config.take5.draft
