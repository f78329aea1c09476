"""The referee's limits (arena.match.referee, "Failure policy"), on real bot processes over real gRPC: a seat forfeits
after ``max_faults`` faults or ``max_consecutive_timeouts`` timeouts in a row and is ranked last, never called
again; the match time limit charges the seats that used the time; StartMatch and EndMatch have short deadlines;
a timeout caused by the referee's own lateness is asked again, not charged; replay checks all of it.

The misbehaving bot is tests/bots/limits_bot.py, which logs every call it receives. Honest seats are served by
one limits_bot answering at once (the lowest card, row 0), so every match here is deterministic: with seed 13 and
one hand, a seat playing only the default actions would *win* by the game's score (ranks 2, 1, 3)."""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.core.config import DEFAULTS
from arena.match import channels
from arena.match.local_bots import BotProcess, start_bot
from arena.match.loop_lag import LoopLag
from arena.match.options import RefereeOptions
from arena.match.record import FaultTally, Limits, MatchRecord, RecordError, SeatSpec, forfeit_ranks
from arena.match.referee import run_match, run_match_sync
from arena.match.replay import replay
from arena_sdk.games import GAMES, take5

from .conftest import BOTS_DIR, final_state, seat

ONE_HAND = take5.Take5Config(limit=1)
SEED = 13
GAME_RANKS = (2, 1, 3)  # seed 13, one hand, seats 0 and 2 honest, seat 1 playing the defaults
BAD = 1


@pytest.fixture(scope="module")
def honest() -> Iterator[BotProcess]:
    bot = start_bot(str(BOTS_DIR / "limits_bot.py"), extra_args=["--decide", "honest"])
    try:
        yield bot
    finally:
        bot.stop()


def seats_with(honest: BotProcess, bad: SeatSpec) -> list[SeatSpec]:
    return [SeatSpec("honest-0", honest.endpoint), bad, SeatSpec("honest-2", honest.endpoint)]


def calls(log: Path) -> list[tuple[str, int | None]]:
    """(method, seq) of every call the bot received, in order of arrival."""
    if not log.exists():
        return []
    return [(c["method"], c["seq"]) for c in map(json.loads, log.read_text(encoding="utf-8").splitlines())]


def tampered(rec: MatchRecord, change) -> list[str]:
    d = copy.deepcopy(rec.to_dict())
    change(d)
    return replay(MatchRecord.from_dict(d))


# --- pure parts -------------------------------------------------------------------------------------------------


def test_forfeit_ranks_put_every_forfeited_seat_last() -> None:
    assert forfeit_ranks([1, 2, 2, 4], [False] * 4) == (1, 2, 2, 4)
    assert forfeit_ranks([1, 2, 2, 4], [True, False, False, False]) == (4, 1, 1, 3)
    assert forfeit_ranks([1, 2, 3, 4], [True, False, True, False]) == (3, 1, 3, 2)  # forfeits share the last rank
    assert forfeit_ranks([2, 1], [True, True]) == (1, 1)


def test_fault_tally_counts_faults_and_timeouts_in_a_row() -> None:
    tally = FaultTally(2, Limits(max_faults=4, max_consecutive_timeouts=2))
    assert tally.fault(0, "timeout") is None
    tally.answered(0)  # an answer breaks the row
    assert tally.fault(0, "timeout") is None
    assert tally.fault(0, "illegal") is None  # so does any other fault
    assert tally.fault(0, "timeout") == "faults"  # the 4th fault
    assert tally.fault(1, "timeout") is None and tally.fault(1, "timeout") == "timeouts"
    never = FaultTally(1, Limits())
    assert all(never.fault(0, "timeout") is None for _ in range(100))


def test_loop_lag_sees_a_blocked_event_loop() -> None:
    async def main() -> tuple[float, float]:
        lag = LoopLag()
        task = asyncio.ensure_future(lag.run())
        await asyncio.sleep(0.05)
        loop = asyncio.get_running_loop()
        since = loop.time()
        quiet = lag.max_since(since - 0.04)
        time.sleep(0.2)  # the loop is blocked
        during = lag.max_since(since)  # seen before the monitor could wake up
        await asyncio.sleep(0.05)
        after = lag.max_since(since)
        task.cancel()
        return quiet, min(during, after)

    quiet, late = asyncio.run(main())
    assert quiet < 0.05 and late > 0.15


def test_limits_are_referee_options_with_the_config_defaults() -> None:
    assert DEFAULTS.call_deadline_ms <= 2000
    assert DEFAULTS.max_faults > 0 and DEFAULTS.max_consecutive_timeouts > 0 and DEFAULTS.match_time_limit_s > 0
    for fn in (run_match, run_match_sync):
        options = inspect.signature(fn).parameters["options"]
        assert options.kind is inspect.Parameter.KEYWORD_ONLY and options.default is None  # None: the defaults
    defaults = RefereeOptions()
    for name in ("deadline_ms", "call_deadline_ms", "max_faults", "max_consecutive_timeouts", "match_time_limit_s",
                 "lag_threshold_ms", "lag_retries"):
        assert getattr(defaults, name) == getattr(DEFAULTS, name), name
    assert defaults.limits == Limits(DEFAULTS.max_faults, DEFAULTS.max_consecutive_timeouts,
                                     DEFAULTS.match_time_limit_s, DEFAULTS.lag_threshold_ms, DEFAULTS.lag_retries)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_faults": -1}, "max_faults"),
    ({"max_consecutive_timeouts": 1.5}, "max_consecutive_timeouts"),
    ({"match_time_limit_s": -1}, "match_time_limit_s"),
    ({"match_time_limit_s": float("inf")}, "match_time_limit_s"),
    ({"lag_threshold_ms": -5}, "lag_threshold_ms"),
    ({"lag_retries": True}, "lag_retries"),
])
def test_bad_limits_raise_value_error(dead_endpoint, kwargs, message) -> None:
    seats = [SeatSpec(f"s{i}", dead_endpoint) for i in range(2)]
    with pytest.raises(ValueError, match=message):
        run_match_sync("bad", "take5", seats, seed=1, options=RefereeOptions(**kwargs))


# --- forfeits ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def forfeited(honest, tmp_path_factory) -> tuple[MatchRecord, list]:
    """A match in which seat 1 answers illegal actions and forfeits at its 3rd fault; and the calls it received."""
    log = tmp_path_factory.mktemp("forfeit") / "calls.jsonl"
    bad = start_bot(str(BOTS_DIR / "limits_bot.py"), extra_args=["--decide", "illegal", "--log", str(log)])
    try:
        record = run_match_sync("forfeit-faults", "take5", seats_with(honest, seat(bad)), ONE_HAND, seed=SEED,
                                options=RefereeOptions(deadline_ms=2000, max_faults=3, max_consecutive_timeouts=0))
    finally:
        bad.stop()
    return record, calls(log)


def test_max_faults_forfeits_the_seat_and_ranks_it_last(forfeited) -> None:
    record, received = forfeited
    assert replay(record) == []
    assert [(f.kind, f.seat) for f in record.faults] == [("illegal", BAD)] * 3
    (forfeit,) = record.forfeits
    assert (forfeit.seat, forfeit.reason, forfeit.fault) == (BAD, "faults", 2)
    assert forfeit.detail == "3 faults in this match (max_faults 3)"
    mine = [d for d in record.decisions if d["seat"] == BAD]
    assert [d["source"] for d in mine[:3]] == ["default"] * 3
    assert len(mine) >= 10
    assert all((d["source"], d["seq"], d["latency_ms"]) == ("forfeit", None, None) for d in mine[3:])
    # never called again: no Decide after the 3rd, no EndMatch
    assert received == [("StartMatch", None), ("Decide", 0), ("Decide", 1), ("Decide", 2)]
    # by the game's score it won; it is ranked last; the scores are the game's
    outcome = take5.outcome(final_state(record))
    assert outcome.ranks == GAME_RANKS
    assert record.result.scores == tuple(float(s) for s in outcome.scores)
    assert record.result.ranks == (1, 3, 2)
    assert record.result.forfeits == (None, "faults", None)
    assert record.result.faults == (0, 3, 0)


def test_consecutive_timeouts_forfeit_a_hanging_bot_after_three_deadlines(honest, test_bot, tmp_path) -> None:
    log = tmp_path / "calls.jsonl"
    bad = test_bot("limits_bot", "--decide", "hang", "--log", str(log))
    record = run_match_sync("forfeit-hang", "take5", seats_with(honest, seat(bad)), ONE_HAND, seed=SEED,
                            options=RefereeOptions(deadline_ms=200, max_faults=0, max_consecutive_timeouts=3))
    assert replay(record) == []
    assert [(f.kind, f.seat) for f in record.faults] == [("timeout", BAD)] * 3
    assert [(f.seat, f.reason, f.fault) for f in record.forfeits] == [(BAD, "timeouts", 2)]
    assert calls(log) == [("StartMatch", None), ("Decide", 0), ("Decide", 1), ("Decide", 2)]
    assert record.result.ranks == (1, 3, 2)
    assert record.duration_s < 3 * 0.2 + 0.8  # playing the hand out would take 10 deadlines (2 s)


def test_answers_break_the_row_of_timeouts(honest, test_bot) -> None:
    bad = test_bot("limits_bot", "--decide", "hang", "--at", "0,1,3,4,6,7")
    seats = seats_with(honest, seat(bad))
    # never 3 timeouts in a row: the 5th fault reaches max_faults instead
    record = run_match_sync("row-1", "take5", seats, ONE_HAND, seed=SEED,
                            options=RefereeOptions(deadline_ms=200, max_faults=5, max_consecutive_timeouts=3))
    assert replay(record) == []
    assert [(f.seat, f.reason, f.fault) for f in record.forfeits] == [(BAD, "faults", 4)]
    assert [record.decisions[f.decision]["seq"] for f in record.faults] == [0, 1, 3, 4, 6]
    # 2 in a row is enough when that is the limit
    record = run_match_sync("row-2", "take5", seats, ONE_HAND, seed=SEED,
                            options=RefereeOptions(deadline_ms=200, max_faults=0, max_consecutive_timeouts=2))
    assert replay(record) == []
    assert [(f.seat, f.reason, f.fault) for f in record.forfeits] == [(BAD, "timeouts", 1)]


def test_a_bot_that_never_answers_costs_about_three_deadlines_with_the_default_limits(honest, test_bot) -> None:
    bad = test_bot("limits_bot", "--decide", "hang", "--hang", "start,end")
    t0 = time.monotonic()
    record = run_match_sync("never", "take5", seats_with(honest, seat(bad)), take5.Take5Config(), seed=SEED,
                            options=RefereeOptions(deadline_ms=250, call_deadline_ms=250))  # every limit at its default
    wall = time.monotonic() - t0
    assert replay(record) == []
    n = DEFAULTS.max_consecutive_timeouts
    assert [f.kind for f in record.faults] == ["timeout"] * n
    assert record.faults[0].decision is None  # StartMatch timed out too: the first of the row
    assert [(f.seat, f.reason) for f in record.forfeits] == [(BAD, "timeouts")]
    assert record.result.ranks[BAD] == 3
    assert sum(d["seat"] == BAD for d in record.decisions) >= 20  # a whole game: hands of 10 turns
    assert wall < n * 0.25 + 1.5  # without the cut: every decision of the game would cost a deadline


# --- StartMatch and EndMatch ------------------------------------------------------------------------------------


def test_hanging_start_and_end_match_cost_one_call_deadline_each(honest, test_bot, tmp_path) -> None:
    log = tmp_path / "calls.jsonl"
    bad = test_bot("limits_bot", "--hang", "start,end", "--log", str(log))  # answers Decide at once
    t0 = time.monotonic()
    record = run_match_sync("start-end", "take5", seats_with(honest, seat(bad)), ONE_HAND, seed=SEED,
                            options=RefereeOptions(deadline_ms=1000, call_deadline_ms=300))
    wall = time.monotonic() - t0
    assert replay(record) == []
    (fault,) = record.faults
    assert (fault.kind, fault.seat, fault.decision) == ("timeout", BAD, None)
    assert "StartMatch: no answer within the 300 ms deadline" == fault.detail
    assert record.forfeits == ()  # one timeout, then answers
    assert ("EndMatch", None) in calls(log)  # it was told the result, and hung there too
    assert wall < 2 * 0.3 + 1.0  # the bot would hang 60 s in each


# --- the match time limit ---------------------------------------------------------------------------------------


def test_time_limit_forfeits_the_seat_that_used_the_time(honest, test_bot, tmp_path) -> None:
    log = tmp_path / "calls.jsonl"
    slow = test_bot("limits_bot", "--decide", "delay", "--delay", "0.15", "--log", str(log))
    record = run_match_sync("time-limit", "take5", seats_with(honest, seat(slow)), ONE_HAND, seed=SEED,
                            options=RefereeOptions(deadline_ms=1000, match_time_limit_s=0.6, max_faults=0,
                                                   max_consecutive_timeouts=0))
    assert replay(record) == []
    cut = record.time_limit_at
    assert cut is not None and record.faults == ()
    (forfeit,) = record.forfeits
    assert (forfeit.seat, forfeit.reason, forfeit.fault) == (BAD, "time_limit", None)
    assert "more than its share of 0.200 s" in forfeit.detail
    after = record.decisions[cut:]
    assert after and all(d["seq"] is None for d in after)
    assert {d["source"] for d in after if d["seat"] == BAD} == {"forfeit"}
    assert {d["source"] for d in after if d["seat"] != BAD} == {"time_limit"}
    assert all(d["source"] in ("bot", "default") for d in record.decisions[:cut])
    asked = [seq for method, seq in calls(log) if method == "Decide"]
    assert asked == list(range(len(asked))) and 2 <= len(asked) < 10  # the hand has 10 turns
    assert ("EndMatch", None) not in calls(log)
    assert record.result.ranks[BAD] == 3 and record.result.forfeits == (None, "time_limit", None)
    assert record.duration_s < 0.6 + 0.15 + 0.5  # at most one round past the limit


def test_time_limit_with_nobody_at_fault_charges_nobody(honest, monkeypatch) -> None:
    engine = GAMES["take5"]
    observe = engine.observe

    def slow_observe(state, seat_):  # the referee is slow (its own work, 0.3 s a round), the bots are quick
        time.sleep(0.1)
        return observe(state, seat_)

    monkeypatch.setattr(engine, "observe", slow_observe)
    seats = [SeatSpec(f"honest-{i}", honest.endpoint) for i in range(3)]
    # each seat's share: 0.3 s of Decide time
    record = run_match_sync("time-limit-ours", "take5", seats, ONE_HAND, seed=SEED,
                            options=RefereeOptions(deadline_ms=1000, match_time_limit_s=0.9))
    assert replay(record) == []
    assert record.time_limit_at is not None and record.faults == ()
    assert record.forfeits == (), [d["latency_ms"] for d in record.decisions]
    assert {d["source"] for d in record.decisions[record.time_limit_at:]} == {"time_limit"}
    outcome = take5.outcome(final_state(record))
    assert record.result.ranks == outcome.ranks and record.result.forfeits == (None, None, None)


# --- the referee's own lateness ---------------------------------------------------------------------------------


class LateStubs:
    """Replaces the referee's ``GuardedBotStub``: before the chosen Decide attempts it makes the referee's event loop
    late on purpose, with a synchronous sleep in a callback that runs after gRPC created the call (its deadline
    is running) and before gRPC sends it. ``plan[(seat, seq)]`` = how many attempts of that request to delay."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, plan: dict[tuple[int, int], int], block_s: float) -> None:
        real = channels.GuardedBotStub
        self.seen: dict[tuple[int, int], int] = {}
        outer = self

        class Stub:
            def __init__(self, channel) -> None:
                self.real = real(channel)
                self.StartMatch, self.EndMatch = self.real.StartMatch, self.real.EndMatch

            def Decide(self, request, timeout=None, **kwargs):
                key = (request.seat, request.sequence)
                outer.seen[key] = outer.seen.get(key, 0) + 1
                if outer.seen[key] <= plan.get(key, 0):
                    asyncio.get_running_loop().call_soon(time.sleep, block_s)
                return self.real.Decide(request, timeout=timeout, **kwargs)

        monkeypatch.setattr(channels, "GuardedBotStub", Stub)


# The bot answers after 0.1 s of a 0.3 s deadline; the referee's loop is blocked 0.25 s before the send.
LATE = {"deadline_ms": 300, "max_faults": 0, "max_consecutive_timeouts": 0}


def test_referee_lateness_is_not_charged(honest, test_bot, tmp_path, monkeypatch) -> None:
    log = tmp_path / "calls.jsonl"
    bot = test_bot("limits_bot", "--decide", "delay", "--delay", "0.1", "--at", "2,5", "--log", str(log))
    seats = seats_with(honest, seat(bot))
    LateStubs(monkeypatch, {(BAD, 2): 1, (BAD, 5): 1}, block_s=0.25)
    record = run_match_sync("late-1", "take5", seats, ONE_HAND, seed=SEED,
                            options=RefereeOptions(lag_retries=2, **LATE))
    assert replay(record) == []
    assert record.faults == ()
    reasked = {d["seq"]: d for d in record.decisions if d["seat"] == BAD and "retries" in d}
    assert sorted(reasked) == [2, 5]
    for d in reasked.values():
        assert d["retries"] == 1 and d["source"] == "bot" and d["retry_lag_ms"][0] > 200
    asked = [seq for method, seq in calls(log) if method == "Decide"]
    assert asked.count(2) == 2 and asked.count(5) == 2 and asked.count(3) == 1  # asked again, same sequence

    # The same lateness without re-asks: the bot is charged, so the lateness really cost it its deadline.
    LateStubs(monkeypatch, {(BAD, 2): 1, (BAD, 5): 1}, block_s=0.25)
    record = run_match_sync("late-2", "take5", seats, ONE_HAND, seed=SEED,
                            options=RefereeOptions(lag_retries=0, **LATE))
    assert replay(record) == []
    assert [(f.kind, record.decisions[f.decision]["seq"]) for f in record.faults] == [("timeout", 2), ("timeout", 5)]


def test_re_asks_are_bounded(honest, test_bot, tmp_path, monkeypatch) -> None:
    log = tmp_path / "calls.jsonl"
    bot = test_bot("limits_bot", "--decide", "delay", "--delay", "0.1", "--at", "2", "--log", str(log))
    LateStubs(monkeypatch, {(BAD, 2): 99}, block_s=0.25)  # late at every attempt
    record = run_match_sync("late-3", "take5", seats_with(honest, seat(bot)), ONE_HAND, seed=SEED,
                            options=RefereeOptions(lag_retries=2, **LATE))
    assert replay(record) == []
    (fault,) = record.faults
    dec = record.decisions[fault.decision]
    assert (fault.kind, dec["seq"], dec["retries"], dec["source"]) == ("timeout", 2, 2, "default")
    assert "asked 3 times" in fault.detail
    assert [seq for method, seq in calls(log) if method == "Decide"].count(2) == 3


# --- replay checks forfeits, the time limit and re-asks ---------------------------------------------------------


def test_replay_finds_hidden_and_invented_forfeits(forfeited) -> None:
    record, _ = forfeited
    # hidden: the forfeit entry removed, the seat's result put back as the game's
    diffs = tampered(record, lambda d: d.update(forfeits=[]))
    assert any("does not say so" in x for x in diffs)
    diffs = tampered(record, lambda d: d["result"].update(ranks=list(GAME_RANKS)))
    assert any("result.ranks" in x for x in diffs)
    diffs = tampered(record, lambda d: d["result"].update(forfeits=[None, None, None]))
    assert any("result.forfeits" in x for x in diffs)
    # invented: a forfeit of an honest seat
    diffs = tampered(record, lambda d: d["forfeits"].append(
        {"seat": 0, "reason": "faults", "hand": 0, "turn": 0, "detail": "", "fault": 0}))
    assert any("forfeit of seat 0" in x and "no such forfeit" in x for x in diffs)
    # other limits than the ones the match was played with
    for limit in (0, 4):
        diffs = tampered(record, lambda d, limit=limit: d["limits"].update(max_faults=limit))
        assert any("no such forfeit" in x for x in diffs)
        assert any("has forfeited" in x or "still playing" in x for x in diffs)
    # a forfeited seat's decision passed off as its own answer
    i = next(k for k, d in enumerate(record.decisions) if d["source"] == "forfeit")
    diffs = tampered(record, lambda d: d["decisions"][i].update(source="bot", seq=3, latency_ms=1.0))
    assert any(f"decision {i}" in x and "has forfeited" in x for x in diffs)


def test_replay_checks_re_asks_and_the_time_limit(honest) -> None:
    clean = run_match_sync("clean", "take5", seats_with(honest, SeatSpec("honest-1", honest.endpoint)), ONE_HAND,
                           seed=SEED, options=RefereeOptions(deadline_ms=400))
    assert replay(clean) == [] and clean.forfeits == ()
    reask = {"retries": 1, "retry_lag_ms": [250.0]}
    assert tampered(clean, lambda d: d["decisions"][4].update(reask)) == []  # a plausible re-ask
    diffs = tampered(clean, lambda d: d["decisions"][4].update(retries=3, retry_lag_ms=[250.0] * 3))
    assert any("lag_retries" in x for x in diffs)
    diffs = tampered(clean, lambda d: d["decisions"][4].update(retries=1, retry_lag_ms=[20.0]))
    assert any("not above the threshold" in x for x in diffs)
    with pytest.raises(RecordError, match="retries"):
        tampered(clean, lambda d: d["decisions"][4].update(retries=2, retry_lag_ms=[250.0]))
    # a time limit that did not happen
    diffs = tampered(clean, lambda d: d.update(time_limit_at=5))
    assert any("decision 5" in x and "time limit" in x for x in diffs)
    diffs = tampered(clean, lambda d: (d.update(time_limit_at=5), d["limits"].update(match_time_limit_s=0)))
    assert any("time_limit_at" in x for x in diffs)


def test_replay_moves_of_the_time_limit_are_found(honest, test_bot) -> None:
    slow = test_bot("limits_bot", "--decide", "delay", "--delay", "0.1")
    record = run_match_sync("time-limit-2", "take5", seats_with(honest, seat(slow)), ONE_HAND, seed=SEED,
                            options=RefereeOptions(deadline_ms=1000, match_time_limit_s=0.35))
    assert replay(record) == [] and record.time_limit_at is not None and record.forfeits
    for moved in (record.time_limit_at - 3, record.time_limit_at + 3, None):
        assert tampered(record, lambda d, moved=moved: d.update(time_limit_at=moved)), moved
    # the slow seat's Decide time shrunk below its share: then it would not have forfeited
    diffs = tampered(record, lambda d: [x.update(latency_ms=1.0) for x in d["decisions"] if x["latency_ms"]])
    assert any("no such forfeit" in x for x in diffs)


def test_version_1_records_are_read_as_matches_without_limits(honest) -> None:
    rec = run_match_sync("v1", "take5", seats_with(honest, SeatSpec("honest-1", honest.endpoint)), ONE_HAND, seed=SEED,
                         options=RefereeOptions(deadline_ms=400))
    d = rec.to_dict()
    for key in ("limits", "forfeits", "time_limit_at"):
        del d[key]
    del d["result"]["forfeits"]
    d["version"] = 1
    old = MatchRecord.from_dict(d)
    assert old.limits == Limits() and old.forfeits == () and old.result.forfeits == (None, None, None)
    assert replay(old) == []


def test_a_note_is_cleaned_from_its_first_characters_only() -> None:
    """A bot's note is cut before it is cleaned of control characters: a 64 KiB note of them costs the referee
    the look at its first NOTE_SCANNED_CHARS (what comes after is dropped, never scanned), and a seat's notes stop
    being looked at once its budget for the match is used."""
    from types import SimpleNamespace

    from arena.match.running import (
        MAX_NOTE_CHARS,
        MAX_NOTES_CHARS_PER_MATCH,
        NOTE_SCANNED_CHARS,
        RunningMatch,
    )

    match = SimpleNamespace(note_chars={})
    assert RunningMatch._note(match, 0, "\x01" * 65_000 + "hidden") == ""  # type: ignore[arg-type]
    assert RunningMatch._note(match, 0, "a\x1b[2Jb" + "c" * 1000) == "a[2Jb" + "c" * (MAX_NOTE_CHARS - 5)  # type: ignore[arg-type]
    assert RunningMatch._note(match, 0, "\x01" * (NOTE_SCANNED_CHARS - 3) + "abcdef") == "abc"  # type: ignore[arg-type]
    match.note_chars[1] = MAX_NOTES_CHARS_PER_MATCH
    assert RunningMatch._note(match, 1, "spent") == ""  # type: ignore[arg-type]
