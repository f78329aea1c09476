"""The pool of channels to bots (``arena.match.channels``, issue 9) on real bot processes: matches that share a pool
reuse one HTTP/2 connection per bot (seen in the kernel's table of TCP connections), a bot restarted on the same
port is played at the next match without a fault (no reconnect back-off waited out), one dead bot does not touch
another bot's channel, and idle channels are closed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from arena.match.channels import BotChannels
from arena.match.options import RefereeOptions
from arena.match.record import SeatSpec
from arena.match.referee import run_match
from arena_sdk.games.take5 import Take5Config
from arena_sdk.pb import bot_pb2

ONE_HAND = Take5Config(limit=1)  # a 2-seat Take 5 match of one hand


def client_ports(endpoint: str) -> set[int]:
    """Local ports of the established TCP connections to ``endpoint``'s port (``/proc/net/tcp`` and ``tcp6``: gRPC
    dials IPv4 through IPv6 sockets where it can): one per HTTP/2 connection a client holds to that bot."""
    port = int(endpoint.rsplit(":", 1)[1])
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as f:
            next(f)
            for line in f:
                fields = line.split()
                local, remote, state = fields[1], fields[2], fields[3]
                if state == "01" and int(remote.rsplit(":", 1)[1], 16) == port:
                    out.add(int(local.rsplit(":", 1)[1], 16))
    return out


async def ports_after_close(endpoint: str, within_s: float = 5.0) -> set[int]:
    """``client_ports(endpoint)`` once it is empty, or as it stands after ``within_s`` seconds: a closed channel's
    socket leaves the kernel's table of established connections shortly after ``close()`` returns, not at once."""
    loop = asyncio.get_running_loop()
    until = loop.time() + within_s
    ports = client_ports(endpoint)
    while ports and loop.time() < until:
        await asyncio.sleep(0.05)
        ports = client_ports(endpoint)
    return ports


async def play(match_id: str, seats: list[SeatSpec], pool: BotChannels | None, seed: int = 1) -> Any:
    return await run_match(match_id, "take5", seats, ONE_HAND, seed=seed, channels=pool,
                           options=RefereeOptions(deadline_ms=2000))


def test_matches_sharing_a_pool_reuse_one_connection_per_bot(seats_of: Callable[..., list[SeatSpec]]) -> None:
    seats = seats_of("random1", "random2")

    async def scenario() -> tuple[list[set[int]], list[set[int]], int, int]:
        pool = BotChannels()
        pooled, own = [], []
        try:
            for i in range(3):
                record = await play(f"pool-{i}", seats, pool, seed=i)
                assert record.faults == ()
                pooled.append(client_ports(seats[0].endpoint))
            opened, held = pool.opened, len(pool)
        finally:
            await pool.close()
        for i in range(2):  # without a pool: each match its own connection, closed at its end
            record = await play(f"own-{i}", seats, None, seed=i)
            assert record.faults == ()
            own.append(await ports_after_close(seats[0].endpoint))
        return pooled, own, opened, held

    pooled, own, opened, held = asyncio.run(scenario())
    assert opened == 2 and held == 2  # one channel per bot for the three matches
    assert len(pooled[0]) == 1 and pooled[0] == pooled[1] == pooled[2]  # the same TCP connection throughout
    assert own == [set(), set()]


def test_a_bot_restarted_on_its_port_is_played_at_the_next_match(
        start_bot: Callable[..., Any], seats_of: Callable[..., list[SeatSpec]]) -> None:
    steady = seats_of("random1")[0]
    bot = start_bot("sample:random")
    port = int(bot.endpoint.rsplit(":", 1)[1])
    seats = [steady, SeatSpec("phoenix", bot.endpoint)]

    async def scenario() -> list[Any]:
        pool = BotChannels()
        records = []
        try:
            records.append(await play("rs-0", seats, pool))
            bot.process.kill()  # down between matches: its connection breaks, the next calls fail
            bot.process.wait()
            records.append(await play("rs-1", seats, pool))
            await asyncio.to_thread(start_bot, "sample:random", port=port)
            records.append(await play("rs-2", seats, pool))  # at once: no back-off waited out
            records.append(await play("rs-3", seats, pool))
        finally:
            await pool.close()
        return records

    before, down, back, after = asyncio.run(scenario())
    assert before.faults == () and back.faults == () and after.faults == ()
    assert down.faults and {f.kind for f in down.faults} == {"unreachable"} and {f.seat for f in down.faults} == {1}
    assert down.result.forfeits == (None, "faults")


def test_a_bot_restarted_between_matches_without_a_call_in_between(
        start_bot: Callable[..., Any], seats_of: Callable[..., list[SeatSpec]]) -> None:
    steady = seats_of("random2")[0]
    bot = start_bot("sample:random")
    port = int(bot.endpoint.rsplit(":", 1)[1])
    seats = [steady, SeatSpec("phoenix", bot.endpoint)]

    async def scenario() -> tuple[Any, Any, set[int], set[int]]:
        pool = BotChannels()
        try:
            first = await play("rq-0", seats, pool)
            ports_before = client_ports(bot.endpoint)
            bot.stop()  # the pool's channel to it sees its connection go
            await asyncio.to_thread(start_bot, "sample:random", port=port)
            second = await play("rq-1", seats, pool)
            return first, second, ports_before, client_ports(bot.endpoint)
        finally:
            await pool.close()

    first, second, ports_before, ports_after = asyncio.run(scenario())
    assert first.faults == () and second.faults == ()
    assert len(ports_before) == 1 and len(ports_after) == 1 and ports_before != ports_after  # a new connection


def test_one_dead_bot_leaves_the_other_channels_alone(
        seats_of: Callable[..., list[SeatSpec]], dead_endpoint: str) -> None:
    healthy = seats_of("random1", "random2")
    with_dead = [healthy[0], SeatSpec("ghost", dead_endpoint)]

    async def scenario() -> tuple[Any, Any, set[int], set[int], int]:
        pool = BotChannels()
        try:
            await play("warm", healthy, pool)
            ports = client_ports(healthy[0].endpoint)
            sick, fine = await asyncio.gather(play("sick", with_dead, pool), play("fine", healthy, pool))
            return sick, fine, ports, client_ports(healthy[0].endpoint), pool.opened
        finally:
            await pool.close()

    sick, fine, ports_before, ports_after, opened = asyncio.run(scenario())
    assert fine.faults == ()
    assert sick.faults and {f.seat for f in sick.faults} == {1} and {f.kind for f in sick.faults} == {"unreachable"}
    assert ports_before == ports_after and len(ports_after) == 1  # the healthy bot's connection survived
    assert opened == 3  # the two healthy bots' channels, and one to the dead endpoint (retired, then closed)


def test_a_retired_channel_serves_its_holders_until_released_and_idle_channels_close(
        sample_bots: dict[str, Any]) -> None:
    endpoint = sample_bots["random1"].endpoint

    async def scenario() -> None:
        pool = BotChannels(idle_s=0.2)
        try:
            a, b = pool.lease(endpoint), pool.lease(endpoint)
            assert a.stub is b.stub and pool.opened == 1
            pool.retire(a)  # as after an UNAVAILABLE call of one match
            assert len(pool) == 0
            info = await b.stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=5)  # the other holder carries on
            assert info.name == sample_bots["random1"].name
            c = pool.lease(endpoint)
            assert c.stub is not b.stub and pool.opened == 2
            pool.release(a)
            pool.release(b)
            pool.release(b)  # twice: a no-op
            await asyncio.sleep(0.05)
            with pytest.raises(grpc.aio.UsageError, match="closed"):  # closed with its last holder
                await b.stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=5)
            pool.release(c)
            assert len(pool) == 1
            await asyncio.sleep(0.6)  # idle for longer than idle_s: closed
            assert len(pool) == 0
            d = pool.lease(endpoint)
            assert pool.opened == 3
            pool.release(d)
        finally:
            await pool.close()
        with pytest.raises(RuntimeError, match="closed"):
            pool.lease(endpoint)

    asyncio.run(scenario())


def test_the_pool_refuses_a_non_positive_idle_time() -> None:
    with pytest.raises(ValueError, match="idle_s"):
        BotChannels(idle_s=0)
