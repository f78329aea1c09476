"""Fixtures of the platform tests: a store, workers (threads or separate OS processes) and Arena servers, all on
the session's real redis-server; every one started is stopped after its test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from platform_helpers import ProcessWorker, ThreadWorker

from arena.cli.app import admin_signer
from arena.server.app import ArenaServer
from arena.store import Store
from arena_sdk.pb import arena_pb2_grpc


@pytest.fixture
def store(redis_url: str) -> Iterator[Store]:
    s = Store.from_url(redis_url)
    yield s
    s.close()


@pytest.fixture
def workers(redis_url: str, tmp_path: Path) -> Iterator[Any]:
    """Factory of workers: ``workers.thread(name, **WorkerSettings fields)`` and ``workers.process(name, **kwargs)``;
    all stopped after the test."""

    class _Factory:
        def __init__(self) -> None:
            self.started: list[ThreadWorker | ProcessWorker] = []

        def thread(self, name: str, **kwargs: Any) -> ThreadWorker:
            worker = ThreadWorker(redis_url, name, **kwargs)
            self.started.append(worker)
            return worker

        def process(self, name: str, **kwargs: Any) -> ProcessWorker:
            worker = ProcessWorker(redis_url, name, tmp_path / f"{name}.log", **kwargs)
            self.started.append(worker)
            return worker

    factory = _Factory()
    try:
        yield factory
    finally:
        for worker in factory.started:
            worker.stop()


@pytest.fixture
def arena_server(redis_url: str) -> Iterator[Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]]]:
    """Factory ``arena_server(**ArenaServer kwargs) -> (server, stub)``: an Arena server on 127.0.0.1 (port 0),
    defaults workers=0, verify_bots=True and verify_timeout_s=1.0; stopped after the test. The stub sends the
    server's admin token with organiser calls, as the CLI does (``server.admin_token``; a test of the token itself uses its own channel)."""
    started: list[tuple[ArenaServer, grpc.Channel]] = []

    def _start(**kwargs: Any) -> tuple[ArenaServer, arena_pb2_grpc.ArenaStub]:
        kwargs.setdefault("workers", 0)
        kwargs.setdefault("verify_timeout_s", 1.0)  # a failed registration check answers after this bound
        server = ArenaServer("127.0.0.1:0", redis_url, **kwargs)
        port = server.start()
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        started.append((server, channel))
        token = server.admin_token
        return server, arena_pb2_grpc.ArenaStub(
            grpc.intercept_channel(channel, admin_signer(channel, token)))

    try:
        yield _start
    finally:
        for server, channel in started:
            channel.close()
            server.stop()
