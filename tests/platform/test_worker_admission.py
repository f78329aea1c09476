"""A worker whose event loop is late starts no new match (``arena.worker.admission.LagGate``): a concurrency above
what the machine keeps up with costs throughput, not bots' faults (an operator's `--concurrency 1000` on 2 cores
used to make every seat of most matches time out)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

from arena.match.loop_lag import hold_loop_lag, release_loop_lag
from arena.store import Store
from arena.worker.admission import BRAKE_EVERY_S, BRAKE_FLOOR, BUSY_WINDOW_S, LagGate, TimeoutBrake, overloaded
from arena.worker.loop import _Worker
from arena.worker.settings import WorkerSettings


def test_a_blocked_event_loop_holds_new_matches_back_until_it_keeps_up() -> None:
    async def run() -> tuple[bool, bool, bool, int]:
        gate = LagGate("w", 50.0, 100)
        gate.lag = hold_loop_lag()
        try:
            await asyncio.sleep(0.1)
            before = gate.busy(3)  # an idle loop
            time.sleep(0.2)  # the loop blocked, as by matches it cannot keep up with
            await asyncio.sleep(0.05)
            during = gate.busy(3)
            await asyncio.sleep(BUSY_WINDOW_S + 0.2)  # a window without lateness (a loaded machine: a few)
            for _ in range(300):  # up to 30 s: on a loaded machine the loop is late now and then by itself
                if not gate.busy(3):
                    break
                await asyncio.sleep(0.1)
            after = gate.busy(3)
            return before, during, after, gate.spells
        finally:
            release_loop_lag(gate.lag)

    before, during, after, spells = asyncio.run(run())
    assert during and not after and spells >= 1


def test_a_gate_of_zero_or_without_a_measure_never_holds_back() -> None:
    async def run() -> tuple[bool, bool]:
        off = LagGate("w", 0.0, 10)
        off.lag = hold_loop_lag()
        try:
            time.sleep(0.2)
            await asyncio.sleep(0.05)
            return off.busy(1), LagGate("w", 50.0, 10).busy(1)
        finally:
            release_loop_lag(off.lag)

    assert asyncio.run(run()) == (False, False)


def test_a_late_worker_has_no_free_slot_while_a_match_plays(redis_url: str) -> None:
    store = Store.from_url(redis_url)

    async def run() -> tuple[int, int, int]:
        worker = _Worker(store, "w", WorkerSettings(concurrency=10))
        worker.gate.lag = hold_loop_lag()
        try:
            await asyncio.sleep(0.05)
            time.sleep(0.2)
            await asyncio.sleep(0.05)
            idle = worker.free_slots()  # nothing plays: a match starts whatever the lateness (never stuck)
            playing = asyncio.get_running_loop().create_future()
            worker.playing.add(playing)  # type: ignore[arg-type]  # one match playing
            late = worker.free_slots()
            worker.gate.limit_ms = 0  # not held back: the slots left
            return idle, late, worker.free_slots()
        finally:
            release_loop_lag(worker.gate.lag)

    try:
        assert asyncio.run(run()) == (10, 0, 9)
    finally:
        store.close()


def _match(latencies: list[list[float | None]], timeouts: list[int], names: list[str] | None = None,
           deadline_ms: int = 200) -> SimpleNamespace:
    """A finished match as ``TimeoutBrake`` reads it: per seat its decisions' latencies, and one timeout fault per
    seat of ``timeouts``."""
    names = names or [f"bot{i}" for i in range(len(latencies))]
    decisions = [{"seat": s, "latency_ms": ms} for s, row in enumerate(latencies) for ms in row]
    return SimpleNamespace(match_id="m1", deadline_ms=deadline_ms, seats=[SimpleNamespace(name=n) for n in names],
                           decisions=decisions, faults=[SimpleNamespace(seat=s, kind="timeout") for s in timeouts])


def test_only_slowness_everywhere_counts_as_overload() -> None:
    slow, fast = [150.0, 190.0, None], [2.0, 3.0, 1.0]
    assert overloaded(_match([slow, slow, slow, slow], [0, 1]))  # two bots timed out, every seat slow
    assert not overloaded(_match([slow, fast, fast, fast], [0]))  # one slow bot
    assert not overloaded(_match([slow, slow, fast, fast], [0, 1]))  # two slow bots beside seats answering at once
    assert not overloaded(_match([slow, slow, slow], [0, 1], ["same", "same", "x"]))  # one bot in two seats


def test_the_brake_starts_low_grows_halves_on_overload_and_never_goes_under_its_floor() -> None:
    """A first batch of 1,000 matches no longer starts at once (a tournament that fit in it was lost whole); after an
    overload the limit grows by one per limit's worth of good matches (short matches ended 200 a second: one more
    each refilled the overload at once); bots that time out on purpose hold a worker at BRAKE_FLOOR at most."""
    good, jammed = _match([[2.0], [3.0]], []), _match([[None], [None], [190.0]], [0, 1])
    brake = TimeoutBrake("w", 1000)
    assert brake.limit == BRAKE_FLOOR
    for _ in range(200):
        brake.played(good)
    assert brake.limit == BRAKE_FLOOR + 200  # slow start: one more per good match
    brake.played(jammed)
    brake.played(jammed)  # the same wave: no second halving within BRAKE_EVERY_S
    assert brake.limit == (BRAKE_FLOOR + 200) // 2 and brake.halvings == 1
    for _ in range(brake.limit + 2):
        brake.played(good)
    assert brake.limit == (BRAKE_FLOOR + 200) // 2 + 1  # congestion avoidance: one per window of good matches
    for _ in range(5):
        brake.braked_at -= BRAKE_EVERY_S
        brake.played(jammed)
    assert brake.limit == BRAKE_FLOOR and brake.halvings == 3  # never under its floor
    for _ in range(2000):
        brake.played(good)
    assert 60 < brake.limit < 80  # sqrt(32^2 + 2 x 2000)
    small = TimeoutBrake("w", 4)  # a worker under the floor: never held back
    small.played(jammed)
    assert small.limit == 4 and small.halvings == 0


def test_a_redis_outage_is_said_once_then_its_end(redis_url: str, dead_endpoint: str, caplog: Any,
                                                  monkeypatch: Any) -> None:
    """An operator review: a worker logged about 3 warnings a second while Redis was down, and never that it was
    back. Its failed claims are now said once per ``REDIS_WARN_EVERY_S`` (the rest at debug level), and the first
    claim that works again says Redis answers again."""
    import logging

    from arena.worker import loop

    monkeypatch.setattr(loop.asyncio, "sleep", _no_sleep)  # the 1 s pause after a failed claim
    down = Store.from_url(f"redis://{dead_endpoint}/0",
                          client_options={"socket_timeout": 0.5, "socket_connect_timeout": 0.5})
    up = Store.from_url(redis_url)

    async def run() -> None:
        worker = _Worker(down, "w", WorkerSettings(concurrency=1, block_ms=10))
        for _ in range(4):
            assert await worker.claim(1) is None
        worker.store = up
        assert await worker.claim(1) == []

    with caplog.at_level(logging.WARNING, logger="arena.worker.loop"):
        asyncio.run(run())
    said = [r.getMessage() for r in caplog.records if r.name == "arena.worker.loop"]
    assert sum("cannot read jobs from Redis" in m for m in said) == 1, said
    assert any(m.startswith("worker w: Redis answers again, after") for m in said), said


async def _no_sleep(seconds: float) -> None:
    return None


def test_each_kind_of_redis_failure_is_said_once_per_period(caplog: Any) -> None:
    """The re-attack: with the claims quiet, a worker still said its failed bot checks every recheck (37 lines in
    77 s) and its heartbeats every 5 s. Each kind is a warning once per ``REDIS_WARN_EVERY_S``, the rest debug."""
    import logging

    from arena.worker.reconnect import REDIS_WARN_EVERY_S, RedisOutage

    clock = [100.0]
    outage = RedisOutage("w", clock=lambda: clock[0])
    with caplog.at_level(logging.DEBUG, logger="arena.worker.loop"):
        for second in range(int(REDIS_WARN_EVERY_S) + 5):  # 35 s of an outage, every kind failing every second
            clock[0] = 100.0 + second
            for what in ("claim", "heartbeat", "bot check"):
                outage.failed(what, "worker %s: %s failed", "w", what)
        clock[0] = 140.0
        outage.answered()
        outage.answered()  # said once
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("claim failed" in m for m in warned) == 2 and sum("heartbeat failed" in m for m in warned) == 2
    assert sum("bot check failed" in m for m in warned) == 2  # at 0 s and at 30 s of the outage
    assert [m for m in warned if "answers again" in m] == ["worker w: Redis answers again, after 40 s"]
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 3 * 35 - 6
