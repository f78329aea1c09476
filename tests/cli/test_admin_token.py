"""The admin token from the CLI's side (issue 8, item 3): `arena serve` saves the token it uses in its data dir
(mode 0600, never printed, kept across restarts), the CLI on the same machine finds it and sends it with organiser
calls, but only to the arena it was saved by; ARENA_ADMIN_TOKEN overrides it on both sides."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.server import auth
from arena.server.app import ArenaServer
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

TOKEN = "the-organisers-token-0123456789"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(extra)
    return env


def _serve(data_dir: Path, redis_url: str, **env: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    """`arena serve` on a free port; returns the process, its address and its stdout lines up to the line about
    the admin token (right after the ready line)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--listen", "127.0.0.1:0", "--workers", "0", "--data-dir",
         str(data_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        env=_env(ARENA_REDIS_URL=redis_url, **env))
    assert process.stdout is not None
    lines: list[str] = []
    address = ""
    for line in process.stdout:
        lines.append(line)
        if "listening on " in line:
            address = line.rsplit("listening on ", 1)[1].strip()
        if address and line.startswith("admin token: "):
            return process, address, lines
    process.wait(30)
    assert process.stderr is not None
    pytest.fail(f"arena serve did not start: {''.join(lines)} {process.stderr.read()}")


def _stop(process: subprocess.Popen[str]) -> str:
    """SIGTERM; returns everything else it wrote (stdout and stderr)."""
    process.terminate()
    out, err = process.communicate(timeout=60)
    return out + err


def test_serve_saves_its_admin_token_for_the_cli_and_keeps_it(tmp_path: Path, redis_url: str) -> None:
    data_dir = tmp_path / "arena"
    process, server, lines = _serve(data_dir, redis_url)
    try:
        path = data_dir / auth.ADMIN_TOKEN_FILE
        saved = json.loads(path.read_text())
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        with grpc.insecure_channel(server) as channel:
            arena_id = arena_pb2_grpc.ArenaStub(channel).GetArenaInfo(arena_pb2.GetArenaInfoRequest()).arena_id
        assert saved["arena_id"] == arena_id and len(saved["token"]) >= 40
        assert any(line.startswith(f"admin token: a new one, saved in {data_dir / auth.ADMIN_TOKEN_FILE} (mode 0600)")
                   for line in lines)
        # the CLI on this machine finds it (ARENA_DATA_DIR) and may rebuild the ladder
        result = CliRunner(env={"ARENA_DATA_DIR": str(data_dir), "ARENA_ADMIN_TOKEN": None}).invoke(
            cli, ["ladder", "--rebuild", "--json", "--server", server])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["equal"] is True
    finally:
        rest = _stop(process)
    assert saved["token"] not in "".join(lines) + rest  # never printed, never logged
    # a restart keeps the token (what `arena serve` does before it starts anything)
    assert auth.serve_token(data_dir, None) == (saved["token"], "saved")
    # ARENA_ADMIN_TOKEN replaces it (`arena serve` then saves that one), and must not be weak
    assert auth.serve_token(data_dir, TOKEN) == (TOKEN, "env")
    done = CliRunner(env={"ARENA_ADMIN_TOKEN": "short"}).invoke(cli, ["serve", "--data-dir", str(data_dir)])
    assert done.exit_code == 1
    assert done.stderr.strip() == ("Error: $ARENA_ADMIN_TOKEN must be 16..256 visible ASCII characters without "
                                   "spaces (got 5 characters); e.g. python -c 'import secrets; "
                                   "print(secrets.token_urlsafe(32))'")


@pytest.fixture
def arena(redis_url: str) -> Iterator[tuple[ArenaServer, str]]:
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0, verify_bots=False, admin_token=TOKEN)
    port = server.start()
    try:
        yield server, f"127.0.0.1:{port}"
    finally:
        server.stop()


def _cli(*args: str, **env: Any) -> Any:
    return CliRunner(env={"ARENA_ADMIN_TOKEN": None, **env}).invoke(cli, list(args))


def test_the_cli_sends_a_saved_token_only_to_its_own_arena(arena: tuple[ArenaServer, str], tmp_path: Path) -> None:
    server, address = arena
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    auth.save_token(ours, auth.SavedToken(TOKEN, server.arena_id()))
    auth.save_token(theirs, auth.SavedToken("another-arenas-token-0123456789", "0" * 32))
    result = _cli("ladder", "--rebuild", "--json", "--server", address, ARENA_DATA_DIR=str(ours))
    assert result.exit_code == 0, result.output
    # a token saved by another arena is not sent (so the referee sees none: UNAUTHENTICATED, not PERMISSION_DENIED)
    result = _cli("ladder", "--rebuild", "--server", address, ARENA_DATA_DIR=str(theirs))
    assert result.exit_code == 1
    assert "belongs to another arena (00000000), not to the one at" in result.stderr
    assert "RebuildLadder is an organiser call" in result.stderr and "(UNAUTHENTICATED)" in result.stderr
    assert "another-arenas-token" not in result.output
    # ARENA_ADMIN_TOKEN goes wherever the user sends it; a wrong one is refused without being echoed
    result = _cli("ladder", "--rebuild", "--server", address, ARENA_DATA_DIR=str(theirs),
                  ARENA_ADMIN_TOKEN="not-the-right-token-at-all")
    assert result.exit_code == 1
    assert "RebuildLadder: wrong admin token" in result.stderr and "(PERMISSION_DENIED)" in result.stderr
    assert "not-the-right-token-at-all" not in result.output
    result = _cli("ladder", "--rebuild", "--json", "--server", address, ARENA_DATA_DIR=str(tmp_path / "none"),
                  ARENA_ADMIN_TOKEN=TOKEN)
    assert result.exit_code == 0, result.output
    # no token anywhere: the refusal says where this CLI looked, and how to point it at the one serve saved
    result = _cli("ladder", "--rebuild", "--server", address, ARENA_DATA_DIR=str(tmp_path / "none"))
    assert result.exit_code == 1 and "(UNAUTHENTICATED)" in result.stderr
    assert f"this CLI found no admin token at {tmp_path / 'none' / auth.ADMIN_TOKEN_FILE} (ARENA_DATA_DIR)" \
        in result.stderr  # where it looked, and why there: not "./.arena" when ARENA_DATA_DIR said another folder
    assert "set ARENA_DATA_DIR to that folder's .arena" in result.stderr
    created = _cli("tournament", "create", "--bots", "a,b", "--no-wait", "--server", address,
                   ARENA_DATA_DIR=str(tmp_path / "none"))  # the organiser's commonest call says the same
    assert created.exit_code == 1 and "(UNAUTHENTICATED)" in created.stderr, created.output
    assert f"this CLI found no admin token at {tmp_path / 'none' / auth.ADMIN_TOKEN_FILE}" in created.stderr
    # reads need no token at all
    assert _cli("ladder", "--json", "--server", address, ARENA_DATA_DIR=str(tmp_path / "none")).exit_code == 0
