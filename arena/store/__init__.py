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
from dataclasses import dataclass, field
from typing import Any

from arena.core.specs import split_bot_ref
from arena.store.base import (
    CHUNK,
    REDIS_ERRORS,
    OwnershipError,
    StoreBase,
    StoreError,
    VersionsExhausted,
    write_refusal,
)
from arena.store.bots import UNVERIFIED_VERSION, BotEntry, BotStore
from arena.store.credentials import CredentialStore
from arena.store.health import EARLIER_DELIVERIES_FIELD, FORCED_FIELD, BotHealth, DeferredMatch, HealthStore
from arena.store.jobs import Job, JobStore, WorkerStatus
from arena.store.keys import (
    GAMES_SET,
    JOBS_GROUP,
    NAME_OWNERS,
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
    name_of,
    owner_bots_key,
    owner_id,
    owner_key,
    removed_owners_key,
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
from arena.store.live import LiveMatch, LiveStore, LiveWrite
from arena.store.owners import (
    NameLookAlikeError,
    NameSpellingError,
    NameTakenError,
    OwnerAccount,
    OwnerStore,
    QuotaError,
    Registration,
    UnknownOwnerError,
)
from arena.store.results import RECORD_ATTEMPTS, LadderCheck, LadderEntry, ResultStore, ladders_equal
from arena.store.sprt import SprtRecord, SprtStore, TableOutcome
from arena.store.tournaments import TournamentInfo, TournamentStore
from arena_sdk.games import GAMES


@dataclass(frozen=True)
class MatchInputs:
    """What a worker reads before playing a match (``Store.match_inputs``), in one round trip.

    Attributes: has_result (its result is stored); tournament_state ("running" | "finished" | "cancelled", None
    outside tournaments or when unknown); tournament_seed (the tournament's secret seed, None outside tournaments
    or when unknown); unhealthy (the seats' bots that are unhealthy now, in seat order); bots (per seat, its
    ``BotEntry``, None when not registered); ratings (per seat, its live Elo rating, None before its first rated
    match; [] when not read); tournament_controlled (its tournament has a controller to call after each match, a
    fact fixed when the tournament is created; None outside tournaments or when unknown).
    """

    has_result: bool
    tournament_state: str | None
    tournament_seed: int | None
    unhealthy: list[str]
    bots: list[BotEntry | None]
    ratings: list[float | None] = field(default_factory=list)
    tournament_controlled: bool | None = None


@dataclass(frozen=True)
class OwnerRemoval:
    """What ``Store.remove_owner`` did: the owner's public id, the bots removed ("GAME/NAME@VERSION", sorted), the
    names freed and the names kept held (each (game, NAME))."""

    owner_id: str
    removed_bots: list[str]
    released_names: list[tuple[str, str]]
    kept_names: list[tuple[str, str]]


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
        stored, its tournament's state, seed and whether it is controlled, which of the ``seats`` (bot refs) are
        unhealthy, each seat's registered bot and live rating. A ref "NAME" (no version) costs one more read to find
        its latest version."""
        pipe = self.client.pipeline(transaction=False)
        pipe.exists(result_key(game, match_id))
        pipe.zmscore(ladder_key(game), list(seats))
        if tournament:
            pipe.hmget(tournament_key(game, tournament), ["state", "spec", "controlled"])
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
        ratings = [None if r is None else float(r) for r in next(replies)]
        state = seed = controlled = None
        if tournament:
            state, spec, flag = next(replies)
            seed = int(json.loads(spec)["seed"]) if spec else None
            controlled = None if flag is None else flag == "1"
        since = next(replies) or []
        bots: list[BotEntry | None] = []
        for ref, direct in zip(seats, versioned):
            if direct:
                h = next(replies)
                bots.append(self._bot(h) if h else None)
            else:
                bots.append(self.get_bot(game, ref))
        return MatchInputs(has_result=has_result, tournament_state=state, tournament_seed=seed,
                           unhealthy=[b for b, t in zip(seats, since) if t is not None], bots=bots,
                           ratings=ratings, tournament_controlled=controlled)

    def settle_match(self, job: Job, game: str, match_id: str, seats: Sequence[str], scores: Sequence[float],
                     ranks: Sequence[int], faults: Sequence[int], record: dict[str, Any], *,
                     outcomes: Mapping[str, str | None], unhealthy_after: int,
                     ratings: Sequence[float | None] | None = None, tournament_id: str | None = None,
                     seed: int | None = None, worker: str = "", deal: dict[str, int] | None = None,
                     rated: bool = True, void: bool = False,
                     length: float | None = None) -> tuple[bool, dict[str, int] | Exception]:
        """``record_result``, ``ack_job`` and (when stored now) ``record_match_health`` of a played match in ONE
        script (``scripts.SETTLE_MATCH``): one round trip and one atomic step, on one server or a Redis Cluster.

        Args: as ``record_result`` and ``record_match_health`` (``outcomes``: per bot id, None when it played its
            match, else why it failed); ``ratings``: the seats' ratings when read before (a number or None per seat:
            ``MatchInputs.ratings``), None to read them first; a rating that moved since costs one more call (the
            script answers with the current ones), at most ``RECORD_ATTEMPTS`` in all. The settles of one store
            (one worker process) take turns, and each one's ratings after it are kept (``_known_ratings``) for the
            next: with one worker process, the first call always finds them current.
        Returns: (stored now, health): health is ``record_match_health``'s answer, ``{}`` when not stored now, or
            the exception that counting it raised (advice: the result and acknowledgement stand).
        Raises: ``ValueError`` as ``record_result``; ``StoreError`` when the ratings kept moving; ``redis.RedisError``.
        """
        keys, prepare = self.result_call(game, match_id, seats, scores, ranks, faults, record,
                                         tournament_id=tournament_id, seed=seed, worker=worker, deal=deal,
                                         rated=rated, void=void)
        try:
            bots, health_keys, health_args = self.health_call(game, match_id, outcomes,
                                                              unhealthy_after=unhealthy_after, length=length)
            health_error: Exception | None = None
        except ValueError as exc:
            bots, health_keys, health_args, health_error = [], [], [], exc
        with self._settle_lock:  # this process's settles would only invalidate each other's ratings
            known = self._known_ratings.setdefault(game, {})
            if ratings is None and not all(bot in known for bot in seats):
                ratings = self.client.zmscore(ladder_key(game), list(seats))
            current: list[Any] = [known.get(bot, r) for bot, r in zip(seats, ratings or [None] * len(seats))]
            for _ in range(RECORD_ATTEMPTS):
                args, after = prepare(current)
                reply = self._settle(keys=[*keys, jobs_key(job.game or game), *health_keys],
                                     args=[len(keys), len(args), len(health_keys), *args, JOBS_GROUP, job.entry_id,
                                           *health_args])
                outcome = int(reply[0])
                if outcome == -1:
                    current = list(reply[1]) + [None] * (len(seats) - len(reply[1]))
                    continue
                if outcome == 0:
                    return False, {}
                known.update(zip(seats, after))
                if health_error is not None:
                    return True, health_error
                if len(reply) > 2:
                    return True, StoreError(f"cannot count match {match_id} in the health of its bots: {reply[2]}")
                return True, {b: int(r) for b, r in zip(bots, reply[1])}
        raise StoreError(f"could not apply the result of {match_id}: ratings of {list(seats)} kept changing")

    def remove_owner(self, key: str) -> OwnerRemoval:
        """Remove the owner whose key is ``key``, for good. First its key joins every game's removed owners
        (``keys.removed_owners_key``), which the registering step checks, and its account goes (its token is then
        no owner's; ``owner_removed`` refuses it, no start adopts it again), so no registration of its token lands
        after this point. Then every bot version it registered, in every game, is removed (``remove_bot``: ladder
        history and results stay), and each of its names is freed, except a NAME with stored matches in a game
        (``name_matches_key``) or in a running tournament of it, which stays held by nobody's token
        (``hold_removed_name``): nobody takes over its history, nor its seats of matches still to play.
        Returns what was removed, freed and kept. Raises ``UnknownOwnerError`` when there is no such owner."""
        if self.get_owner(key) is None:
            raise UnknownOwnerError(owner_id(key))
        games = sorted(self.client.smembers(GAMES_SET) | set(GAMES))
        pipe = self.client.pipeline(transaction=False)
        for game in games:
            pipe.sadd(removed_owners_key(game), key)
        pipe.execute()
        owner = self.get_owner(key)  # its names now: no registration adds a bot for it any more
        assert owner is not None
        self.drop_account(key)
        self.index_owner(key)  # its id still leads to its key: a call signed with its token is told it was removed
        names = set(owner.names)  # and the names of bots registered for it in older data
        names |= {(game, name_of(b)) for game in games for b in self.client.smembers(owner_bots_key(game, key))}
        playing = {(t.game, name_of(b)) for t in self.list_tournaments() if t.state == "running" for b in t.bots}
        removed: list[str] = []
        released, kept = [], []
        for game, name in sorted(names):
            removed += [f"{game}/{b}" for b in self.remove_bot(game, name)]
            if self.client.get(owner_key(game, name)) != key:  # another owner's (older data): not ours to free
                continue
            if self.client.zcard(name_matches_key(game, name)) or (game, name) in playing:
                self.hold_removed_name(game, name)
                kept.append((game, name))
            else:
                self.client.delete(owner_key(game, name))
                self.release_owner_name(key, game, name)
                released.append((game, name))
        # a NAME a registration reserved for it while it was being removed (its bot then refused): free again
        stale = [field for field, holder in self.client.hscan_iter(NAME_OWNERS, count=500) if holder == key]
        if stale:
            self.client.hdel(NAME_OWNERS, *stale)
        return OwnerRemoval(owner.id, sorted(set(removed)), released, kept)

__all__ = [
    "ARENA_ID", "CHUNK", "MatchInputs", "EARLIER_DELIVERIES_FIELD", "FORCED_FIELD", "GAMES_SET", "JOBS_GROUP", "PREFIX",
    "RECORD_ATTEMPTS", "TOURNAMENTS", "TOURNAMENT_IDS", "UNVERIFIED_VERSION", "WORKERS", "BotEntry", "BotHealth",
    "REDIS_ERRORS", "BotStore", "DeferredMatch", "HealthStore", "Job", "JobStore", "LadderCheck", "LadderEntry",
    "LiveMatch", "LiveStore", "LiveWrite",
    "OwnerRemoval", "OwnershipError", "ResultStore", "Store", "StoreBase", "StoreError", "TournamentInfo",
    "TournamentStore",
    "VersionsExhausted",
    "WorkerStatus", "bot_key", "bot_matches_key", "bots_key", "cancelled_key", "failed_key", "jobs_key", "ladder_key",
    "ladder_stats_key", "ladders_equal", "match_key", "matches_index_key", "name_matches_key", "owner_bots_key",
    "owner_key", "result_key", "results_log_key", "standings_key", "token_hash", "tournament_key",
    "tournament_matches_key", "versions_key", "worker_key",
    "SprtRecord", "SprtStore", "TableOutcome",
    "NameLookAlikeError", "NameSpellingError", "NameTakenError", "OwnerAccount", "OwnerStore", "QuotaError",
    "Registration", "UnknownOwnerError", "write_refusal",
]
