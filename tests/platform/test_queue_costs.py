"""What a worker writes after a match, in fewer round trips (issue 9 item 3), on a real redis-server: the job's
acknowledgement and the health of the match's bots in one transaction (``Store.ack_and_count_health``), which
counts exactly what ``ack_job`` + ``record_match_health`` did, also when Redis forgot the health script."""

from __future__ import annotations

import pytest

from arena.core.specs import MatchSpec
from arena.store import Store, jobs_key


def _claimed(store: Store, n: int) -> list:  # type: ignore[type-arg]
    seats = ("a@1", "b@1")
    store.enqueue([MatchSpec(match_id=f"q-{i}", game="take5", seats=seats, seed=i) for i in range(n)])
    jobs = store.read_jobs("w", n, 100)
    assert len(jobs) == n and store.pending_jobs() == n
    return jobs


def test_acknowledgement_and_health_in_one_transaction_count_what_the_separate_calls_did(store: Store) -> None:
    first, second, third = _claimed(store, 3)
    changes = store.ack_and_count_health(first, "take5", "q-0", {"a@1": None, "b@1": "forfeited (faults)"},
                                         unhealthy_after=2)
    assert changes == {"a@1": 0, "b@1": 0}  # one failure of two
    assert store.pending_jobs() == 2 and store.client.xlen(jobs_key("take5")) == 2  # acknowledged and deleted
    store.client.script_flush()  # as after a Redis restart: the script is loaded again and counted once
    changes = store.ack_and_count_health(second, "take5", "q-1", {"a@1": None, "b@1": "answered no call"},
                                         unhealthy_after=2)
    assert changes == {"a@1": 0, "b@1": 1}  # the second failure in a row: unhealthy now
    assert list(store.unhealthy_bots("take5")) == ["b@1"]
    assert store.bot_health("take5", ["b@1"])["b@1"].failures == 2
    assert store.ack_and_count_health(second, "take5", "q-1", {"b@1": "answered no call"},
                                      unhealthy_after=2) == {"b@1": -1}  # the same match counted once
    assert store.ack_and_count_health(third, "take5", "q-2", {}, unhealthy_after=2) == {}
    assert store.pending_jobs() == 0 and store.client.xlen(jobs_key("take5")) == 0


def test_a_bad_health_argument_is_returned_and_the_job_still_acknowledged(store: Store) -> None:
    [job] = _claimed(store, 1)
    changes = store.ack_and_count_health(job, "take5", "q-0", {"a@1": None}, unhealthy_after=0)
    assert isinstance(changes, ValueError) and "unhealthy_after" in str(changes)
    assert store.pending_jobs() == 0


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
