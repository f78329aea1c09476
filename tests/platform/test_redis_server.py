"""PrivateRedis: a real redis-server child with appendonly persistence; resolve_redis_url."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import redis
from platform_helpers import wait_until

from arena.redis_server import (
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
        assert url.startswith("redis://127.0.0.1:") and url == server.url
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
        with pytest.raises(RedisStartError, match="already running at " + first.url):
            PrivateRedis(tmp_path).start()
        assert first.running


def test_a_taken_port_gives_a_clear_error_with_the_log_tail(tmp_path: Path, redis_server: PrivateRedis) -> None:
    with pytest.raises(RedisStartError) as excinfo:
        PrivateRedis(tmp_path, port=redis_server.port).start()
    message = str(excinfo.value)
    assert f"port {redis_server.port}" in message
    assert "log tail" in message
    assert (tmp_path / LOG_FILE).exists()
    assert not (tmp_path / URL_FILE).exists()


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


def test_a_server_that_dies_while_loading_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A corrupt appendonly file: redis-server exits while loading; ``start`` says so with the log tail."""
    (tmp_path / "appendonly.aof").write_bytes(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGARBAGE")
    with pytest.raises(RedisStartError) as excinfo:
        PrivateRedis(tmp_path).start()
    assert "log tail" in str(excinfo.value) and "exited with code" in str(excinfo.value)
    assert not (tmp_path / URL_FILE).exists()
