"""The referee: runs ONE match between bot endpoints over gRPC and keeps its record (DESIGN.md, "Protocol sketch").

The referee is the gRPC *client* of every bot (``arena.v1.Bot``). For one match it

1. opens one ``grpc.aio`` channel per distinct endpoint (two seats of the same endpoint share it);
2. sends ``StartMatch`` to every seat, concurrently (a seat whose ``StartMatch`` fails gets a fault with
   ``decision=None`` and still plays: it is asked every decision like any other seat);
3. loops until the game is over: ``pending = engine.pending_seats(state)``; every pending seat is asked
   **concurrently** (``asyncio.gather``) with ``Decide`` under a gRPC deadline of ``deadline_ms``; each request
   carries only ``observe(state, seat)`` of that seat (never another seat's hand, the undealt cards or the
   seed; STYLE.md habit 3), the match id, the seat, the decision kind and the seat's request sequence number;
   when every answer (or fault) is in, the answers are applied in ascending seat order (a simultaneous
   reveal happens inside the engine once the last choice is applied);
4. sends ``EndMatch`` with the result to every seat, concurrently.

The referee names no game: it finds the game's plug-in in the registry (``arena_sdk.games.get_game``) and uses
its engine and codecs. Every answer is validated: the game's ``action_from_proto`` (a ``WireError`` is a
``"malformed"`` fault), then the engine's ``legal_actions`` (``"illegal"``). A call that fails is a fault by its gRPC status: DEADLINE_EXCEEDED
-> ``"timeout"``, UNAVAILABLE -> ``"unreachable"``, any other status -> ``"error"``. After a fault the engine's
documented ``default_action`` is applied (each game documents its own). A bad bot never crashes the
referee (STYLE.md habit 4): ``run_match`` always completes the match and raises only for bad arguments.

``EndMatch`` failures are *not* faults: the result (with its fault counts) is final before ``EndMatch`` is
sent, and every seat must receive the same result; they are logged (logger ``arena.referee``, level INFO).

The match record (``MatchRecord``, JSON via ``to_dict``/``save``) holds the config, the seed or explicit deals,
every decision in the order it was applied, every fault and the result; ``replay`` re-simulates it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from arena_sdk import wire
from arena_sdk.games import GAMES, Game, get_game
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

from .config import DEFAULTS

log = logging.getLogger(__name__)

FAULT_KINDS = ("timeout", "error", "unreachable", "illegal", "malformed")
SOURCES = ("bot", "default")
RECORD_VERSION = 1


class RecordError(ValueError):
    """A match record (dict or JSON file) that is not a well-formed record; the message names the bad field."""


# --- records ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatSpec:
    """One seat of a match.

    Attributes:
        name: the bot's registered name (ladder identity; sent to every seat as ``player_names``).
        endpoint: ``"host:port"`` of the bot's ``arena.v1.Bot`` server.
    """

    name: str
    endpoint: str


@dataclass(frozen=True)
class Fault:
    """A bot failure turned into data (STYLE.md habit 4).

    Attributes:
        kind: ``"timeout"`` (no answer within the deadline), ``"error"`` (any other failed gRPC status),
            ``"unreachable"`` (UNAVAILABLE: nobody listens, the connection broke, the process died),
            ``"illegal"`` (a well-formed action the rules do not allow now), ``"malformed"`` (no action, or the
            wrong action field for the decision kind).
        seat: the seat at fault, 0-based.
        hand: hand number of the game (0-based) when it happened; turn: turn within the hand (0..9).
        detail: what happened, for a person (status code and message, the bad answer and the legal ones).
        decision: index into ``MatchRecord.decisions`` of the decision that got the default action instead;
            None for a ``StartMatch`` failure.
    """

    kind: str
    seat: int
    hand: int
    turn: int
    detail: str
    decision: int | None


@dataclass(frozen=True)
class MatchResult:
    """Final result of a match, in seat order.

    Attributes:
        scores: the game's score of every seat (ordered as the game declares, see its ``GameInfo``).
        ranks: standard competition ranks, 1 = best; equal scores share a rank (1, 2, 2, 4).
        faults: number of faults recorded against each seat.
    """

    scores: tuple[float, ...]
    ranks: tuple[int, ...]
    faults: tuple[int, ...]


@dataclass(frozen=True)
class MatchRecord:
    """Everything needed to replay and audit one match. JSON form: ``to_dict`` / ``from_dict``, ``save``/``load``.

    Attributes:
        match_id: unique id of the match. game: game id (a key of the game registry).
        config: the game's config in JSON form (``arena_sdk.wire.config_to_dict``).
        seed: seed of the deals (hands not covered by ``deals``), or None.
        deals: explicit deals in JSON form (the game's ``deal_to_dict``), first first; [] when the seed drives.
        seats: the seats in seat order. deadline_ms: deadline of every ``Decide`` call, milliseconds.
        decisions: every decision in the order it was applied, each a dict:
            ``seq`` (the seat's request sequence number, sent as ``DecideRequest.sequence``, from 0 per seat),
            ``seat``, ``kind`` (``DecisionKind`` name), ``hand``, ``turn``, ``action`` (the game's JSON form:
            the action applied), ``source`` (``"bot"``, or ``"default"`` after a fault), ``latency_ms``
            (wall time of the ``Decide`` call, milliseconds).
        faults: every fault, in the order they happened. result: the final result.
        started_at: start time, seconds since the Unix epoch. duration_s: wall time of the match, seconds.
    """

    match_id: str
    game: str
    config: dict
    seed: int | None
    deals: list
    seats: tuple[SeatSpec, ...]
    deadline_ms: int
    decisions: tuple[dict, ...]
    faults: tuple[Fault, ...]
    result: MatchResult
    started_at: float
    duration_s: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (only str, int, float, bool, None, lists and dicts)."""
        return {
            "version": RECORD_VERSION,
            "match_id": self.match_id,
            "game": self.game,
            "config": dict(self.config),
            "seed": self.seed,
            "deals": [dict(d) for d in self.deals],
            "seats": [{"name": s.name, "endpoint": s.endpoint} for s in self.seats],
            "deadline_ms": self.deadline_ms,
            "decisions": [dict(d) for d in self.decisions],
            "faults": [
                {"kind": f.kind, "seat": f.seat, "hand": f.hand, "turn": f.turn, "detail": f.detail,
                 "decision": f.decision}
                for f in self.faults
            ],
            "result": {
                "scores": list(self.result.scores),
                "ranks": list(self.result.ranks),
                "faults": list(self.result.faults),
            },
            "started_at": self.started_at,
            "duration_s": self.duration_s,
        }

    @classmethod
    def from_dict(cls, d: dict) -> MatchRecord:
        """Record from its JSON form. Raises ``RecordError`` naming the field when ``d`` is not a well-formed
        record (missing or mistyped field, unknown game, invalid config or deal). The *content* (legality of the
        actions, the result) is checked by ``replay``, not here."""
        if not isinstance(d, dict):
            raise RecordError(f"a match record must be a JSON object, got {type(d).__name__}")
        version = d.get("version", RECORD_VERSION)
        if version != RECORD_VERSION:
            raise RecordError(f"unsupported record version {version!r}; this arena reads version {RECORD_VERSION}")
        game = _get(d, "game", str)
        if game not in GAMES:
            raise RecordError(f"record.game: unknown game {game!r}; known games: {', '.join(sorted(GAMES))}")
        config = _get(d, "config", dict)
        try:
            wire.config_from_dict(game, config)
        except (wire.WireError, TypeError) as exc:
            raise RecordError(f"record.config: {exc}") from exc
        seed = d.get("seed")
        if seed is not None and not _is_int(seed):
            raise RecordError(f"record.seed must be an integer or null, got {seed!r}")
        deals = _get(d, "deals", list)
        for i, deal in enumerate(deals):
            if not isinstance(deal, dict):
                raise RecordError(f"record.deals[{i}] must be an object, got {deal!r}")
            try:
                wire.deal_from_dict(game, deal)
            except (wire.WireError, TypeError) as exc:
                raise RecordError(f"record.deals[{i}]: {exc}") from exc
        seats = []
        for i, s in enumerate(_get(d, "seats", list)):
            if not isinstance(s, dict):
                raise RecordError(f"record.seats[{i}] must be an object, got {s!r}")
            seats.append(SeatSpec(_get(s, "name", str, f"seats[{i}]"), _get(s, "endpoint", str, f"seats[{i}]")))
        decisions = tuple(_check_decision(i, x) for i, x in enumerate(_get(d, "decisions", list)))
        faults = tuple(_check_fault(i, x) for i, x in enumerate(_get(d, "faults", list)))
        r = _get(d, "result", dict)
        scores = _get(r, "scores", list, "result")
        if not all(_is_number(x) for x in scores):
            raise RecordError(f"record.result.scores must hold numbers, got {scores!r}")
        result = MatchResult(
            scores=tuple(float(x) for x in scores),
            ranks=tuple(_int_list(r, "ranks", "result")),
            faults=tuple(_int_list(r, "faults", "result")),
        )
        deadline_ms = _get(d, "deadline_ms", int)
        if deadline_ms < 1:
            raise RecordError(f"record.deadline_ms must be a positive number of milliseconds, got {deadline_ms}")
        started_at = _get(d, "started_at", (int, float))
        duration_s = _get(d, "duration_s", (int, float))
        return cls(
            match_id=_get(d, "match_id", str),
            game=game,
            config=dict(config),
            seed=seed,
            deals=[dict(x) for x in deals],
            seats=tuple(seats),
            deadline_ms=deadline_ms,
            decisions=decisions,
            faults=faults,
            result=result,
            started_at=float(started_at),
            duration_s=float(duration_s),
        )

    def save(self, path: str | Path) -> None:
        """Write the record to ``path`` as JSON (UTF-8, indented). Raises ``OSError`` when the file cannot be
        written."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> MatchRecord:
        """Read a record written by ``save``. Raises ``OSError`` when the file cannot be read and
        ``RecordError`` when it is not JSON or not a well-formed record."""
        text = Path(path).read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}: not JSON: {exc}") from exc
        try:
            return cls.from_dict(data)
        except RecordError as exc:
            raise RecordError(f"{path}: {exc}") from exc


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return (_is_int(x) or isinstance(x, float)) and math.isfinite(x)


def _get(d: dict, key: str, types: type | tuple[type, ...], where: str = "") -> Any:
    name = f"record.{where + '.' if where else ''}{key}"
    if key not in d:
        raise RecordError(f"{name} is missing")
    value = d[key]
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise RecordError(f"{name} has the wrong type: {value!r}")
    if not isinstance(value, types):
        raise RecordError(f"{name} has the wrong type: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise RecordError(f"{name} must be finite, got {value!r}")
    return value


def _int_list(d: dict, key: str, where: str) -> list[int]:
    values = _get(d, key, list, where)
    if not all(_is_int(x) for x in values):
        raise RecordError(f"record.{where}.{key} must hold integers, got {values!r}")
    return values


def _check_decision(i: int, x: Any) -> dict:
    where = f"decisions[{i}]"
    if not isinstance(x, dict):
        raise RecordError(f"record.{where} must be an object, got {x!r}")
    for key in ("seq", "seat", "hand", "turn"):
        _get(x, key, int, where)
    _get(x, "kind", str, where)
    _get(x, "action", dict, where)
    if _get(x, "source", str, where) not in SOURCES:
        raise RecordError(f"record.{where}.source must be one of {SOURCES}, got {x['source']!r}")
    latency = x.get("latency_ms")
    if latency is not None and not _is_number(latency):
        raise RecordError(f"record.{where}.latency_ms must be a number or null, got {latency!r}")
    return dict(x)


def _check_fault(i: int, x: Any) -> Fault:
    where = f"faults[{i}]"
    if not isinstance(x, dict):
        raise RecordError(f"record.{where} must be an object, got {x!r}")
    kind = _get(x, "kind", str, where)
    if kind not in FAULT_KINDS:
        raise RecordError(f"record.{where}.kind must be one of {FAULT_KINDS}, got {kind!r}")
    decision = x.get("decision")
    if decision is not None and not _is_int(decision):
        raise RecordError(f"record.{where}.decision must be an integer or null, got {decision!r}")
    return Fault(
        kind=kind,
        seat=_get(x, "seat", int, where),
        hand=_get(x, "hand", int, where),
        turn=_get(x, "turn", int, where),
        detail=_get(x, "detail", str, where),
        decision=decision,
    )


# --- running a match -----------------------------------------------------------------------------------------


def _fault_kind(code: grpc.StatusCode | None) -> str:
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return "timeout"
    if code == grpc.StatusCode.UNAVAILABLE:
        return "unreachable"
    return "error"


def _rpc_detail(method: str, exc: grpc.RpcError, timeout_ms: int) -> str:
    code = exc.code() if hasattr(exc, "code") else None
    details = exc.details() if hasattr(exc, "details") else str(exc)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"{method}: no answer within the {timeout_ms} ms deadline"
    name = code.name if code is not None else "UNKNOWN"
    return f"{method}: {name}: {details or 'no details'}"


def _describe_legal(game: Game, legal: Sequence[Any]) -> str:
    shown = [game.action_to_dict(a) for a in legal]
    values = [next(iter(d.values())) for d in shown if len(d) == 1]
    if len(values) == len(shown) and shown:
        return f"legal {next(iter(shown[0]))}s: {', '.join(str(v) for v in values)}"
    return f"legal actions: {shown}"


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


@dataclass
class _Answer:
    response: bot_pb2.DecideResponse | None
    fault_kind: str | None
    detail: str
    latency_ms: float


@dataclass
class _Match:
    """The mutable bookkeeping of one running match (private to ``run_match``)."""

    match_id: str
    game: str
    engine: Game
    config: Any
    seats: tuple[SeatSpec, ...]
    deadline_ms: int
    call_deadline_ms: int
    state: Any
    channels: dict[str, grpc.aio.Channel] = field(default_factory=dict)
    stubs: list[bot_pb2_grpc.BotStub] = field(default_factory=list)
    sequence: list[int] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)

    def open(self) -> None:
        for s in self.seats:
            if s.endpoint not in self.channels:
                self.channels[s.endpoint] = grpc.aio.insecure_channel(s.endpoint)
            self.stubs.append(bot_pb2_grpc.BotStub(self.channels[s.endpoint]))
        self.sequence = [0] * len(self.seats)

    async def close(self) -> None:
        for channel in self.channels.values():
            await channel.close()

    async def _call(self, method: str, seat: int, request: Any, timeout_ms: int) -> tuple[Any, str | None, str]:
        try:
            response = await getattr(self.stubs[seat], method)(request, timeout=timeout_ms / 1000)
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            return None, _fault_kind(code), _rpc_detail(method, exc, timeout_ms)
        if response is None:  # grpc.aio yields None when the bot's bytes do not parse as the response message
            return None, "malformed", f"{method}: the answer could not be decoded as a {method} response message"
        return response, None, ""

    async def start(self) -> None:
        names = [s.name for s in self.seats]
        config_msg = wire.config_to_proto(self.game, self.config)
        requests = [
            bot_pb2.StartMatchRequest(
                match_id=self.match_id, game=self.game, seat=seat, num_players=len(self.seats),
                player_names=names, config=config_msg,
            )
            for seat in range(len(self.seats))
        ]
        answers = await asyncio.gather(
            *(self._call("StartMatch", seat, req, self.call_deadline_ms) for seat, req in enumerate(requests))
        )
        hand, turn = self.engine.position(self.state)
        for seat, (_, kind, detail) in enumerate(answers):
            if kind is not None:
                self._fault(kind, seat, hand, turn, detail, None)

    async def _decide(self, seat: int, request: bot_pb2.DecideRequest) -> _Answer:
        t0 = time.perf_counter()
        response, kind, detail = await self._call("Decide", seat, request, self.deadline_ms)
        return _Answer(response, kind, detail, round((time.perf_counter() - t0) * 1000, 3))

    async def play(self) -> None:
        engine = self.engine
        while not engine.is_over(self.state):
            pending = tuple(engine.pending_seats(self.state))
            hand, turn = engine.position(self.state)
            kinds = {seat: engine.decision_kind(self.state, seat) for seat in pending}
            seqs = {}
            requests = []
            for seat in pending:
                seqs[seat] = self.sequence[seat]
                self.sequence[seat] += 1
                view_msg = engine.view_to_proto(engine.observe(self.state, seat))
                requests.append(
                    bot_pb2.DecideRequest(
                        match_id=self.match_id, seat=seat, kind=wire.kind_value(kinds[seat]),
                        sequence=seqs[seat], **{self.game: view_msg},
                    )
                )
            answers = await asyncio.gather(*(self._decide(seat, req) for seat, req in zip(pending, requests)))
            # The reveal: every answer (or fault) is in; apply them in seat order.
            for seat, answer in zip(pending, answers):
                self._apply(seat, kinds[seat], seqs[seat], hand, turn, answer)

    def _apply(self, seat: int, kind: str, seq: int, hand: int, turn: int, answer: _Answer) -> None:
        engine = self.engine
        legal = engine.legal_actions(self.state, seat)
        action = None
        fault: tuple[str, str] | None = None
        if answer.response is None:
            fault = (answer.fault_kind or "error", answer.detail)
        else:
            try:
                proposed = wire.action_from_proto(self.game, kind, answer.response)
            except wire.WireError as exc:
                fault = ("malformed", f"Decide {kind}: {exc}")
            else:
                if proposed in legal:
                    action = proposed
                else:
                    fault = (
                        "illegal",
                        f"Decide {kind}: answered {engine.action_to_dict(proposed)}, not legal now; "
                        f"{_describe_legal(engine, legal)}",
                    )
        source = "bot"
        if action is None:
            action = engine.default_action(self.state, seat)
            source = "default"
        index = len(self.decisions)
        self.decisions.append({
            "seq": seq, "seat": seat, "kind": kind, "hand": hand, "turn": turn,
            "action": engine.action_to_dict(action), "source": source, "latency_ms": answer.latency_ms,
        })
        if fault is not None:
            self._fault(fault[0], seat, hand, turn, fault[1], index)
        self.state = engine.apply(self.state, seat, action)

    def _fault(self, kind: str, seat: int, hand: int, turn: int, detail: str, decision: int | None) -> None:
        log.debug("match %s: %s fault of seat %d (%s): %s", self.match_id, kind, seat, self.seats[seat].name, detail)
        self.faults.append(Fault(kind, seat, hand, turn, detail, decision))

    def result(self) -> MatchResult:
        outcome = self.engine.outcome(self.state)
        counts = [0] * len(self.seats)
        for f in self.faults:
            counts[f.seat] += 1
        return MatchResult(
            scores=tuple(float(s) for s in outcome.scores),
            ranks=tuple(int(r) for r in outcome.ranks),
            faults=tuple(counts),
        )

    async def end(self, result: MatchResult) -> None:
        result_msg = bot_pb2.MatchResult(scores=result.scores, ranks=result.ranks, faults=result.faults)
        requests = [
            bot_pb2.EndMatchRequest(match_id=self.match_id, seat=seat, result=result_msg)
            for seat in range(len(self.seats))
        ]
        answers = await asyncio.gather(
            *(self._call("EndMatch", seat, req, self.call_deadline_ms) for seat, req in enumerate(requests))
        )
        for seat, (_, kind, detail) in enumerate(answers):
            if kind is not None:  # not a fault: the result is final (see the module docstring)
                log.info("match %s: EndMatch to seat %d (%s) failed: %s", self.match_id, seat,
                         self.seats[seat].name, detail)


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

    Every bot failure becomes a ``Fault`` and the engine's default action (see the module docstring); this
    function never raises because of a bot. Raises ``ValueError`` (``RulesError`` for the engine's checks) for
    bad arguments: unknown game, a seat count the game does not allow, a bad config, neither seed nor deals,
    an invalid explicit deal, a non-positive deadline. Cancelling the task cancels the match (no record).
    """
    seats = tuple(seats)
    engine, config = _check_args(match_id, game, seats, config, deadline_ms, call_deadline_ms)
    deals = tuple(deals)
    state = engine.new_game(len(seats), config, seed=seed, deals=deals)  # RulesError (a ValueError) on bad input
    started_at = time.time()
    t0 = time.monotonic()
    match = _Match(match_id, game, engine, config, seats, deadline_ms, call_deadline_ms, state)
    match.open()
    try:
        await match.start()
        await match.play()
        result = match.result()
        await match.end(result)
    finally:
        await match.close()
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
) -> MatchRecord:
    """``run_match`` in a fresh event loop (``asyncio.run``), for scripts, threads and the CLI. Same arguments,
    result and errors. Must not be called from a running event loop (use ``await run_match(...)`` there)."""
    return asyncio.run(
        run_match(match_id, game, seats, config, seed=seed, deals=deals, deadline_ms=deadline_ms,
                  call_deadline_ms=call_deadline_ms)
    )


# --- replay ----------------------------------------------------------------------------------------------------


def replay(record: MatchRecord) -> list[str]:
    """Re-simulate ``record`` and list, for a person, every way it differs from the re-simulation.

    The game is rebuilt from the record's config, seed and deals; the recorded actions are applied in order.
    Checked per decision: it was asked of that seat (the referee applies a batch of simultaneous decisions in
    ascending seat order), with that kind, at that hand and turn, with the seat's next sequence number; the
    action is legal; a ``"default"`` action equals the engine's default and has a fault pointing at it. At the
    end: the game is over exactly after the last decision, and the scores, ranks and fault counts equal the
    recorded result. An illegal or unreadable action stops the re-simulation (later decisions cannot be
    checked). Returns [] when the record is identical to the re-simulation. Never raises for a tampered record.
    """
    try:
        return _replay(record)
    except Exception as exc:  # noqa: BLE001 - a hand-edited record can hold anything; report, never crash
        return [f"cannot replay the record: {type(exc).__name__}: {exc}"]


def _replay(record: MatchRecord) -> list[str]:
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

    faults_at: dict[int, list[Fault]] = {}
    for f in record.faults:
        if f.decision is not None:
            faults_at.setdefault(f.decision, []).append(f)

    sequence = [0] * n
    stopped = False
    for i, dec in enumerate(record.decisions):
        where = f"decision {i}"
        if engine.is_over(state):
            diffs.append(f"{where}: the game is already over; the record holds {len(record.decisions) - i} "
                         "decision(s) too many")
            stopped = True
            break
        pending = tuple(engine.pending_seats(state))
        seat = dec.get("seat")
        if seat not in pending:
            diffs.append(f"{where}: recorded for seat {seat!r}, but the game asks seat(s) {list(pending)}")
            stopped = True
            break
        if seat != pending[0]:
            diffs.append(f"{where}: seat {seat} applied before seat {pending[0]} (the referee applies seats in "
                         "ascending order)")
        kind = engine.decision_kind(state, seat)
        if dec.get("kind") != kind:
            diffs.append(f"{where}: recorded kind {dec.get('kind')!r}, the game asks seat {seat} for {kind}")
        hand, turn = engine.position(state)
        if (dec.get("hand"), dec.get("turn")) != (hand, turn):
            diffs.append(f"{where}: recorded at hand {dec.get('hand')!r} turn {dec.get('turn')!r}, "
                         f"the game is at hand {hand} turn {turn}")
        if dec.get("seq") != sequence[seat]:
            diffs.append(f"{where}: recorded sequence {dec.get('seq')!r} for seat {seat}, expected {sequence[seat]}")
        sequence[seat] += 1
        try:
            action = engine.action_from_dict(kind, dec.get("action"))
        except wire.WireError as exc:
            diffs.append(f"{where}: unreadable action for seat {seat}: {exc}")
            stopped = True
            break
        legal = engine.legal_actions(state, seat)
        if action not in legal:
            diffs.append(f"{where}: seat {seat}'s action {engine.action_to_dict(action)} ({kind}, hand {hand} "
                         f"turn {turn}) is not legal; {_describe_legal(engine, legal)}")
            stopped = True
            break
        source = dec.get("source")
        if source == "default":
            default = engine.default_action(state, seat)
            if action != default:
                diffs.append(f"{where}: recorded as the default action {engine.action_to_dict(action)}, but the "
                             f"default is {engine.action_to_dict(default)}")
            if not faults_at.get(i):
                diffs.append(f"{where}: a default action without a fault")
        elif source == "bot":
            if faults_at.get(i):
                diffs.append(f"{where}: the bot's own action, yet a fault points at it")
        else:
            diffs.append(f"{where}: unknown source {source!r}")
        for f in faults_at.get(i, ()):
            if (f.seat, f.hand, f.turn) != (seat, hand, turn):
                diffs.append(f"fault {f.kind!r} at {where}: recorded for seat {f.seat} hand {f.hand} turn "
                             f"{f.turn}, the decision is seat {seat} hand {hand} turn {turn}")
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
        diffs.append(f"re-simulation stopped at decision {i}; the result was not compared")
        return diffs
    if not engine.is_over(state):
        diffs.append(f"the record ends after {len(record.decisions)} decision(s) but the game is not over "
                     f"(it asks seat(s) {list(engine.pending_seats(state))})")
        return diffs
    outcome = engine.outcome(state)
    scores = tuple(float(s) for s in outcome.scores)
    if tuple(record.result.scores) != scores:
        diffs.append(f"result.scores: recorded {list(record.result.scores)}, re-simulated {list(scores)}")
    if tuple(record.result.ranks) != tuple(outcome.ranks):
        diffs.append(f"result.ranks: recorded {list(record.result.ranks)}, re-simulated {list(outcome.ranks)}")
    return diffs
