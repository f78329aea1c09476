"""A Redis emptied under a running referee (an external one restarted without persistence, a FLUSHALL): the serve
says so in its log, where it only logged that Redis answered again while every bot, tournament and result was gone
(a review). A real Arena server on a private redis-server of its own."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
import redis
from platform_helpers import wait_until

from arena.server.app import ArenaServer
from arena.store.redis_server import PrivateRedis


def test_a_referee_says_when_its_redis_lost_its_data(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="arena.server.app")
    with PrivateRedis(tmp_path / "data") as redis_server:
        server = ArenaServer("127.0.0.1:0", redis_server.url, workers=0, health_check_s=0.05)
        server.start()
        try:
            first = server.arena_id()
            wait_until(lambda: server._health_thread is not None, "the health watch")
            time.sleep(0.3)  # several checks: an unchanged id says nothing
            assert not [r for r in caplog.records if "holds another arena now" in r.getMessage()]
            client = redis.Redis.from_url(redis_server.url)
            client.flushall()
            client.close()
            wait_until(lambda: any("holds another arena now" in r.getMessage() for r in caplog.records),
                       "the referee to say its Redis lost its data")
            (line,) = [r.getMessage() for r in caplog.records if "holds another arena now" in r.getMessage()]
            assert f"its id {first[:8]} is none now" in line and "emptied or restarted without persistence" in line
            assert "When Redis loses its data" in line
            assert redis_server.password not in line
        finally:
            server.stop()


def test_serve_warns_of_an_external_redis_that_keeps_nothing_on_disk(tmp_path: Path) -> None:
    """`arena serve --redis-url` on a Redis without appendonly and save points: a warning at start (the review's
    Redis, restarted, came back empty, and nothing had said it would)."""
    from arena.cli.serve import keeps_nothing

    with PrivateRedis(tmp_path / "data") as redis_server:
        assert keeps_nothing(redis_server.url) is None  # the private server: appendonly
        client = redis.Redis.from_url(redis_server.url)
        try:
            client.config_set("appendonly", "no")
            assert keeps_nothing(redis_server.url) == "keeps no data on disk (appendonly no, no save points)"
            client.config_set("save", "3600 1")
            assert keeps_nothing(redis_server.url) is None  # snapshots: it keeps something
        finally:
            client.close()
