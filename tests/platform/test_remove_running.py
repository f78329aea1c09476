"""Removing a bot seated in a running tournament (a real referee, no worker: the tournament stays running): the
removal is done, and `arena bot remove` says which running tournaments seat it, since their matches left with it are
played as forfeits of its seat that count on the ladder (a review removed one mid-tournament: 90 faults, no word)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli.app import cli
from arena_sdk.pb import arena_pb2


def test_removing_a_bot_of_a_running_tournament_names_the_tournament(arena_server: Any, tmp_path: Path) -> None:
    server, stub = arena_server(verify_bots=False)
    tokens = {}
    for name in ("keep1", "keep2", "gone"):
        tokens[name] = stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint="127.0.0.1:5",
                                                                     game="take5")).owner_token
    running = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["keep1", "keep2", "gone"], seats_per_match=2, rounds=2))
    other = stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=["keep1", "keep2"], seats_per_match=2))
    runner = CliRunner(env={"ARENA_TOKEN": tokens["gone"], "ARENA_ADMIN_TOKEN": None})
    address = ["--server", f"127.0.0.1:{server.port}", "--data-dir", str(tmp_path)]
    result = runner.invoke(cli, ["bot", "remove", "gone", *address])
    assert result.exit_code == 0, result.output
    assert "removed take5 bot gone@0" in result.stdout
    warning = result.stderr.strip().splitlines()
    assert len(warning) == 1, result.stderr  # the running tournament that seats it, not the other one
    assert f"tournament {running.id} is running with gone@0" in warning[0]
    assert "forfeit" in warning[0] and f"arena tournament cancel {running.id}" in warning[0]
    assert other.id not in result.stderr
    runner = CliRunner(env={"ARENA_TOKEN": tokens["keep1"], "ARENA_ADMIN_TOKEN": None})
    quiet = runner.invoke(cli, ["bot", "remove", "keep1", *address])
    assert quiet.exit_code == 0 and "warning" in quiet.stderr  # both tournaments seat keep1
    assert running.id in quiet.stderr and other.id in quiet.stderr
