"""PrivateRedis: a real redis-server child with appendonly persistence; resolve_redis_url."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

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
