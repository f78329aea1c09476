"""`arena bot register` without --game registers a bot for the one game its GetInfo says it plays (a newcomer's
Taki bot was refused "plays taki, not take5"), says so on stderr, and keeps the default game for a bot this machine
cannot ask; an explicit --game is never second-guessed. A real referee, real bot processes, real gRPC."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.cli.bot import game_of_bot
from arena.server.app import ArenaServer


@pytest.fixture
def address(redis_url: str) -> Iterator[str]:
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0)
    port = server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop()


def _register(data: Path, address: str, *args: str) -> Any:
    return CliRunner(env={"ARENA_TOKEN": None, "ARENA_DATA_DIR": str(data)}).invoke(
        cli, ["bot", "register", *args, "--json", "--server", address, "--data-dir", str(data)])


def test_a_taki_bot_is_registered_for_taki_without_game(address: str, tmp_path: Path,
                                                        start_bot: Callable[..., Any], dead_endpoint: str) -> None:
    taki = start_bot("sample:taki-random")
    assert game_of_bot(taki.endpoint) == "taki" and game_of_bot(dead_endpoint) is None
    result = _register(tmp_path, address, "taki-random", taki.endpoint)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["game"] == "taki"
    assert f"the bot at {taki.endpoint} plays taki: registering it for taki" in result.stderr
    # asked for take5, it is refused as before (the hint names --game taki)
    refused = _register(tmp_path, address, "taki-random", taki.endpoint, "--game", "take5")
    assert refused.exit_code != 0 and "--game taki" in refused.output
    # a Take 5 bot: the default game, nothing said
    take5 = start_bot("sample:random")
    plain = _register(tmp_path, address, "random", take5.endpoint)
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.stdout)["game"] == "take5" and "registering it for" not in plain.stderr
