"""``WorkerSettings``: every option of a worker as one frozen object (STYLE.md habit 17, as arq's
``WorkerSettings``); its defaults are ``arena.core.config.DEFAULTS``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from arena.core.config import DEFAULTS, replace_fields


def check_worker_options(concurrency: int, visibility_timeout_s: float, heartbeat_s: float,
                         max_deliveries: int) -> None:
    """Raise ``ValueError`` naming the bad value: concurrency < 1, a timeout or interval <= 0 or not finite,
    max_deliveries < 1."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if not 0 < visibility_timeout_s < math.inf:
        raise ValueError(f"visibility timeout must be a finite number of seconds above 0, got {visibility_timeout_s}")
    if not 0 < heartbeat_s < math.inf:
        raise ValueError(f"heartbeat interval must be a finite number of seconds above 0, got {heartbeat_s}")
    if max_deliveries < 1:
        raise ValueError(f"max deliveries must be at least 1, got {max_deliveries}")


def check_health_options(unhealthy_after: int, bot_recheck_s: float, max_deferral_s: float) -> None:
    """Raise ``ValueError`` naming the bad value: unhealthy_after < 1, bot_recheck_s <= 0, max_deferral_s < 0, or
    either not finite."""
    if unhealthy_after < 1:
        raise ValueError(f"unhealthy_after must be at least 1, got {unhealthy_after}")
    if not 0 < bot_recheck_s < math.inf:
        raise ValueError(f"bot recheck interval must be a finite number of seconds above 0, got {bot_recheck_s}")
    if not 0 <= max_deferral_s < math.inf:
        raise ValueError(f"max deferral must be a finite number of seconds, 0 or more, got {max_deferral_s}")


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker claims, runs and settles match jobs (``arena.worker.loop.run_worker``).

    Attributes:
        concurrency: matches run at once (>= 1).
        block_ms: longest wait for new jobs, ms (bounds the reaction time to a stop request).
        drain_s: on stop, how long running matches may take to finish before they are cancelled, seconds.
        call_deadline_ms: deadline of GetInfo / StartMatch / EndMatch calls to the bots, ms.
        visibility_timeout_s: jobs pending this long without a refresh are reclaimed from their (dead) worker, s.
        heartbeat_s: seconds between heartbeats (capped at a third of the visibility timeout).
        max_deliveries: a job delivered more often is recorded as failed and acknowledged without running.
        forget_s: how long a worker that stopped sending heartbeats stays listed, seconds.
        unhealthy_after: failed matches in a row that make a bot unhealthy (its matches are then deferred).
        bot_recheck_s: seconds between two GetInfo calls to each unhealthy bot (by one worker of the fleet).
        max_deferral_s: a match deferred this long is played anyway, its absent bot forfeiting
            (``arena.worker.health``).
        bot_ca: PEM bytes of the CA bundle that the certificates of bots at ``tls://`` endpoints are verified
            against; None: the system's roots (``arena.match.channels.BotDialer``).
        busy_lag_ms: while the worker's event loop was late by more than this in the last ``BUSY_WINDOW_S``
            (``arena.match.loop_lag``), it starts no new match (its running ones go on): a concurrency above what
            its CPU keeps up with costs throughput, never bots' faults (half the referee's default lag threshold,
            past which a timeout is the referee's; 0: never held back).
    Raises ``ValueError`` naming the bad value: concurrency < 1, a timeout or interval <= 0, max_deliveries < 1,
    unhealthy_after < 1, max_deferral_s < 0.
    """

    concurrency: int = DEFAULTS.concurrency
    block_ms: int = DEFAULTS.block_ms
    drain_s: float = DEFAULTS.drain_s
    call_deadline_ms: int = DEFAULTS.call_deadline_ms
    visibility_timeout_s: float = DEFAULTS.visibility_timeout_s
    heartbeat_s: float = DEFAULTS.heartbeat_s
    max_deliveries: int = DEFAULTS.max_deliveries
    forget_s: float = DEFAULTS.worker_forget_s
    unhealthy_after: int = DEFAULTS.unhealthy_after
    bot_recheck_s: float = DEFAULTS.bot_recheck_s
    max_deferral_s: float = DEFAULTS.max_deferral_s
    bot_ca: bytes | None = field(default=None, repr=False)
    busy_lag_ms: float = 50.0

    def __post_init__(self) -> None:
        check_worker_options(self.concurrency, self.visibility_timeout_s, self.heartbeat_s, self.max_deliveries)
        check_health_options(self.unhealthy_after, self.bot_recheck_s, self.max_deferral_s)

    @classmethod
    def with_keywords(cls, settings: WorkerSettings | None, keywords: dict[str, Any]) -> WorkerSettings:
        """``settings`` (None: the defaults) with the fields named in ``keywords`` replaced. Raises ``TypeError``
        for a keyword that is no field, ``ValueError`` for a bad value."""
        return replace_fields(cls() if settings is None else settings, keywords, "worker setting")
