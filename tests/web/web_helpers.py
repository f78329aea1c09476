"""Helpers of the web tests: ``arena`` subprocesses whose output lines are collected, and the module's arena
(``WebArena``: a referee, its web pages, sample bots) that the fixtures of ``conftest.py`` start."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from click.testing import CliRunner, Result

from arena.cli import cli
from arena.match.local_bots import BotProcess
from arena.web import create_app
from arena.web.app import WebOptions
from arena.web.client import ArenaNotFound, ArenaReader
from arena_sdk.pb import arena_pb2

ARENA = Path(sys.executable).parent / "arena"
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1200, "height": 900}
START_TIMEOUT_S = 60.0


def arena_env(**extra: str) -> dict[str, str]:
    """This process's environment without any ARENA_* variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Proc:
    """An ``arena ARGS`` subprocess; a thread collects its stdout lines (stderr goes to ``log``)."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.args = args
        self.log = log
        self._log_file = log.open("ab")
        self.process = subprocess.Popen([str(ARENA), *args], stdout=subprocess.PIPE, stderr=self._log_file,
                                        text=True, env=env or arena_env())
        self.lines: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self.lines.append("<eof>")
            self._changed.notify_all()

    def wait_for(self, fragment: str, timeout: float = START_TIMEOUT_S) -> str:
        """The first stdout line holding ``fragment``; fails (with the log) when none comes in ``timeout`` s."""
        with self._changed:
            self._changed.wait_for(lambda: any(fragment in line for line in self.lines) or "<eof>" in self.lines,
                                   timeout=timeout)
            found = [line for line in self.lines if fragment in line]
        assert found, f"arena {' '.join(self.args)}: no {fragment!r} in {self.lines}; log: {self.log.read_text()}"
        return found[0]

    def stop(self) -> int:
        """SIGTERM, then wait (SIGKILL after 60 s); answers the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._log_file.close()
        return code


@dataclass
class WebArena:
    """The module's arena: ``arena serve`` (referee with one embedded worker, on the session's redis-server) at
    ``server``, ``arena web`` at ``url`` (no trailing slash) reading it, and sample bot processes."""

    server: str
    url: str
    data_dir: Path
    redis_url: str
    serve: Proc
    web: Proc
    bots: list[BotProcess] = field(default_factory=list)

    def run(self, *args: str) -> Result:
        """``arena ARGS --server S`` in this process, with the admin token ``arena serve`` saved."""
        env = {"ARENA_TOKEN": None, "ARENA_ADMIN_TOKEN": None, "ARENA_DATA_DIR": str(self.data_dir),
               "COLUMNS": "200"}
        return CliRunner(env=env).invoke(cli, [*args, "--server", self.server])

    def json(self, *args: str) -> Any:
        result = self.run(*args, "--json")
        assert result.exit_code == 0, f"arena {' '.join(args)}: {result.output}"
        return json.loads(result.stdout)

    def start_referee(self) -> None:
        """(Re)start ``arena serve`` on the same address, so the web pages' channel finds it again."""
        self.serve = serve_process(self.server, self.data_dir, self.redis_url)

    def stop_referee(self) -> None:
        assert self.serve.stop() == 0


def serve_process(server: str, data_dir: Path, redis_url: str) -> Proc:
    """``arena serve`` on ``server`` with one embedded worker, waited for until it listens."""
    proc = Proc(["serve", "--listen", server, "--data-dir", str(data_dir), "--redis-url", redis_url,
                 "--workers", "1", "--concurrency", "2"], data_dir.parent / "serve.log")
    proc.wait_for("listening on ")
    return proc


def wait_until(predicate: Any, what: str, timeout: float = 120.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def screenshot(page: Any, name: str) -> Path:
    """Save a screenshot of ``page`` as ``tests/web/screenshots/NAME.png``; answers the path."""
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


class FakeReader(ArenaReader):
    """An ``ArenaReader`` that never dials the referee: a test's subclass answers ``call`` as the referee would (the
    pages' reads, in process); ``app_of`` makes the web app around one."""

    def __init__(self) -> None:
        super().__init__(FAKE_SERVER)  # never dialled: every read is answered by the subclass

    async def close(self) -> None:
        return None

    @staticmethod
    def empty_or_not_found(method: str) -> Any:
        """The answer of a read a test's subclass does not stage: no matches, no workers, else NOT_FOUND."""
        if method == "ListMatches":
            return arena_pb2.ListMatchesResponse()
        if method == "ListWorkers":
            return arena_pb2.ListWorkersResponse()
        raise ArenaNotFound(method, grpc.StatusCode.NOT_FOUND, "not found")


FAKE_SERVER = "127.0.0.1:9"


def app_of(reader: ArenaReader, **options: Any) -> Any:
    """The web app reading from ``reader`` (a ``FakeReader``), with ``WebOptions`` ``options``."""
    return create_app(WebOptions(server=FAKE_SERVER, **options), reader=reader)


@contextlib.contextmanager
def mobile_page(browser: Any, viewport: dict[str, int]) -> Iterator[Any]:
    """A page of a fresh phone-like browser context (``viewport``, device scale 2, touch), closed after."""
    context = browser.new_context(viewport=viewport, device_scale_factor=2, is_mobile=True)
    try:
        yield context.new_page()
    finally:
        context.close()
