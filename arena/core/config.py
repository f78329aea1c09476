"""Defaults of the platform, in one place (STYLE.md habit 12). Every CLI option falls back to these."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

_T = TypeVar("_T")


@dataclass(frozen=True)
class Defaults:
    """Platform defaults.

    Attributes:
        server: address of the referee's Arena service, "host:port" (CLI ``--server`` / ``ARENA_SERVER``).
        listen: address ``arena serve`` binds: loopback only, unless ``--listen`` says otherwise (e.g.
            ``0.0.0.0:50051`` in docker-compose).
        web_listen: address ``arena web`` serves the pages on: loopback only, unless ``--listen`` says otherwise.
        data_dir: folder of the private Redis (appendonly files, pid and URL files), ``--data-dir``.
        deadline_ms: deadline of every Decide call, milliseconds (a tournament's may be
            ``MIN_DEADLINE_MS``..``MAX_DEADLINE_MS``).
        call_deadline_ms: deadline of GetInfo / StartMatch / EndMatch calls, milliseconds: short, so a bot that
            hangs there delays its match (or its result) by at most this much.
        workers: embedded workers of ``arena serve``.
        concurrency: matches one worker runs at once.
        block_ms: longest wait of a worker's blocking read of new jobs, milliseconds; bounds how long a worker takes
            to notice a stop request.
        drain_s: on stop, how long a worker's running matches may take to finish before they are cancelled (and
            left pending for another worker), seconds.
        seats_per_match: default k of a round robin (capped by the number of bots).
        rounds: default R of a round robin.
        initial_rating: Elo start, points. k_factor: Elo K, points.
        visibility_timeout_s: a claimed match job whose worker has not refreshed it for this many seconds is
            reclaimed by another worker (its worker is taken for dead); a live worker refreshes its running jobs
            every ``min(heartbeat_s, visibility_timeout_s / 3)`` seconds, so a long match never loses its job.
        heartbeat_s: seconds between two worker heartbeats (``arena worker list``); a worker whose last
            heartbeat is older than 3 heartbeat intervals is shown as not alive.
        worker_forget_s: seconds a worker that stopped sending heartbeats stays listed (its key's TTL).
        verify_timeout_s: how long the referee waits for a bot's GetInfo answer when it checks the bot
            (registration, update, and every bot of a new tournament), seconds: short, since each check holds
            a slot of its caller's class (``arena.server.admission``), and a failed registration answers no
            sooner than this.
        health_check_s: seconds between two PINGs of Redis by the referee; its gRPC health status ("" and
            "arena.v1.Arena") is SERVING while Redis answers, NOT_SERVING while it does not.
        max_faults: a seat forfeits its match (ranked last, never called again) at its ``max_faults``-th fault
            of the match; 0 = never (``docs/failure-policy.md``).
        max_consecutive_timeouts: a seat forfeits at this many timeouts in a row, so a bot that stopped answering
            costs its match about this many deadlines; 0 = never.
        match_time_limit_s: wall-clock limit of one match, seconds; past it nobody is asked again and each seat
            that used more than its share (``match_time_limit_s / seats``) of Decide time forfeits; 0 = none.
        lag_threshold_ms: a Decide that timed out while the referee's own event loop was late by more than
            ``min(lag_threshold_ms, deadline / 4)`` milliseconds is not the bot's fault: it is asked again.
        lag_retries: at most this many such re-asks per decision (then the timeout is a fault); 0 = never.
        max_deliveries: a match job delivered this many times without being settled (its workers died, or a
            platform error each time) is recorded as failed and acknowledged, so its tournament can finish.
        unhealthy_after: a bot whose matches failed this many times in a row (it forfeited, or answered no call)
            is marked unhealthy and its matches are deferred (``arena.worker.health``).
        bot_recheck_s: seconds between two GetInfo calls to each unhealthy bot (by one worker of the fleet); one
            that answers is healthy again and its deferred matches are queued again.
        max_deferral_s: a match deferred this long is played anyway (its absent bot forfeits it), so a tournament
            with a bot that never comes back still ends, seconds.
        bot_channel_idle_s: a worker closes its channel (HTTP/2 connection) to a bot when no match has used it for
            this many seconds (``arena.match.channels``).
    """

    server: str = "localhost:50051"
    listen: str = "127.0.0.1:50051"
    web_listen: str = "127.0.0.1:8080"
    data_dir: Path = Path(".arena")
    deadline_ms: int = 1000
    call_deadline_ms: int = 2000
    workers: int = 2
    concurrency: int = 4
    block_ms: int = 500
    drain_s: float = 60.0
    seats_per_match: int = 4
    rounds: int = 1
    initial_rating: float = 1500.0
    k_factor: float = 32.0
    visibility_timeout_s: float = 30.0
    heartbeat_s: float = 5.0
    worker_forget_s: float = 3600.0
    max_deliveries: int = 5
    verify_timeout_s: float = 2.0
    health_check_s: float = 2.0
    max_faults: int = 10
    max_consecutive_timeouts: int = 3
    match_time_limit_s: float = 600.0
    lag_threshold_ms: int = 100
    lag_retries: int = 2
    unhealthy_after: int = 3
    bot_recheck_s: float = 5.0
    max_deferral_s: float = 600.0
    bot_channel_idle_s: float = 60.0


DEFAULTS = Defaults()

# The range of a tournament's Decide deadline, milliseconds (CreateTournamentRequest.deadline_ms in the protocol):
# under 10 ms a loopback round trip alone can miss it; over a minute a hung bot stalls its matches for too long.
MIN_DEADLINE_MS = 10
MAX_DEADLINE_MS = 60_000


def replace_fields(base: _T, keywords: Mapping[str, Any], what: str) -> _T:
    """The frozen dataclass ``base`` with the fields named in ``keywords`` replaced (``base`` itself when there are
    none). Raises ``TypeError`` naming the keywords that are no field (``what``, e.g. "referee option"), and what
    the dataclass's own checks raise for a bad value."""
    if not keywords:
        return base
    unknown = sorted(set(keywords) - {f.name for f in dataclasses.fields(base)})  # type: ignore[arg-type]
    if unknown:
        raise TypeError(f"unknown {what}(s) {', '.join(unknown)}")
    return dataclasses.replace(base, **keywords)  # type: ignore[type-var]
