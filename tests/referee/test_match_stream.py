"""The match stream (``Bot.PlayMatch``) against real bot processes over real gRPC: a streamed match is the unary
match of the same seed, and a bot that breaks the stream's rules (late answers, a sequence nobody asked, an answer
over the size limit, a broken stream, a wrong secret) is contained: the match completes, every bad answer is a
recorded fault with the default action, and the record replays."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import grpc
import pytest

from arena.match.channels import BotChannels
from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import run_match, run_match_sync
from arena.match.replay import replay
from arena.match.streams import SeatStream
from arena_sdk.games import take5
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

from .conftest import seat

ONE_HAND = take5.Take5Config(limit=1)
NO_LIMITS = {"max_faults": 0, "max_consecutive_timeouts": 0, "match_time_limit_s": 0}
BAD = 1


def comparable(record: MatchRecord) -> dict[str, Any]:
    """The record without what differs from one run to the next (times)."""
    d = record.to_dict()
    for key in ("started_at", "duration_s"):
        d.pop(key, None)
    for decision in d["decisions"]:
        decision.pop("latency_ms", None)
    return d


def test_a_streamed_match_is_the_unary_match_of_the_same_seed(sample_bots) -> None:
    bot = sample_bots["heuristic"]
    with grpc.insecure_channel(bot.endpoint) as channel:
        info = bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=5)
    assert info.serves_match_stream
    seats = [SeatSpec(f"h{i}", bot.endpoint) for i in range(4)]

    async def both() -> tuple[MatchRecord, MatchRecord, bool | None]:
        pool = BotChannels()
        try:
            streamed = await run_match("same", "take5", seats, seed=11, channels=pool)
            lease = pool.lease(bot.endpoint)
            serves = lease.serves_match_stream
            pool.release(lease)
            unary = await run_match("same", "take5", seats, seed=11, channels=pool,
                                    options=RefereeOptions(match_stream=False))
        finally:
            await pool.close()
        return streamed, unary, serves

    import asyncio

    streamed, unary, serves = asyncio.run(both())
    assert serves is True  # the referee asked GetInfo and drove the seats through the stream
    assert streamed.faults == () and len(streamed.decisions) > 40
    assert comparable(streamed) == comparable(unary)
    assert replay(streamed) == []


def play(seats_of, bad: SeatSpec, *, deadline_ms: int = 400) -> MatchRecord:
    seats = [*seats_of("random1"), bad, *seats_of("random2", "heuristic")]
    record = run_match_sync(f"stream-{bad.name}", "take5", seats, ONE_HAND, seed=5,
                            options=RefereeOptions(deadline_ms=deadline_ms, **NO_LIMITS))
    assert replay(record) == [] and record.forfeits == ()
    return record


def faults_of(record: MatchRecord) -> Counter:
    return Counter(f.kind for f in record.faults if f.seat == BAD)


def test_an_honest_stream_bot_is_driven_through_the_stream(seats_of, test_bot) -> None:
    record = play(seats_of, seat(test_bot("stream_bot")))  # its unary Decide always fails
    assert record.faults == ()
    assert sum(d["seat"] == BAD for d in record.decisions) >= 10


def test_late_stream_answers_are_timeouts_and_dropped(seats_of, test_bot) -> None:
    record = play(seats_of, seat(test_bot("stream_bot", "--style", "late", "--at", "1,3", "--sleep", "0.6")))
    assert faults_of(record) == Counter({"timeout": 2})
    assert all("no answer within the 400 ms deadline" in f.detail for f in record.faults)
    late = {record.decisions[f.decision]["seq"] for f in record.faults}
    assert late == {1, 3}
    for f in record.faults:
        assert record.decisions[f.decision]["source"] == "default"
    others = [d for d in record.decisions if d["seat"] == BAD and d["seq"] not in late]
    assert others and all(d["source"] == "bot" for d in others)  # the late answers were not taken for later ones


def test_an_answer_for_another_sequence_is_dropped(seats_of, test_bot) -> None:
    record = play(seats_of, seat(test_bot("stream_bot", "--style", "wrong_seq", "--at", "2")), deadline_ms=300)
    assert faults_of(record) == Counter({"timeout": 1})
    assert record.decisions[record.faults[0].decision]["seq"] == 2


def test_a_huge_answer_is_an_error_and_the_stream_is_reopened(seats_of, test_bot) -> None:
    record = play(seats_of, seat(test_bot("stream_bot", "--style", "huge", "--at", "0,4")))
    assert faults_of(record) == Counter({"error": 2})
    assert all("RESOURCE_EXHAUSTED" in f.detail for f in record.faults)
    answered = [d for d in record.decisions if d["seat"] == BAD and d["seq"] not in (0, 4)]
    assert answered and all(d["source"] == "bot" for d in answered)


def test_a_broken_stream_is_unreachable_and_reopened(seats_of, test_bot) -> None:
    record = play(seats_of, seat(test_bot("stream_bot", "--style", "break", "--at", "2,5")))
    assert faults_of(record) == Counter({"unreachable": 2})
    assert {record.decisions[f.decision]["seq"] for f in record.faults} == {2, 5}
    after = [d for d in record.decisions if d["seat"] == BAD and d["seq"] is not None and d["seq"] > 5]
    assert after and all(d["source"] == "bot" for d in after)


def test_the_stream_carries_the_bot_secret(seats_of, test_bot) -> None:
    bot = test_bot("stream_bot", "--secret", "s3cret")
    right = play(seats_of, SeatSpec(bot.name, bot.endpoint, secret="s3cret"))
    assert right.faults == ()
    wrong = play(seats_of, SeatSpec(bot.name, bot.endpoint, secret="guess"))
    kinds = faults_of(wrong)
    assert set(kinds) == {"error"} and kinds["error"] >= 10, wrong.faults  # every call refused: start and each decision
    # the first call of each stream sees the bot's status; a request grpc.aio was still writing when the bot ended
    # the stream may see "Internal error from Core" instead: an error fault either way
    assert any("PERMISSION_DENIED" in f.detail for f in wrong.faults)


class _HeldCall:
    """A stand-in for the ``grpc.aio`` stream call of ``SeatStream``: each write takes its message's bytes when it
    starts (as grpc serialises it) and ends only when the test releases it; reads wait until the call is over."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.writes: list[asyncio.Future[None]] = []
        self.over = asyncio.get_running_loop().create_future()

    async def write(self, message: Any) -> None:
        self.sent.append(message.SerializeToString())
        self.writes.append(asyncio.get_running_loop().create_future())
        await self.writes[-1]

    async def done_writing(self) -> None:
        pass

    async def read(self) -> Any:
        await self.over
        return grpc.aio.EOF

    def done(self) -> bool:
        return self.over.done()

    def cancel(self) -> bool:
        if not self.over.done():
            self.over.set_result(None)
        return True


def test_a_reused_decide_request_that_waits_behind_a_write_is_sent_as_it_was() -> None:
    """The referee refills one Decide request per seat (``SeatStream.decide_request``); a request that cannot be
    written at once (behind another write) waits as a snapshot, so a later refill never changes what it sends."""

    async def main() -> None:
        call = _HeldCall()

        class Stub:
            def PlayMatch(self, **_: Any) -> _HeldCall:  # noqa: N802 - the stub's method
                return call

        stream = SeatStream(Stub(), 0, "held bot")
        request = stream.decide_request(bot_pb2.DecideRequest(match_id="m", seat=0))
        started = stream.StartMatch(bot_pb2.StartMatchRequest(match_id="m", seat=0), timeout=5.0)
        stream._dispatch(bot_pb2.BotMessage(started=bot_pb2.StartMatchResponse()), stream.waiting)
        assert await started == bot_pb2.StartMatchResponse() and stream.answered
        asked = []
        for sequence, card in ((0, 11), (1, 22)):  # both wait behind the StartMatch's write, still held
            request.sequence = sequence
            request.take5.hand[:] = [card]
            asked.append(stream.Decide(request, timeout=5.0))
        for _ in range(3):
            await asyncio.sleep(0)
            while call.writes and not all(w.done() for w in call.writes):
                next(w for w in call.writes if not w.done()).set_result(None)
                await asyncio.sleep(0)
        decides = [bot_pb2.RefereeMessage.FromString(b).decide for b in call.sent[1:]]
        assert [(d.sequence, list(d.take5.hand)) for d in decides] == [(0, [11]), (1, [22])]
        stream.close()
        for c in asked:
            with pytest.raises(grpc.RpcError):
                await c

    asyncio.run(main())
