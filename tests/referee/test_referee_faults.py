"""A bad bot never crashes the referee (STYLE.md habit 4): each misbehaving test bot (tests/bots/) plays real
matches over real gRPC; the match completes, the fault is recorded with its kind and seat, and the engine's
default action was applied in its place. These matches run without forfeits (``NO_LIMITS``) so that every fault
of a whole hand shows; the limits have their own tests (test_referee_limits.py)."""

from __future__ import annotations

import logging
from collections import Counter

from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import run_match_sync
from arena.match.replay import replay
from arena_sdk import wire
from arena_sdk.games import take5

from .conftest import seat, walk

ONE_HAND = take5.Take5Config(limit=1)  # every hand hands out bullheads, so limit 1 ends the game after one hand
BAD = 2  # the misbehaving bot's seat in these matches
NO_LIMITS = {"max_faults": 0, "max_consecutive_timeouts": 0, "match_time_limit_s": 0}


def play_with(seats_of, bad: SeatSpec, *, deadline_ms: int = 3000, seed: int = 3,
              config: take5.Take5Config = ONE_HAND) -> MatchRecord:
    seats = [*seats_of("random1", "heuristic"), bad, *seats_of("random2")]
    record = run_match_sync(f"fault-{bad.name}", "take5", seats, config, seed=seed,
                            options=RefereeOptions(deadline_ms=deadline_ms, **NO_LIMITS))
    assert replay(record) == [] and record.forfeits == ()
    return record


def assert_defaults_applied(record: MatchRecord) -> None:
    """Every faulted decision carries the engine's default action, every other one is the bot's own."""
    faulted = {f.decision for f in record.faults if f.decision is not None}
    for i, (state, dec) in enumerate(walk(record)):
        if i in faulted:
            assert dec["source"] == "default"
            assert dec["action"] == wire.action_to_dict("take5", take5.default_action(state, dec["seat"]))
        else:
            assert dec["source"] == "bot"


def faults_by(record: MatchRecord) -> Counter:
    return Counter((f.kind, f.seat) for f in record.faults)


def test_slow_bot_times_out_and_gets_the_default(seats_of, test_bot) -> None:
    bot = test_bot("slow_bot", "--at", "1,4", "--sleep", "30")
    record = play_with(seats_of, seat(bot), deadline_ms=1000)
    assert faults_by(record) == Counter({("timeout", BAD): 2})
    seqs = [record.decisions[f.decision]["seq"] for f in record.faults]
    assert seqs == [1, 4]
    assert all("1000 ms" in f.detail for f in record.faults)
    assert record.result.faults == (0, 0, 2, 0)
    assert_defaults_applied(record)


def test_illegal_answers_become_illegal_faults(seats_of, test_bot) -> None:
    bot = test_bot("illegal_bot")
    record = play_with(seats_of, seat(bot))
    bad_decisions = [d for d in record.decisions if d["seat"] == BAD]
    assert faults_by(record) == Counter({("illegal", BAD): len(bad_decisions)})
    card_faults = [f for f in record.faults if record.decisions[f.decision]["kind"] == take5.CHOOSE_CARD]
    assert len(card_faults) == 10 and all("not legal" in f.detail for f in card_faults)
    # the default card choice is the lowest card of the hand
    for state, dec in walk(record):
        if dec["seat"] == BAD and dec["kind"] == take5.CHOOSE_CARD:
            assert dec["action"] == {"card": min(state.hands[BAD])}
    assert_defaults_applied(record)


def test_wrong_action_kind_is_malformed(seats_of, test_bot) -> None:
    bot = test_bot("garbage_bot", "--style", "wrong_kind")
    record = play_with(seats_of, seat(bot))
    assert faults_by(record) == Counter({("malformed", BAD): sum(d["seat"] == BAD for d in record.decisions)})
    assert any("needs Take5Action.card" in f.detail for f in record.faults)
    assert_defaults_applied(record)


def test_empty_response_is_malformed(seats_of, test_bot) -> None:
    bot = test_bot("garbage_bot", "--style", "empty", "--at", "0,2")
    record = play_with(seats_of, seat(bot))
    assert faults_by(record) == Counter({("malformed", BAD): 2})
    assert [record.decisions[f.decision]["seq"] for f in record.faults] == [0, 2]
    assert_defaults_applied(record)


def test_undecodable_response_is_malformed_with_a_reason(seats_of, test_bot) -> None:
    bot = test_bot("undecodable_bot", "--at", "1")
    record = play_with(seats_of, seat(bot))
    assert faults_by(record) == Counter({("malformed", BAD): 1})
    assert "could not be decoded" in record.faults[0].detail
    assert_defaults_applied(record)


def test_raising_bot_is_an_error_fault(seats_of, test_bot) -> None:
    bot = test_bot("raising_bot", "--at", "3")
    record = play_with(seats_of, seat(bot))
    (fault,) = record.faults
    assert (fault.kind, fault.seat) == ("error", BAD)
    assert "UNKNOWN" in fault.detail and "raising bot fails in Decide #3" in fault.detail
    dec = record.decisions[fault.decision]
    assert (dec["seq"], dec["hand"], dec["turn"]) == (3, fault.hand, fault.turn)
    assert_defaults_applied(record)


def test_aborting_bot_is_an_error_fault_with_its_status(seats_of, test_bot) -> None:
    bot = test_bot("raising_bot", "--abort", "--at", "0")
    record = play_with(seats_of, seat(bot))
    (fault,) = record.faults
    assert fault.kind == "error" and "INVALID_ARGUMENT" in fault.detail
    assert "raising bot refuses Decide #0[2J" in fault.detail and not {"\x1b", "\u202e"} & set(fault.detail)
    assert_defaults_applied(record)


def test_failed_start_match_is_a_fault_and_the_seat_still_plays(seats_of, test_bot) -> None:
    bot = test_bot("raising_bot", "--on", "start")
    record = play_with(seats_of, seat(bot))
    (fault,) = record.faults
    assert (fault.kind, fault.seat, fault.decision) == ("error", BAD, None)
    assert "StartMatch" in fault.detail
    assert record.result.faults == (0, 0, 1, 0)
    bad = [d for d in record.decisions if d["seat"] == BAD]
    assert len(bad) >= 10 and all(d["source"] == "bot" for d in bad)


def test_failed_end_match_is_not_a_fault(seats_of, test_bot) -> None:
    bot = test_bot("raising_bot", "--on", "end")
    record = play_with(seats_of, seat(bot))
    assert record.faults == () and record.result.faults == (0, 0, 0, 0)


def test_bot_crashing_mid_match(seats_of, test_bot) -> None:
    bot = test_bot("crash_bot", "--at", "3")
    record = play_with(seats_of, seat(bot))
    bot.process.wait(10)
    assert bot.process.returncode == 3  # it really died
    bad = [(i, d) for i, d in enumerate(record.decisions) if d["seat"] == BAD]
    assert all(d["source"] == "bot" for _, d in bad[:3])  # before the crash it played
    assert [f.decision for f in record.faults] == [i for i, _ in bad[3:]]  # from the crash on, every decision
    first, *later = record.faults
    assert first.kind in ("unreachable", "error")  # the connection broke during the call
    assert later and all(f.kind == "unreachable" for f in later)
    assert {f.seat for f in record.faults} == {BAD}
    assert_defaults_applied(record)


def test_unreachable_endpoint(seats_of, dead_endpoint) -> None:
    record = play_with(seats_of, SeatSpec("ghost", dead_endpoint))
    bad = [i for i, d in enumerate(record.decisions) if d["seat"] == BAD]
    assert len(bad) >= 10
    assert all(f.kind == "unreachable" and f.seat == BAD for f in record.faults)
    assert [f.decision for f in record.faults] == [None, *bad]  # StartMatch, then every decision
    assert record.result.faults == (0, 0, len(bad) + 1, 0)
    assert_defaults_applied(record)


def test_two_bad_bots_in_one_match(sample_bots, test_bot, dead_endpoint) -> None:
    illegal = test_bot("illegal_bot", "--at", "0")
    slow = test_bot("slow_bot", "--at", "0", "--sleep", "30")
    seats = [seat(sample_bots["random1"]), seat(illegal), SeatSpec("ghost", dead_endpoint), seat(slow)]
    record = run_match_sync("multi", "take5", seats, ONE_HAND, seed=8,
                            options=RefereeOptions(deadline_ms=1000, **NO_LIMITS))
    assert replay(record) == []
    kinds = faults_by(record)
    assert kinds[("illegal", 1)] == 1 and kinds[("timeout", 3)] == 1
    assert kinds[("unreachable", 2)] == 1 + sum(d["seat"] == 2 for d in record.decisions)
    assert set(kinds) == {("illegal", 1), ("timeout", 3), ("unreachable", 2)}
    assert_defaults_applied(record)


def test_undecodable_answers_are_one_log_line_without_a_traceback(seats_of, test_bot, caplog, capfd) -> None:
    bot = test_bot("undecodable_bot", "--name", "hostile", "--start-garbage")
    with caplog.at_level(logging.WARNING):
        record = play_with(seats_of, seat(bot))
    bad = [i for i, d in enumerate(record.decisions) if d["seat"] == BAD]
    assert faults_by(record) == Counter({("malformed", BAD): len(bad) + 1})  # StartMatch, then every Decide
    assert [f.decision for f in record.faults] == [None, *bad]
    assert "could not be decoded as a StartMatchResponse" in record.faults[0].detail
    assert all("could not be decoded as a DecideResponse" in f.detail for f in record.faults[1:])
    assert not [r for r in caplog.records if r.exc_info or "deserializ" in r.getMessage()]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines  # one line per call of the bot (StartMatch, Decide), however often it happens
    assert all("hostile" in line and bot.endpoint in line for line in lines)
    assert "StartMatch:" in lines[0] and "Decide:" in lines[1]
    assert "Traceback" not in capfd.readouterr().err
