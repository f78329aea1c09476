"""The referee: runs ONE match between bot endpoints over gRPC and keeps its record (DESIGN.md, "Protocol sketch").

The referee is the gRPC *client* of every bot (``arena.v1.Bot``). For one match it

1. leases one ``grpc.aio`` channel per distinct endpoint (two seats of the same endpoint share it) from a pool
   (``arena.bot_channels``: a worker's matches reuse its channels; a call that finds a bot unreachable makes the
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

The match record (``MatchRecord``, JSON via ``to_dict``/``save``; in ``arena.records``, re-exported here with
``Fault``, ``Forfeit``, ``MatchResult``, ``Limits``, ``SeatSpec``, ``RecordError`` and ``replay``) holds the
config, the seed or explicit deals, the limits, every decision in the order it was applied, every fault, every
forfeit and the result; ``replay`` re-simulates it and checks the forfeits too.

Failure policy
--------------

Every limit is a ``run_match`` keyword with its default in ``arena.config.DEFAULTS`` (shown in brackets). A fault
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
import collections
import functools
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from arena_sdk import wire
from arena_sdk.games import Game, get_game
from arena_sdk.guard import BOT_SECRET_METADATA
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

from .bot_channels import BotChannels, BotLease
from .config import DEFAULTS
from .records import (
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
    bot_time_ms,
    describe_legal,
    forfeit_ranks,
    replay,
)

__all__ = [
    "FAULT_KINDS", "FORFEIT_REASONS", "RECORD_VERSION", "SOURCES", "Fault", "FaultTally", "Forfeit", "Limits",
    "LoopLag", "MatchRecord", "MatchResult", "RecordError", "SeatSpec", "forfeit_ranks", "replay", "run_match",
    "run_match_sync",
]

log = logging.getLogger(__name__)

LAG_TICK_S = 0.02  # the lag monitor's sleep; lags shorter than LAG_MIN_S are not kept
LAG_MIN_S = 0.005
LAG_KEEP_S = 120.0  # longer than any Decide deadline (MAX_DEADLINE_MS)


class LoopLag:
    """Measures the event loop's own lateness: ``run()`` (a task) sleeps ``tick_s`` at a time and keeps how late
    it woke up; ``max_since(t)`` is the longest lateness, seconds, that fell after loop time ``t`` (including a
    lateness still going on, seen before the task could wake up)."""

    def __init__(self, tick_s: float = LAG_TICK_S) -> None:
        self.tick_s = tick_s
        self.samples: collections.deque[tuple[float, float]] = collections.deque()  # (woke at, late by), seconds
        self.expected: float | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def run(self) -> None:
        self.loop = loop = asyncio.get_running_loop()
        while True:
            self.expected = loop.time() + self.tick_s
            await asyncio.sleep(self.tick_s)
            now = loop.time()
            late = now - self.expected
            if late >= LAG_MIN_S:
                self.samples.append((now, late))
            while self.samples and self.samples[0][0] < now - LAG_KEEP_S:
                self.samples.popleft()

    def max_since(self, t: float) -> float:
        if self.loop is None:
            return 0.0
        now = self.loop.time()
        lag = max((min(late, woke - t) for woke, late in self.samples if woke > t), default=0.0)
        if self.expected is not None and now > self.expected:  # late right now, the task has not woken yet
            lag = max(lag, now - max(self.expected, t))
        return max(lag, 0.0)


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


@dataclass(slots=True)
class _Answer:
    response: bot_pb2.DecideResponse | None
    fault_kind: str | None
    detail: str
    latency_ms: float
    retry_lag_ms: list[float]


def _mark_done(done_at: list[float], index: int, call: Any) -> None:
    """Done callback of a Decide call: when its answer (or fault) came in."""
    done_at[index] = time.perf_counter()


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
    limits: Limits
    state: Any
    lag: LoopLag = field(default_factory=LoopLag)
    started: float = field(default_factory=time.monotonic)
    pool: BotChannels | None = None
    leases: dict[str, BotLease] = field(default_factory=dict)  # endpoint -> its channel, leased from the pool
    stubs: list[bot_pb2_grpc.BotStub] = field(default_factory=list)
    metadata: list[tuple[tuple[str, str], ...] | None] = field(default_factory=list)  # per seat: its bot secret
    sequence: list[int] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    forfeits: list[Forfeit] = field(default_factory=list)
    forfeited: dict[int, str] = field(default_factory=dict)
    time_limit_at: int | None = None
    tally: FaultTally | None = None
    on_progress: Callable[[Any, Any], None] | None = None
    # per seat, made once per match and reused by every Decide: the call, its keyword arguments, the request
    decide_calls: list[Any] = field(default_factory=list)
    call_options: list[dict[str, Any]] = field(default_factory=list)
    requests: list[bot_pb2.DecideRequest] = field(default_factory=list)
    keeps_history: list[bool] = field(default_factory=list)  # per seat: StartMatchResponse.keeps_history
    sent: list[Any] = field(default_factory=list)  # per seat: what its bot has been sent (Game.view_message)
    sending: list[Any] = field(default_factory=list)  # per seat: what it has been sent once it answers
    kind_values: dict[str, int] = field(default_factory=dict)

    def open(self, pool: BotChannels) -> None:
        """Lease one channel per distinct endpoint from ``pool`` (two seats of one endpoint share it) and make
        each seat's reusable call, call options and request."""
        self.pool = pool
        for seat, s in enumerate(self.seats):
            lease = self.leases.get(s.endpoint)
            if lease is None:
                lease = self.leases[s.endpoint] = pool.lease(s.endpoint)
            metadata = ((BOT_SECRET_METADATA, s.secret),) if s.secret else None
            self.stubs.append(lease.stub)
            self.metadata.append(metadata)
            self.decide_calls.append(lease.stub.Decide)
            self.call_options.append({"timeout": self.deadline_ms / 1000,
                                      **({"metadata": metadata} if metadata else {})})
            self.requests.append(bot_pb2.DecideRequest(match_id=self.match_id, seat=seat))
        n = len(self.seats)
        self.sequence = [0] * n
        self.keeps_history = [False] * n
        self.sent = [None] * n
        self.sending = [None] * n
        self.kind_values = {kind: wire.kind_value(kind) for kind in self.engine.info.decision_kinds}
        self.tally = FaultTally(n, self.limits)

    def close(self) -> None:
        """Give the leased channels back to the pool."""
        assert self.pool is not None
        for lease in self.leases.values():
            self.pool.release(lease)

    def playing(self, seat: int) -> bool:
        """True while the seat is still asked its decisions (it has not forfeited, the time limit has not hit)."""
        return seat not in self.forfeited and self.time_limit_at is None

    async def _call(self, method: str, seat: int, request: Any, timeout_ms: int) -> tuple[Any, str | None, str]:
        try:
            extra = {"metadata": self.metadata[seat]} if self.metadata[seat] else {}
            response = await getattr(self.stubs[seat], method)(request, timeout=timeout_ms / 1000, **extra)
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
        for seat, (response, kind, detail) in enumerate(answers):
            if kind is not None:
                self._fault(kind, seat, hand, turn, detail, None)
            else:  # the bot keeps each view's history: send it only what changed (Game.view_message)
                self.keeps_history[seat] = bool(response.keeps_history)

    def _request(self, seat: int, kind: str) -> bot_pb2.DecideRequest:
        """The seat's Decide request now (its reused message, refilled): the next sequence number and its view,
        which leaves out the history its bot keeps (``Game.view_message``)."""
        engine = self.engine
        if self.keeps_history[seat]:
            view_msg, self.sending[seat] = engine.view_message(self.state, seat, self.sent[seat])
        else:
            view_msg = engine.view_to_proto(engine.observe(self.state, seat))
        request = self.requests[seat]
        request.kind = self.kind_values[kind]  # type: ignore[assignment]
        request.sequence = self.sequence[seat]
        self.sequence[seat] += 1
        getattr(request, self.game).CopyFrom(view_msg)
        return request

    async def _ask(self, seats: list[int], requests: list[bot_pb2.DecideRequest]) -> list[_Answer]:
        """Ask every seat of ``seats`` its request at once (one gRPC call each, no task of ours), and wait for
        every answer or fault. A timeout while the event loop was late is asked again (same request) with the
        others of its wave, at most ``lag_retries`` times (see the module docstring)."""
        loop = asyncio.get_running_loop()
        threshold_ms = self.limits.excuse_threshold_ms(self.deadline_ms)
        answers: list[_Answer | None] = [None] * len(seats)
        lags: list[list[float]] = [[] for _ in seats]
        todo = list(range(len(seats)))
        while todo:
            since = loop.time()
            t0 = time.perf_counter()
            done_at = [0.0] * len(todo)
            calls = []
            for j, i in enumerate(todo):
                seat = seats[i]
                call = self.decide_calls[seat](requests[i], **self.call_options[seat])
                call.add_done_callback(functools.partial(_mark_done, done_at, j))
                calls.append(call)
            again = []
            try:
                for j, i in enumerate(todo):
                    response: Any = None
                    kind: str | None = None
                    detail = ""
                    try:
                        response = await calls[j]
                    except grpc.RpcError as exc:
                        kind = _fault_kind(exc.code() if hasattr(exc, "code") else None)
                        detail = _rpc_detail("Decide", exc, self.deadline_ms)
                    else:
                        if response is None:  # grpc.aio yields None when the answer does not parse
                            kind = "malformed"
                            detail = "Decide: the answer could not be decoded as a Decide response message"
                    latency_ms = round(((done_at[j] or time.perf_counter()) - t0) * 1000, 1)  # what a record keeps
                    if kind == "timeout" and len(lags[i]) < self.limits.lag_retries:
                        lag_ms = round(self.lag.max_since(since) * 1000, 3)  # as recorded, so replay agrees
                        if lag_ms > threshold_ms:  # the referee was late, not (necessarily) the bot: ask again
                            lags[i].append(lag_ms)
                            log.info("match %s: seat %d's Decide #%d timed out while the referee was %.0f ms late; "
                                     "asking again", self.match_id, seats[i], requests[i].sequence, lag_ms)
                            again.append(i)
                            continue
                    if lags[i] and kind == "timeout":
                        detail += (f" (asked {len(lags[i]) + 1} times; the referee's lateness excused the first "
                                   f"{len(lags[i])})")
                    answers[i] = _Answer(response, kind, detail, latency_ms, lags[i])
            except BaseException:  # cancelled: no call of ours outlives the match
                for call in calls:
                    call.cancel()
                raise
            todo = again
        return answers  # type: ignore[return-value]

    def _time_limit(self) -> None:
        """The match passed its time limit: nobody is asked again; seats over their share of it forfeit."""
        self.time_limit_at = len(self.decisions)
        hand, turn = self.engine.position(self.state)
        n = len(self.seats)
        share = self.limits.time_share_ms(n)
        log.info("match %s passed its %g s time limit at decision %d", self.match_id,
                 self.limits.match_time_limit_s, self.time_limit_at)
        for seat in range(n):
            used = bot_time_ms(self.decisions, seat, self.time_limit_at)
            if seat not in self.forfeited and used > share:
                self._forfeit(seat, "time_limit", hand, turn, None,
                              f"the match passed its {self.limits.match_time_limit_s:g} s time limit; this seat had "
                              f"used {used / 1000:.3f} s of Decide time, more than its share of {share / 1000:.3f} s")

    async def play(self) -> None:
        engine = self.engine
        limit_s = self.limits.match_time_limit_s
        while not engine.is_over(self.state):
            if limit_s and self.time_limit_at is None and time.monotonic() - self.started >= limit_s:
                self._time_limit()
            state = self.state
            pending = engine.pending_seats(state)
            hand, turn = engine.position(state)
            kinds = [engine.decision_kind(state, seat) for seat in pending]
            asked = [seat for seat in pending if self.playing(seat)]
            answers: dict[int, _Answer] = {}
            if asked:
                seqs = [self.sequence[seat] for seat in asked]
                requests = [self._request(seat, kinds[pending.index(seat)]) for seat in asked]
                answers = dict(zip(asked, await self._ask(asked, requests)))
                seq_of = dict(zip(asked, seqs))
            else:
                await asyncio.sleep(0)  # nobody to ask: let the rest of the loop run between rounds
            # The reveal: every answer (or fault) is in; apply them in seat order.
            for seat, kind in zip(pending, kinds):
                answer = answers.get(seat)
                if answer is not None:
                    if answer.response is not None:  # the bot got the view: it keeps what it was sent
                        self.sent[seat] = self.sending[seat]
                    else:  # down, failing or late: it may have lost what it kept (a restart), so the next
                        self.sent[seat] = None  # view is complete again
                    self._apply(seat, kind, seq_of[seat], hand, turn, answer)
                else:
                    self._apply_unasked(seat, kind, hand, turn)
            if self.on_progress is not None:
                try:
                    self.on_progress(state, self.state)
                except Exception:  # an observer never stops a match
                    log.exception("match %s: the progress observer raised", self.match_id)

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
                        f"{describe_legal(engine, legal)}",
                    )
        source = "bot"
        if action is None:
            action = engine.default_action(self.state, seat)
            source = "default"
        index = len(self.decisions)
        decision = {
            "seq": seq, "seat": seat, "kind": kind, "hand": hand, "turn": turn,
            "action": engine.action_to_dict(action), "source": source, "latency_ms": answer.latency_ms,
        }
        if answer.retry_lag_ms:
            decision["retries"] = len(answer.retry_lag_ms)
            decision["retry_lag_ms"] = list(answer.retry_lag_ms)
        self.decisions.append(decision)
        if fault is not None:
            self._fault(fault[0], seat, hand, turn, fault[1], index)
        else:
            assert self.tally is not None
            self.tally.answered(seat)
        self.state = engine.apply(self.state, seat, action)

    def _apply_unasked(self, seat: int, kind: str, hand: int, turn: int) -> None:
        """A decision of a seat that is no longer asked (it forfeited, or the time limit hit): the default."""
        action = self.engine.default_action(self.state, seat)
        self.decisions.append({
            "seq": None, "seat": seat, "kind": kind, "hand": hand, "turn": turn,
            "action": self.engine.action_to_dict(action),
            "source": "forfeit" if seat in self.forfeited else "time_limit", "latency_ms": None,
        })
        self.state = self.engine.apply(self.state, seat, action)

    def _fault(self, kind: str, seat: int, hand: int, turn: int, detail: str, decision: int | None) -> None:
        log.debug("match %s: %s fault of seat %d (%s): %s", self.match_id, kind, seat, self.seats[seat].name, detail)
        if kind == "unreachable" and self.pool is not None:  # the next match gets a fresh channel to that bot
            self.pool.retire(self.leases[self.seats[seat].endpoint])
        self.faults.append(Fault(kind, seat, hand, turn, detail, decision))
        assert self.tally is not None
        reason = self.tally.fault(seat, kind)
        if reason is not None and seat not in self.forfeited:
            self._forfeit(seat, reason, hand, turn, len(self.faults) - 1, self.tally.detail(seat, reason))

    def _forfeit(self, seat: int, reason: str, hand: int, turn: int, fault: int | None, detail: str) -> None:
        log.info("match %s: seat %d (%s) forfeits: %s", self.match_id, seat, self.seats[seat].name, detail)
        self.forfeited[seat] = reason
        self.forfeits.append(Forfeit(seat, reason, hand, turn, detail, fault))

    def result(self) -> MatchResult:
        outcome = self.engine.outcome(self.state)
        n = len(self.seats)
        counts = [0] * n
        for f in self.faults:
            counts[f.seat] += 1
        return MatchResult(
            scores=tuple(float(s) for s in outcome.scores),
            ranks=forfeit_ranks([int(r) for r in outcome.ranks], [s in self.forfeited for s in range(n)]),
            faults=tuple(counts),
            forfeits=tuple(self.forfeited.get(s) for s in range(n)),
        )

    async def end(self, result: MatchResult) -> None:
        result_msg = bot_pb2.MatchResult(scores=result.scores, ranks=result.ranks, faults=result.faults)
        told = [seat for seat in range(len(self.seats)) if seat not in self.forfeited]
        answers = await asyncio.gather(*(
            self._call("EndMatch", seat, bot_pb2.EndMatchRequest(match_id=self.match_id, seat=seat, result=result_msg),
                       self.call_deadline_ms)
            for seat in told
        ))
        for seat, (_, kind, detail) in zip(told, answers):
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
        (See "Failure policy" in the module docstring; defaults in ``arena.config.DEFAULTS``.)
        on_progress: called as ``on_progress(state_before, state_after)`` (engine states) after every round of
            decisions is applied, e.g. to show a game live; an exception it raises is logged, never fatal.
        channels: the pool of channels to bots to lease from (``arena.bot_channels.BotChannels``, of this event
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
    match = _Match(match_id, game, engine, config, seats, deadline_ms, call_deadline_ms, limits, state, started=t0)
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
