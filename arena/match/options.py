"""``RefereeOptions``: the deadlines and limits one match is refereed with, as one frozen object (STYLE.md habit 17,
as python-chess's ``engine.Limit``); its defaults are ``arena.core.config.DEFAULTS``. What each limit does to a
bot is the failure policy: ``docs/failure-policy.md``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from arena.core.config import DEFAULTS, replace_fields
from arena.match.record import Limits, _is_int


def check_deadline_ms(name: str, value: Any) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a positive integer number of milliseconds."""
    if not _is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive number of milliseconds, got {value!r}")


@dataclass(frozen=True)
class RefereeOptions:
    """How the referee runs one match (``arena.match.referee.run_match``).

    Attributes:
        deadline_ms: gRPC deadline of every ``Decide`` call, milliseconds (>= 1).
        call_deadline_ms: gRPC deadline of ``StartMatch`` and ``EndMatch``, milliseconds (>= 1).
        max_faults: a seat forfeits at its ``max_faults``-th fault of the match; 0 = never.
        max_consecutive_timeouts: a seat forfeits at this many timeouts in a row; 0 = never.
        match_time_limit_s: wall-clock limit of the match, seconds (finite, >= 0); 0 = none.
        lag_threshold_ms, lag_retries: a Decide timeout while the referee's event loop was late by more than
            ``min(lag_threshold_ms, deadline_ms / 4)`` ms is asked again, at most ``lag_retries`` times (>= 0).
        match_stream: drive a bot through the match stream (``PlayMatch``, one stream per seat) when its
            ``GetInfo`` says it serves it; False: the unary calls always (bool).
    Raises ``ValueError`` naming the first bad field: a deadline that is not a positive integer, a count that is not
    an integer >= 0, a time limit that is not a finite number of seconds >= 0.
    """

    deadline_ms: int = DEFAULTS.deadline_ms
    call_deadline_ms: int = DEFAULTS.call_deadline_ms
    max_faults: int = DEFAULTS.max_faults
    max_consecutive_timeouts: int = DEFAULTS.max_consecutive_timeouts
    match_time_limit_s: float = DEFAULTS.match_time_limit_s
    lag_threshold_ms: int = DEFAULTS.lag_threshold_ms
    lag_retries: int = DEFAULTS.lag_retries
    match_stream: bool = True

    def __post_init__(self) -> None:
        check_deadline_ms("deadline_ms", self.deadline_ms)
        check_deadline_ms("call_deadline_ms", self.call_deadline_ms)
        for name in ("max_faults", "max_consecutive_timeouts", "lag_threshold_ms", "lag_retries"):
            value = getattr(self, name)
            if not _is_int(value) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0 (0 = no limit), got {value!r}")
        if not isinstance(self.match_stream, bool):
            raise ValueError(f"match_stream must be True or False, got {self.match_stream!r}")
        limit = self.match_time_limit_s
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not math.isfinite(limit) or limit < 0:
            raise ValueError(f"match_time_limit_s must be a number of seconds >= 0 (0 = none), got {limit!r}")

    @property
    def limits(self) -> Limits:
        """The limits a match record keeps (``MatchRecord.limits``)."""
        return Limits(self.max_faults, self.max_consecutive_timeouts, float(self.match_time_limit_s),
                      self.lag_threshold_ms, self.lag_retries)

    @classmethod
    def with_keywords(cls, options: RefereeOptions | None, keywords: dict[str, Any]) -> RefereeOptions:
        """``options`` (None: the defaults) with the fields named in ``keywords`` replaced. Raises ``TypeError``
        for a keyword that is no field, ``ValueError`` for a bad value."""
        return replace_fields(cls() if options is None else options, keywords, "referee option")
