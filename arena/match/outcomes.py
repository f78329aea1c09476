"""The parts of a match's outcome, shared by the referee, the record and the replay: a seat (``SeatSpec``), a fault
(``Fault``, kinds ``FAULT_KINDS``), a forfeit (``Forfeit``, reasons ``FORFEIT_REASONS``), the referee's limits
(``Limits``), the result (``MatchResult``), and the forfeit rule (``FaultTally``) with the ranking it gives
(``forfeit_ranks``), each in one place so the referee that applies them and ``replay`` that checks them agree.
``arena.match.record`` holds them in a record (and names them too, for its readers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

FAULT_KINDS = ("timeout", "error", "unreachable", "illegal", "malformed")
SOURCES = ("bot", "default", "forfeit", "time_limit")
ASKED_SOURCES = ("bot", "default")  # the decisions a bot was asked; "forfeit" and "time_limit" were not asked
FORFEIT_REASONS = ("faults", "timeouts", "time_limit")


@dataclass(frozen=True)
class SeatSpec:
    """One seat of a match.

    Attributes:
        name: the bot's registered name (ladder identity; sent to every seat as ``player_names``).
        endpoint: ``"host:port"`` of the bot's ``arena.v1.Bot`` server.
        secret: the bot secret its owner registered ("" for none), sent in the ``arena-bot-secret`` call metadata
            of every StartMatch, Decide and EndMatch call to this seat (and of the worker's GetInfo checks); never
            recorded, never in ``repr``.
    """

    name: str
    endpoint: str
    secret: str = field(default="", repr=False, compare=False)


@dataclass(frozen=True)
class Fault:
    """A bot failure turned into data (STYLE.md habit 4).

    Attributes:
        kind: ``"timeout"`` (no answer within the deadline), ``"error"`` (any other failed gRPC status),
            ``"unreachable"`` (UNAVAILABLE: nobody listens, the connection broke, the process died),
            ``"illegal"`` (a well-formed action the rules do not allow now), ``"malformed"`` (no action, or the
            wrong action field for the decision kind).
        seat: the seat at fault, 0-based.
        hand: hand number of the game (0-based) when it happened; turn: turn within the hand.
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
class Forfeit:
    """A seat that lost the right to play on (``docs/failure-policy.md``): it is not called again,
    its remaining decisions get the default action without a call, and it is ranked last.

    Attributes:
        seat: the seat, 0-based.
        reason: ``"faults"`` (``max_faults`` faults in the match), ``"timeouts"`` (``max_consecutive_timeouts``
            timeouts in a row) or ``"time_limit"`` (the match passed ``match_time_limit_s`` and this seat had used
            more than its share of it).
        hand, turn: position of the game when it happened.
        detail: what happened, for a person.
        fault: index into ``MatchRecord.faults`` of the fault that reached the limit; None for ``"time_limit"``
            (which happens at decision ``MatchRecord.time_limit_at``).
    """

    seat: int
    reason: str
    hand: int
    turn: int
    detail: str
    fault: int | None


@dataclass(frozen=True)
class Limits:
    """The limits one match was refereed with, as its record keeps them (``RefereeOptions.limits`` of
    ``arena.match.options``). ``Limits()`` is "no limits", the reading of a version 1 record.

    Attributes:
        max_faults: a seat forfeits at its ``max_faults``-th fault of the match; 0 = never.
        max_consecutive_timeouts: a seat forfeits at its ``max_consecutive_timeouts``-th timeout in a row (calls
            that timed out with no other outcome between them, ``StartMatch`` included); 0 = never.
        match_time_limit_s: wall-clock limit of the match, seconds; 0 = none.
        lag_threshold_ms: a Decide timeout while the referee's own event loop was late by more than
            ``min(lag_threshold_ms, deadline_ms / 4)`` milliseconds is not a fault: the decision is asked again.
        lag_retries: at most this many such re-asks per decision; 0 = never re-ask.
    """

    max_faults: int = 0
    max_consecutive_timeouts: int = 0
    match_time_limit_s: float = 0.0
    lag_threshold_ms: int = 0
    lag_retries: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"max_faults": self.max_faults, "max_consecutive_timeouts": self.max_consecutive_timeouts,
                "match_time_limit_s": self.match_time_limit_s, "lag_threshold_ms": self.lag_threshold_ms,
                "lag_retries": self.lag_retries}

    def excuse_threshold_ms(self, deadline_ms: int) -> float:
        """Referee lag (ms) above which a Decide timeout is excused and the decision asked again."""
        return min(float(self.lag_threshold_ms), deadline_ms / 4)

    def time_share_ms(self, num_seats: int) -> float:
        """Each seat's share of the match time limit, ms: the Decide time a seat may use before the time limit
        charges it."""
        return self.match_time_limit_s * 1000 / num_seats


@dataclass(frozen=True)
class MatchResult:
    """Final result of a match, in seat order. The platform's one ``MatchResult``: the ratings read a match as
    ``arena.ratings.design.RatedMatch``; a bot receives the SDK's own ``arena_sdk.MatchResult`` in ``on_end``.

    Attributes:
        scores: the game's score of every seat (ordered as the game declares, see its ``GameInfo``), forfeits
            or not.
        ranks: standard competition ranks, 1 = best, after forfeits (``forfeit_ranks``): every forfeited seat
            is ranked below every other seat (forfeited seats share the last rank); the others keep the game's
            order among themselves; equal scores share a rank (1, 2, 2, 4). The ladder rates these ranks.
        faults: number of faults recorded against each seat.
        forfeits: per seat, None or the forfeit reason (``FORFEIT_REASONS``).
    """

    scores: tuple[float, ...]
    ranks: tuple[int, ...]
    faults: tuple[int, ...]
    forfeits: tuple[str | None, ...] = ()


def forfeit_ranks(game_ranks: Sequence[int], forfeited: Sequence[bool]) -> tuple[int, ...]:
    """Competition ranks after forfeits: a seat that did not forfeit is ranked 1 + the number of such seats the
    game ranked strictly better; every forfeited seat gets 1 + the number of seats that did not forfeit.

    >>> forfeit_ranks([1, 2, 2, 4], [True, False, False, False])
    (4, 1, 1, 3)
    >>> forfeit_ranks([3, 1, 2], [False, True, True])
    (1, 2, 2)
    """
    ok = [r for r, f in zip(game_ranks, forfeited) if not f]
    return tuple(len(ok) + 1 if f else 1 + sum(o < r for o in ok) for r, f in zip(game_ranks, forfeited))


class FaultTally:
    """Each seat's faults and timeouts in a row within one match, and the forfeit limit a fault reaches. The
    referee feeds it as the match runs; ``replay`` feeds it from the record; both then agree on every forfeit."""

    def __init__(self, num_seats: int, limits: Limits) -> None:
        self.limits = limits
        self.faults = [0] * num_seats
        self.streak = [0] * num_seats

    def answered(self, seat: int) -> None:
        """The seat answered a call (its answer was used): its timeouts in a row start again from 0."""
        self.streak[seat] = 0

    def fault(self, seat: int, kind: str) -> str | None:
        """Count a fault of ``seat``; return the forfeit reason it reaches (``"timeouts"`` first, then
        ``"faults"``) or None."""
        self.faults[seat] += 1
        self.streak[seat] = self.streak[seat] + 1 if kind == "timeout" else 0
        limit = self.limits.max_consecutive_timeouts
        if limit and self.streak[seat] >= limit:
            return "timeouts"
        if self.limits.max_faults and self.faults[seat] >= self.limits.max_faults:
            return "faults"
        return None

    def detail(self, seat: int, reason: str) -> str:
        if reason == "timeouts":
            return (f"{self.streak[seat]} timeouts in a row (max_consecutive_timeouts "
                    f"{self.limits.max_consecutive_timeouts})")
        return f"{self.faults[seat]} faults in this match (max_faults {self.limits.max_faults})"
