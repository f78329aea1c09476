"""`arena serve &` and the next command at once: while an `arena serve` holds the CLI's data folder but answers
nothing yet, a CLI call waits for it (up to ``STARTING_WAIT_S``) instead of failing; with the folder free, a
closed port still fails at once (a real Arena server on the session's redis-server, the real CLI)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from arena.cli import cli
from arena.cli.app import STARTING_WAIT_S
from arena.core.folder_lock import SERVE_STOPPING, FolderLock, folder_held, serve_address, serve_stopping
from arena.server.app import ArenaServer


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _referee_later(port: int, redis_url: str, before: Callable[[], None]) -> Iterator[None]:
    """A thread that calls ``before()`` (e.g. sleeps, takes the folder) and then starts a real Arena server on
    ``port``; on exit the thread is joined and the server stopped."""
    started: list[Any] = []

    def start_later() -> None:
        before()
        server = ArenaServer(f"127.0.0.1:{port}", redis_url, workers=0)
        server.start()
        started.append(server)

    thread = threading.Thread(target=start_later)
    thread.start()
    try:
        yield
    finally:
        thread.join()
        for server in started:
            server.stop()


def _bot_list(data_dir: Path, port: int) -> Result:
    return CliRunner(env={"ARENA_DATA_DIR": str(data_dir)}).invoke(
        cli, ["bot", "list", "--json", "--no-check", "--server", f"127.0.0.1:{port}"])


def test_a_call_waits_for_a_serve_that_holds_the_folder_and_not_otherwise(redis_url: str, tmp_path: Path) -> None:
    port = _free_port()
    lock = FolderLock(tmp_path / "serving")
    lock.acquire(f"arena serve listening on 127.0.0.1:{port}")
    assert folder_held(tmp_path / "serving") and not folder_held(tmp_path / "free")
    try:
        with _referee_later(port, redis_url, lambda: time.sleep(1.5)):  # it comes up after the command was given
            t0 = time.monotonic()
            result = _bot_list(tmp_path / "serving", port)
            waited = time.monotonic() - t0
            assert result.exit_code == 0, result.output
            assert json.loads(result.stdout) == [] and waited >= 1.4
    finally:
        lock.release()
    t0 = time.monotonic()
    result = _bot_list(tmp_path / "free", _free_port())
    assert result.exit_code != 0 and "nothing answers there" in result.output
    assert time.monotonic() - t0 < STARTING_WAIT_S / 2  # no serve holds that folder: no wait


def test_a_call_waits_for_a_serve_that_takes_the_folder_a_moment_later(redis_url: str, tmp_path: Path) -> None:
    """The README's `arena serve &` then a command at once: both start together, so the command may find nothing
    before the serve has even taken its data folder (both import for seconds); it waits for the folder
    (``SERVE_LOCK_GRACE_S``) and then for the referee."""
    port = _free_port()
    lock = FolderLock(tmp_path / "serving")

    def take_the_folder() -> None:
        time.sleep(1.0)
        lock.acquire(f"arena serve --listen 127.0.0.1:{port}")
        time.sleep(1.0)

    try:
        with _referee_later(port, redis_url, take_the_folder):
            result = _bot_list(tmp_path / "serving", port)
            assert result.exit_code == 0, result.output
            assert json.loads(result.stdout) == []
    finally:
        lock.release()


def test_a_call_to_another_port_than_the_folders_serve_says_where_it_listens(tmp_path: Path) -> None:
    """The default address (or a typo) while the `arena serve` of the CLI's data folder listens elsewhere: no wait
    for a serve that will never answer there, and the error names the address to give."""
    folder, listening, wrong = tmp_path / "serving", f"127.0.0.1:{_free_port()}", _free_port()
    lock = FolderLock(folder)
    lock.acquire("arena serve --listen starting")
    try:
        assert serve_address(folder) is None  # still starting: not said yet
        lock.update(f"arena serve listening on {listening}")
        assert serve_address(folder) == listening and serve_address(tmp_path / "free") is None
        t0 = time.monotonic()
        result = _bot_list(folder, wrong)
        assert time.monotonic() - t0 < STARTING_WAIT_S / 2
        assert result.exit_code != 0 and f"listens on {listening}: give --server {listening}" in result.output
        registered = CliRunner(env={"ARENA_DATA_DIR": str(folder)}).invoke(  # a command that asks who the arena is
            cli, ["bot", "register", "lowrisk", "127.0.0.1:50200", "--server", f"127.0.0.1:{wrong}"])
        assert registered.exit_code != 0 and f"give --server {listening}" in registered.output, registered.output
    finally:
        lock.release()
    assert serve_address(folder) is None  # released: nobody listens for it


def test_a_call_while_the_folders_serve_is_stopping_says_so_at_once(tmp_path: Path) -> None:
    """Ctrl-C on `arena serve`: while its workers' matches finish (up to a minute) the referee answers nothing; a
    command meanwhile says the serve is stopping, at once, not that nothing answers there."""
    folder, port = tmp_path / "serving", _free_port()
    lock = FolderLock(folder)
    lock.acquire(f"arena serve listening on 127.0.0.1:{port}")
    try:
        lock.update(SERVE_STOPPING)
        assert serve_stopping(folder) and serve_address(folder) is None
        t0 = time.monotonic()
        result = _bot_list(folder, port)
        assert time.monotonic() - t0 < STARTING_WAIT_S / 2
        assert result.exit_code != 0 and "is stopping" in result.output, result.output
        assert "nothing answers there" not in result.output
    finally:
        lock.release()
    assert not serve_stopping(folder)
