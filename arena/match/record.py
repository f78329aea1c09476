"""The match record: what the referee (``arena.match.referee``) writes about one match (DESIGN.md, "Protocol
sketch"); ``arena.match.replay`` checks that a record is exactly what the rules and the referee's limits give.

A record holds the config, the seed or explicit deals, the referee's limits, every decision in the order it was
applied, every fault, every forfeit and the result. ``replay`` re-simulates it from the rules and lists every
difference. The parts it holds (seats, faults, forfeits, limits, the result, the forfeit rule) are
``arena.match.outcomes``'s, named here too.

Record versions: version 2 (``RECORD_VERSION``, written) holds ``limits``, ``forfeits``, ``time_limit_at``,
``result.forfeits``, the decision sources ``"forfeit"`` and ``"time_limit"`` and the re-ask fields ``retries`` /
``retry_lag_ms``; a version 1 record has none of these and is read as a match played without limits.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.core.errors import ArenaError
from arena.core.text import cut
from arena.match.outcomes import (
    ASKED_SOURCES,
    FAULT_KINDS,
    FORFEIT_REASONS,
    SOURCES,
    Fault,
    FaultTally,
    Forfeit,
    Limits,
    MatchResult,
    SeatSpec,
    forfeit_ranks,
)
from arena_sdk import wire
from arena_sdk.games import GAMES, Game

RECORD_VERSION = 2
READ_VERSIONS = (1, 2)


class RecordError(ArenaError, ValueError):
    """A match record (dict or JSON file) that is not a well-formed record; the message names the bad field."""


def bot_time_ms(decisions: Sequence[dict[str, Any]], seat: int, upto: int) -> float:
    """Decide time the bot of ``seat`` used in ``decisions[:upto]``, ms: the sum of ``latency_ms`` of the calls
    it was charged for (re-asks excused by the referee's lag are not counted)."""
    total = 0.0
    for dec in decisions[:upto]:
        if dec.get("seat") == seat and dec.get("source") in ASKED_SOURCES and _is_number(dec.get("latency_ms")):
            total += dec["latency_ms"]
    return total


def _check_seats(d: dict[str, Any], game: str) -> list[SeatSpec]:
    """``record.seats`` checked: an object (name, endpoint) per seat, as many as ``game`` seats; raises
    ``RecordError``."""
    seats = []
    for i, s in enumerate(_get(d, "seats", list)):
        if not isinstance(s, dict):
            raise RecordError(f"record.seats[{i}] must be an object, got {s!r}")
        seats.append(SeatSpec(_get(s, "name", str, f"seats[{i}]"), _get(s, "endpoint", str, f"seats[{i}]")))
    info = GAMES[game].info
    if not info.min_players <= len(seats) <= info.max_players:
        raise RecordError(f"record.seats must list {info.min_players}..{info.max_players} seats ({game}), got "
                          f"{len(seats)}")
    return seats


TRANSPORTS = ("stream", "unary")  # ``MatchRecord.transports``: through the match stream, through the unary calls


def _check_transports(seats: list[dict[str, Any]]) -> tuple[tuple[str, int], ...]:
    """``MatchRecord.transports`` of the checked ``record.seats``: () when no seat has a ``transport`` (a record
    from before it was kept), else each seat's (``transport``, ``streams``); raises ``RecordError``."""
    if not any("transport" in s for s in seats):
        return ()
    out: list[tuple[str, int]] = []
    for i, s in enumerate(seats):
        transport, streams = s.get("transport"), s.get("streams")
        if (transport not in TRANSPORTS or not isinstance(streams, int) or isinstance(streams, bool)
                or streams < 0):
            raise RecordError(f"record.seats[{i}] must have a transport ({' or '.join(TRANSPORTS)}) and streams (a "
                              f"count, 0 or more) as every other seat, got {cut(repr(transport), 40)} and "
                              f"{cut(repr(streams), 40)}")
        out.append((str(transport), streams))
    return tuple(out)


def _check_seat_seeds(seat_seeds: Any, seats: int) -> list[int]:
    """``record.seat_seeds`` checked: [] or one integer 0 .. 2**63-1 per seat; raises ``RecordError``."""
    if (not isinstance(seat_seeds, list) or not all(_is_int(x) and 0 <= x < 2**63 for x in seat_seeds)
            or len(seat_seeds) not in (0, seats)):
        raise RecordError(f"record.seat_seeds must be [] or one integer 0..2**63-1 per seat, got {seat_seeds!r}")
    return seat_seeds


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
            ``seq`` (the seat's request sequence number, sent as ``DecideRequest.sequence``, from 0 per seat;
            null when the seat was not asked), ``seat``, ``kind`` (``DecisionKind`` name), ``hand``, ``turn``,
            ``action`` (the game's JSON form: the action applied), ``source`` (``"bot"``; ``"default"`` after a
            fault; ``"forfeit"``: the default without a call, the seat having forfeited; ``"time_limit"``: the
            default without a call, the match having passed its time limit), ``latency_ms`` (wall time of the
            charged ``Decide`` call, milliseconds; null when not asked). Only on a decision that was asked again
            because the referee itself was late: ``retries`` (how many times it was asked again, with the same
            sequence number and a fresh deadline) and ``retry_lag_ms`` (the referee's lag, ms, that excused each
            timed-out attempt). Only on a decision whose bot attached a note to its answer (``DecideResponse.note``):
            ``note`` (the text, control characters removed, at most 280 characters, at most 8000 per seat and match).
        faults: every fault, in the order they happened. result: the final result.
        started_at: start time, seconds since the Unix epoch. duration_s: wall time of the match, seconds.
        forfeits: every forfeit, in the order they happened.
        limits: the referee's limits the match was played with.
        time_limit_at: index into ``decisions`` of the first decision played after the match passed its time
            limit (from there on no seat is asked), or None.
        seat_seeds: the seed each seat's bot got for its own randomness (``StartMatchRequest.seat_seed``), in seat
            order, each 0 .. 2**63-1; () when the referee gave none. As secret as the deal seed: a read method shows
            the record only once the deal may be shown.
        transports: how the referee called each seat's bot, in seat order (JSON: ``seats[i].transport`` and
            ``seats[i].streams``): ("stream", n) through the match stream (``PlayMatch``), n streams opened (more
            than 1: a stream broke or the bot ended one, and the next call opened another), or ("unary", n) through
            the unary calls (n > 0: streams were tried, and the bot's PlayMatch refused them: it does not implement
            it though its GetInfo says serves_match_stream); () when not known (a record from before, a live one).
    """

    match_id: str
    game: str
    config: dict[str, Any]
    seed: int | None
    deals: list[dict[str, Any]]
    seats: tuple[SeatSpec, ...]
    deadline_ms: int
    decisions: tuple[dict[str, Any], ...]
    faults: tuple[Fault, ...]
    result: MatchResult
    started_at: float
    duration_s: float
    forfeits: tuple[Forfeit, ...] = ()
    limits: Limits = Limits()
    time_limit_at: int | None = None
    seat_seeds: tuple[int, ...] = ()
    transports: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (only str, int, float, bool, None, lists and dicts)."""
        forfeits = list(self.result.forfeits) or [None] * len(self.result.scores)
        return {
            "version": RECORD_VERSION,
            "match_id": self.match_id,
            "game": self.game,
            "config": dict(self.config),
            "seed": self.seed,
            "deals": [dict(d) for d in self.deals],
            "seats": [{"name": s.name, "endpoint": s.endpoint,
                       **({"transport": self.transports[i][0], "streams": self.transports[i][1]}
                          if i < len(self.transports) else {})} for i, s in enumerate(self.seats)],
            "deadline_ms": self.deadline_ms,
            "limits": self.limits.to_dict(),
            "decisions": [dict(d) for d in self.decisions],
            "faults": [
                {"kind": f.kind, "seat": f.seat, "hand": f.hand, "turn": f.turn, "detail": f.detail,
                 "decision": f.decision}
                for f in self.faults
            ],
            "forfeits": [
                {"seat": f.seat, "reason": f.reason, "hand": f.hand, "turn": f.turn, "detail": f.detail,
                 "fault": f.fault}
                for f in self.forfeits
            ],
            "time_limit_at": self.time_limit_at,
            "seat_seeds": list(self.seat_seeds),
            "result": {
                "scores": list(self.result.scores),
                "ranks": list(self.result.ranks),
                "faults": list(self.result.faults),
                "forfeits": forfeits,
            },
            "started_at": self.started_at,
            "duration_s": self.duration_s,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchRecord:
        """Record from its JSON form (version 2, or version 1 read as a match without limits). Raises
        ``RecordError`` naming the field when ``d`` is not a well-formed record (missing or mistyped field,
        unknown game, invalid config or deal). The *content* (legality of the actions, forfeits, the result) is
        checked by ``replay``, not here."""
        if not isinstance(d, dict):
            raise RecordError(f"a match record must be a JSON object, got {type(d).__name__}")
        version = d.get("version", RECORD_VERSION)
        if version not in READ_VERSIONS or isinstance(version, bool):
            raise RecordError(f"unsupported record version {version!r}; this arena reads versions "
                              f"{', '.join(map(str, READ_VERSIONS))}")
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
        seats = _check_seats(d, game)
        transports = _check_transports(d["seats"])
        decisions = tuple(_check_decision(i, x) for i, x in enumerate(_get(d, "decisions", list)))
        faults = tuple(_check_fault(i, x) for i, x in enumerate(_get(d, "faults", list)))
        r = _get(d, "result", dict)
        scores = _get(r, "scores", list, "result")
        if not all(_is_number(x) for x in scores):
            raise RecordError(f"record.result.scores must hold numbers, got {scores!r}")
        if version >= 2:
            limits = _check_limits(_get(d, "limits", dict))
            forfeits = tuple(_check_forfeit(i, x) for i, x in enumerate(_get(d, "forfeits", list)))
            time_limit_at = _get(d, "time_limit_at", (int, type(None)))
            seat_forfeits = _get(r, "forfeits", list, "result")
            if not all(x is None or x in FORFEIT_REASONS for x in seat_forfeits):
                raise RecordError(f"record.result.forfeits must hold null or one of {FORFEIT_REASONS}, "
                                  f"got {seat_forfeits!r}")
        else:
            limits, forfeits, time_limit_at, seat_forfeits = Limits(), (), None, [None] * len(scores)
        result = MatchResult(
            scores=tuple(float(x) for x in scores),
            ranks=tuple(_int_list(r, "ranks", "result")),
            faults=tuple(_int_list(r, "faults", "result")),
            forfeits=tuple(seat_forfeits),
        )
        seat_seeds = _check_seat_seeds(d.get("seat_seeds") or [], len(seats))
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
            forfeits=forfeits,
            limits=limits,
            time_limit_at=time_limit_at,
            seat_seeds=tuple(seat_seeds),
            transports=transports,
        )

    def save(self, path: str | Path) -> None:
        """Write the record to ``path`` as JSON (UTF-8, indented). Raises ``OSError`` when the file cannot be
        written."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> MatchRecord:
        """Read a record written by ``save``. Raises ``OSError`` when the file cannot be read and
        ``RecordError`` when it is not JSON (or nested too deep to read) or not a well-formed record."""
        text = Path(path).read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}: not JSON: {exc}") from exc
        except RecursionError:  # arrays or objects nested thousands deep: no record is
            raise RecordError(f"{path}: not a match record (JSON nested too deep)") from None
        try:
            return cls.from_dict(data)
        except RecordError as exc:
            raise RecordError(f"{path}: {exc}") from exc


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    return (_is_int(x) or isinstance(x, float)) and math.isfinite(x)


def _get(d: dict[str, Any], key: str, types: type | tuple[type, ...], where: str = "") -> Any:
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


def _int_list(d: dict[str, Any], key: str, where: str) -> list[int]:
    values: list[int] = _get(d, key, list, where)
    if not all(_is_int(x) for x in values):
        raise RecordError(f"record.{where}.{key} must hold integers, got {values!r}")
    return values


def _check_decision(i: int, x: Any) -> dict[str, Any]:
    where = f"decisions[{i}]"
    if not isinstance(x, dict):
        raise RecordError(f"record.{where} must be an object, got {x!r}")
    for key in ("seat", "hand", "turn"):
        _get(x, key, int, where)
    _get(x, "seq", (int, type(None)), where)
    _get(x, "kind", str, where)
    _get(x, "action", dict, where)
    if _get(x, "source", str, where) not in SOURCES:
        raise RecordError(f"record.{where}.source must be one of {SOURCES}, got {x['source']!r}")
    latency = x.get("latency_ms")
    if latency is not None and not _is_number(latency):
        raise RecordError(f"record.{where}.latency_ms must be a number or null, got {latency!r}")
    if "retries" in x or "retry_lag_ms" in x:
        retries = _get(x, "retries", int, where)
        lags = _get(x, "retry_lag_ms", list, where)
        if retries < 1 or len(lags) != retries or not all(_is_number(v) for v in lags):
            raise RecordError(f"record.{where}: retries must be a positive count with one number per retry in "
                              f"retry_lag_ms, got {retries!r} and {lags!r}")
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


def _check_forfeit(i: int, x: Any) -> Forfeit:
    where = f"forfeits[{i}]"
    if not isinstance(x, dict):
        raise RecordError(f"record.{where} must be an object, got {x!r}")
    reason = _get(x, "reason", str, where)
    if reason not in FORFEIT_REASONS:
        raise RecordError(f"record.{where}.reason must be one of {FORFEIT_REASONS}, got {reason!r}")
    return Forfeit(
        seat=_get(x, "seat", int, where),
        reason=reason,
        hand=_get(x, "hand", int, where),
        turn=_get(x, "turn", int, where),
        detail=_get(x, "detail", str, where),
        fault=_get(x, "fault", (int, type(None)), where),
    )


def _check_limits(x: dict[str, Any]) -> Limits:
    values = {}
    for key in ("max_faults", "max_consecutive_timeouts", "lag_threshold_ms", "lag_retries"):
        values[key] = _get(x, key, int, "limits")
        if values[key] < 0:
            raise RecordError(f"record.limits.{key} must not be negative, got {values[key]}")
    limit = _get(x, "match_time_limit_s", (int, float), "limits")
    if limit < 0:
        raise RecordError(f"record.limits.match_time_limit_s must not be negative, got {limit}")
    return Limits(match_time_limit_s=float(limit), **values)


def pending_kind(game: Game, state: Any, seat: int) -> str:
    """The decision kind pending for ``seat``, a seat of ``game.pending_seats(state)``. Raises ``RuntimeError``
    for a game whose ``decision_kind`` has none for a pending seat (a bug of the game's plug-in)."""
    kind = game.decision_kind(state, seat)
    if kind is None:
        raise RuntimeError(f"{game.info.game}: seat {seat} is pending but has no decision kind")
    return kind


def describe_legal(game: Game, legal: Sequence[Any]) -> str:
    """The legal actions, for a person: ``"legal cards: 3, 17, 55"`` or ``"legal actions: [...]"``."""
    shown = [game.action_to_dict(a) for a in legal]
    keys = {tuple(d) for d in shown}
    if shown and len(keys) == 1 and len(next(iter(keys))) == 1:  # every action is {"card": x} (or {"row": x})
        return f"legal {next(iter(shown[0]))}s: {', '.join(str(next(iter(d.values()))) for d in shown)}"
    return f"legal actions: {', '.join(json.dumps(d, separators=(',', ':')) for d in shown)}"


# the record's parts (arena.match.outcomes) are read from here too
__all__ = [
    "ASKED_SOURCES", "FAULT_KINDS", "FORFEIT_REASONS", "READ_VERSIONS", "RECORD_VERSION", "SOURCES", "Fault",
    "FaultTally", "Forfeit", "Limits", "MatchRecord", "MatchResult", "RecordError", "SeatSpec", "bot_time_ms",
    "describe_legal", "forfeit_ranks", "pending_kind",
]
