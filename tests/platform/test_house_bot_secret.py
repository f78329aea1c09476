"""A house bot's process answers only its worker's referee: it is started with a fresh random bot secret (in its
environment, not on its command line), so another process on the machine that finds its loopback port can neither
start, nor reset, nor end its matches, nor choose its seat seed (a real house bot process over real gRPC)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.worker import house
from arena_sdk import wire
from arena_sdk.games import take5
from arena_sdk.pb import bot_pb2, bot_pb2_grpc


@pytest.fixture
def house_random() -> Iterator[tuple[str, str]]:
    try:
        yield house.house_endpoint("house:random")
    finally:
        house.stop_house_bots()


def _start(seed: int) -> bot_pb2.StartMatchRequest:
    return bot_pb2.StartMatchRequest(match_id="t1-000000", game="take5", seat=1, num_players=2,
                                     player_names=["v@1", "house:random"], seat_seed=seed,
                                     config=wire.config_to_proto("take5", take5.Take5Config(limit=50)))


def test_a_house_bot_refuses_calls_without_its_secret(house_random: tuple[str, str]) -> None:
    endpoint, secret = house_random
    assert len(secret) >= 32
    pid = house._running["random"][0].process.pid
    assert secret not in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    with grpc.insecure_channel(endpoint) as channel:
        stub = bot_pb2_grpc.BotStub(channel)
        assert stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=10).name  # public, as for every bot
        for metadata in ((), (("arena-bot-secret", "guess"),)):
            with pytest.raises(grpc.RpcError) as refused:
                stub.StartMatch(_start(42), timeout=10, metadata=metadata)
            assert refused.value.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
        stub.StartMatch(_start(42), timeout=10, metadata=(("arena-bot-secret", secret),))  # its referee
    assert house.house_endpoint("house:random") == house_random  # one process per house bot, kept
