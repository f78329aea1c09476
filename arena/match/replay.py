"""Replay: a match record is rebuilt from its config, seed and deals,
every recorded decision applied in order and checked against the rules and the referee's limits (see
``replay`` for the full list of checks)."""

from __future__ import annotations

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
from arena_sdk.games import GAMES


def replay_differences(record: MatchRecord) -> list[str]:
    """Every way ``record`` differs from its re-simulation, one sentence each ([] when none): the check behind
    ``replay``, which documents it and catches what this raises for a tampered record."""
    diffs: list[str] = []
    engine = GAMES.get(record.game)
    if engine is None:
        return [f"unknown game {record.game!r}"]
    n = len(record.seats)
    try:
        config = wire.config_from_dict(record.game, record.config)
        deals = tuple(engine.deal_from_dict(d) for d in record.deals)
        state = engine.new_game(n, config, seed=record.seed, deals=deals)
    except (ValueError, TypeError, AttributeError) as exc:
        return [f"cannot rebuild the game from the record's config, seed and deals: {exc}"]

    limits = record.limits
    faults_at: dict[int, list[int]] = {}
    for k, f in enumerate(record.faults):
        if f.decision is not None:
            faults_at.setdefault(f.decision, []).append(k)
    tally = FaultTally(n, limits)
    forfeited: dict[int, str] = {}  # seat -> reason, as re-derived
    derived: list[tuple[int, str, int | None]] = []  # (seat, reason, fault index)

    def count_fault(k: int) -> None:
        f = record.faults[k]
        if not (_is_int(f.seat) and 0 <= f.seat < n) or f.seat in forfeited:
            return
        reason = tally.fault(f.seat, f.kind)
        if reason is not None:
            forfeited[f.seat] = reason
            derived.append((f.seat, reason, k))

    for k, f in enumerate(record.faults):
        if f.decision is None:  # StartMatch faults come before any decision
            count_fault(k)

    cut = record.time_limit_at
    if cut is not None and not (limits.match_time_limit_s > 0 and _is_int(cut) and 0 <= cut < len(record.decisions)):
        diffs.append(f"time_limit_at {cut!r}: the record has no time limit or no such decision")
        cut = None
    threshold = limits.excuse_threshold_ms(record.deadline_ms)
    sequence = [0] * n
    stopped = False
    i = 0
    for i, dec in enumerate(record.decisions):
        where = f"decision {i}"
        if i == cut:
            share = limits.time_share_ms(n)
            for s in range(n):
                if s not in forfeited and bot_time_ms(record.decisions, s, cut) > share:
                    forfeited[s] = "time_limit"
                    derived.append((s, "time_limit", None))
        if engine.is_over(state):
            diffs.append(f"{where}: the game is already over; the record holds {len(record.decisions) - i} "
                         "decision(s) too many")
            stopped = True
            break
        pending = tuple(engine.pending_seats(state))
        recorded_seat = dec.get("seat")
        if not _is_int(recorded_seat) or recorded_seat not in pending:
            diffs.append(f"{where}: recorded for seat {recorded_seat!r}, but the game asks seat(s) {list(pending)}")
            stopped = True
            break
        seat = int(recorded_seat)
        if seat != pending[0]:
            diffs.append(f"{where}: seat {seat} applied before seat {pending[0]} (the referee applies seats in "
                         "ascending order)")
        kind = pending_kind(engine, state, seat)
        if dec.get("kind") != kind:
            diffs.append(f"{where}: recorded kind {dec.get('kind')!r}, the game asks seat {seat} for {kind}")
        hand, turn = engine.position(state)
        if (dec.get("hand"), dec.get("turn")) != (hand, turn):
            diffs.append(f"{where}: recorded at hand {dec.get('hand')!r} turn {dec.get('turn')!r}, "
                         f"the game is at hand {hand} turn {turn}")
        try:
            action = engine.action_from_dict(kind, dec.get("action"))
        except wire.WireError as exc:
            diffs.append(f"{where}: unreadable action for seat {seat}: {exc}")
            stopped = True
            break
        legal = engine.legal_actions(state, seat)
        if action not in legal:
            diffs.append(f"{where}: seat {seat}'s action {engine.action_to_dict(action)} ({kind}, hand {hand} "
                         f"turn {turn}) is not legal; {describe_legal(engine, legal)}")
            stopped = True
            break
        source = dec.get("source")
        expected = ("forfeit",) if seat in forfeited else ("time_limit",) if cut is not None and i >= cut \
            else ASKED_SOURCES
        if source not in expected:
            why = (f"seat {seat} has forfeited ({forfeited[seat]})" if seat in forfeited
                   else "the match has passed its time limit" if expected == ("time_limit",)
                   else f"seat {seat} is still playing")
            diffs.append(f"{where}: source {source!r}, but {why}: expected {' or '.join(map(repr, expected))}")
        if source in ASKED_SOURCES:
            if dec.get("seq") != sequence[seat]:
                diffs.append(f"{where}: recorded sequence {dec.get('seq')!r} for seat {seat}, "
                             f"expected {sequence[seat]}")
            sequence[seat] += 1
            retries = dec.get("retries", 0)
            if retries:
                lags = dec.get("retry_lag_ms") or []
                if retries > limits.lag_retries:
                    diffs.append(f"{where}: asked {retries} more time(s), the limit is lag_retries "
                                 f"{limits.lag_retries}")
                if any(not _is_number(v) or v <= threshold for v in lags):
                    diffs.append(f"{where}: a re-ask excused by a referee lag of {lags} ms, not above the "
                                 f"threshold {threshold:g} ms")
        else:
            if dec.get("seq") is not None or dec.get("latency_ms") is not None or "retries" in dec:
                diffs.append(f"{where}: a {source!r} decision was not asked, yet it has a sequence number, "
                             "a latency or re-asks")
            if faults_at.get(i):
                diffs.append(f"{where}: a {source!r} decision was not asked, yet a fault points at it")
        if source != "bot":
            default = engine.default_action(state, seat)
            if action != default:
                diffs.append(f"{where}: recorded as the default action {engine.action_to_dict(action)}, but the "
                             f"default is {engine.action_to_dict(default)}")
            if source == "default" and not faults_at.get(i):
                diffs.append(f"{where}: a default action without a fault")
        elif faults_at.get(i):
            diffs.append(f"{where}: the bot's own action, yet a fault points at it")
        for k in faults_at.get(i, ()):
            f = record.faults[k]
            if (f.seat, f.hand, f.turn) != (seat, hand, turn):
                diffs.append(f"fault {f.kind!r} at {where}: recorded for seat {f.seat} hand {f.hand} turn "
                             f"{f.turn}, the decision is seat {seat} hand {hand} turn {turn}")
        if source == "bot" and seat not in forfeited:
            tally.answered(seat)
        if source in ASKED_SOURCES:
            for k in faults_at.get(i, ()):
                count_fault(k)
        state = engine.apply(state, seat, action)

    for f in record.faults:
        if f.kind not in FAULT_KINDS:
            diffs.append(f"fault of unknown kind {f.kind!r}")
        if not (_is_int(f.seat) and 0 <= f.seat < n):
            diffs.append(f"fault {f.kind!r} names seat {f.seat!r}, the match has seats 0..{n - 1}")
        if f.decision is not None and not 0 <= f.decision < len(record.decisions):
            diffs.append(f"fault {f.kind!r} of seat {f.seat} points at decision {f.decision}, which does not exist")

    counts = [0] * n
    for f in record.faults:
        if _is_int(f.seat) and 0 <= f.seat < n:
            counts[f.seat] += 1
    if tuple(record.result.faults) != tuple(counts):
        diffs.append(f"result.faults {list(record.result.faults)} != faults recorded per seat {counts}")

    if stopped:
        diffs.append(f"re-simulation stopped at decision {i}; the result and the forfeits were not compared")
        return diffs
    recorded = [(f.seat, f.reason, f.fault) for f in record.forfeits]
    for x in recorded:
        if x not in derived:
            diffs.append(f"forfeit of seat {x[0]} ({x[1]}, fault {x[2]}) recorded, but the re-simulation has no "
                         "such forfeit")
    for x in derived:
        if x not in recorded:
            diffs.append(f"seat {x[0]} forfeited ({x[1]}, fault {x[2]}) in the re-simulation, but the record "
                         "does not say so")
    seat_forfeits = tuple(forfeited.get(s) for s in range(n))
    if (tuple(record.result.forfeits) or (None,) * n) != seat_forfeits:
        diffs.append(f"result.forfeits: recorded {list(record.result.forfeits)}, re-simulated "
                     f"{list(seat_forfeits)}")
    if not engine.is_over(state):
        diffs.append(f"the record ends after {len(record.decisions)} decision(s) but the game is not over "
                     f"(it asks seat(s) {list(engine.pending_seats(state))})")
        return diffs
    outcome = engine.outcome(state)
    scores = tuple(float(s) for s in outcome.scores)
    if tuple(record.result.scores) != scores:
        diffs.append(f"result.scores: recorded {list(record.result.scores)}, re-simulated {list(scores)}")
    ranks = forfeit_ranks(outcome.ranks, [s in forfeited for s in range(n)])
    if tuple(record.result.ranks) != ranks:
        diffs.append(f"result.ranks: recorded {list(record.result.ranks)}, re-simulated {list(ranks)} (the game's "
                     f"{list(outcome.ranks)} after forfeits)")
    return diffs


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
