"""What a worker writes after a match, in one round trip, on a real redis-server: the result, its Elo update, the
job's acknowledgement and the health of the match's bots in one script (``Store.settle_match``), which counts
exactly what ``record_result`` + ``ack_job`` + ``record_match_health`` did, also when Redis forgot the script."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest

from arena.core.specs import MatchSpec
from arena.store import Store, jobs_key


async def _until(condition: Callable[[], object], tries: int = 500) -> None:
    """Wait (10 ms at a time, at most ``tries`` times) until ``condition()`` is true: no timing is asserted."""
    import asyncio

    for _ in range(tries):
        if condition():
            return
        await asyncio.sleep(0.01)


def _claimed(store: Store, n: int) -> list:  # type: ignore[type-arg]
    seats = ("a@1", "b@1")
    store.enqueue([MatchSpec(match_id=f"q-{i}", game="take5", seats=seats, seed=i) for i in range(n)])
    jobs = store.read_jobs("w", n, 100)
    assert len(jobs) == n and store.pending_jobs() == n
    return jobs


def _settle(store: Store, job: object, i: int, outcomes: dict[str, str | None], *,
            ratings: list[float | None] | None = None) -> tuple[bool, object]:
    return store.settle_match(job, "take5", f"q-{i}", ["a@1", "b@1"], [3, 9], [1, 2], [0, 0], {"seed": i},
                              outcomes=outcomes, unhealthy_after=2, ratings=ratings)


def test_one_script_stores_rates_acknowledges_and_counts_health_as_the_separate_calls_did(store: Store) -> None:
    first, second, third = _claimed(store, 3)
    stored, changes = _settle(store, first, 0, {"a@1": None, "b@1": "forfeited (faults)"})
    assert stored and changes == {"a@1": 0, "b@1": 0}  # one failure of two
    assert store.pending_jobs() == 2 and store.client.xlen(jobs_key("take5")) == 2  # acknowledged and deleted
    assert store.ratings("take5", ["a@1", "b@1"]) == {"a@1": 1516.0, "b@1": 1484.0}
    assert store.get_result("take5", "q-0")["ratings_before"] == [1500.0, 1500.0]
    store.client.script_flush()  # as after a Redis restart: the script is loaded again and counted once
    stored, changes = _settle(store, second, 1, {"a@1": None, "b@1": "answered no call"})
    assert stored and changes == {"a@1": 0, "b@1": 1}  # the second failure in a row: unhealthy now
    assert list(store.unhealthy_bots("take5")) == ["b@1"]
    assert store.bot_health("take5", ["b@1"])["b@1"].failures == 2
    assert _settle(store, second, 1, {"b@1": "answered no call"}) == (False, {})  # stored once, nothing counted
    assert store.bot_health("take5", ["b@1"])["b@1"].failures == 2
    assert _settle(store, third, 2, {}) == (True, {})
    assert store.pending_jobs() == 0 and store.client.xlen(jobs_key("take5")) == 0
    assert store.check_ladder("take5").equal


def test_ratings_read_before_the_match_that_moved_since_are_read_again_by_the_script(store: Store) -> None:
    first, second = _claimed(store, 2)
    assert _settle(store, first, 0, {"a@1": None, "b@1": None}, ratings=[None, None])[0]
    stale = [None, None]  # read before the first match was stored: the script answers with the current ratings
    assert _settle(store, second, 1, {"a@1": None, "b@1": None}, ratings=stale)[0]
    assert store.get_result("take5", "q-1")["ratings_before"] == [1516.0, 1484.0]
    assert store.check_ladder("take5").equal and store.pending_jobs() == 0


def test_settles_in_many_threads_and_in_another_process_store_every_result_once(store: Store,
                                                                                redis_url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    jobs = _claimed(store, 25)
    other = Store.from_url(redis_url)  # another worker process: its settles move the ratings this store last saw
    try:
        assert _settle(other, jobs[0], 0, {"a@1": None, "b@1": None})[0]
        with ThreadPoolExecutor(8) as pool:  # the threads of one worker process, all on the same two bots
            stored = list(pool.map(lambda i: _settle(store, jobs[i], i, {"a@1": None, "b@1": None},
                                                     ratings=[None, None])[0], range(1, 24)))
        assert _settle(other, jobs[24], 24, {"a@1": None, "b@1": None})[0]  # its last ratings are stale now
    finally:
        other.close()
    assert all(stored) and store.pending_jobs() == 0
    check = store.check_ladder("take5")
    assert check.equal and check.results == 25
    assert [e.matches for e in check.live] == [25, 25]


def test_a_bad_health_argument_is_returned_and_the_match_still_stored_and_acknowledged(store: Store) -> None:
    [job] = _claimed(store, 1)
    stored, changes = store.settle_match(job, "take5", "q-0", ["a@1", "b@1"], [3, 9], [1, 2], [0, 0], {},
                                         outcomes={"a@1": None}, unhealthy_after=0)
    assert stored and isinstance(changes, ValueError) and "unhealthy_after" in str(changes)
    assert store.pending_jobs() == 0 and store.has_result("take5", "q-0")


def test_a_job_claimed_ahead_has_its_reads_done_and_reads_again_once_they_are_stale(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from arena.worker import job as match_job

    [job] = _claimed(store, 1)
    store.register_bot("take5", "a", "127.0.0.1:1", version="1")

    async def reads() -> tuple:  # type: ignore[type-arg]
        ahead = match_job.InputsAhead(store, job.spec)
        fresh = await ahead.fresh()
        monkeypatch.setattr(match_job, "INPUTS_FRESH_S", 0.0)
        stale = match_job.InputsAhead(store, job.spec)
        await asyncio.sleep(0.01)
        return fresh, await stale.fresh(), stale.task

    fresh, stale, task = asyncio.run(reads())
    assert fresh is not None and fresh.has_result is False
    assert [b.endpoint if b else None for b in fresh.bots] == ["127.0.0.1:1", None]  # b@1 is not registered
    assert stale is None and task.done()  # too old: the job reads again


def test_a_read_ahead_that_failed_is_read_again_without_an_unretrieved_exception(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from arena.worker import job as match_job

    [job] = _claimed(store, 1)

    def broken(*args: object) -> None:
        raise ConnectionError("Redis went away")

    monkeypatch.setattr(store, "match_inputs", broken)

    async def read() -> object:
        return await match_job.InputsAhead(store, job.spec).fresh()

    assert asyncio.run(read()) is None


def test_a_match_over_before_its_first_publication_writes_nothing_for_the_live_viewer(store: Store) -> None:
    import asyncio

    from arena.worker.live import LivePublisher

    written: list[str] = []
    for name in ("live_start", "live_append", "live_end"):
        method = getattr(store, name)
        setattr(store, name, lambda *a, _m=method, _n=name, **k: (written.append(_n), _m(*a, **k))[1])

    async def short_match() -> None:
        async with LivePublisher(store, "m-short", {"game": "take5", "seats": ["a@1", "b@1"]}, period_s=60.0) as live:
            live.follow([{"seat": 0}], [], [])
            await asyncio.sleep(0)

    asyncio.run(short_match())
    assert written == [] and store.live_match("m-short") is None


def test_a_published_match_shows_its_start_and_decisions_so_far_and_its_end_a_while(store: Store) -> None:
    """Published while played; once it ends (its result stored) its last publication, every decision with it, is
    kept ``LIVE_ENDED_TTL_S`` marked ended (a viewer that followed it sees its end); one stopped by an error is
    forgotten at once."""
    import asyncio

    from arena.store.keys import live_head_key, live_log_key
    from arena.store.live import LIVE_ENDED_TTL_S
    from arena.worker.live import LivePublisher

    seen = []

    async def long_match() -> None:
        decisions: list[dict[str, object]] = [{"seat": 0, "action": 1}]
        async with LivePublisher(store, "m-long", {"game": "take5", "seats": ["a@1", "b@1"]}, period_s=0.01) as live:
            live.follow(decisions, [], [])
            await _until(lambda: store.live_match("m-long") is not None)  # the first publication is in
            seen.append(store.live_match("m-long"))
            decisions.append({"seat": 1, "action": 2})
            await _until(lambda: len(getattr(store.live_match("m-long"), "decisions", ())) == 2)
            seen.append(store.live_match("m-long"))
            decisions.append({"seat": 0, "action": 3})  # its last decision, played after the last publication
            live.stored = True  # its result is stored

    async def failing_match() -> None:
        with contextlib.suppress(RuntimeError):
            async with LivePublisher(store, "m-fail", {"game": "take5", "seats": ["a@1", "b@1"]},
                                     period_s=0.01) as live:
                live.follow([{"seat": 0, "action": 1}], [], [])
                await _until(lambda: store.live_match("m-fail") is not None)
                raise RuntimeError("its result could not be stored")

    asyncio.run(long_match())
    first, second = seen
    assert first is not None and first.decisions == [{"seat": 0, "action": 1}] and first.head["started_at"] > 0
    assert second is not None and second.decisions[1] == {"seat": 1, "action": 2}
    assert second.head["started_at"] == first.head["started_at"]  # the start, not the last publication
    assert "ended" not in second.head
    end = store.live_match("m-long")  # its end: every decision, marked ended, kept a short while
    assert end is not None and end.head["ended"] is True and [d["action"] for d in end.decisions] == [1, 2, 3]
    for key in (live_head_key("m-long"), live_log_key("m-long")):
        assert 0 < store.client.ttl(key) <= LIVE_ENDED_TTL_S
    async def duplicate_match() -> None:  # another play of it was stored first: this play's end is not the match's
        async with LivePublisher(store, "m-dup", {"game": "take5", "seats": ["a@1", "b@1"]}, period_s=0.01) as live:
            live.follow([{"seat": 0, "action": 1}], [], [])
            await _until(lambda: store.live_match("m-dup") is not None)

    asyncio.run(failing_match())
    assert store.live_match("m-fail") is None  # stopped by an error: forgotten at once
    asyncio.run(duplicate_match())
    assert store.live_match("m-dup") is None


def test_a_workers_live_hub_publishes_all_its_matches_in_one_write_and_ends_each_once_over(store: Store) -> None:
    import asyncio

    from arena.worker.live import LiveHub, LivePublisher

    writes: list[tuple[int, int]] = []  # (matches written, matches deleted) per live_publish call
    publish = store.live_publish

    def counted(batch, ends=()):  # type: ignore[no-untyped-def]
        writes.append((len(batch), len(ends)))
        publish(batch, ends)

    store.live_publish = counted  # type: ignore[method-assign]
    ids = [f"m-hub-{i}" for i in range(5)]
    seen: dict[str, object] = {}

    async def matches() -> None:
        hub = LiveHub(store, period_s=0.05)
        publishers = [LivePublisher(store, m, {"game": "take5", "seats": ["a@1", "b@1"]}, hub=hub) for m in ids]
        for i, p in enumerate(publishers):
            await p.__aenter__()
            p.follow([{"seat": 0, "action": i}], [], [])
        await _until(lambda: all(store.live_match(m) is not None for m in ids))  # a publication of all five
        seen.update({m: store.live_match(m) for m in ids})
        await publishers[0].__aexit__(asyncio.CancelledError, None, None)  # stopped: not ended
        await _until(lambda: store.live_match(ids[0]) is None)  # its keys go in a later write; the others stay
        seen["after first"] = [store.live_match(m) is not None for m in ids]
        for p in publishers[1:]:
            p.stored = True
            await p.__aexit__(None, None, None)  # ended: their last publications, in one write
        await hub.aclose()

    asyncio.run(matches())
    for i, m in enumerate(ids):
        live = seen[m]
        assert live is not None and live.decisions == [{"seat": 0, "action": i}]  # type: ignore[attr-defined]
    assert seen["after first"] == [False, True, True, True, True]
    assert max(w for w, _ in writes) == 5  # every match due in the same write
    assert sum(d for _, d in writes) == 1 and store.live_match(ids[0]) is None
    assert all(getattr(store.live_match(m), "head", {}).get("ended") is True for m in ids[1:])


def test_a_live_write_that_failed_is_made_again_whole_so_the_viewer_never_sees_a_gap(store: Store) -> None:
    import asyncio

    import redis

    from arena.worker.live import LiveHub, LivePublisher

    calls: list[list[tuple[str, bool, int]]] = []
    publish = store.live_publish

    def flaky(batch, ends=()):  # type: ignore[no-untyped-def]
        calls.append([(w.match_id, w.first, len(w.entries)) for w in batch])
        if len(calls) == 2:
            raise redis.ConnectionError("Redis went away")
        publish(batch, ends)

    store.live_publish = flaky  # type: ignore[method-assign]
    decisions: list[dict[str, object]] = [{"seat": 0, "action": 1}]
    shown: list[object] = []

    async def match() -> None:
        hub = LiveHub(store, period_s=0.02)
        async with LivePublisher(store, "m-gap", {"game": "take5", "seats": ["a@1", "b@1"]}, hub=hub) as live:
            live.follow(decisions, [], [])
            for step in (2, 3):  # each new decision once the write before it was made (no timing asserted)
                made = len(calls)
                await _until(lambda: len(calls) > made)  # noqa: B023 - awaited here, in this iteration
                decisions.append({"seat": 1, "action": step})
            await _until(lambda: len(getattr(store.live_match("m-gap"), "decisions", ())) == 3)
            shown.append(store.live_match("m-gap"))
        await hub.aclose()

    asyncio.run(match())
    assert calls[0] == [("m-gap", True, 1)] and calls[1][0][:2] == ("m-gap", False)  # the append that failed
    assert calls[2][0][:2] == ("m-gap", True)  # then everything again, the old log replaced
    live = shown[0]
    assert live is not None and [d["action"] for d in live.decisions] == [1, 2, 3]  # type: ignore[attr-defined]


def test_the_reads_before_a_match_say_whether_its_tournament_has_a_controller_to_call_after_it(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import json
    import time

    from arena.store import tournament_key
    from arena.worker import job as match_job

    for tid, flag in (("t8", "1"), ("t9", "0")):
        store.client.hset(tournament_key("take5", tid), mapping={"state": "running", "controlled": flag,
                                                                  "spec": json.dumps({"seed": 5})})
    inputs = {tid: store.match_inputs("take5", f"{tid}-000001", tid, ["a@1", "b@1"]) for tid in ("t8", "t9")}
    assert inputs["t8"].tournament_controlled is True and inputs["t9"].tournament_controlled is False
    assert inputs["t9"].tournament_seed == 5 and inputs["t9"].tournament_state == "running"
    assert store.match_inputs("take5", "m-1", "", ["a@1", "b@1"]).tournament_controlled is None

    called: list[str] = []
    monkeypatch.setattr(match_job, "after_match", lambda store, spec: called.append(spec.tournament))

    async def fake_run_job(store: Store, job: object, **kwargs: object) -> str:
        return "stored"

    monkeypatch.setattr(match_job, "run_job", fake_run_job)

    async def settle(tid: str, with_reads: bool) -> None:
        spec = MatchSpec(match_id=f"{tid}-000001", game="take5", seats=("a@1", "b@1"), tournament=tid)
        job = match_job.Job("1-0", spec, game="take5")
        ahead = match_job.InputsAhead(store, spec, (time.monotonic(), inputs[tid])) if with_reads else None
        await match_job.run_job_and_control(store, job, ahead=ahead)

    for tid, with_reads in (("t8", True), ("t9", True), ("t9", False)):
        asyncio.run(settle(tid, with_reads))
    assert called == ["t8", "t9"]  # a round robin's controller is looked up only without its reads
