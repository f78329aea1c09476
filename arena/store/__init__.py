"""The arena's Redis store (DESIGN.md "Scheduling and storage"): every key name and Lua script in ``keys``, one
module per concern (``bots``; ``tournaments`` and ``jobs``, with the workers' heartbeats; ``results`` and the
ladder), put together in ``Store``.

Exactly once: a result is stored, its Elo update applied, the results log appended, the match indexes and the
tournament's progress and standings counters bumped in ONE atomic step (the Lua script ``keys.RECORD_RESULT``). The
deltas are computed in Python by ``arena.ratings.elo_deltas`` from the pre-match ratings; the script applies
everything only if the result of that match id is absent (else it changes nothing: idempotent) and the ratings are
still the ones the deltas were computed from (else the caller recomputes: optimistic concurrency, no WATCH).

Jobs: a job claimed by a worker stays pending in the consumer group until it is settled: acknowledged after its
result is stored, or dropped (acknowledged without running) when its tournament was cancelled or it failed too
often. A live worker refreshes the idle time of the jobs it runs (``refresh_jobs``); a job idle for longer than
the visibility timeout belongs to a dead worker and is reclaimed by another (``reclaim_jobs``), which bumps its
delivery count. Acknowledged jobs are deleted from the stream, so the stream holds only unsettled jobs.
"""

from __future__ import annotations

from .base import CHUNK, OwnershipError, StoreBase, StoreError
from .bots import UNVERIFIED_VERSION, BotEntry, BotStore
from .health import EARLIER_DELIVERIES_FIELD, FORCED_FIELD, BotHealth, DeferredMatch, HealthStore
from .jobs import Job, JobStore, WorkerStatus
from .keys import (
    GAMES_SET,
    JOBS_GROUP,
    PREFIX,
    TOURNAMENT_IDS,
    TOURNAMENTS,
    WORKERS,
    bot_key,
    bot_matches_key,
    bots_key,
    cancelled_key,
    failed_key,
    jobs_key,
    ladder_key,
    ladder_stats_key,
    match_key,
    matches_index_key,
    name_matches_key,
    owner_key,
    result_key,
    results_log_key,
    standings_key,
    token_hash,
    tournament_key,
    tournament_matches_key,
    versions_key,
    worker_key,
)
from .results import RECORD_ATTEMPTS, LadderCheck, LadderEntry, ResultStore, ladders_equal
from .tournaments import TournamentInfo, TournamentStore


class Store(ResultStore, BotStore, HealthStore):
    """All Redis reads and writes of the arena: bots (``BotStore``), tournaments (``TournamentStore``), match jobs
    and worker heartbeats (``JobStore``), results and the ladder (``ResultStore``), bot health and deferred matches
    (``HealthStore``), on one client (``StoreBase``).

    Args:
        client: a redis-py client created with ``decode_responses=True`` (see ``Store.from_url``).
        initial_rating: Elo start of a new bot, points. k_factor: Elo K, points.
    Redis errors (``redis.RedisError``) pass through to the caller.
    """


__all__ = [
    "ARENA_ID", "CHUNK", "EARLIER_DELIVERIES_FIELD", "FORCED_FIELD", "GAMES_SET", "JOBS_GROUP", "PREFIX",
    "RECORD_ATTEMPTS", "TOURNAMENTS", "TOURNAMENT_IDS", "UNVERIFIED_VERSION", "WORKERS", "BotEntry", "BotHealth",
    "BotStore", "DeferredMatch", "HealthStore", "Job", "JobStore", "LadderCheck", "LadderEntry",
    "OwnershipError", "ResultStore", "Store", "StoreBase", "StoreError", "TournamentInfo", "TournamentStore",
    "WorkerStatus", "bot_key", "bot_matches_key", "bots_key", "cancelled_key", "failed_key", "jobs_key", "ladder_key",
    "ladder_stats_key", "ladders_equal", "match_key", "matches_index_key", "name_matches_key", "owner_key",
    "result_key", "results_log_key", "standings_key", "token_hash", "tournament_key", "tournament_matches_key",
    "versions_key", "worker_key",
]
