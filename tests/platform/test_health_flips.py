"""A bot whose health flips between the workers' checks cannot hold a tournament open (a hostile-bot review): it
answered GetInfo not as registered through a worker's connection (a restart under another name), then as registered
again through that same connection. The worker kept the first answer of the connection and deferred each of its
matches again, the health probe (a fresh connection) found it healthy and queued them again un-forced: 261 flips in
10 minutes, a tournament past its 600 s cap never ending. Now a connection's answer that does not match is asked
again at the next check, and a match first deferred longer ago than the cap is forced whatever its bots' health.
Real redis-server and real gRPC over loopback."""

from __future__ import annotations

import asyncio
from concurrent import futures
from typing import Any

import grpc

from arena.core.specs import MatchSpec
from arena.match.channels import BotChannels
from arena.match.record import SeatSpec
from arena.store import Store
from arena.worker import loop as scheduler
from arena.worker.health import check_bots, not_as_registered
from arena_sdk.pb import bot_pb2


def _getinfo_server(answer: dict[str, str], asked: list[str]) -> tuple[grpc.Server, str]:
    """A bot that answers only GetInfo, with the name ``answer["name"]`` (version 1.0, Take 5) of the moment,
    noting each name it gave in ``asked``: (the started server, its endpoint)."""
    def get_info(request: bytes, context: grpc.ServicerContext) -> bytes:
        asked.append(answer["name"])
        return bot_pb2.BotInfo(name=answer["name"], version="1.0", games=["take5"]).SerializeToString()

    class Bot(grpc.GenericRpcHandler):
        def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
            return grpc.unary_unary_rpc_method_handler(get_info) if details.method.endswith("/GetInfo") else None

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((Bot(),))
    endpoint = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    server.start()
    return server, endpoint


def test_a_connection_that_answered_getinfo_not_as_registered_is_asked_again_at_the_next_check(
        store: Store) -> None:
    answer = {"name": "heuristic"}  # what the bot behind the one connection says it is, changed between checks
    asked: list[str] = []
    server, endpoint = _getinfo_server(answer, asked)
    bot = store.register_bot("take5", "flipper", endpoint, version="1.0", checked=True)
    seats = [SeatSpec("flipper@1.0", endpoint)]

    async def checks() -> list[dict[str, str]]:
        pool = BotChannels()
        try:
            found = [await not_as_registered(pool, seats, [bot], 2.0)]
            answer["name"] = "flipper"  # as registered again, through the same connection
            found.append(await not_as_registered(pool, seats, [bot], 2.0))
            found.append(await not_as_registered(pool, seats, [bot], 2.0))  # a matching answer is kept
            return found
        finally:
            await pool.close()

    try:
        first, second, third = asyncio.run(checks())
    finally:
        server.stop(None)
    assert list(first) == ["flipper@1.0"] and "another name" in first["flipper@1.0"]
    assert second == third == {}  # kept, the first answer deferred its every match
    assert asked == ["heuristic", "flipper"]


def test_a_match_first_deferred_longer_ago_than_the_cap_is_forced_even_when_its_bots_are_healthy(
        store: Store, dead_endpoint: str) -> None:
    """Its bots all healthy at the check (the flip's other half): queued again forced (played, never deferred
    again) once its first deferral is older than the cap; a match deferred more recently is queued un-forced."""
    a = store.register_bot("take5", "a", dead_endpoint, version="1").bot_id
    b = store.register_bot("take5", "b", dead_endpoint, version="1").bot_id
    now = store.server_time()
    scheduler.enqueue_matches(store, [MatchSpec(match_id=f"f-{i}", game="take5", seats=(a, b), seed=i)
                                      for i in range(2)])
    for job, at in zip(store.read_jobs("w1", 2, 100), (now - 601, now - 30)):
        assert store.defer_job("take5", job.entry_id, job.spec.match_id, job.fields, now=at) == 1
    report = asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=0.5))
    assert (report.forced, report.released) == (1, 1) and store.deferred_count("take5") == 0
    queued: dict[str, Any] = {job.spec.match_id: job.fields.get("forced") for job in store.read_jobs("w1", 2, 100)}
    assert queued == {"f-0": "1", "f-1": "0"} or queued == {"f-0": "1", "f-1": None}, queued


def test_a_bot_unhealthy_again_within_the_cap_of_its_recovery_is_not_waited_for_even_when_the_probe_finds_it_well(
        store: Store, dead_endpoint: str) -> None:
    """The flipper of a re-attack: not as registered to a worker's connection, as registered to the probe's fresh
    one. The probe marked it healthy before the relapse rule was looked at, so every Swiss round waited a whole cap
    (146 s for 5 rounds at a 25 s cap). Its relapse is now taken before the probe: its deferred match is forced at
    once (a bot unhealthy for the first time still waits: test_bot_health's relapse tests)."""
    server, endpoint = _getinfo_server({"name": "flipper"}, [])
    try:
        now = store.server_time()
        flipper = store.register_bot("take5", "flipper", endpoint, version="1.0", checked=True).bot_id
        store.mark_unhealthy("take5", flipper, "not as registered: reports another name", now=now - 150)
        assert store.mark_healthy("take5", flipper, now=now - 100)
        store.mark_unhealthy("take5", flipper, "not as registered: reports another name", now=now)
        other = store.register_bot("take5", "other", dead_endpoint, version="1").bot_id
        scheduler.enqueue_matches(store, [MatchSpec(match_id="sw-1", game="take5", seats=(flipper, other), seed=1)])
        (job,) = store.read_jobs("w1", 1, 100)
        assert store.defer_job("take5", job.entry_id, "sw-1", job.fields) == 1
        report = asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=2.0))
        assert (report.recovered, report.forced, report.released) == (1, 1, 0)
        (again,) = store.read_jobs("w1", 1, 100)
        assert again.spec.match_id == "sw-1" and again.fields.get("forced") == "1"
    finally:
        server.stop(None)
