"""Replay: a match record is rebuilt from its config, seed and deals, every recorded decision applied in order and
checked against the rules and the referee's limits (``replay`` lists the checks)."""

from __future__ import annotations

from typing import Any

from arena.match.record import (
    ASKED_SOURCES,
    FAULT_KINDS,
    FaultTally,
    MatchRecord,
    _is_int,
    _is_number,
    bot_time_ms,
    describe_legal,
    forfeit_ranks,
    pending_kind,
)
from arena_sdk import wire
from arena_sdk.games import GAMES, Game


class _Replay:
    """The re-simulation of one record, checked decision by decision (``replay`` lists the checks); each check
    appends its differences, one sentence each, to ``diffs``."""

    def __init__(self, record: MatchRecord, engine: Game, state: Any) -> None:
        self.record, self.engine, self.state = record, engine, state
        self.n = n = len(record.seats)
        self.limits = limits = record.limits
        self.diffs: list[str] = []
        self.faults_at: dict[int, list[int]] = {}  # decision index -> indices of the faults that point at it
        for k, f in enumerate(record.faults):
            if f.decision is not None:
                self.faults_at.setdefault(f.decision, []).append(k)
        self.tally = FaultTally(n, limits)
        self.forfeited: dict[int, str] = {}  # seat -> reason, as re-derived
        self.derived: list[tuple[int, str, int | None]] = []  # (seat, reason, fault index)
        self.sequence = [0] * n
        self.threshold = limits.excuse_threshold_ms(record.deadline_ms)
        self.cut = self._time_limit_at()

    def _time_limit_at(self) -> int | None:
        cut = self.record.time_limit_at
        if cut is not None and not (self.limits.match_time_limit_s > 0 and _is_int(cut)
                                    and 0 <= cut < len(self.record.decisions)):
            self.diffs.append(f"time_limit_at {cut!r}: the record has no time limit or no such decision")
            return None
        return cut

    def count_fault(self, k: int) -> None:
        """Count fault ``k`` of the record (``FaultTally``); a forfeit it reaches is re-derived."""
        f = self.record.faults[k]
        if not (_is_int(f.seat) and 0 <= f.seat < self.n) or f.seat in self.forfeited:
            return
        reason = self.tally.fault(f.seat, f.kind)
        if reason is not None:
            self.forfeited[f.seat] = reason
            self.derived.append((f.seat, reason, k))

    def time_limit_forfeits(self, cut: int) -> None:
        """At ``time_limit_at``: each seat still playing that used more than its share of the time forfeits."""
        share = self.limits.time_share_ms(self.n)
        for s in range(self.n):
            if s not in self.forfeited and bot_time_ms(self.record.decisions, s, cut) > share:
                self.forfeited[s] = "time_limit"
                self.derived.append((s, "time_limit", None))

    def play(self) -> int | None:
        """Check and apply every recorded decision in order; the index of the decision the re-simulation stopped
        at (too many decisions, another seat's, an unreadable or illegal action), or None."""
        for k, f in enumerate(self.record.faults):
            if f.decision is None:  # StartMatch faults come before any decision
                self.count_fault(k)
        for i, dec in enumerate(self.record.decisions):
            if i == self.cut:
                self.time_limit_forfeits(i)
            if not self.decision(i, dec):
                return i
        return None

    def decision(self, i: int, dec: dict[str, Any]) -> bool:
        """Check decision ``i`` and apply it; False when the re-simulation cannot go on."""
        engine, where = self.engine, f"decision {i}"
        turn = self._turn(i, dec, where)
        if turn is None:
            return False
        seat, kind, hand, turn_no = turn
        try:
            action = engine.action_from_dict(kind, dec.get("action"))
        except wire.WireError as exc:
            self.diffs.append(f"{where}: unreadable action for seat {seat}: {exc}")
            return False
        legal = engine.legal_actions(self.state, seat)
        if action not in legal:
            self.diffs.append(f"{where}: seat {seat}'s action {engine.action_to_dict(action)} ({kind}, hand {hand} "
                              f"turn {turn_no}) is not legal; {describe_legal(engine, legal)}")
            return False
        source = dec.get("source")
        self._source(i, seat, source, where)
        if source in ASKED_SOURCES:
            self._asked(dec, seat, where)
        else:
            self._unasked(i, dec, source, where)
        self._action_and_faults(i, seat, hand, turn_no, source, action, where)
        if source == "bot" and seat not in self.forfeited:
            self.tally.answered(seat)
        if source in ASKED_SOURCES:
            for k in self.faults_at.get(i, ()):
                self.count_fault(k)
        self.state = engine.apply(self.state, seat, action)
        return True

    def _turn(self, i: int, dec: dict[str, Any], where: str) -> tuple[int, str, int, int] | None:
        """The seat, kind, hand and turn of decision ``i`` as the game has them (recorded ones that differ are
        differences); None when the game is over or another seat is asked."""
        engine, state = self.engine, self.state
        if engine.is_over(state):
            self.diffs.append(f"{where}: the game is already over; the record holds "
                              f"{len(self.record.decisions) - i} decision(s) too many")
            return None
        pending = tuple(engine.pending_seats(state))
        recorded_seat = dec.get("seat")
        if not _is_int(recorded_seat) or recorded_seat not in pending:
            self.diffs.append(f"{where}: recorded for seat {recorded_seat!r}, but the game asks seat(s) "
                              f"{list(pending)}")
            return None
        seat = int(recorded_seat)
        if seat != pending[0]:
            self.diffs.append(f"{where}: seat {seat} applied before seat {pending[0]} (the referee applies seats "
                              "in ascending order)")
        kind = pending_kind(engine, state, seat)
        if dec.get("kind") != kind:
            self.diffs.append(f"{where}: recorded kind {dec.get('kind')!r}, the game asks seat {seat} for {kind}")
        hand, turn = engine.position(state)
        if (dec.get("hand"), dec.get("turn")) != (hand, turn):
            self.diffs.append(f"{where}: recorded at hand {dec.get('hand')!r} turn {dec.get('turn')!r}, "
                              f"the game is at hand {hand} turn {turn}")
        return seat, kind, hand, turn

    def _source(self, i: int, seat: int, source: Any, where: str) -> None:
        """A forfeited seat's decisions are ``"forfeit"``, after the time limit ``"time_limit"``, else asked."""
        forfeited = seat in self.forfeited
        past_limit = self.cut is not None and i >= self.cut
        expected = ("forfeit",) if forfeited else ("time_limit",) if past_limit else ASKED_SOURCES
        if source not in expected:
            why = (f"seat {seat} has forfeited ({self.forfeited[seat]})" if forfeited
                   else "the match has passed its time limit" if past_limit
                   else f"seat {seat} is still playing")
            self.diffs.append(f"{where}: source {source!r}, but {why}: expected {' or '.join(map(repr, expected))}")

    def _asked(self, dec: dict[str, Any], seat: int, where: str) -> None:
        """An asked decision has the seat's next sequence number, and its re-asks are within the limits."""
        if dec.get("seq") != self.sequence[seat]:
            self.diffs.append(f"{where}: recorded sequence {dec.get('seq')!r} for seat {seat}, "
                              f"expected {self.sequence[seat]}")
        self.sequence[seat] += 1
        retries = dec.get("retries", 0)
        if not retries:
            return
        lags = dec.get("retry_lag_ms") or []
        if retries > self.limits.lag_retries:
            self.diffs.append(f"{where}: asked {retries} more time(s), the limit is lag_retries "
                              f"{self.limits.lag_retries}")
        if any(not _is_number(v) or v <= self.threshold for v in lags):
            self.diffs.append(f"{where}: a re-ask excused by a referee lag of {lags} ms, not above the "
                              f"threshold {self.threshold:g} ms")

    def _unasked(self, i: int, dec: dict[str, Any], source: Any, where: str) -> None:
        """A decision nobody was asked has no sequence number, latency, re-ask or fault."""
        if dec.get("seq") is not None or dec.get("latency_ms") is not None or "retries" in dec:
            self.diffs.append(f"{where}: a {source!r} decision was not asked, yet it has a sequence number, "
                              "a latency or re-asks")
        if self.faults_at.get(i):
            self.diffs.append(f"{where}: a {source!r} decision was not asked, yet a fault points at it")

    def _action_and_faults(self, i: int, seat: int, hand: int, turn: int, source: Any, action: Any,
                           where: str) -> None:
        """Any source but ``"bot"`` applied the default action, a ``"default"`` one after a fault, a ``"bot"``
        one with none; the faults that point at the decision name its seat, hand and turn."""
        engine, at = self.engine, self.faults_at.get(i)
        if source != "bot":
            default = engine.default_action(self.state, seat)
            if action != default:
                self.diffs.append(f"{where}: recorded as the default action {engine.action_to_dict(action)}, but "
                                  f"the default is {engine.action_to_dict(default)}")
            if source == "default" and not at:
                self.diffs.append(f"{where}: a default action without a fault")
        elif at:
            self.diffs.append(f"{where}: the bot's own action, yet a fault points at it")
        for k in at or ():
            f = self.record.faults[k]
            if (f.seat, f.hand, f.turn) != (seat, hand, turn):
                self.diffs.append(f"fault {f.kind!r} at {where}: recorded for seat {f.seat} hand {f.hand} turn "
                                  f"{f.turn}, the decision is seat {seat} hand {hand} turn {turn}")

    def check_faults(self) -> None:
        """Every fault has a known kind, a seat of the match and an existing decision; the result counts them."""
        record, n = self.record, self.n
        counts = [0] * n
        for f in record.faults:
            if f.kind not in FAULT_KINDS:
                self.diffs.append(f"fault of unknown kind {f.kind!r}")
            if not (_is_int(f.seat) and 0 <= f.seat < n):
                self.diffs.append(f"fault {f.kind!r} names seat {f.seat!r}, the match has seats 0..{n - 1}")
            if f.decision is not None and not 0 <= f.decision < len(record.decisions):
                self.diffs.append(f"fault {f.kind!r} of seat {f.seat} points at decision {f.decision}, which does "
                                  "not exist")
        for f in record.faults:
            if _is_int(f.seat) and 0 <= f.seat < n:
                counts[f.seat] += 1
        if tuple(record.result.faults) != tuple(counts):
            self.diffs.append(f"result.faults {list(record.result.faults)} != faults recorded per seat {counts}")

    def check_forfeits(self) -> None:
        """The recorded forfeits are the re-derived ones, in the record and in its result."""
        record, n = self.record, self.n
        recorded = [(f.seat, f.reason, f.fault) for f in record.forfeits]
        for x in recorded:
            if x not in self.derived:
                self.diffs.append(f"forfeit of seat {x[0]} ({x[1]}, fault {x[2]}) recorded, but the re-simulation "
                                  "has no such forfeit")
        for x in self.derived:
            if x not in recorded:
                self.diffs.append(f"seat {x[0]} forfeited ({x[1]}, fault {x[2]}) in the re-simulation, but the "
                                  "record does not say so")
        seat_forfeits = tuple(self.forfeited.get(s) for s in range(n))
        if (tuple(record.result.forfeits) or (None,) * n) != seat_forfeits:
            self.diffs.append(f"result.forfeits: recorded {list(record.result.forfeits)}, re-simulated "
                              f"{list(seat_forfeits)}")

    def check_outcome(self) -> None:
        """The game is over after the last decision, with the recorded scores and ranks after forfeits."""
        engine, record, state = self.engine, self.record, self.state
        if not engine.is_over(state):
            self.diffs.append(f"the record ends after {len(record.decisions)} decision(s) but the game is not over "
                              f"(it asks seat(s) {list(engine.pending_seats(state))})")
            return
        outcome = engine.outcome(state)
        scores = tuple(float(s) for s in outcome.scores)
        if tuple(record.result.scores) != scores:
            self.diffs.append(f"result.scores: recorded {list(record.result.scores)}, re-simulated {list(scores)}")
        ranks = forfeit_ranks(outcome.ranks, [s in self.forfeited for s in range(self.n)])
        if tuple(record.result.ranks) != ranks:
            self.diffs.append(f"result.ranks: recorded {list(record.result.ranks)}, re-simulated {list(ranks)} "
                              f"(the game's {list(outcome.ranks)} after forfeits)")


def replay_differences(record: MatchRecord) -> list[str]:
    """Every way ``record`` differs from its re-simulation, one sentence each ([] when none): the check behind
    ``replay``, which documents it and catches what this raises for a tampered record."""
    engine = GAMES.get(record.game)
    if engine is None:
        return [f"unknown game {record.game!r}"]
    try:
        config = wire.config_from_dict(record.game, record.config)
        deals = tuple(engine.deal_from_dict(d) for d in record.deals)
        state = engine.new_game(len(record.seats), config, seed=record.seed, deals=deals)
    except (ValueError, TypeError, AttributeError) as exc:
        return [f"cannot rebuild the game from the record's config, seed and deals: {exc}"]
    check = _Replay(record, engine, state)
    stopped_at = check.play()
    check.check_faults()
    if stopped_at is not None:
        check.diffs.append(f"re-simulation stopped at decision {stopped_at}; the result and the forfeits were not "
                           "compared")
        return check.diffs
    check.check_forfeits()
    check.check_outcome()
    return check.diffs


def replay(record: MatchRecord) -> list[str]:
    """Re-simulate ``record`` and list, for a person, every way it differs from the re-simulation.

    The game is rebuilt from the record's config, seed and deals; the recorded actions are applied in order.
    Checked per decision: it was asked of that seat (the referee applies a batch of simultaneous decisions in
    ascending seat order), with that kind, at that hand and turn; the action is legal. A decision the seat was
    asked has the seat's next sequence number, a ``"default"`` action equals the engine's default and has a fault
    pointing at it, a ``"bot"`` one has none, and its re-asks are within the limits (at most ``lag_retries``,
    each excused by a lag above the threshold). Forfeits are re-derived from the faults in the order they
    happened (``FaultTally``, under the record's limits) and from ``time_limit_at`` (a seat still playing then
    forfeits when its Decide time exceeded its share); after a seat's forfeit each of its decisions must be
    ``"forfeit"`` (the default, not asked, no fault), after ``time_limit_at`` every other seat's decision must
    be ``"time_limit"``; a recorded forfeit that did not happen, or a forfeit the record hides, is a difference.
    At the end: the game is over exactly after the last decision, and the scores, the ranks after forfeits
    (``forfeit_ranks``), the fault counts and the forfeits equal the recorded result. An illegal or unreadable
    action stops the re-simulation (later decisions cannot be checked). Returns [] when the record is identical
    to the re-simulation. Never raises for a tampered record.
    """
    try:
        return replay_differences(record)
    except Exception as exc:  # noqa: BLE001 - a hand-edited record can hold anything; report, never crash
        return [f"cannot replay the record: {type(exc).__name__}: {exc}"]
