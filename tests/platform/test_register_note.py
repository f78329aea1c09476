"""`arena bot register` of a bot without a secret at an address other machines reach says what that costs (anyone
there may call it) and how to give it one; at a loopback address, or with a secret, it says nothing more. A real
Arena server, a real bot process listening on this machine's own non-loopback address, the CLI in process."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import cli

SECRET = "s3cret-of-the-owner-0123456789"


def _own_address() -> str | None:
    """This machine's address on its default route (no packet is sent), or None when it has none but loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: only picks the interface
            address = str(s.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.mark.skipif(_own_address() is None, reason="this machine has no address but loopback")
def test_a_bot_without_a_secret_at_a_reachable_address_is_told_what_that_costs(
        arena_server: Callable[..., Any], start_bot: Callable[..., Any], tmp_path: Path) -> None:
    address = _own_address()
    server, _stub = arena_server()
    env = {"ARENA_DATA_DIR": str(tmp_path), "ARENA_TOKEN": None, "ARENA_BOT_SECRET": None}

    def register(name: str, endpoint: str, *extra: str) -> Any:
        result = CliRunner(env=env).invoke(cli, ["bot", "register", name, endpoint, "--server", f"127.0.0.1:{server.port}",
                                                 *extra])
        assert result.exit_code == 0, result.output
        return result

    open_bot = start_bot("sample:random", host="0.0.0.0", extra_args=["--name", "open-bot"])
    port = open_bot.endpoint.rpartition(":")[2]
    said = register("open-bot", f"{address}:{port}").stderr
    assert f"note: the bot has no secret, so anyone who reaches {address}:{port} may call it" in said
    assert "--bot-secret S" in said
    assert "no secret" not in register("open-bot", f"127.0.0.1:{port}").stderr  # loopback: this machine only
    guarded = start_bot("sample:random", host="0.0.0.0", extra_args=["--name", "guarded"], secret=SECRET)
    guarded_port = guarded.endpoint.rpartition(":")[2]
    assert "no secret" not in register("guarded", f"{address}:{guarded_port}", "--bot-secret", SECRET).stderr
