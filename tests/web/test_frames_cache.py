"""The finished matches' viewer frames, built once per (match, perspective, record) by the web process
(``arena.web.frames_cache``): the cache itself (concurrent askers, failures, its byte bound), and
``/api/matches/{id}/frames`` in process (Starlette's test client) against a real Arena server on loopback gRPC
reading a real Redis."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from viewer_records import play_record

from arena.render.frames import ALL, PUBLIC, build_frames
from arena.server.app import ArenaServer
from arena.store import Store
from arena.store.codec import pack_record
from arena.store.keys import match_key
from arena.web import create_app
from arena.web.frames_cache import BUILDER_NICE, FramesBuilder, FramesBusy, FramesCache, frames_key
from arena_sdk.games import taki

MATCH = "m-frames-cache"


def _slow(seconds: float) -> bytes:
    """A build (in the builder's process): its process id and when it ended, after ``seconds``."""
    time.sleep(seconds)
    return json.dumps({"pid": os.getpid(), "at": time.time()}).encode()


def _broken() -> bytes:
    raise ValueError("cannot replay")


def _pad() -> bytes:
    return json.dumps({"pad": "x" * 30}).encode()  # 42 bytes: two fit in 100


def _kept() -> bytes:
    raise AssertionError("asked for an answer that should be kept")


def test_concurrent_askers_of_one_key_wait_for_one_build_in_a_process_of_its_own() -> None:
    cache = FramesCache()

    async def main() -> list[bytes]:
        key = frames_key("m", PUBLIC, "{}")
        return await asyncio.gather(*(cache.get(key, functools.partial(_slow, 0.2)) for _ in range(6)))

    answers = asyncio.run(main())
    assert cache.builds == 1 and len(set(answers)) == 1  # one build: one end time for all six askers
    assert json.loads(answers[0])["pid"] != os.getpid()  # built in the builder's process, not under this GIL


def test_a_failed_build_is_raised_to_its_askers_and_not_kept() -> None:
    cache = FramesCache()

    async def main() -> None:
        key = frames_key("m", PUBLIC, "{}")
        results = await asyncio.gather(*(cache.get(key, _broken) for _ in range(3)), return_exceptions=True)
        assert all(isinstance(r, ValueError) for r in results), results
        assert await cache.get(key, _pad) == _pad()  # the next asker builds again

    asyncio.run(main())
    assert cache.builds == 1


def test_a_builder_process_that_died_is_replaced() -> None:
    """The builder's process killed (out of memory, an operator): the next build runs in a new one."""
    builder = FramesBuilder()
    cache = FramesCache(builder=builder)

    async def main() -> None:
        first = json.loads(await cache.get(frames_key("a", PUBLIC, "{}"), functools.partial(_slow, 0.0)))
        os.kill(first["pid"], signal.SIGKILL)
        time.sleep(0.2)
        second = json.loads(await cache.get(frames_key("b", PUBLIC, "{}"), functools.partial(_slow, 0.0)))
        assert second["pid"] != first["pid"]

    try:
        asyncio.run(main())
    finally:
        if builder._pool is not None:
            builder._pool.shutdown()


def _niceness() -> bytes:
    return json.dumps({"nice": os.nice(0)}).encode()


def _die() -> bytes:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("killed")


def test_the_builder_yields_the_cpu_and_refuses_builds_past_its_queue_or_a_second_death() -> None:
    """The builder runs at niceness ``BUILDER_NICE`` (the referee, its workers and bots first); with
    ``max_waiting`` builds asked and not done, one more is refused at once (``FramesBusy``: the page answers 503),
    and a build whose process dies twice in a row is refused, not raised as a broken pool."""
    builder = FramesBuilder(max_waiting=2)
    cache = FramesCache(builder=builder)

    async def main() -> None:
        assert json.loads(await cache.get(frames_key("n", PUBLIC, "{}"), _niceness))["nice"] >= BUILDER_NICE
        slow = [asyncio.ensure_future(cache.get(frames_key(f"s{i}", PUBLIC, "{}"), functools.partial(_slow, 0.5)))
                for i in range(2)]
        await asyncio.sleep(0.05)
        with pytest.raises(FramesBusy):
            await cache.get(frames_key("s2", PUBLIC, "{}"), functools.partial(_slow, 0.0))
        await asyncio.gather(*slow)
        with pytest.raises(FramesBusy, match="stopped twice"):
            await cache.get(frames_key("d", PUBLIC, "{}"), _die)
        assert json.loads(await cache.get(frames_key("after", PUBLIC, "{}"), _niceness))["nice"] >= BUILDER_NICE

    try:
        asyncio.run(main())
    finally:
        if builder._pool is not None:
            builder._pool.shutdown()
    assert builder.waiting == 0


def test_the_cache_keeps_at_most_its_bytes_least_recently_asked_first_out() -> None:
    cache = FramesCache(max_bytes=100)

    async def main() -> None:
        keys = [frames_key(f"m{i}", PUBLIC, "{}") for i in range(3)]
        await cache.get(keys[0], _pad)
        await cache.get(keys[1], _pad)
        await cache.get(keys[0], _kept)  # m0 asked again: m1 is now the least recently asked
        await cache.get(keys[2], _pad)  # m1 goes
        await cache.get(keys[0], _kept)
        await cache.get(keys[2], _kept)
        assert cache.builds == 3
        await cache.get(keys[1], _pad)
        assert cache.builds == 4

    asyncio.run(main())


@pytest.fixture
def web(redis_url: str) -> Iterator[tuple[Store, TestClient, dict[str, Any]]]:
    """A finished Taki match stored in a real Redis, an Arena server reading it, the web app reading the server."""
    store = Store.from_url(redis_url)
    record, _ = play_record("taki", 3, 5, policy_seed=2, config=taki.TakiConfig(turn_cap=200))
    record = dict(record, match_id=MATCH)
    result = record["result"]
    assert store.record_result("taki", MATCH, [s["name"] for s in record["seats"]], result["scores"],
                               result["ranks"], result["faults"], record)
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0)
    port = server.start()
    try:
        with TestClient(create_app(f"127.0.0.1:{port}")) as client:
            yield store, client, record
    finally:
        server.stop()
        store.close()


def test_a_finished_matchs_frames_are_built_once_per_perspective_and_record(
        web: tuple[Store, TestClient, dict[str, Any]]) -> None:
    store, client, record = web
    cache: FramesCache = client.app.state.frames_cache  # type: ignore[attr-defined]
    answers = [client.get(f"/api/matches/{MATCH}/frames?view=public") for _ in range(4)]
    assert {a.status_code for a in answers} == {200} and cache.builds == 1
    assert answers[0].json() == json.loads(json.dumps(build_frames(record, PUBLIC, notes=True).to_dict()))
    assert len({a.content for a in answers}) == 1 and answers[0].headers["content-type"] == "application/json"
    everything = client.get(f"/api/matches/{MATCH}/frames?view=all")
    assert everything.status_code == 200 and cache.builds == 2
    assert everything.json()["frames"] == json.loads(json.dumps(build_frames(record, ALL).to_dict()))["frames"]
    # the same match id with another record stored (here: its first 40 decisions): never the frames built before
    shorter = dict(record, decisions=record["decisions"][:40])
    store.client.set(match_key("taki", MATCH), pack_record(shorter))
    again = client.get(f"/api/matches/{MATCH}/frames?view=public")
    assert again.status_code == 200 and cache.builds == 3
    assert again.json()["frames"] == json.loads(json.dumps(build_frames(shorter, PUBLIC).to_dict()))["frames"]


def test_the_builder_process_ends_with_its_parent_killed() -> None:
    """A process whose pages built frames, killed with SIGKILL (no clean-up): its builder process ends too."""
    import subprocess
    import sys

    script = ("import asyncio, functools, os, sys, time\n"
              "sys.path.insert(0, sys.argv[1])\n"
              "from test_frames_cache import _slow\n"
              "from arena.web.frames_cache import FramesCache, frames_key\n"
              "from arena.render.frames import PUBLIC\n"
              "body = asyncio.run(FramesCache().get(frames_key('m', PUBLIC, '{}'), functools.partial(_slow, 0.0)))\n"
              "print(body.decode(), flush=True)\n"
              "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", script, os.path.dirname(__file__)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert parent.stdout is not None
        builder = json.loads(parent.stdout.readline())["pid"]
        os.kill(builder, 0)  # alive
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(builder, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        raise AssertionError(f"the builder process {builder} outlived its parent")
    finally:
        parent.kill()
