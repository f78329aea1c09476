"""A bot's or a server's text reaches a terminal or a page without control or format characters: a GetInfo ``games``
list in the health reason a registration mismatch stores (ListBots, the bots page), and any error text the CLI
prints (a server's status details are the CLI's error line; an impostor server writes what it likes)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.cli.errors import ArenaCliError
from arena.store import BotEntry
from arena.worker.health import registration_mismatch
from arena_sdk.pb import bot_pb2

EVIL = "take6\x1b]0;owned\x07\x1b[2J\u202eevil\x9b31m"


def _clean(text: str) -> bool:
    return not any(c in text for c in ("\x1b", "\x07", "\u202e", "\x9b"))


def test_a_bots_games_list_is_kept_without_control_characters_in_its_health_reason() -> None:
    bot = BotEntry(name="m", game="take5", endpoint="127.0.0.1:1", registered_at=0.0, version="1")
    kind, reason = registration_mismatch(bot, bot_pb2.BotInfo(name="m", version="1", games=[EVIL]))
    assert kind == "changed" and _clean(reason) and "take6" in reason and "evil" in reason


def test_the_cli_prints_a_servers_error_text_without_control_characters() -> None:
    @cli.command("raise-hostile", hidden=True)
    def raise_hostile() -> None:
        raise ArenaCliError(f"the bot at x plays {EVIL}, not take5")

    try:
        result = CliRunner().invoke(cli, ["raise-hostile"], prog_name="arena", standalone_mode=True)
    finally:
        cli.commands.pop("raise-hostile")
    assert result.exit_code == 1 and "plays take6" in result.output and _clean(result.output), repr(result.output)


@pytest.mark.parametrize("message", [EVIL, "a\nb\x1b[31m"])
def test_an_arena_cli_error_is_one_printable_line(message: str) -> None:
    text = ArenaCliError(message).format_message()
    assert _clean(text) and "\n" not in text and isinstance(ArenaCliError(message), click.ClickException)
