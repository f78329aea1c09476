"""A private redis-server taken over: the one an `arena serve` killed with SIGKILL left running, which the next
`arena serve` of the folder adopts (``take_over_orphan`` + ``PrivateRedis.adopt``). Its ``RedisWatch`` watches it
as one started here although it is no child (a pidfd): killed, it is started again on the same port, in the same
folder, with its data; one that cannot start again makes the watch give up; stopped on purpose, it is shut down.
Real redis-server processes, a real starter process killed with SIGKILL, a real `arena serve`."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from platform_helpers import wait_until

from arena.store.processes import TakenOver
from arena.store.redis_server import OWNER_FILE, PID_FILE, URL_FILE, PrivateRedis, take_over_orphan
from arena.store.redis_watch import RedisWatch

ARENA = Path(sys.executable).parent / "arena"
BACK_S = 15.0  # the bound on a restart (it takes a fraction of a second)

# An `arena serve` stand-in: it starts the private Redis of a folder, prints its URL and waits to be killed.
_STARTER = """
import sys, time
from pathlib import Path
from arena.store.redis_server import PrivateRedis
print(PrivateRedis(Path(sys.argv[1])).start(), flush=True)
time.sleep(600)
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}


def _server_pid(url: str) -> int | None:
    """The process id of the Redis answering at ``url``, None while none answers (or it still loads its data)."""
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        return int(client.info("server")["process_id"]) if client.ping() else None
    except redis.RedisError:
        return None
    finally:
        client.close()


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie nobody reaps)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state == "Z"


@pytest.fixture
def orphans() -> Iterator[list[int]]:
    """Pids of the redis-servers a test left running; each is killed after the test."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def orphan(tmp_path: Path, orphans: list[int]) -> Callable[[], tuple[Path, str, int]]:
    """Factory: the private Redis of ``tmp_path / "data"`` left running by a starter killed with SIGKILL, as
    (data dir, URL, pid of its redis-server)."""

    def _make() -> tuple[Path, str, int]:
        data_dir = tmp_path / "data"
        starter = subprocess.Popen([sys.executable, "-c", _STARTER, str(data_dir)], stdout=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, text=True, env=_env())
        try:
            assert starter.stdout is not None
            url = starter.stdout.readline().strip()
        finally:
            starter.kill()  # SIGKILL: its redis-server keeps running, owned by nobody
            starter.wait()
        assert url.startswith("redis://"), url
        pid = int((data_dir / PID_FILE).read_text())
        orphans.append(pid)
        assert not _gone(pid)
        return data_dir, url, pid

    return _make


def test_a_starter_that_is_a_zombie_or_whose_pid_was_reused_is_gone(tmp_path: Path) -> None:
    """The starter of a folder's Redis, killed and not yet reaped by its parent, is a zombie: gone, and the Redis is
    taken over (it was left unwatched, never restarted should it die); so is the owner file's pid when a process
    started after the file was written holds it now; a live starter keeps its Redis."""
    from arena.store.redis_server import OWNER_FILE as OWNER

    starter = subprocess.Popen(["sleep", "60"])
    try:
        (tmp_path / OWNER).write_text(f"{starter.pid}\n")
        assert not take_over_orphan(tmp_path)  # alive, started before the file was written
        starter.kill()  # not reaped (no wait yet): a zombie once the signal has landed
        end = time.monotonic() + 10
        while not _gone(starter.pid) and time.monotonic() < end:
            time.sleep(0.01)
        assert Path(f"/proc/{starter.pid}/stat").exists()  # still there, as a zombie
        assert take_over_orphan(tmp_path)
        assert (tmp_path / OWNER).read_text().strip() == str(os.getpid())
    finally:
        starter.wait()
    later = subprocess.Popen(["sleep", "60"])
    try:  # the file was written a minute before this process started: the number is reused
        (tmp_path / OWNER).write_text(f"{later.pid}\n")
        os.utime(tmp_path / OWNER, (time.time() - 60, time.time() - 60))
        assert take_over_orphan(tmp_path)
    finally:
        later.kill()
        later.wait()


def test_a_taken_over_redis_killed_is_restarted_on_its_port_with_its_data(
        orphan: Callable[[], tuple[Path, str, int]], orphans: list[int], caplog: pytest.LogCaptureFixture) -> None:
    data_dir, url, first = orphan()
    assert take_over_orphan(data_dir)  # its starter is gone: this process owns it now
    server = PrivateRedis(data_dir)
    assert server.adopt(url) == url
    assert (server.pid, server.url, server.running, server.exited()) == (first, url, True, None)
    port = server.port
    client = redis.Redis.from_url(url)
    client.set("arena:kept", "yes")  # acknowledged: in the appendonly file
    caplog.set_level(logging.WARNING, logger="arena.store.redis_watch")
    watch = RedisWatch(server, check_interval_s=0.05).start()
    try:
        os.kill(first, signal.SIGKILL)  # no child of this process: the watch cannot wait for it
        killed = time.monotonic()
        wait_until(lambda: watch.restarts == 1, "the watch to restart the killed redis-server", timeout=BACK_S)
        second = server.pid
        assert second is not None and second != first and server.process is not None
        orphans.append(second)
        assert (server.url, server.port, server.taken_over) == (url, port, None)  # now a child of this process
        assert client.get("arena:kept") == b"yes"  # the same URL, and the data back from the appendonly file
        assert time.monotonic() - killed < BACK_S
        assert (data_dir / URL_FILE).read_text().strip() == url
        assert int((data_dir / PID_FILE).read_text()) == second
        (line,) = [r.getMessage() for r in caplog.records if r.name == "arena.store.redis_watch"]
        assert line.startswith(f"the private redis-server (pid {first}) exited unexpectedly (how is unknown: it was "
                               f"taken over, no child of this process); restarted it on port {port} with the same "
                               f"data folder and password (pid {second}, "), line
    finally:
        client.close()
        watch.close()
    assert not server.running and server.pid is None  # shut down on purpose: not restarted
    assert _gone(second) and watch.restarts == 1
    assert not (data_dir / URL_FILE).exists() and not (data_dir / PID_FILE).exists()


def test_a_taken_over_redis_is_shut_down_by_its_new_owner(orphan: Callable[[], tuple[Path, str, int]]) -> None:
    data_dir, url, pid = orphan()
    assert take_over_orphan(data_dir)
    server = PrivateRedis(data_dir)
    server.adopt(url)
    watch = RedisWatch(server, check_interval_s=0.05).start()
    watch.close()
    assert _gone(pid) and watch.restarts == 0 and not server.running
    for name in (URL_FILE, PID_FILE, OWNER_FILE):
        assert not (data_dir / name).exists(), name
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()


def test_a_watch_gives_up_on_a_taken_over_redis_that_cannot_start_again(
        orphan: Callable[[], tuple[Path, str, int]]) -> None:
    data_dir, url, pid = orphan()
    take_over_orphan(data_dir)
    server = PrivateRedis(data_dir)
    server.adopt(url)
    port = server.port
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: server.exited() is not None, "the taken-over redis-server to be seen dead", timeout=BACK_S)
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # another program took its port
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        given_up: list[str] = []
        watch = RedisWatch(server, on_give_up=given_up.append, max_restarts=2, backoff_s=(0.0, 0.05),
                           check_interval_s=0.02).start()
        try:
            wait_until(lambda: bool(given_up), "the watch to give up", timeout=BACK_S)
        finally:
            watch.close()
    finally:
        squatter.close()
    assert watch.restarts == 0 and len(given_up) == 1
    assert given_up[0].startswith(f"the private redis-server of {data_dir} (port {port}) could not be kept running: "
                                  f"2 restart attempts within 60 s, the last: redis-server exited with code ")
    assert not (data_dir / URL_FILE).exists()  # close() cleaned up after it


def test_the_end_of_a_process_taken_over_is_seen_without_a_pidfd_too(orphans: list[int]) -> None:
    """Where there is no pidfd (not Linux, an old kernel) the pid is polled, a zombie counted as ended."""
    sleeper = subprocess.Popen(["sleep", "60"])
    orphans.append(sleeper.pid)
    process = TakenOver(sleeper.pid)
    process.close()  # its pidfd closed: the pid is polled from now on
    assert process.alive()
    process.send_signal(signal.SIGKILL)
    assert not process.alive(timeout=BACK_S)  # a zombie until reaped, yet ended
    sleeper.wait()


def test_serve_restarts_the_private_redis_it_took_over(tmp_path: Path, orphans: list[int]) -> None:
    """The review's reproduction: `arena serve` killed with SIGKILL, a second one takes its redis-server over, and
    that server killed with SIGKILL is started again on its port, its data kept; the serve keeps running."""
    data_dir = tmp_path / "arena-data"
    args = [str(ARENA), "serve", "--listen", "127.0.0.1:0", "--workers", "0", "--data-dir", str(data_dir)]

    def _serve() -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=_env())
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("redis: "):
                return proc, line.strip()
        proc.wait()
        raise AssertionError(f"arena serve exited with code {proc.returncode}: {proc.stderr and proc.stderr.read()}")

    first, _ = _serve()
    first.kill()
    first.wait()
    pid = int((data_dir / PID_FILE).read_text())
    orphans.append(pid)
    url = (data_dir / URL_FILE).read_text().strip()
    redis.Redis.from_url(url).set("arena:kept", "yes")
    second, line = _serve()
    try:
        assert "left running by an arena serve that died; taken over, restarted should it die" in line, line
        os.kill(pid, signal.SIGKILL)
        restarted = wait_until(lambda: _server_pid(url) not in (None, pid) and _server_pid(url),
                               "a new redis-server on the killed one's port", timeout=BACK_S)
        orphans.append(restarted)
        wait_until(lambda: (data_dir / PID_FILE).read_text().strip() == str(restarted), "its redis.pid",
                   timeout=BACK_S)  # written once it has loaded its data, a moment after it answers
        client = redis.Redis.from_url(url)
        try:
            assert client.get("arena:kept") == b"yes"  # the same URL, and the data back from the appendonly file
        finally:
            client.close()
        assert second.poll() is None
    finally:
        second.terminate()
        assert second.wait(timeout=60) == 0
    assert _gone(restarted) and not (data_dir / URL_FILE).exists()  # stopped with the serve, not restarted
    assert second.stderr is not None
    stderr = second.stderr.read()
    assert f"the private redis-server (pid {pid}) exited unexpectedly (how is unknown" in stderr, stderr
    assert "Traceback" not in stderr, stderr
