"""The referee: runs ONE match between bot endpoints over gRPC and keeps its record (DESIGN.md, "Protocol sketch").

The referee is the gRPC *client* of every bot (``arena.v1.Bot``). For one match it

1. leases one ``grpc.aio`` channel per distinct endpoint (two seats of the same endpoint share it) from a pool
   (``arena.match.channels``: a worker's matches reuse its channels; a call that finds a bot unreachable makes the
   pool give the next match a fresh channel);
2. sends ``StartMatch`` to every seat, concurrently, under the short ``call_deadline_ms`` (a seat whose
   ``StartMatch`` fails gets a fault with ``decision=None`` and still plays: it is asked every decision like any
   other seat);
3. loops until the game is over: ``pending = engine.pending_seats(state)``; every pending seat that still plays
   is asked **concurrently** (``asyncio.gather``) with ``Decide`` under a gRPC deadline of ``deadline_ms``; each
   request carries only ``observe(state, seat)`` of that seat (never another seat's hand, the undealt cards or the
   seed; STYLE.md habit 3), the match id, the seat, the decision kind and the seat's request sequence number;
   when every answer (or fault) is in, the answers are applied in ascending seat order (a simultaneous
   reveal happens inside the engine once the last choice is applied);
4. sends ``EndMatch`` with the result to every seat that did not forfeit, concurrently, under ``call_deadline_ms``.

The referee names no game: it finds the game's plug-in in the registry (``arena_sdk.games.get_game``) and uses
its engine and codecs. Every answer is validated: the game's ``action_from_proto`` (a ``WireError`` is a
``"malformed"`` fault), then the engine's ``legal_actions`` (``"illegal"``). A call that fails is a fault by its
gRPC status: DEADLINE_EXCEEDED -> ``"timeout"``, UNAVAILABLE -> ``"unreachable"``, any other status ->
``"error"``. After a fault the engine's documented ``default_action`` is applied (each game documents its own).
A bad bot never crashes the referee (STYLE.md habit 4): ``run_match`` always completes the match and raises only
for bad arguments.

The match record (``MatchRecord``, JSON via ``to_dict``/``save``; in ``arena.match.record``, re-exported here with
``Fault``, ``Forfeit``, ``MatchResult``, ``Limits``, ``SeatSpec``, ``RecordError``) holds the
config, the seed or explicit deals, the limits, every decision in the order it was applied, every fault, every
forfeit and the result; ``arena.match.replay.replay`` re-simulates it and checks the forfeits too.

Failure policy
--------------

Every limit is a ``run_match`` keyword with its default in ``arena.core.config.DEFAULTS`` (shown in brackets). A fault
is recorded against its seat (``result.faults``); a forfeit ranks the seat last (``result.forfeits``,
``result.ranks``); the ladder rates ``result.ranks``. Markdown, for the README:

| What happens | What the referee does | Who is charged | What the ladder sees |
|---|---|---|---|
| Decide: no answer within `deadline_ms` [1000 ms] | fault `timeout`; the game's default action is applied | the seat | the ranks of the game as played |
| Decide: an illegal action, the wrong or no action field, undecodable bytes | fault `illegal` / `malformed`; default action | the seat | the ranks as played |
| Decide: the bot raises or aborts, or is down | fault `error` / `unreachable`; default action | the seat | the ranks as played |
| StartMatch fails or passes `call_deadline_ms` [2000 ms] | fault (no decision); the seat still plays | the seat | the ranks as played |
| EndMatch fails or passes `call_deadline_ms` | logged, not a fault (the result was final before); the record waits `call_deadline_ms` at most | nobody | the result |
| `max_faults` [10] faults of one seat in one match | the seat forfeits (`faults`): never called again (no Decide, no EndMatch); its remaining decisions get the default action (source `forfeit`, no more faults) | the seat | the seat ranked last, below every seat that did not forfeit, whatever its score (forfeited seats share the last rank) |
| `max_consecutive_timeouts` [3] timeouts in a row (StartMatch included) | the seat forfeits at once (`timeouts`), as above: a bot that stopped answering costs about 3 deadlines, not the whole match | the seat | the seat ranked last |
| The match passes `match_time_limit_s` [600 s] (checked before each round of decisions) | no seat is asked again; every remaining decision gets the default action; each seat still playing whose Decide time exceeds its share (`match_time_limit_s / seats`) forfeits (`time_limit`), the others' decisions get source `time_limit` | the seats over their share; nobody when no seat is (the referee itself was slow) | those seats ranked last; else the game's ranks after the default actions |
| Decide timed out while the referee's own event loop was late by more than `min(lag_threshold_ms [100], deadline_ms / 4)` | not a fault: the decision is asked again with the same sequence number and a fresh deadline, at most `lag_retries` [2] times (then it is a `timeout` fault); recorded as `retries` and `retry_lag_ms` on the decision | nobody | nothing |
| A worker, the referee or Redis crashes mid-match (the scheduler's part) | no record: the job stays pending and another worker plays the match again; after `max_deliveries` it is recorded as failed, unrated | nobody | only a finished match |

The referee's lag is measured by a task that sleeps 20 ms at a time and records how late it wakes up; a timeout
is excused when the loop was late by more than the threshold at any moment between the creation of the call and
the timeout (gRPC starts the deadline when the call is created and sends the request from the event loop, so a
late loop eats the bot's time; an answer that arrives while the loop is late is still received in time by gRPC's
own thread). A re-ask repeats the request with the same ``sequence`` (the protocol's "lets a bot detect repeats"),
so sequence numbers stay one per decision; ``replay`` checks each re-ask against ``lag_retries`` and the
threshold. The time used by a seat is the sum of ``latency_ms`` of its charged Decide calls (as the referee saw
them), so ``replay`` re-derives every time-limit forfeit from the record. With the defaults, a match against a bot
that never answers ends within about ``max_consecutive_timeouts`` x ``deadline_ms`` (when its ``StartMatch`` hangs
too, that is the first timeout of the row and costs ``call_deadline_ms``); the time limit is the backstop for a bot
that answers just in time, every time.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from arena.core.config import DEFAULTS
from arena.match.channels import BotChannels
from arena.match.record import (
    FAULT_KINDS,
    FORFEIT_REASONS,
    RECORD_VERSION,
    SOURCES,
    Fault,
    FaultTally,
    Forfeit,
    Limits,
    MatchRecord,
    MatchResult,
    RecordError,
    SeatSpec,
    _is_int,
    forfeit_ranks,
)
from arena.match.running import LoopLag, RunningMatch
from arena_sdk import wire
from arena_sdk.games import Game, get_game

__all__ = [
    "FAULT_KINDS", "FORFEIT_REASONS", "RECORD_VERSION", "SOURCES", "Fault", "FaultTally", "Forfeit", "Limits",
    "LoopLag", "MatchRecord", "MatchResult", "RecordError", "SeatSpec", "forfeit_ranks", "run_match",
    "run_match_sync",
]

# --- running a match -----------------------------------------------------------------------------------------


def _check_args(
    match_id: str, game: str, seats: Sequence[SeatSpec], config: Any, deadline_ms: int, call_deadline_ms: int
) -> tuple[Game, Any]:
    if not isinstance(match_id, str) or not match_id:
        raise ValueError(f"match_id must be a non-empty string, got {match_id!r}")
    engine = get_game(game)  # WireError (a ValueError) naming the known games
    info = engine.info
    if not info.min_players <= len(seats) <= info.max_players:
        raise ValueError(
            f"{info.title} needs {info.min_players}..{info.max_players} seats, got {len(seats)}"
        )
    for i, s in enumerate(seats):
        if not isinstance(s, SeatSpec) or not isinstance(s.name, str) or not isinstance(s.endpoint, str):
            raise ValueError(f"seats[{i}] must be a SeatSpec(name: str, endpoint: str), got {s!r}")
        if not s.name or not s.endpoint:
            raise ValueError(f"seats[{i}] needs a name and an endpoint 'host:port', got {s!r}")
    for name, value in (("deadline_ms", deadline_ms), ("call_deadline_ms", call_deadline_ms)):
        if not _is_int(value) or value < 1:
            raise ValueError(f"{name} must be a positive number of milliseconds, got {value!r}")
    if config is None:
        config = wire.config_from_dict(game, {})
    try:  # normalise and validate through the JSON form (one place for the rules of a config)
        config = wire.config_from_dict(game, wire.config_to_dict(game, config))
    except (AttributeError, TypeError) as exc:
        raise ValueError(f"config must be the {game} config dataclass, got {config!r}") from exc
    return engine, config


def _check_limits(max_faults: int, max_consecutive_timeouts: int, match_time_limit_s: float,
                  lag_threshold_ms: int, lag_retries: int) -> Limits:
    for name, value in (("max_faults", max_faults), ("max_consecutive_timeouts", max_consecutive_timeouts),
                        ("lag_threshold_ms", lag_threshold_ms), ("lag_retries", lag_retries)):
        if not _is_int(value) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0 (0 = no limit), got {value!r}")
    if (isinstance(match_time_limit_s, bool) or not isinstance(match_time_limit_s, (int, float))
            or not math.isfinite(match_time_limit_s) or match_time_limit_s < 0):
        raise ValueError(f"match_time_limit_s must be a number of seconds >= 0 (0 = none), got {match_time_limit_s!r}")
    return Limits(max_faults, max_consecutive_timeouts, float(match_time_limit_s), lag_threshold_ms, lag_retries)


async def run_match(
    match_id: str,
    game: str,
    seats: Sequence[SeatSpec],
    config: Any = None,
    *,
    seed: int | None = None,
    deals: Sequence[Any] = (),
    deadline_ms: int = DEFAULTS.deadline_ms,
    call_deadline_ms: int = DEFAULTS.call_deadline_ms,
    max_faults: int = DEFAULTS.max_faults,
    max_consecutive_timeouts: int = DEFAULTS.max_consecutive_timeouts,
    match_time_limit_s: float = DEFAULTS.match_time_limit_s,
    lag_threshold_ms: int = DEFAULTS.lag_threshold_ms,
    lag_retries: int = DEFAULTS.lag_retries,
    on_progress: Callable[[Any, Any], None] | None = None,
    channels: BotChannels | None = None,
) -> MatchRecord:
    """Play one match between the bots at ``seats`` (seat order) and return its record.

    Args:
        match_id: unique id, echoed in every call to the bots.
        game: game id (a key of the game registry). seats: the game's seat count of ``SeatSpec`` (2..10); several
            seats may share an endpoint.
        config: the game's config dataclass; None means the defaults.
        seed: seed of the deals; deals: the game's explicit deals (see its ``new_game``). At least one of them is
            needed; a seed and deals that cannot carry a whole game are refused before any bot is called.
        deadline_ms: gRPC deadline of every ``Decide`` call, milliseconds.
        call_deadline_ms: gRPC deadline of ``StartMatch`` and ``EndMatch``, milliseconds.
        max_faults: a seat forfeits at its ``max_faults``-th fault of the match; 0 = never.
        max_consecutive_timeouts: a seat forfeits at this many timeouts in a row; 0 = never.
        match_time_limit_s: wall-clock limit of the match, seconds; 0 = none.
        lag_threshold_ms, lag_retries: a Decide timeout while the referee's event loop was late by more than
            ``min(lag_threshold_ms, deadline_ms / 4)`` ms is asked again, at most ``lag_retries`` times.
        (See "Failure policy" in the module docstring; defaults in ``arena.core.config.DEFAULTS``.)
        on_progress: called as ``on_progress(state_before, state_after)`` (engine states) after every round of
            decisions is applied, e.g. to show a game live; an exception it raises is logged, never fatal.
        channels: the pool of channels to bots to lease from (``arena.match.channels.BotChannels``, of this event
            loop; a worker keeps one for all its matches); None: the match opens its own and closes them at its end.

    Every bot failure becomes a ``Fault`` and the engine's default action, and possibly a ``Forfeit`` (see the
    module docstring); this function never raises because of a bot. Raises ``ValueError`` (``RulesError`` for
    the engine's checks) for bad arguments: unknown game, a seat count the game does not allow, a bad config,
    neither seed nor deals, an invalid explicit deal, a non-positive deadline, a negative limit. Cancelling the
    task cancels the match (no record).
    """
    seats = tuple(seats)
    engine, config = _check_args(match_id, game, seats, config, deadline_ms, call_deadline_ms)
    limits = _check_limits(max_faults, max_consecutive_timeouts, match_time_limit_s, lag_threshold_ms, lag_retries)
    deals = tuple(deals)
    state = engine.new_game(len(seats), config, seed=seed, deals=deals)  # RulesError (a ValueError) on bad input
    started_at = time.time()
    t0 = time.monotonic()
    match = RunningMatch(match_id, game, engine, config, seats, deadline_ms, call_deadline_ms, limits, state, started=t0)
    match.on_progress = on_progress
    own = channels is None  # no pool: this match's own channels, closed when it ends
    pool = BotChannels() if channels is None else channels
    monitor = asyncio.ensure_future(match.lag.run())
    try:
        match.open(pool)
        await match.start()
        await match.play()
        result = match.result()
        await match.end(result)
    finally:
        monitor.cancel()
        match.close()
        if own:
            await pool.close()
    return MatchRecord(
        match_id=match_id,
        game=game,
        config=wire.config_to_dict(game, config),
        seed=seed,
        deals=[engine.deal_to_dict(d) for d in deals],
        seats=seats,
        deadline_ms=deadline_ms,
        decisions=tuple(match.decisions),
        faults=tuple(match.faults),
        result=result,
        started_at=started_at,
        duration_s=round(time.monotonic() - t0, 6),
        forfeits=tuple(match.forfeits),
        limits=limits,
        time_limit_at=match.time_limit_at,
    )


def run_match_sync(
    match_id: str,
    game: str,
    seats: Sequence[SeatSpec],
    config: Any = None,
    *,
    seed: int | None = None,
    deals: Sequence[Any] = (),
    deadline_ms: int = DEFAULTS.deadline_ms,
    call_deadline_ms: int = DEFAULTS.call_deadline_ms,
    max_faults: int = DEFAULTS.max_faults,
    max_consecutive_timeouts: int = DEFAULTS.max_consecutive_timeouts,
    match_time_limit_s: float = DEFAULTS.match_time_limit_s,
    lag_threshold_ms: int = DEFAULTS.lag_threshold_ms,
    lag_retries: int = DEFAULTS.lag_retries,
    on_progress: Callable[[Any, Any], None] | None = None,
) -> MatchRecord:
    """``run_match`` in a fresh event loop (``asyncio.run``), for scripts, threads and the CLI. Same arguments,
    result and errors. Must not be called from a running event loop (use ``await run_match(...)`` there)."""
    return asyncio.run(
        run_match(match_id, game, seats, config, seed=seed, deals=deals, deadline_ms=deadline_ms,
                  call_deadline_ms=call_deadline_ms, max_faults=max_faults,
                  max_consecutive_timeouts=max_consecutive_timeouts, match_time_limit_s=match_time_limit_s,
                  lag_threshold_ms=lag_threshold_ms, lag_retries=lag_retries, on_progress=on_progress)
    )
