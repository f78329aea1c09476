"""A wave of Decide calls (every seat pending at once, asked at once) against real bot processes over real gRPC, on
both paths (unary calls and the match stream): the referee waits for the whole wave once, yet each answer keeps
the time it came in; and a match cancelled while a call is out leaves no task, no pending call and no live deadline
timer behind (``StreamCall``'s, which are the referee's own, not grpc core's)."""

from __future__ import annotations

import asyncio
import gc
from collections import defaultdict

import pytest

from arena.match.channels import BotChannels
from arena.match.options import RefereeOptions
from arena.match.referee import run_match, run_match_sync
from arena.match.replay import replay
from arena.match.streams import SeatStream, StreamCall
from arena_sdk.games import take5
from arena_sdk.pb import bot_pb2

from .conftest import seat

ONE_HAND = take5.Take5Config(limit=1)
NO_LIMITS = {"max_faults": 0, "max_consecutive_timeouts": 0, "match_time_limit_s": 0}
BAD = 1
LATE_BOT = {  # path -> a bot (tests/bots) whose answers at the sequences --at come after --sleep seconds
    "stream": ("stream_bot", "--style", "late"),
    "unary": ("slow_bot",),
}


@pytest.mark.parametrize("path", ["stream", "unary"])
def test_each_answer_of_a_wave_keeps_its_own_latency(seats_of, test_bot, path) -> None:
    late = test_bot(*LATE_BOT[path], "--at", "1,3", "--sleep", "0.6")
    seats = [*seats_of("random1"), seat(late), *seats_of("random2", "heuristic")]
    record = run_match_sync(f"waves-{path}", "take5", seats, ONE_HAND, seed=5,
                            options=RefereeOptions(deadline_ms=400, **NO_LIMITS))
    assert replay(record) == []
    assert [(f.kind, record.decisions[f.decision]["seq"]) for f in record.faults] == [("timeout", 1), ("timeout", 3)]
    waves: dict[tuple, list[dict]] = defaultdict(list)
    for d in record.decisions:
        waves[d["hand"], d["turn"], d["kind"]].append(d)
    checked = 0
    for f in record.faults:
        wave = waves[record.decisions[f.decision]["hand"], record.decisions[f.decision]["turn"],
                     record.decisions[f.decision]["kind"]]
        others = [d for d in wave if d["seat"] != BAD]
        assert len(others) == 3, wave  # every seat chose a card in that wave
        assert record.decisions[f.decision]["latency_ms"] >= 400
        # the others' answers came in long before the late one: the wave's end is not their time
        assert all(d["source"] == "bot" and d["latency_ms"] < 300 for d in others), wave
        checked += 1
    assert checked == 2


def live_stream_calls() -> list[StreamCall]:
    """StreamCalls still waiting for an answer or holding a deadline timer that has not run."""
    loop = asyncio.get_running_loop()
    return [o for o in gc.get_objects() if isinstance(o, StreamCall)
            and (not o.future.done() or (not o.timer.cancelled() and o.timer.when() > loop.time()))]


@pytest.mark.parametrize("case", ["stream-decide", "stream-start", "unary-decide"])
def test_a_cancelled_match_leaves_nothing_behind(seats_of, test_bot, case) -> None:
    """Cancelled while the bad seat's call is out (a Decide of a wave, or a StartMatch awaited on its own)."""
    if case == "stream-start":
        bad = test_bot("stream_bot", "--start-sleep", "3")
    else:
        bad = test_bot(*LATE_BOT[case.split("-")[0]], "--at", "1", "--sleep", "3")
    seats = [*seats_of("random1"), seat(bad), *seats_of("random2", "heuristic")]
    options = RefereeOptions(deadline_ms=2000, call_deadline_ms=2000, **NO_LIMITS)

    async def main() -> tuple[list[asyncio.Task], list[StreamCall]]:
        rounds = asyncio.Event()
        match = asyncio.ensure_future(run_match(f"cancel-{case}", "take5", seats, ONE_HAND, seed=5, options=options,
                                                on_progress=lambda before, after: rounds.set()))
        if case == "stream-start":
            await asyncio.sleep(0.5)  # GetInfo answered, the bad seat's start not
        else:
            await asyncio.wait_for(rounds.wait(), 10)  # sequence 0 answered: sequence 1 is being asked
            await asyncio.sleep(0.3)
        assert not match.done()
        match.cancel()
        with pytest.raises(asyncio.CancelledError):
            await match
        await asyncio.sleep(0.3)  # what the cancellation ended finishes
        gc.collect()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return tasks, live_stream_calls()

    tasks, calls = asyncio.run(main())
    assert tasks == []
    assert calls == []


def test_a_cancelled_wait_ends_its_stream_call_and_the_stream_goes_on(test_bot) -> None:
    """A task awaiting a StreamCall is cancelled: the call is over (done callbacks run, deadline timer cancelled,
    no longer waited for); its late answer is dropped and the next decision is answered on the same stream."""
    bot = test_bot("stream_bot", "--style", "late", "--at", "0", "--sleep", "0.5")

    def request(sequence: int) -> bot_pb2.DecideRequest:
        return bot_pb2.DecideRequest(match_id="m", seat=0, sequence=sequence, kind=bot_pb2.TAKE5_CHOOSE_CARD,
                                     take5=bot_pb2.Take5View(hand=[7, 42]))

    async def main() -> None:
        pool = BotChannels()
        lease = pool.lease(bot.endpoint)
        stream = SeatStream(lease.stub, 0, "late bot")
        try:
            first = stream.Decide(request(0), timeout=3.0)
            seen: list[StreamCall] = []
            first.add_done_callback(seen.append)
            async def wait_first() -> object:
                return await first

            waiter = asyncio.ensure_future(wait_first())
            await asyncio.sleep(0.2)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            assert seen == [first] and first.future.cancelled() and first.timer.cancelled()
            assert dict(stream.waiting) == {}
            second = stream.Decide(request(1), timeout=3.0)
            answer = await second
            assert answer.take5.card == 7
            assert stream.opened == 1 and stream.dropped == 1  # the late answer to 0 came first, nobody waited
            ended = stream.EndMatch(bot_pb2.EndMatchRequest(match_id="m", seat=0), timeout=2.0)
            await ended
            await stream.finish(2.0)
            assert stream.reader is not None and stream.reader.done()
        finally:
            stream.close()
            pool.release(lease)
            await pool.close()
        await asyncio.sleep(0.1)
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []

    asyncio.run(main())
