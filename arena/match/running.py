"""One running match, for ``arena.match.referee.run_match``: its bookkeeping (``RunningMatch``: the views sent, the
answers applied, faults, forfeits and the time limit). Its calls to the bots, whose Decide timeouts that were the
referee's own lateness are excused with the event loop's ``LoopLag`` (``arena.match.loop_lag``), are those of its base
``BotCalls`` (``arena.match.bot_calls``). The rules they follow are those of the failure policy,
``docs/failure-policy.md``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from arena.core.text import printable
from arena.match.bot_calls import BotCalls, _Answer
from arena.match.channels import BotChannels, BotLease
from arena.match.loop_lag import LoopLag
from arena.match.options import RefereeOptions
from arena.match.record import (
    Fault,
    FaultTally,
    Forfeit,
    Limits,
    MatchResult,
    SeatSpec,
    bot_time_ms,
    describe_legal,
    forfeit_ranks,
    pending_kind,
)
from arena.match.streams import SeatStream
from arena_sdk import wire
from arena_sdk.games import Game
from arena_sdk.guard import secret_metadata
from arena_sdk.pb import bot_pb2

log = logging.getLogger("arena.match.referee")  # the referee's work: one logger name for operators' filters
MAX_NOTE_CHARS = 280  # a bot note (DecideResponse.note) is cut to this many characters
MAX_NOTES_CHARS_PER_MATCH = 8000  # the characters of one seat's notes a match record keeps; later ones are dropped
NOTE_SCANNED_CHARS = 4 * MAX_NOTE_CHARS  # of a note, the characters cleaned of control characters (the rest: dropped)

STREAM_FINISH_S = 0.5  # after the end, a seat's match stream is given this long to end before it is cancelled


@dataclass
class RunningMatch(BotCalls):
    """The mutable bookkeeping of one running match (``arena.match.referee.run_match`` makes one per match, opens it
    on a pool of channels, starts, plays and ends it, and builds the record from it)."""

    match_id: str
    game: str
    engine: Game
    config: Any
    seats: tuple[SeatSpec, ...]
    options: RefereeOptions
    state: Any
    lag: LoopLag = field(default_factory=LoopLag)
    started: float = field(default_factory=time.monotonic)
    pool: BotChannels | None = None
    leases: dict[str, BotLease] = field(default_factory=dict)  # endpoint -> its channel, leased from the pool
    stubs: list[Any] = field(default_factory=list)  # per seat: its stub (GuardedBotStub) or its SeatStream
    channels: list[grpc.aio.Channel] = field(default_factory=list)  # per seat: the channel of its stub
    undecodable_logged: set[tuple[int, str]] = field(default_factory=set)  # (seat, method) logged once per match
    reached: list[bool] = field(default_factory=list)  # per seat: its bot has answered a call of this match
    outages: list[int] = field(default_factory=list)  # per seat: calls in a row that waited for it in vain
    metadata: list[tuple[tuple[str, str], ...] | None] = field(default_factory=list)  # per seat: its bot secret
    sequence: list[int] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    forfeits: list[Forfeit] = field(default_factory=list)
    forfeited: dict[int, str] = field(default_factory=dict)
    time_limit_at: int | None = None
    tally: FaultTally | None = None
    on_progress: Callable[[Any, Any], None] | None = None
    note_chars: dict[int, int] = field(default_factory=dict)  # per seat: characters of bot notes kept so far
    # per seat, made once per match and reused by every Decide: the call, its keyword arguments, the request
    decide_calls: list[Any] = field(default_factory=list)
    call_options: list[dict[str, Any]] = field(default_factory=list)
    requests: list[bot_pb2.DecideRequest] = field(default_factory=list)
    keeps_history: list[bool] = field(default_factory=list)  # per seat: StartMatchResponse.keeps_history
    sent: list[Any] = field(default_factory=list)  # per seat: what its bot has been sent (Game.view_message)
    sending: list[Any] = field(default_factory=list)  # per seat: what it has been sent once it answers
    kind_values: dict[str, int] = field(default_factory=dict)
    streams: list[SeatStream | None] = field(default_factory=list)  # per seat: its match stream, None: unary calls
    refused_streams: list[int] = field(default_factory=list)  # per seat: streams its PlayMatch refused (unary since)
    seat_seeds: tuple[int, ...] = ()  # per seat: the seed of its bot's own randomness, sent in its StartMatch only
    # per seat: its seat key (bot.proto StartMatchRequest.seat_key), drawn at random for this play of the match and
    # sent in its own StartMatch, Decide and EndMatch only; never recorded or logged
    seat_keys: list[int] = field(default_factory=list)
    limits: Limits = field(init=False)  # options.limits, made once

    def __post_init__(self) -> None:
        self.limits = self.options.limits

    @property
    def deadline_ms(self) -> int:
        return self.options.deadline_ms

    @property
    def call_deadline_ms(self) -> int:
        return self.options.call_deadline_ms

    def open(self, pool: BotChannels) -> None:
        """Lease one channel per distinct endpoint from ``pool`` (two seats of one endpoint share it) and make
        each seat's reusable call, call options and request."""
        self.pool = pool
        self.seat_keys = [secrets.randbits(64) or 1 for _ in self.seats]
        for seat, s in enumerate(self.seats):
            lease = self.leases.get(s.endpoint)
            if lease is None:
                lease = self.leases[s.endpoint] = pool.lease(s.endpoint)
            metadata = secret_metadata(s.secret)
            self.stubs.append(lease.stub)
            self.channels.append(lease.channel)
            self.metadata.append(metadata)
            self.decide_calls.append(lease.stub.Decide)
            self.call_options.append({"timeout": self.deadline_ms / 1000,
                                      **({"metadata": metadata} if metadata else {})})
            self.requests.append(bot_pb2.DecideRequest(match_id=self.match_id, seat=seat,
                                                       seat_key=self.seat_keys[seat]))
        n = len(self.seats)
        self.sequence = [0] * n
        self.reached = [False] * n
        self.outages = [0] * n
        self.keeps_history = [False] * n
        self.sent = [None] * n
        self.sending = [None] * n
        self.kind_values = {kind: wire.kind_value(kind) for kind in self.engine.info.decision_kinds}
        self.tally = FaultTally(n, self.limits)

    def close(self) -> None:
        """End the seats' match streams and give the leased channels back to the pool (telling it of each seat
        whose stream was opened again after it broke: ``BotChannels.connection_went``)."""
        assert self.pool is not None
        for seat, stream in enumerate(self.streams):
            if stream is not None:
                stream.close()
                if stream.opened > 1:
                    self._connection_went(seat)
        for lease in self.leases.values():
            self.pool.release(lease)

    def _unary_from_now(self, seat: int) -> bool:
        """Call the seat's bot through the unary calls from now on (its stream refused as not served: a
        ``StreamNotServed``, the bot's GetInfo saying serves_match_stream though its PlayMatch is not implemented).
        True when the seat was on its match stream until now."""
        stream = self.streams[seat]
        if stream is None:
            return False
        stream.close()
        self.streams[seat] = None
        self.refused_streams[seat] = stream.opened
        self.stubs[seat] = stream.stub
        self.decide_calls[seat] = stream.stub.Decide
        request = bot_pb2.DecideRequest()
        request.CopyFrom(self.requests[seat])  # out of the stream's reusable message
        self.requests[seat] = request
        return True

    def transports(self) -> tuple[tuple[str, int], ...]:
        """``MatchRecord.transports``: per seat ("stream", streams opened) or ("unary", streams its bot refused)."""
        return tuple(("unary", self.refused_streams[seat]) if stream is None else ("stream", stream.opened)
                     for seat, stream in enumerate(self.streams))

    def _connection_went(self, seat: int) -> None:
        assert self.pool is not None
        self.pool.connection_went(self.leases[self.seats[seat].endpoint])

    async def choose_paths(self) -> None:
        """Drive every seat whose bot serves the match stream (``BotInfo.serves_match_stream``, asked once per
        channel of the pool, concurrently) through its own ``SeatStream``, the others through the unary calls.
        A bot whose GetInfo fails or does not decode is called through the unary calls in this match."""
        self.streams = [None] * len(self.seats)
        self.refused_streams = [0] * len(self.seats)
        if not self.options.match_stream:
            return
        unknown = [lease for lease in self.leases.values() if lease.serves_match_stream is None]
        if unknown:
            timeout_s = self.call_deadline_ms / 1000

            async def info_of(lease: BotLease) -> Any:
                try:
                    return await lease.stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=timeout_s)  # type: ignore[misc]
                except Exception as exc:  # down, failing, or a stub without GetInfo: the unary calls this match
                    return exc

            answers = await asyncio.gather(*(info_of(lease) for lease in unknown))
            for lease, info in zip(unknown, answers):
                if isinstance(info, bot_pb2.BotInfo):
                    lease.info = info
        for seat, s in enumerate(self.seats):
            if self.leases[s.endpoint].serves_match_stream:
                stream = self.streams[seat] = SeatStream(self.stubs[seat], seat, f"bot {s.name} at {s.endpoint}",
                                                         functools.partial(self._connected, seat))
                self.stubs[seat] = stream  # the stub's calls, on the stream
                self.decide_calls[seat] = stream.Decide
                self.requests[seat] = stream.decide_request(self.requests[seat])  # filled in its message

    def playing(self, seat: int) -> bool:
        """True while the seat is still asked its decisions (it has not forfeited, the time limit has not hit)."""
        return seat not in self.forfeited and self.time_limit_at is None

    async def start(self) -> None:
        names = [s.name for s in self.seats]
        config_msg = wire.config_to_proto(self.game, self.config)
        requests = [
            bot_pb2.StartMatchRequest(
                match_id=self.match_id, game=self.game, seat=seat, num_players=len(self.seats),
                player_names=names, config=config_msg,
                seat_seed=self.seat_seeds[seat] if self.seat_seeds else None, seat_key=self.seat_keys[seat],
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
        request = self.requests[seat]
        view = getattr(request, self.game)
        if self.keeps_history[seat]:
            self.sending[seat] = engine.view_message_into(view, self.state, seat, self.sent[seat])
        else:
            view.CopyFrom(engine.view_to_proto(engine.observe(self.state, seat)))
        request.kind = self.kind_values[kind]  # type: ignore[assignment]
        request.sequence = self.sequence[seat]
        self.sequence[seat] += 1
        return request

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
            kinds = [pending_kind(engine, state, seat) for seat in pending]
            asked = [seat for seat in pending if self.playing(seat)]
            answers: dict[int, _Answer] = {}
            if asked:
                seq_of = {seat: self.sequence[seat] for seat in asked}
                requests = [self._request(seat, kinds[pending.index(seat)]) for seat in asked]
                answers = dict(zip(asked, await self._ask(asked, requests)))
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
        if answer.response is not None and answer.response.note and source == "bot":
            note = self._note(seat, answer.response.note)
            if note:
                decision["note"] = note
        self.decisions.append(decision)
        if fault is not None:
            self._fault(fault[0], seat, hand, turn, fault[1], index)
        else:
            assert self.tally is not None
            self.tally.answered(seat)
        self.state = engine.apply(self.state, seat, action)

    def _note(self, seat: int, text: str) -> str:
        """The part of a bot's note (``DecideResponse.note``) the record keeps: control characters removed, at most
        ``MAX_NOTE_CHARS``, within the seat's ``MAX_NOTES_CHARS_PER_MATCH`` of this match ("" once it is used).
        Only the note's first ``NOTE_SCANNED_CHARS`` characters are looked at: a 64 KiB note of control characters
        would cost the event loop ~40 ms per answer to clean (every match of the worker waiting)."""
        used = self.note_chars.get(seat, 0)
        room = min(MAX_NOTE_CHARS, MAX_NOTES_CHARS_PER_MATCH - used)
        if room <= 0 or not text:
            return ""
        note = printable(text[:NOTE_SCANNED_CHARS])[:room]
        self.note_chars[seat] = used + len(note)
        return note

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
        detail = printable(detail)  # a bot's error status is in it: no terminal escape reaches a reader of the record
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
            self._call("EndMatch", seat, bot_pb2.EndMatchRequest(match_id=self.match_id, seat=seat, result=result_msg,
                                                                 seat_key=self.seat_keys[seat]),
                       self.call_deadline_ms)
            for seat in told
        ))
        for seat, (_, kind, detail) in zip(told, answers):
            if kind is not None:  # not a fault: the result is final (docs/failure-policy.md)
                log.info("match %s: EndMatch to seat %d (%s) failed: %s", self.match_id, seat,
                         self.seats[seat].name, detail)
        streams = [stream for seat, stream in enumerate(self.streams) if stream is not None and seat in told]
        if streams:  # each bot ends its side once it has the end: the streams finish without being cancelled
            wait_s = min(self.call_deadline_ms / 1000, STREAM_FINISH_S)  # then a bot still holding it is cut off
            await asyncio.gather(*(stream.finish(wait_s) for stream in streams))
