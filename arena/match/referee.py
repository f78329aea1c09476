"""The referee: runs ONE match between bot endpoints over gRPC and keeps its record (DESIGN.md, "Protocol sketch").

The referee is the gRPC *client* of every bot (``arena.v1.Bot``). For one match it

1. leases one ``grpc.aio`` channel per distinct endpoint (two seats of the same endpoint share it) from a pool
   (``arena.match.channels``: a worker's matches reuse its channels; a call that finds a bot unreachable makes the
   pool give the next match a fresh channel);
2. sends ``StartMatch`` to every seat, concurrently, under the short ``call_deadline_ms`` (a seat whose
   ``StartMatch`` fails gets a fault with ``decision=None`` and still plays: it is asked every decision like any
   other seat);
3. loops until the game is over: ``pending = engine.pending_seats(state)``; every pending seat that still plays
   is asked **concurrently** (every ``Decide`` call started before any is awaited) under a gRPC deadline of
   ``deadline_ms``; each request carries only ``observe(state, seat)`` of that seat (never another seat's hand,
   the undealt cards or the seed; STYLE.md habit 3), the match id, the seat, the decision kind and the seat's
   request sequence number; when every answer (or fault) is in, the answers are applied in ascending seat order
   (a simultaneous reveal happens inside the engine once the last choice is applied);
4. sends ``EndMatch`` with the result to every seat that did not forfeit, concurrently, under ``call_deadline_ms``.

The referee names no game: it finds the game's plug-in in the registry (``arena_sdk.games.get_game``) and uses
its engine and codecs. Every answer is validated: the game's ``action_from_proto`` (a ``WireError`` is a
``"malformed"`` fault), then the engine's ``legal_actions`` (``"illegal"``). A call that fails is a fault by its
gRPC status: DEADLINE_EXCEEDED -> ``"timeout"``, UNAVAILABLE -> ``"unreachable"``, any other status ->
``"error"``. After a fault the engine's documented ``default_action`` is applied (each game documents its own).
A bad bot never crashes the referee (STYLE.md habit 4): ``run_match`` always completes the match and raises only
for bad arguments.

The match record (``MatchRecord``, JSON via ``to_dict``/``save``; in ``arena.match.record``, re-exported here with
``Fault``, ``Forfeit``, ``MatchResult``, ``Limits``, ``SeatSpec`` and ``RecordError``) holds the config, the seed or
explicit deals, the limits, every decision in the order it was applied, every fault, every forfeit and the result;
``arena.match.replay.replay`` re-simulates it and checks the forfeits too.

The deadlines and limits of a match are one ``RefereeOptions`` (``arena.match.options``; defaults in
``arena.core.config.DEFAULTS``). What each of them does to a seat, who is charged and what the ladder sees is the
failure policy: ``docs/failure-policy.md``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from arena.match.channels import BotChannels
from arena.match.loop_lag import LoopLag, hold_loop_lag, release_loop_lag
from arena.match.options import RefereeOptions
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
    forfeit_ranks,
)
from arena.match.running import RunningMatch, log
from arena_sdk import wire
from arena_sdk.games import Game, get_game

__all__ = [
    "FAULT_KINDS", "FORFEIT_REASONS", "RECORD_VERSION", "SOURCES", "Fault", "FaultTally", "Forfeit", "Limits",
    "LoopLag", "MatchRecord", "MatchResult", "RecordError", "RefereeOptions", "SeatSpec", "forfeit_ranks",
    "run_match", "run_match_sync",
]

# --- running a match -----------------------------------------------------------------------------------------


def check_match(match_id: str, game: str, seats: Sequence[SeatSpec], config: Any) -> tuple[Game, Any]:
    """The game's plug-in and the normalised config of a match; raises ``ValueError`` naming the bad argument."""
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
    if config is None:
        config = wire.config_from_dict(game, {})
    try:  # normalise and validate through the JSON form (one place for the rules of a config)
        config = wire.config_from_dict(game, wire.config_to_dict(game, config))
    except (AttributeError, TypeError) as exc:
        raise ValueError(f"config must be the {game} config dataclass, got {config!r}") from exc
    return engine, config


async def run_match(
    match_id: str,
    game: str,
    seats: Sequence[SeatSpec],
    config: Any = None,
    *,
    seed: int | None = None,
    deals: Sequence[Any] = (),
    options: RefereeOptions | None = None,
    on_progress: Callable[[Any, Any], None] | None = None,
    channels: BotChannels | None = None,
    seat_seeds: Sequence[int] = (),
    on_start: Callable[[list[dict[str, Any]], list[Fault], list[Forfeit]], None] | None = None,
) -> MatchRecord:
    """Play one match between the bots at ``seats`` (seat order) and return its record.

    Args:
        match_id: unique id, echoed in every call to the bots.
        game: game id (a key of the game registry). seats: the game's seat count of ``SeatSpec`` (2..10); several
            seats may share an endpoint.
        config: the game's config dataclass; None means the defaults.
        seed: seed of the deals; deals: the game's explicit deals (see its ``new_game``). At least one of them is
            needed; a seed and deals that cannot carry a whole game are refused before any bot is called.
        options: the deadlines and limits (``RefereeOptions``; None: ``arena.core.config.DEFAULTS``); what they do
            to a seat: ``docs/failure-policy.md``.
        on_progress: called as ``on_progress(state_before, state_after)`` (engine states) after every round of
            decisions is applied, e.g. to show a game live; an exception it raises is logged, never fatal.
        channels: the pool of channels to bots to lease from (``arena.match.channels.BotChannels``, of this event
            loop; a worker keeps one for all its matches); None: the match opens its own and closes them at its end.
        seat_seeds: one seed per seat, 0 .. 2**63-1, for its bot's own randomness; each seat's ``StartMatch``
            carries its own (``StartMatchRequest.seat_seed``), never another's; the record keeps them. (): none sent.
        on_start: called once before the first call to a bot as ``on_start(decisions, faults, forfeits)`` with the
            match's own growing lists (the record's JSON form of each decision, ``Fault`` and ``Forfeit``), to
            follow the match as it is played (a worker publishes them for the match viewer); read them, never
            change them. Between two awaits of the match they hold whole rounds only. An exception it raises is
            logged, never fatal.

    Every bot failure becomes a ``Fault`` and the engine's default action, and possibly a ``Forfeit``
    (``docs/failure-policy.md``); this function never raises because of a bot. Raises ``ValueError``
    (``RulesError`` for the engine's checks) for bad arguments: unknown game, a seat count the game does not allow,
    a bad config, neither seed nor deals, an invalid explicit deal, seat seeds not one per seat in 0 .. 2**63-1.
    Cancelling the task cancels the match (no record).
    """
    options = RefereeOptions() if options is None else options
    seats = tuple(seats)
    engine, config = check_match(match_id, game, seats, config)
    seat_seeds = tuple(seat_seeds)
    if seat_seeds and (len(seat_seeds) != len(seats) or not all(
            isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**63 for x in seat_seeds)):
        raise ValueError(f"seat_seeds must be one integer 0..2**63-1 per seat ({len(seats)}), got {seat_seeds!r}")
    deals = tuple(deals)
    state = engine.new_game(len(seats), config, seed=seed, deals=deals)  # RulesError (a ValueError) on bad input
    started_at = time.time()
    t0 = time.monotonic()
    match = RunningMatch(match_id, game, engine, config, seats, options, state, lag=hold_loop_lag(), started=t0,
                         seat_seeds=seat_seeds)
    match.on_progress = on_progress
    if on_start is not None:
        try:
            on_start(match.decisions, match.faults, match.forfeits)
        except Exception:  # an observer never stops a match
            log.exception("match %s: the on_start observer raised", match_id)
    own = channels is None  # no pool: this match's own channels, closed when it ends
    pool = BotChannels() if channels is None else channels
    try:
        match.open(pool)
        await match.choose_paths()
        await match.start()
        await match.play()
        result = match.result()
        await match.end(result)
    finally:
        release_loop_lag(match.lag)
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
        deadline_ms=options.deadline_ms,
        decisions=tuple(match.decisions),
        faults=tuple(match.faults),
        result=result,
        started_at=started_at,
        duration_s=round(time.monotonic() - t0, 6),
        forfeits=tuple(match.forfeits),
        limits=match.limits,
        time_limit_at=match.time_limit_at,
        seat_seeds=seat_seeds,
        transports=match.transports(),
    )


def run_match_sync(
    match_id: str,
    game: str,
    seats: Sequence[SeatSpec],
    config: Any = None,
    *,
    seed: int | None = None,
    deals: Sequence[Any] = (),
    options: RefereeOptions | None = None,
    on_progress: Callable[[Any, Any], None] | None = None,
    seat_seeds: Sequence[int] = (),
) -> MatchRecord:
    """``run_match`` in a fresh event loop (``asyncio.run``), for scripts, threads and the CLI. Same arguments,
    result and errors. Must not be called from a running event loop (use ``await run_match(...)`` there)."""
    return asyncio.run(
        run_match(match_id, game, seats, config, seed=seed, deals=deals, options=options, on_progress=on_progress,
                  seat_seeds=seat_seeds)
    )
