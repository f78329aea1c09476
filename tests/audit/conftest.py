"""Fixtures of the spy audit: a fleet of spy bot processes (``tests/bots/spy_any_bot.py``, each with its own log
file, name and bot secret, every registered game) and Arena servers on the session's real redis-server."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.cli.app import admin_signer
from arena.match.local_bots import BotProcess, start_bot
from arena.match.record import SeatSpec
from arena.server.app import ArenaServer
from arena_sdk.pb import arena_pb2_grpc

from .spy_checks import Call, read_log

SPY_BOT = str(Path(__file__).resolve().parent.parent / "bots" / "spy_any_bot.py")
FLEET_SIZE = 6
START_TIMEOUT_S = 60.0  # a hang guard: six processes starting at once on a busy machine may take a while


@dataclass
class Spy:
    """One running spy: its bot ``name`` (GetInfo), ``endpoint``, the bot ``secret`` it was started with (it
    refuses match calls without it), the ``log`` it appends every received call to."""

    name: str
    endpoint: str
    secret: str = field(repr=False)
    log: Path
    process: BotProcess

    def seat(self) -> SeatSpec:
        return SeatSpec(self.name, self.endpoint, self.secret)

    def calls(self) -> list[Call]:
        return read_log(self.log, self.name)


@pytest.fixture(scope="module")
def spy_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Spy]]:
    """``FLEET_SIZE`` spy processes ("spy0".., each with its own log and bot secret), started at once; stopped after
    the module."""
    folder = tmp_path_factory.mktemp("spies")

    def start(i: int) -> Spy:
        log = folder / f"spy{i}.jsonl"
        secret = secrets.token_urlsafe(24)
        bot = start_bot(SPY_BOT, extra_args=["--log", str(log), "--name", f"spy{i}", "--seed", str(i),
                                             f"--secret={secret}"],  # "=": a secret may start with "-"
                        timeout=START_TIMEOUT_S)
        return Spy(bot.name, bot.endpoint, secret, log, bot)

    with ThreadPoolExecutor(FLEET_SIZE) as pool:
        futures = [pool.submit(start, i) for i in range(FLEET_SIZE)]
    failed = [f.exception() for f in futures if f.exception() is not None]
    fleet = [f.result() for f in futures if f.exception() is None]
    if failed:  # stop the ones that did start, then report the first failure
        for spy in fleet:
            spy.process.stop()
        raise failed[0]
    try:
        yield fleet
    finally:
        for spy in fleet:
            spy.process.stop()


@pytest.fixture
def arena_server(redis_url: str) -> Iterator[Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]]]:
    """Factory ``arena_server(**ArenaServer kwargs) -> (server, organiser stub)``: an Arena server on 127.0.0.1
    (port 0); the stub sends the admin token with organiser calls (as in tests/platform/conftest.py). Stopped after
    the test."""
    started: list[tuple[ArenaServer, grpc.Channel]] = []

    def _start(**kwargs: Any) -> tuple[ArenaServer, arena_pb2_grpc.ArenaStub]:
        server = ArenaServer("127.0.0.1:0", redis_url, **kwargs)
        port = server.start()
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        started.append((server, channel))
        token = server.admin_token
        return server, arena_pb2_grpc.ArenaStub(grpc.intercept_channel(channel, admin_signer(channel, token)))

    try:
        yield _start
    finally:
        for server, channel in started:
            channel.close()
            server.stop()
