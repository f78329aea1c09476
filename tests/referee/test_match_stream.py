"""The match stream (``Bot.PlayMatch``) against real bot processes over real gRPC: a streamed match is the unary
match of the same seed, and a bot that breaks the stream's rules (late answers, a sequence nobody asked, an answer
over the size limit, a broken stream, a wrong secret) is contained: the match completes, every bad answer is a
recorded fault with the default action, and the record replays."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import Counter
from typing import Any

import grpc
import pytest

from arena.core import limits
from arena.match.bot_stub import UndecodableAnswer
from arena.match.channels import BotChannels
from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import run_match, run_match_sync
from arena.match.replay import replay
from arena.match.stream_status import MAX_UNASKED_MESSAGES, StreamCut
from arena.match.streams import SeatStream
from arena_sdk.games import take5
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

from .conftest import seat

ONE_HAND = take5.Take5Config(limit=1)
NO_LIMITS = {"max_faults": 0, "max_consecutive_timeouts": 0, "match_time_limit_s": 0}
BAD = 1


def comparable(record: MatchRecord) -> dict[str, Any]:
    """The record without what differs from one run to the next (times) or between the stream and the unary calls
    (how each seat was called)."""
    d = record.to_dict()
    for key in ("started_at", "duration_s"):
        d.pop(key, None)
    for spec in d["seats"]:
        spec.pop("transport", None)
        spec.pop("streams", None)
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
    assert streamed.transports == (("stream", 1),) * 4 and unary.transports == (("unary", 0),) * 4  # each recorded
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
    fault = record.faults[0]
    assert record.decisions[fault.decision]["seq"] == 2
    # a timeout by the policy, but its detail says the bot did answer, with the wrong sequence
    assert fault.detail == ("Decide: no answer to sequence 2 within the 300 ms deadline; the bot sent 1 message on "
                            "the match stream meanwhile that answered no request waiting and was dropped (the "
                            "last: a decision for sequence 1002; a decision must carry the sequence of the decide "
                            "it answers)")


def test_late_answers_keep_the_plain_timeout_detail(seats_of, test_bot) -> None:
    """A late answer (to a request whose deadline passed) is not an answer for another sequence: the timeouts of
    the requests waiting while late answers come (here 2 and 3, behind the bot's slow answers to 1 and 2) say
    nothing of them."""
    bot = test_bot("stream_bot", "--style", "late", "--at", "1,2", "--sleep", "0.5")
    record = play(seats_of, seat(bot), deadline_ms=300)
    assert faults_of(record)["timeout"] >= 2 and set(faults_of(record)) == {"timeout"}
    assert {f.detail for f in record.faults} == {"Decide: no answer within the 300 ms deadline"}


def test_a_bot_flagging_the_stream_without_serving_it_plays_through_the_unary_calls(seats_of, test_bot,
                                                                                   caplog) -> None:
    """A bot whose GetInfo says serves_match_stream though its PlayMatch is not implemented (a bot author's slip)
    refuses the stream with UNIMPLEMENTED (or grpc says INTERNAL while the start was being written): the referee
    calls that seat through the unary calls from then on, asking the refused call again there: no fault, the
    match played whole (before, every call was an ``error`` fault and the seat forfeited); the record says how the
    seat was called, and the referee's log says why."""
    bot = test_bot("stream_bot", "--style", "no_stream")
    seats = [*seats_of("random1"), seat(bot), *seats_of("random2", "heuristic")]
    with caplog.at_level(logging.WARNING, logger="arena.match.referee"):
        record = run_match_sync("stream-no-stream", "take5", seats, ONE_HAND, seed=5)
    assert record.faults == () and record.forfeits == ()
    asked = [d for d in record.decisions if d["seat"] == BAD]
    assert asked and all(d["source"] == "bot" for d in asked)
    transport, refused = record.transports[BAD]
    assert transport == "unary" and refused >= 1
    assert [t for i, t in enumerate(record.transports) if i != BAD] == [("stream", 1)] * 3
    assert record.to_dict()["seats"][BAD]["transport"] == "unary"
    assert "does not implement PlayMatch" in caplog.text and "called through the unary calls instead" in caplog.text
    assert replay(record) == []


def test_a_decision_whose_stream_is_refused_as_not_served_is_charged_not_asked_again(seats_of, test_bot) -> None:
    """A bot that breaks its stream at decision 2 and refuses every stream after it with UNIMPLEMENTED (restarted
    without PlayMatch): decision 2, asked again on a new stream (the bot was reachable) and refused there, is an
    `error` fault, not asked again through the unary calls (that would give it a second deadline); every later
    decision goes through the unary calls, answered."""
    record = play(seats_of, seat(test_bot("stream_bot", "--style", "refuse_later", "--at", "2")))
    faults = [f for f in record.faults if f.seat == BAD]
    asked = [d for d in record.decisions if d["seat"] == BAD and d["seq"] is not None]
    assert [f.kind for f in faults] == ["error"] and "does not implement PlayMatch" in faults[0].detail, faults
    assert [d["seq"] for d in asked if d["source"] == "default"] == [2]
    assert all(d["source"] == "bot" for d in asked if d["seq"] > 2) and len(asked) > 5
    transport, streams = record.transports[BAD]
    assert transport == "unary" and streams >= 2  # the first stream, and the one (or more) refused


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


def test_a_stream_the_bot_ends_after_each_answer_is_reopened_without_an_error(seats_of, test_bot) -> None:
    """A bot that answers and then ends its stream with status OK: grpc may report the end as INTERNAL ("Internal
    error from Core") to a referee writing the next request meanwhile. Either way the stream ended: the next
    request goes on a new stream (bot.proto), never an ``error`` fault charged as the bot's answer."""
    record = play(seats_of, seat(test_bot("stream_bot", "--style", "end")))
    assert set(faults_of(record)) <= {"unreachable"}, record.faults
    answered = [d for d in record.decisions if d["seat"] == BAD and d["seq"] is not None]
    assert len(answered) >= 10 and sum(d["source"] == "bot" for d in answered) >= len(answered) - 2, answered


def test_a_long_error_text_is_kept_cut_in_the_fault(seats_of, test_bot) -> None:
    """A bot's status text of 12,000 characters (over grpc's default 8 KiB metadata limit, under the referee's)
    reaches the fault, cut to ``limits.BOT_STATUS_TEXT`` characters: never grpc's own RESOURCE_EXHAUSTED."""
    record = play(seats_of, seat(test_bot("stream_bot", "--style", "long_error", "--at", "1,3,5,7",
                                          "--size", "12000")))
    faults = [f for f in record.faults if f.seat == BAD]
    assert [f.kind for f in faults] == ["error"] * 4, faults
    for fault in faults:
        assert fault.detail.startswith("Decide: INTERNAL: the bot ended the match stream: EEE"), fault.detail[:200]
        assert fault.detail.endswith("E…") and len(fault.detail) < limits.BOT_STATUS_TEXT + 64, len(fault.detail)


def test_the_stream_carries_the_bot_secret(seats_of, test_bot) -> None:
    bot = test_bot("stream_bot", "--secret", "s3cret")
    right = play(seats_of, SeatSpec(bot.name, bot.endpoint, secret="s3cret"))
    assert right.faults == ()
    wrong = play(seats_of, SeatSpec(bot.name, bot.endpoint, secret="guess"))
    kinds = faults_of(wrong)
    assert set(kinds) == {"error"} and kinds["error"] >= 10, wrong.faults  # every call refused: start and each decision
    # the first call of each stream sees the bot's status; one whose request grpc.aio was still writing when the bot
    # ended the stream sees grpc core's INTERNAL, and the referee's check of the stream finds the bot's status
    assert all("PERMISSION_DENIED" in f.detail and "wrong arena-bot-secret" in f.detail for f in wrong.faults), [
        f.detail for f in wrong.faults if "PERMISSION_DENIED" not in f.detail]


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
        stream._dispatch(bot_pb2.BotMessage(started=bot_pb2.StartMatchResponse()), stream.inbox)
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


# --- messages answering nothing asked (MAX_UNASKED_MESSAGES) ------------------------------------------------------

FLOOD = 200_000  # what a flooding bot would send; the referee ends its stream after MAX_UNASKED_MESSAGES + 1
CUT = f"the bot sent {MAX_UNASKED_MESSAGES + 1} messages answering nothing it was asked"
CUT_RE = re.compile(r"the referee ended the match stream: the bot sent (\d+) messages answering nothing it was asked")


def flood_sent(bot: Any) -> dict[int, int]:
    """What the flooding stream bot says it sent, by the sequence it flooded at ("flood at 2: sent 38")."""
    deadline = time.monotonic() + 5
    while True:  # its generator is closed a moment after the referee cancelled the stream
        lines = [line.split() for line in bot.stderr_tail().splitlines() if line.startswith("flood at ")]
        sent = {int(words[2].rstrip(":")): int(words[4]) for words in lines}
        if sent or time.monotonic() > deadline:
            return sent
        time.sleep(0.05)


def test_a_flood_of_unasked_answers_ends_the_stream_with_an_unreachable_fault(seats_of, test_bot) -> None:
    """A bot that sends 200,000 answers to sequences nobody asked while the referee waits for its decision: the
    referee reads MAX_UNASKED_MESSAGES + 1 of them, ends the stream (the decision is an ``unreachable`` fault) and
    plays the seat's next decisions on a new stream; the flood costs it milliseconds, not seconds."""
    bot = test_bot("stream_bot", "--style", "flood", "--at", "2", "--count", str(FLOOD))
    cpu, wall = time.process_time(), time.perf_counter()
    record = play(seats_of, seat(bot))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert faults_of(record) == Counter({"unreachable": 1}), record.faults
    fault = record.faults[0]
    assert record.decisions[fault.decision]["seq"] == 2 and record.decisions[fault.decision]["source"] == "default"
    assert fault.detail == (f"Decide: UNAVAILABLE: the referee ended the match stream: {CUT} (at most "
                            f"{MAX_UNASKED_MESSAGES} at a time)")
    after = [d for d in record.decisions if d["seat"] == BAD and d["seq"] > 2]
    assert after and all(d["source"] == "bot" for d in after)  # the stream was reopened for the next decision
    sent = flood_sent(bot)
    assert set(sent) == {2} and sent[2] < FLOOD // 10, sent  # the cancel stopped the flood (grpc had taken ~40)
    assert cpu < 3.0 and wall < 10.0, (cpu, wall)  # reading the whole flood took the referee ~11 s of CPU


def test_a_flood_while_nothing_is_asked_faults_the_next_decision(seats_of, test_bot) -> None:
    """The bot answers decision 2, then floods while the referee waits for nothing: the stream is ended at once
    and the seat's next decision (3) is the ``unreachable`` fault; the one after comes on a new stream. (The
    referee may have sent decision 3 during the flood: that request gives one message back.)"""
    bot = test_bot("stream_bot", "--style", "flood", "--flood-after", "--at", "2", "--count", str(FLOOD))
    record = play(seats_of, seat(bot))
    assert faults_of(record) == Counter({"unreachable": 1}), record.faults
    fault = record.faults[0]
    assert record.decisions[fault.decision]["seq"] == 3
    read = CUT_RE.search(fault.detail)
    assert read and MAX_UNASKED_MESSAGES < int(read[1]) <= MAX_UNASKED_MESSAGES + 2, fault.detail
    mine = {d["seq"]: d["source"] for d in record.decisions if d["seat"] == BAD}
    assert mine[2] == "bot" and mine[3] == "default" and mine[4] == "bot"
    assert flood_sent(bot)[2] < FLOOD // 10


def test_a_bot_flooding_every_decision_forfeits_by_the_fault_limit(seats_of, test_bot) -> None:
    """Flooding at every decision: every stream is ended after MAX_UNASKED_MESSAGES + 1 messages, each an
    ``unreachable`` fault, and the seat forfeits at max_faults (10) as any failing bot; the match completes."""
    bot = test_bot("stream_bot", "--style", "flood", "--count", str(FLOOD))
    seats = [*seats_of("random1"), seat(bot), *seats_of("random2")]
    wall = time.perf_counter()
    record = run_match_sync("stream-flood-all", "take5", seats, take5.Take5Config(), seed=5,
                            options=RefereeOptions(deadline_ms=400))
    assert time.perf_counter() - wall < 10.0
    assert replay(record) == []
    assert faults_of(record) == Counter({"unreachable": 10})
    for f in record.faults:  # a stream flooded while the next request went out gets that one back
        read = CUT_RE.search(f.detail)
        assert read and MAX_UNASKED_MESSAGES < int(read[1]) <= MAX_UNASKED_MESSAGES + 2, f.detail
    assert [(f.seat, f.reason) for f in record.forfeits] == [(BAD, "faults")]
    assert record.result.ranks[BAD] == 3 and record.result.forfeits[BAD] == "faults"
    assert sum(flood_sent(bot).values()) < 10 * FLOOD // 10


def test_late_answers_never_use_up_the_budget_of_unasked_messages(seats_of, test_bot) -> None:
    """A slow honest bot whose every answer is late (more of them on one stream than MAX_UNASKED_MESSAGES, its
    backlog growing so each lands while the referee waits for a later sequence): timeouts, never a cut stream.
    No lag re-asks (a decision asked again might get its backlogged answer in time; the re-ask's second answer is
    in test_which_messages_count_against_the_budget), so each answer comes >= 150 ms after its 50 ms deadline (well
    after it, so that a deadline timer the loaded test machine fires late still fires first)."""
    bot = test_bot("stream_bot", "--style", "late", "--sleep", "0.15")
    seats = [*seats_of("random1"), seat(bot), *seats_of("random2")]
    record = run_match_sync("stream-late-all", "take5", seats, take5.Take5Config(limit=120), seed=5,
                            seat_seeds=(7, 8, 9), options=RefereeOptions(deadline_ms=50, lag_retries=0, **NO_LIMITS))
    assert replay(record) == [] and record.forfeits == ()
    asked = [d for d in record.decisions if d["seat"] == BAD]
    assert len(asked) > MAX_UNASKED_MESSAGES + 5  # seat seeds: the same game each run, random bots included
    assert faults_of(record) == Counter({"timeout": len(asked)}), record.faults


class _Fed:
    """A stand-in for the ``grpc.aio`` stream call of ``SeatStream`` whose bot's messages the test feeds
    (``feed``); writes complete at once (kept in ``sent``)."""

    def __init__(self) -> None:
        self.sent: list[bot_pb2.RefereeMessage] = []
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.cancelled = False

    async def write(self, message: Any) -> None:  # serialised as grpc does (the stub's serializer)
        self.sent.append(bot_pb2.RefereeMessage.FromString(message.SerializeToString()))

    async def done_writing(self) -> None:
        pass

    async def read(self) -> Any:
        return await self.inbox.get()

    def feed(self, *messages: Any) -> None:
        for message in messages:
            self.inbox.put_nowait(message)

    def done(self) -> bool:
        return self.cancelled

    def cancel(self) -> bool:
        self.cancelled = True
        self.inbox.put_nowait(grpc.aio.EOF)
        return True


def _fed_stream() -> tuple[SeatStream, list[_Fed]]:
    """A ``SeatStream`` whose every stream is a ``_Fed`` (appended to the list returned with it when opened)."""
    calls: list[_Fed] = []

    class Stub:
        def PlayMatch(self, **_: Any) -> _Fed:  # noqa: N802 - the stub's method
            calls.append(_Fed())
            return calls[-1]

    return SeatStream(Stub(), 0, "fed bot"), calls


def test_which_messages_count_against_the_budget() -> None:
    """The rule, message by message: the first answer to a request whose call is over (a late answer, or the
    second answer to a request asked again) is free; a sequence never asked, a second answer to an answered
    request, an undecodable message with nothing waiting and a message with no answer count; each request sent
    gives one back, up to MAX_UNASKED_MESSAGES; one over and the stream is ended, the waiting call failing with a
    ``StreamCut`` (UNAVAILABLE), or the next call when none waits; the call after opens a new stream."""

    def decision(seq: int) -> bot_pb2.BotMessage:
        return bot_pb2.BotMessage(sequence=seq, decision=bot_pb2.DecideResponse())

    async def turn() -> None:
        for _ in range(5):
            await asyncio.sleep(0)

    async def main() -> None:
        stream, calls = _fed_stream()

        def ask(seq: int, timeout: float = 5.0) -> Any:
            return stream.Decide(bot_pb2.DecideRequest(match_id="m", sequence=seq), timeout=timeout)

        started = stream.StartMatch(bot_pb2.StartMatchRequest(match_id="m"), timeout=5.0)
        calls[0].feed(bot_pb2.BotMessage(started=bot_pb2.StartMatchResponse()))
        assert await started == bot_pb2.StartMatchResponse()
        first = ask(0, timeout=0.01)
        await asyncio.sleep(0.03)  # its deadline passes
        with pytest.raises(grpc.RpcError) as timed_out:
            await first
        assert timed_out.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        calls[0].feed(bot_pb2.BotMessage(started=bot_pb2.StartMatchResponse()))  # a second answer to start
        await turn()
        assert stream.unasked == 1 and stream.dropped == 1
        second = ask(1)
        again = ask(1)  # asked again (the referee was late): the bot answers both
        calls[0].feed(decision(0), decision(1), decision(1))  # late, answer, the first ask's answer: all free
        assert await again == bot_pb2.DecideResponse()
        await turn()
        assert second.future.cancelled() and stream.unasked == 1 and stream.dropped == 3
        calls[0].feed(decision(1), decision(0), decision(7), bot_pb2.BotMessage(),
                      UndecodableAnswer("BotMessage", "junk", 3))  # duplicates, never asked, empty, undecodable
        await turn()
        assert stream.unasked == 6 and stream.call is calls[0] and not calls[0].cancelled
        waiting = ask(2)  # gives one back: 32 - 5 + 1 = 28 more pass (ask(1) gave one too, the second none)
        calls[0].feed(*(decision(1000 + i) for i in range(MAX_UNASKED_MESSAGES - 4)))
        await turn()
        assert not waiting.future.done() and stream.call is calls[0]
        calls[0].feed(decision(5000), decision(2))  # one over: the answer after it is never read
        await turn()
        assert calls[0].cancelled and stream.call is None and stream.unasked == MAX_UNASKED_MESSAGES + 3
        with pytest.raises(StreamCut) as cut:
            await waiting
        assert cut.value.code() == grpc.StatusCode.UNAVAILABLE
        assert (f"the bot sent {MAX_UNASKED_MESSAGES + 3} messages answering nothing it was asked"
                in cut.value.details())

        answered = ask(3)  # a new stream, a new budget
        assert len(calls) == 2
        calls[1].feed(decision(3), *(decision(3) for _ in range(MAX_UNASKED_MESSAGES + 1)))
        assert await answered == bot_pb2.DecideResponse()
        await turn()
        assert calls[1].cancelled and stream.call is None
        with pytest.raises(StreamCut):  # nothing was waiting: the next call is the fault, without a stream
            await ask(4)
        assert len(calls) == 2
        after = ask(5)  # and the one after opens a new stream
        assert len(calls) == 3 and [m.decide.sequence for m in calls[2].sent] == [5]
        calls[2].feed(decision(5))
        assert await after == bot_pb2.DecideResponse()
        stream.close()

    asyncio.run(main())


def test_a_failure_for_another_step_is_named_in_the_timeout_it_caused() -> None:
    """A decide answered with a StepFailure of the right sequence but another step answers nothing: its timeout
    says which step the failure gave, not just its sequence."""

    async def main() -> None:
        stream, calls = _fed_stream()
        waiting = stream.Decide(bot_pb2.DecideRequest(match_id="m", sequence=4), timeout=0.05)
        calls[0].feed(bot_pb2.BotMessage(sequence=4, failure=bot_pb2.StepFailure(
            step=bot_pb2.MATCH_STEP_START, code=13, message="no")))
        with pytest.raises(grpc.RpcError) as timed_out:
            await waiting
        detail = timed_out.value.details()
        assert timed_out.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "a failure for step MATCH_STEP_START" in detail and "says step MATCH_STEP_DECIDE" in detail, detail
        assert "for sequence 0" not in detail
        stream.close()

    asyncio.run(main())
