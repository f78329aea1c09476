"""A bot that restarts on its port in the middle of a match: the referee waits for it within each decision's
deadline (``docs/failure-policy.md``), so one restart costs that seat at most one fault, never a forfeit, and the
other seats none. Real bot processes over real gRPC: the bot is SIGKILLed between two rounds and a new process
is started on the same port while the match goes on."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from arena.match.local_bots import BotProcess, start_bot
from arena.match.options import RefereeOptions
from arena.match.referee import run_match_sync
from arena.match.replay import replay
from arena_sdk.games import take5

from .conftest import BOTS_DIR, seat

RESTARTED = 1  # the restarting bot's seat
KILL_AFTER = 3  # rounds played before the kill
DEADLINE_MS = 2000  # each decision's deadline: more than a bot process needs to start again on this machine


class _Restart:
    """A bot process that is SIGKILLed after ``KILL_AFTER`` rounds of a match (``on_progress``, given to
    ``run_match_sync``) and started again on its port ``away_s`` seconds after it died; ``bots``: the first process,
    then the second; ``killed_at``: when it was killed (``time.monotonic()``)."""

    def __init__(self, spec: str, extra_args: tuple[str, ...] = (), away_s: float = 0.0) -> None:
        self.spec, self.extra_args, self.away_s = spec, extra_args, away_s
        self.bots: list[BotProcess] = [start_bot(spec, extra_args=extra_args)]
        self.restarted = threading.Event()
        self.killed_at: list[float] = []
        self.rounds = 0

    def _restart(self) -> None:
        first = self.bots[0]
        first.process.wait()
        time.sleep(self.away_s)
        port = int(first.endpoint.rsplit(":", 1)[1])
        self.bots.append(start_bot(self.spec, port=port, extra_args=self.extra_args))
        self.restarted.set()

    def on_progress(self, before: Any, after: Any) -> None:
        self.rounds += 1
        if self.rounds == KILL_AFTER:
            self.bots[0].process.kill()
            self.killed_at.append(time.monotonic())
            threading.Thread(target=self._restart, daemon=True).start()

    def stop(self) -> None:
        self.restarted.wait(30)
        for bot in self.bots:
            bot.stop()



def test_a_bot_restarted_on_its_port_costs_at_most_one_fault(seats_of) -> None:
    restart = _Restart("sample:random")
    first = restart.bots[0]
    seats = [*seats_of("random1"), seat(first), *seats_of("heuristic", "random2")]
    try:
        record = run_match_sync("restart-1", "take5", seats, take5.Take5Config(limit=1), seed=5,
                                options=RefereeOptions(deadline_ms=DEADLINE_MS), on_progress=restart.on_progress)
    finally:
        restart.stop()
    bots = restart.bots
    assert restart.killed_at and restart.restarted.is_set(), "the bot was not killed and restarted during the match"
    assert len(bots) == 2 and bots[1].endpoint == first.endpoint
    assert record.forfeits == (), record.forfeits
    by_seat = Counter(f.seat for f in record.faults)
    assert set(by_seat) <= {RESTARTED} and by_seat[RESTARTED] <= 1, record.faults
    assert all(f.kind == "unreachable" for f in record.faults), record.faults
    # the restarted process answered the rest of the match: its seat's last decisions are its own
    assert [d["source"] for d in record.decisions if d["seat"] == RESTARTED][-3:] == ["bot"] * 3
    assert replay(record) == []


def test_a_bot_that_dies_for_good_is_waited_for_three_deadlines_then_forfeits(seats_of) -> None:
    gone = start_bot("sample:random")
    rounds = 0

    def on_progress(before: Any, after: Any) -> None:
        nonlocal rounds
        rounds += 1
        if rounds == 2:
            gone.process.kill()

    seats = [*seats_of("random1"), seat(gone), *seats_of("random2")]
    t0 = time.monotonic()
    try:
        record = run_match_sync("restart-2", "take5", seats, take5.Take5Config(limit=1), seed=6,
                                options=RefereeOptions(deadline_ms=200, max_faults=5), on_progress=on_progress)
    finally:
        gone.stop()
    elapsed = time.monotonic() - t0
    assert [(f.seat, f.reason) for f in record.forfeits] == [(RESTARTED, "faults")]
    assert Counter((f.kind, f.seat) for f in record.faults) == Counter({("unreachable", RESTARTED): 5}), record.faults
    waited = [f for f in record.faults if "not back within the 200 ms deadline" in f.detail]
    assert len(waited) == 3, record.faults  # max_consecutive_timeouts calls wait for it, later ones fail at once
    assert elapsed >= 0.6
    assert replay(record) == []


def test_a_request_that_waited_for_its_bot_to_come_back_says_the_time_left_when_it_arrives(seats_of) -> None:
    """On the match stream, a decision asked again while the bot restarts is written before the bot is back and
    sent when it is: its deadline_ms is what is left then, not what was left when it was written."""
    deadline_ms, away_s = 4000, 1.0
    restart = _Restart(str(BOTS_DIR / "stream_bot.py"), ("--deadlines",), away_s)
    seats = [*seats_of("random1"), seat(restart.bots[0]), *seats_of("random2")]
    try:
        record = run_match_sync("restart-3", "take5", seats, take5.Take5Config(limit=1), seed=5,
                                options=RefereeOptions(deadline_ms=deadline_ms), on_progress=restart.on_progress)
    finally:
        restart.stop()
    bots = restart.bots
    assert restart.restarted.is_set() and len(bots) == 2, "the bot was not killed and restarted during the match"
    assert record.forfeits == () and all(f.seat == RESTARTED for f in record.faults), record.faults
    got = [int(line.split()[-1]) for line in bots[1].stderr_tail().splitlines() if line.startswith("decide ")]
    assert got, bots[1].stderr_tail()
    # the first request the new process got waited at least away_s for it: so much less time is left
    assert 0 < got[0] <= deadline_ms - away_s * 1000, got
