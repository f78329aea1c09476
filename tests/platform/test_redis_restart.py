"""A restarted private Redis: it takes the port of its last run again when free, and an `arena worker` whose URL
came from the data dir follows it to a new port when the old one is taken; one whose process died is started again
by its ``RedisWatch`` (`arena serve`'s), on the same port with its data, until it keeps dying. Real redis-server, a
real `arena worker` process, real bot processes over real gRPC."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
from platform_helpers import WAIT_S, damage_appendonly, wait_until

from arena.core.specs import MatchSpec
from arena.store import Store
from arena.store.redis_server import LOG_FILE, PORT_FILE, URL_FILE, PrivateRedis, remembered_port
from arena.store.redis_watch import RedisWatch

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


# --- RedisWatch: the private Redis of `arena serve` restarted when its process dies ------------------------------


def test_a_watch_restarts_a_killed_private_redis_on_its_port_with_its_data(
        private_redis: Any, caplog: pytest.LogCaptureFixture) -> None:
    server = private_redis()
    url, port = server.url, server.port
    client = redis.Redis.from_url(url)
    client.set("arena:kept", "yes")  # acknowledged: in the appendonly file
    watch = RedisWatch(server, check_interval_s=0.05).start()
    try:
        first = server.process.pid
        caplog.set_level(logging.WARNING, logger="arena.store.redis_watch")
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: watch.restarts == 1, "the watch to restart the killed redis-server")
        assert (server.url, server.port) == (url, port) and server.process.pid != first
        assert client.get("arena:kept") == b"yes"  # the same URL, and the data back from the appendonly file
        (line,) = [r.getMessage() for r in caplog.records if r.name == "arena.store.redis_watch"]
        assert line.startswith(f"the private redis-server (pid {first}) exited unexpectedly (killed by SIGKILL); "
                               f"restarted it on port {port} with the same data folder and password "
                               f"(pid {server.process.pid}, ")
    finally:
        client.close()
        watch.close()
    assert not server.running and server.process is None  # shut down on purpose: not restarted
    assert watch.restarts == 1


def test_a_watch_leaves_a_dead_redis_alone_while_its_owner_stops(private_redis: Any) -> None:
    server = private_redis()
    stopping = threading.Event()
    stopping.set()  # e.g. SIGTERM reached arena serve (and its redis-server) at once
    watch = RedisWatch(server, stopping=stopping, check_interval_s=0.02).start()
    try:
        server.process.kill()
        server.process.wait()
        time.sleep(0.3)
        assert watch.restarts == 0 and not server.running
    finally:
        watch.close()


def _watch_until_it_gives_up(server: PrivateRedis, max_restarts: int) -> tuple[RedisWatch, list[str]]:
    """A ``RedisWatch`` of ``server`` (whose process is dead) with quick retries, closed once it gave up: the watch
    and its give-up messages."""
    given_up: list[str] = []
    watch = RedisWatch(server, on_give_up=given_up.append, max_restarts=max_restarts, backoff_s=(0.0, 0.05),
                       check_interval_s=0.02).start()
    try:
        wait_until(lambda: bool(given_up), "the watch to give up")
    finally:
        watch.close()
    return watch, given_up


def test_a_watch_gives_up_on_a_redis_that_cannot_start_again(private_redis: Any,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    server = private_redis()
    port = server.port
    server.process.kill()
    server.process.wait()
    caplog.set_level(logging.WARNING, logger="arena.store.redis_watch")
    with _squatter(port):  # another program took its port: redis-server cannot listen there
        watch, given_up = _watch_until_it_gives_up(server, 3)
    assert watch.restarts == 0 and watch.gave_up == given_up[0] and len(given_up) == 1
    lines = [r.getMessage() for r in caplog.records if r.name == "arena.store.redis_watch"]
    assert len(lines) == 3 and all(f"restarting it on port {port} failed (attempt {n} of 3 within 60 s" in line
                                   for n, line in enumerate(lines, 1)), lines
    assert "next try in 0.05 s)" in lines[0] and "next try" not in lines[2]
    assert given_up[0].startswith(f"the private redis-server of {server.data_dir} (port {port}) could not be kept "
                                  f"running: 3 restart attempts within 60 s, the last: redis-server exited with code ")
    assert f"See {server.data_dir / LOG_FILE} for why" in given_up[0]
    assert not server.running and not (server.data_dir / URL_FILE).exists()  # close() cleaned up after it


def test_a_watch_giving_up_on_a_damaged_appendonly_file_gives_the_repair(private_redis: Any) -> None:
    server = private_redis()
    client = redis.Redis.from_url(server.url)
    for i in range(100):
        client.set(f"k{i}", "v" * 50)
    client.close()
    server.process.kill()
    server.process.wait()
    aof = server.data_dir / "appendonly.aof"
    damage_appendonly(aof)
    _watch, given_up = _watch_until_it_gives_up(server, 2)
    assert f"will not load its appendonly file {aof.resolve()}: Bad file format" in given_up[0]
    assert f"redis-check-aof --fix {aof.resolve()}" in given_up[0]  # the repair's commands, not only "see the log"


def test_a_watch_giving_up_after_restarts_that_worked_names_the_death_that_made_it_give_up(
        private_redis: Any) -> None:
    server = private_redis()
    given_up: list[str] = []
    watch = RedisWatch(server, on_give_up=given_up.append, max_restarts=2, backoff_s=(0.0,),
                       check_interval_s=0.02).start()
    try:
        for k in range(2):
            os.kill(server.process.pid, signal.SIGKILL)
            wait_until(lambda k=k: watch.restarts == k + 1, f"restart {k + 1}")
        last = server.process.pid
        os.kill(last, signal.SIGKILL)
        wait_until(lambda: bool(given_up), "the watch to give up")
    finally:
        watch.close()
    assert f"2 restart attempts within 60 s, the last: the private redis-server (pid {last}) exited unexpectedly " \
           f"(killed by SIGKILL)" in given_up[0], given_up[0]


def test_a_server_that_dies_loading_a_damaged_file_after_it_answered_gives_the_repair(tmp_path: Path) -> None:
    """A large appendonly file damaged near its end: redis-server answers PING (still loading) before it reaches the
    damage, then exits; the error names the damage and the repair, as when it dies before answering (a review got
    only "exited with code 1 while loading", and redis.log's advice to run a redis-check-aof not shipped)."""
    from arena.store.redis_server import _LoadingFailed

    server = PrivateRedis(tmp_path / "data")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / LOG_FILE).write_text(
        "# Bad file format reading the append only file appendonly.aof.1.incr.aof: make a backup of your AOF file, "
        "then use ./redis-check-aof --fix <filename.manifest>\n")
    dead = subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"])
    dead.wait()
    with pytest.raises(_LoadingFailed) as failed:
        server._wait_loaded(dead, 6399, "redis://127.0.0.1:6399/0", tmp_path / "data" / LOG_FILE, "/x/redis-server")
    text = str(failed.value)
    assert "Bad file format reading the append only file" in text and "redis-check-aof --fix" in text
    assert str((tmp_path / "data").resolve()) in text
