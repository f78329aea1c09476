"""Bot secrets on the command line: `arena bot register|update` refuse a secret that is set but empty (the trace of
a `$(cat my.secret)` whose file is missing) or too short, before any call; `arena play` plays its sample bots
whatever ARENA_BOT_SECRET the shell exports, and `--bot-secret` plays a bot started with a secret as the arena
would: real bot processes over real gRPC."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import cli

SECRET = "s3cret-of-the-owner-0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("args", "env", "says"), [
    (["bot", "register", "mybot", "127.0.0.1:50061"], {"ARENA_BOT_SECRET": ""},
     "ARENA_BOT_SECRET is set but empty: did `$(cat FILE)` fail?"),
    (["bot", "register", "mybot", "127.0.0.1:50061"], {"ARENA_BOT_SECRET": "  "}, "ARENA_BOT_SECRET is set but empty"),
    (["bot", "register", "mybot", "127.0.0.1:50061"], {"ARENA_BOT_SECRET": "s3cret"},
     "ARENA_BOT_SECRET has 6 characters: a bot secret has 16..256"),
    (["bot", "register", "mybot", "127.0.0.1:50061", "--bot-secret", ""], {}, "the secret is empty"),
    (["bot", "register", "mybot", "127.0.0.1:50061", "--bot-secret", "0123456789abcde"], {"ARENA_BOT_SECRET": SECRET},
     "the secret has 15 characters"),
    (["bot", "update", "mybot", "127.0.0.1:50061"], {"ARENA_BOT_SECRET": ""}, "ARENA_BOT_SECRET is set but empty"),
    (["bot", "update", "mybot", "127.0.0.1:50061", "--bot-secret", "short"], {}, "the secret has 5 characters"),
    (["play", "take5", "--bot", "sample:random", "--bot", "sample:random", "--bot-secret", "short"], {},
     "the secret has 5 characters"),
    (["play", "take5", "--bot", "sample:random", "--bot", "sample:random", "--bot-secret", "pässwörd-1234567890"], {},
     "the secret has a space, a tab or a non-ASCII character"),
    (["bot", "register", "mybot", "127.0.0.1:50061", "--bot-secret", "two words of a passphrase"], {},
     "the secret has a space, a tab or a non-ASCII character"),
    (["bot", "register", "mybot", "127.0.0.1:50061", "--bot-secret", "a" * 257], {},
     "the secret has 257 characters: a bot secret has 16..256"),
])
def test_an_empty_or_short_bot_secret_is_refused_before_any_call(args: list[str], env: dict[str, str], says: str,
                                                                 tmp_path: Path) -> None:
    server = f"127.0.0.1:{_free_port()}"  # nothing listens: a call would say "cannot reach"
    extra = [] if args[0] == "play" else ["--server", server]
    result = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path), **env}).invoke(cli, [*args, *extra])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '--bot-secret': {says}" in result.stderr
    assert "secrets.token_hex(16)" in result.stderr  # how to make one
    assert "cannot reach" not in result.output and SECRET not in result.output
    assert not (tmp_path / "tokens.json").exists()


def test_play_plays_its_sample_bots_whatever_secret_the_shell_exports(tmp_path: Path) -> None:
    """The bots `arena play` starts do not inherit ARENA_BOT_SECRET, which its referee does not send: with one
    exported they used to refuse every call (UNAUTHENTICATED), and every seat forfeit."""
    record = tmp_path / "game.json"
    result = CliRunner(env={"ARENA_BOT_SECRET": SECRET}).invoke(
        cli, ["play", "take5", "--bot", "sample:heuristic", "--bot", "sample:random", "--limit", "5", "--seed", "3",
              "--record", str(record)])
    assert result.exit_code == 0, result.output
    data = json.loads(record.read_text())
    assert data["faults"] == [] and data["result"]["faults"] == [0, 0]


def test_play_with_bot_secret_plays_a_bot_started_with_it(start_bot: Callable[..., Any], tmp_path: Path) -> None:
    """A bot started with a secret, apart from `arena play`: without --bot-secret, or with another, the game does not
    start (the check registration makes, before any call of the game: not a fault in every call); with it the
    game has no fault, and the record keeps no secret."""
    guarded = start_bot("sample:heuristic", secret=SECRET)
    seats = ["play", "take5", "--bot", guarded.endpoint, "--bot", "sample:random", "--limit", "5", "--seed", "3"]
    without, with_it = tmp_path / "without.json", tmp_path / "with.json"
    result = CliRunner().invoke(cli, [*seats, "--record", str(without)])
    assert result.exit_code == 1 and not without.exists(), result.output
    assert f"the bot at {guarded.endpoint} answers match calls only with its bot secret (UNAUTHENTICATED): give " \
           "the secret it was started with (--bot-secret)" in result.output
    result = CliRunner().invoke(cli, [*seats, "--record", str(without), "--bot-secret", "another-secret-0123456789"])
    assert result.exit_code == 1 and "refuses the bot secret given (PERMISSION_DENIED)" in result.output
    assert "another-secret" not in result.output and not without.exists()

    result = CliRunner().invoke(cli, [*seats, "--record", str(with_it), "--bot-secret", SECRET])
    assert result.exit_code == 0, result.output
    text = with_it.read_text()
    data = json.loads(text)
    assert data["faults"] == [] and data["result"]["faults"] == [0, 0]
    assert data["seats"][0] == {"name": "heuristic", "endpoint": guarded.endpoint, "transport": "stream", "streams": 1}
    assert SECRET not in text and SECRET not in result.output


def test_play_sends_the_secret_only_to_a_bot_that_asks_for_one(start_bot: Callable[..., Any]) -> None:
    """`--bot-secret` went to every HOST:PORT seat, so a stranger's bot in the game received it (and could register
    the owner's bot with it): a bot that answers match calls without a secret is now played without one."""
    from arena.cli.errors import ArenaCliError
    from arena.cli.play_seats import _secret_for

    guarded, open_bot = start_bot("sample:heuristic", secret=SECRET), start_bot("sample:random")
    assert _secret_for(open_bot.endpoint, SECRET) == ""  # never sent to it
    assert _secret_for(guarded.endpoint, SECRET) == SECRET
    assert _secret_for(open_bot.endpoint, "") == ""
    with pytest.raises(ArenaCliError, match="answers match calls only with its bot secret"):
        _secret_for(guarded.endpoint, "")
