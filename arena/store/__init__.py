"""The arena's Redis store (DESIGN.md "Scheduling and storage"): every key name and Lua script in ``keys``, one
module per concern (``bots``; ``tournaments`` and ``jobs``, with the workers' heartbeats; ``results`` and the
ladder), put together in ``Store``.

Exactly once: a result is stored, its Elo update applied, the results log appended, the match indexes and the
tournament's progress and standings counters bumped in ONE atomic step (the Lua script ``scripts.RECORD_RESULT``). The
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

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError

from arena.core.specs import split_bot_ref
from arena.store.base import CHUNK, REDIS_ERRORS, OwnershipError, StoreBase, StoreError
from arena.store.bots import UNVERIFIED_VERSION, BotEntry, BotStore
from arena.store.credentials import CredentialStore
from arena.store.health import EARLIER_DELIVERIES_FIELD, FORCED_FIELD, BotHealth, DeferredMatch, HealthStore
from arena.store.jobs import Job, JobStore, WorkerStatus
from arena.store.keys import (
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
    unhealthy_key,
    versions_key,
    worker_key,
)
from arena.store.live import LiveMatch, LiveStore
from arena.store.owners import OwnerAccount, OwnerStore, QuotaError, Registration, UnknownOwnerError
from arena.store.results import RECORD_ATTEMPTS, LadderCheck, LadderEntry, ResultStore, ladders_equal
from arena.store.sprt import SprtRecord, SprtStore, TableOutcome
from arena.store.tournaments import TournamentInfo, TournamentStore


@dataclass(frozen=True)
class MatchInputs:
    """What a worker reads before playing a match (``Store.match_inputs``), in one round trip.

    Attributes: has_result (its result is stored); tournament_state ("running" | "finished" | "cancelled", None
    outside tournaments or when unknown); tournament_seed (the tournament's secret seed, None outside tournaments
    or when unknown); unhealthy (the seats' bots that are unhealthy now, in seat order); bots (per seat, its
    ``BotEntry``, None when not registered).
    """

    has_result: bool
    tournament_state: str | None
    tournament_seed: int | None
    unhealthy: list[str]
    bots: list[BotEntry | None]


class Store(ResultStore, BotStore, HealthStore, SprtStore, CredentialStore, OwnerStore, LiveStore):
    """All Redis reads and writes of the arena: bots (``BotStore``), tournaments (``TournamentStore``), match jobs
    and worker heartbeats (``JobStore``), results and the ladder (``ResultStore``), bot health and deferred matches
    (``HealthStore``), owner accounts and registration settings (``OwnerStore``), the matches being played now
    (``LiveStore``), on one client (``StoreBase``).

    Args:
        client: a redis-py client created with ``decode_responses=True`` (see ``Store.from_url``).
        initial_rating: Elo start of a new bot, points. k_factor: Elo K, points.
    Redis errors (``redis.RedisError``) pass through to the caller.
    """

    def match_inputs(self, game: str, match_id: str, tournament: str, seats: Sequence[str]) -> MatchInputs:
        """Everything a worker checks before playing match ``match_id`` of ``game`` (``tournament`` "" outside
        tournaments), read in ONE pipelined round trip (every key of the game's hash tag): whether its result is
        stored, its tournament's state and seed, which of the ``seats`` (bot refs) are unhealthy, and each seat's
        registered bot. A ref "NAME" (no version) costs one more read to find its latest version."""
        pipe = self.client.pipeline(transaction=False)
        pipe.exists(result_key(game, match_id))
        if tournament:
            pipe.hmget(tournament_key(game, tournament), ["state", "spec"])
        pipe.zmscore(unhealthy_key(game), list(seats))
        versioned = []
        for ref in seats:
            try:
                _name, version = split_bot_ref(ref)
            except ValueError:
                version = None
            versioned.append(version is not None)
            if version is not None:
                pipe.hgetall(bot_key(game, ref))
        replies = iter(pipe.execute())
        has_result = bool(next(replies))
        state = seed = None
        if tournament:
            state, spec = next(replies)
            seed = int(json.loads(spec)["seed"]) if spec else None
        since = next(replies) or []
        bots: list[BotEntry | None] = []
        for ref, direct in zip(seats, versioned):
            if direct:
                h = next(replies)
                bots.append(self._bot(h) if h else None)
            else:
                bots.append(self.get_bot(game, ref))
        return MatchInputs(has_result=has_result, tournament_state=state, tournament_seed=seed,
                           unhealthy=[b for b, t in zip(seats, since) if t is not None], bots=bots)

    def ack_and_count_health(self, job: Job, game: str, match_id: str, outcomes: Mapping[str, str | None], *,
                             unhealthy_after: int) -> dict[str, int] | Exception:
        """``ack_job`` and ``record_match_health`` of a match whose result was stored now, in ONE transaction (one
        round trip; on a Redis Cluster, whose pipelines refuse scripts, two calls). Health is advice: its failure is
        returned (the job is acknowledged all the same); a failure of the acknowledgement is raised
        (``redis.RedisError``)."""
        try:
            bots, script_keys, args = self.health_call(game, match_id, outcomes, unhealthy_after=unhealthy_after)
        except ValueError as exc:
            self.ack_job(job)
            return exc
        if isinstance(self.client, RedisCluster):  # its pipelines refuse scripts: two round trips there
            self.ack_job(job)
            try:
                return self.record_match_health(game, match_id, outcomes, unhealthy_after=unhealthy_after)
            except Exception as exc:  # noqa: BLE001 - health is advice
                return exc
        pipe = self.client.pipeline(transaction=True)
        pipe.xack(jobs_key(job.game), JOBS_GROUP, job.entry_id)
        pipe.xdel(jobs_key(job.game), job.entry_id)
        if bots:
            pipe.evalsha(self._record_health.sha, len(script_keys), *script_keys, *args)
        replies: list[Any] = pipe.execute(raise_on_error=False)
        for reply in replies[:2]:
            if isinstance(reply, Exception):
                raise reply
        if not bots:
            return {}
        reply = replies[2]
        try:
            if isinstance(reply, NoScriptError):  # a restarted Redis forgot the script: load it and count again
                reply = self._record_health(keys=script_keys, args=args)
        except Exception as exc:  # noqa: BLE001 - health is advice
            return exc
        if isinstance(reply, Exception):
            return reply
        return {b: int(r) for b, r in zip(bots, reply)}


__all__ = [
    "ARENA_ID", "CHUNK", "MatchInputs", "EARLIER_DELIVERIES_FIELD", "FORCED_FIELD", "GAMES_SET", "JOBS_GROUP", "PREFIX",
    "RECORD_ATTEMPTS", "TOURNAMENTS", "TOURNAMENT_IDS", "UNVERIFIED_VERSION", "WORKERS", "BotEntry", "BotHealth",
    "REDIS_ERRORS", "BotStore", "DeferredMatch", "HealthStore", "Job", "JobStore", "LadderCheck", "LadderEntry",
    "LiveMatch", "LiveStore",
    "OwnershipError", "ResultStore", "Store", "StoreBase", "StoreError", "TournamentInfo", "TournamentStore",
    "WorkerStatus", "bot_key", "bot_matches_key", "bots_key", "cancelled_key", "failed_key", "jobs_key", "ladder_key",
    "ladder_stats_key", "ladders_equal", "match_key", "matches_index_key", "name_matches_key", "owner_key",
    "result_key", "results_log_key", "standings_key", "token_hash", "tournament_key", "tournament_matches_key",
    "versions_key", "worker_key",
    "SprtRecord", "SprtStore", "TableOutcome",
    "OwnerAccount", "OwnerStore", "QuotaError", "Registration", "UnknownOwnerError",
]
