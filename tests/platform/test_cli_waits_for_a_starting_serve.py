"""`arena serve &` and the next command at once: while an `arena serve` holds the CLI's data folder but answers
nothing yet, a CLI call waits for it (up to ``STARTING_WAIT_S``) instead of failing; with the folder free, a
closed port still fails at once (a real Arena server on the session's redis-server, the real CLI)."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli import cli
from arena.cli.app import STARTING_WAIT_S
from arena.core.folder_lock import FolderLock, folder_held
from arena.server.app import ArenaServer


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_call_waits_for_a_serve_that_holds_the_folder_and_not_otherwise(redis_url: str, tmp_path: Path) -> None:
    port = _free_port()
    lock = FolderLock(tmp_path / "serving")
    lock.acquire(f"arena serve listening on 127.0.0.1:{port}")
    assert folder_held(tmp_path / "serving") and not folder_held(tmp_path / "free")
    started: list[Any] = []

    def start_later() -> None:
        time.sleep(1.5)  # the referee comes up after the command was given
        server = ArenaServer(f"127.0.0.1:{port}", redis_url, workers=0)
        server.start()
        started.append(server)

    thread = threading.Thread(target=start_later)
    thread.start()
    try:
        t0 = time.monotonic()
        result = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path / "serving")}).invoke(
            cli, ["bot", "list", "--json", "--no-check", "--server", f"127.0.0.1:{port}"])
        waited = time.monotonic() - t0
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == [] and waited >= 1.4
    finally:
        thread.join()
        for server in started:
            server.stop()
        lock.release()
    t0 = time.monotonic()
    result = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path / "free")}).invoke(
        cli, ["bot", "list", "--json", "--no-check", "--server", f"127.0.0.1:{_free_port()}"])
    assert result.exit_code != 0 and "nothing answers there" in result.output
    assert time.monotonic() - t0 < STARTING_WAIT_S / 2  # no serve holds that folder: no wait


def test_a_call_waits_for_a_serve_that_takes_the_folder_a_moment_later(redis_url: str, tmp_path: Path) -> None:
    """The README's `arena serve &` then a command at once: both start together, so the command may find nothing
    before the serve has even taken its data folder (both import for seconds); it waits for the folder
    (``SERVE_LOCK_GRACE_S``) and then for the referee."""
    port = _free_port()
    lock = FolderLock(tmp_path / "serving")
    started: list[Any] = []

    def start_later() -> None:
        time.sleep(1.0)
        lock.acquire(f"arena serve --listen 127.0.0.1:{port}")
        time.sleep(1.0)
        server = ArenaServer(f"127.0.0.1:{port}", redis_url, workers=0)
        server.start()
        started.append(server)

    thread = threading.Thread(target=start_later)
    thread.start()
    try:
        result = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path / "serving")}).invoke(
            cli, ["bot", "list", "--json", "--no-check", "--server", f"127.0.0.1:{port}"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == []
    finally:
        thread.join()
        for server in started:
            server.stop()
        lock.release()
