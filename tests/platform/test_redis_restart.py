"""A restarted private Redis: it takes the port of its last run again when free, and an `arena worker` whose URL
came from the data dir follows it to a new port when the old one is taken. Real redis-server, a real `arena worker`
process, real bot processes over real gRPC."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from platform_helpers import WAIT_S, wait_until

from arena.core.specs import MatchSpec
from arena.store import Store
from arena.store.redis_server import PORT_FILE, PrivateRedis, remembered_port

ARENA = Path(sys.executable).parent / "arena"


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[Callable[[], PrivateRedis]]:
    """Factory of PrivateRedis servers on ``tmp_path / "data"``; every one started is stopped after the test."""
    started: list[PrivateRedis] = []

    def _start() -> PrivateRedis:
        server = PrivateRedis(tmp_path / "data")
        server.start()
        started.append(server)
        return server

    try:
        yield _start
    finally:
        for server in started:
            server.stop()


@contextmanager
def _squatter(port: int) -> Iterator[None]:
    """Something other than Redis listening on 127.0.0.1:``port``: it accepts connections and closes them."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the old server's connections linger in TIME_WAIT
    sock.bind(("127.0.0.1", port))
    sock.listen()

    def _refuse() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:  # closed: the test is over
                return
            conn.close()

    thread = threading.Thread(target=_refuse, daemon=True)
    thread.start()
    try:
        yield
    finally:
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        thread.join(5)


def _match(store: Store, match_id: str, endpoints: dict[str, str]) -> None:
    for name, endpoint in endpoints.items():
        store.register_bot("take5", name, endpoint)
    store.ensure_job_group()
    store.enqueue([MatchSpec(match_id=match_id, game="take5", seats=tuple(sorted(endpoints)), seed=5,
                             config={"limit": 1})])


def test_a_restarted_private_redis_takes_its_previous_port_again(private_redis: Any) -> None:
    first = private_redis()
    port = first.port
    assert remembered_port(first.data_dir) == port
    first.stop()
    assert (first.data_dir / PORT_FILE).exists()  # remembered across runs
    second = private_redis()
    assert second.port == port


def test_a_taken_previous_port_gives_a_new_one(private_redis: Any) -> None:
    first = private_redis()
    port = first.port
    first.stop()
    with _squatter(port):
        second = private_redis()
        assert second.port != port and remembered_port(second.data_dir) == second.port


def test_a_worker_follows_the_private_redis_to_a_new_port(private_redis: Any, start_bot: Callable[..., Any],
                                                          tmp_path: Path) -> None:
    first = private_redis()
    old_port = first.port
    env = {k: v for k, v in os.environ.items() if k != "ARENA_REDIS_URL"}
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen([str(ARENA), "-v", "worker", "--name", "w1", "--concurrency", "1",
                                   "--data-dir", str(first.data_dir)], stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=subprocess.STDOUT, env=env)
    try:
        bots = {"ra": start_bot("sample:random").endpoint, "rb": start_bot("sample:random").endpoint}
        store = Store.from_url(first.url)
        try:
            _match(store, "before", bots)
            wait_until(lambda: store.has_result("take5", "before"),
                       f"the worker to play a match; log:\n{log_path.read_text(errors='replace')}")
        finally:
            store.close()
        first.stop()
        # something else took the old port: the restarted Redis listens on another one
        with _squatter(old_port):
            second = private_redis()
            assert second.port != old_port
            store = Store.from_url(second.url)
            try:
                assert store.has_result("take5", "before")  # the same data (appendonly)
                _match(store, "after", bots)
                wait_until(lambda: store.has_result("take5", "after"),
                           f"the worker to play a match queued after the restart; log:\n"
                           f"{log_path.read_text(errors='replace')}")
                assert store.get_result("take5", "after")["worker"] == "w1"  # type: ignore[index]
            finally:
                store.close()
        assert worker.poll() is None, "the worker exited"
        assert "Redis moved" in log_path.read_text(errors="replace")
    finally:
        worker.terminate()
        try:
            worker.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
