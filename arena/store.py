"""Every Redis key and script of the arena, in one place (STYLE.md habit 12; DESIGN.md "Scheduling and storage").

Key layout (all under the prefix ``arena:``). Keys that one script touches share the hash tag ``{<game>}``, so the
same code runs on Redis Cluster::

    arena:games                          set    game ids that have registered bots
    arena:{G}:bots                       set    bot names registered for game G
    arena:{G}:bot:<name>                 hash   name, game, endpoint, registered_at (s since epoch)
    arena:tournament-ids                 string counter behind the ids "t1", "t2", ...
    arena:tournaments                    hash   tournament id -> game
    arena:{G}:tournament:<id>            hash   id, game, spec (JSON), matches_total, matches_done, faults,
                                                state ("running" | "finished"), created_at, finished_at
    arena:jobs                           stream match jobs (field "spec": MatchSpec JSON), group "workers"
    arena:{G}:result:<match id>          string result JSON, written once per match id (the idempotency key)
    arena:{G}:match:<match id>           string full match record JSON (``MatchRecord.to_dict``)
    arena:{G}:results                    list   match ids in the order their ratings were applied
    arena:{G}:ladder                     zset   bot -> Elo rating (points)
    arena:{G}:ladder-stats               hash   matches:<bot>, wins:<bot> (rank 1, shared firsts count),
                                                score_sum:<bot> (sum of game scores)

A result is stored and its Elo update applied in ONE atomic step (the Lua script ``_RECORD_RESULT``): the deltas
are computed in Python by ``arena.ratings.elo_deltas`` from the pre-match ratings, and the script applies them only
if the result of that match id is absent (else it does nothing: idempotent) and the ratings are still the ones the
deltas were computed from (else the caller recomputes: optimistic concurrency, no WATCH needed).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import redis

from arena.config import DEFAULTS
from arena.ratings import elo_deltas
from arena.tournaments import MatchSpec

PREFIX = "arena:"
JOBS_STREAM = PREFIX + "jobs"
JOBS_GROUP = "workers"
GAMES_SET = PREFIX + "games"
TOURNAMENT_IDS = PREFIX + "tournament-ids"
TOURNAMENTS = PREFIX + "tournaments"
RECORD_ATTEMPTS = 100  # optimistic retries of one result when other workers keep moving the same ratings


class StoreError(RuntimeError):
    """A stored value is missing or inconsistent, or an atomic update could not be applied."""


# --- key names -------------------------------------------------------------------------------------------------


def _tag(game: str) -> str:
    return f"{PREFIX}{{{game}}}:"


def bots_key(game: str) -> str:
    return _tag(game) + "bots"


def bot_key(game: str, name: str) -> str:
    return _tag(game) + "bot:" + name


def tournament_key(game: str, tournament_id: str) -> str:
    return _tag(game) + "tournament:" + tournament_id


def result_key(game: str, match_id: str) -> str:
    return _tag(game) + "result:" + match_id


def match_key(game: str, match_id: str) -> str:
    return _tag(game) + "match:" + match_id


def results_log_key(game: str) -> str:
    return _tag(game) + "results"


def ladder_key(game: str) -> str:
    return _tag(game) + "ladder"


def ladder_stats_key(game: str) -> str:
    return _tag(game) + "ladder-stats"


# --- scripts ---------------------------------------------------------------------------------------------------

# KEYS: 1 result, 2 match record, 3 ladder zset, 4 results log, 5 tournament hash, 6 ladder stats hash
# ARGV: 1 result JSON, 2 record JSON, 3 initial rating, 4 seats n, 5 "1" when KEYS[5] is a tournament,
#       6 fault total, 7 now, 8 match id, then per seat: name, pre-match rating, delta, score, win (0/1)
# Returns 1 stored, 0 already stored (nothing changed), -1 a rating moved since it was read (nothing changed).
_RECORD_RESULT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[4])
local initial = tonumber(ARGV[3])
for i = 1, n do
  local b = 8 + (i - 1) * 5
  local cur = redis.call('ZSCORE', KEYS[3], ARGV[b + 1])
  local rating = initial
  if cur then rating = tonumber(cur) end
  if rating ~= tonumber(ARGV[b + 2]) then return -1 end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[4], ARGV[8])
for i = 1, n do
  local b = 8 + (i - 1) * 5
  local name = ARGV[b + 1]
  if not redis.call('ZSCORE', KEYS[3], name) then redis.call('ZADD', KEYS[3], ARGV[3], name) end
  redis.call('ZINCRBY', KEYS[3], ARGV[b + 3], name)
  redis.call('HINCRBY', KEYS[6], 'matches:' .. name, 1)
  redis.call('HINCRBY', KEYS[6], 'wins:' .. name, ARGV[b + 5])
  redis.call('HINCRBYFLOAT', KEYS[6], 'score_sum:' .. name, ARGV[b + 4])
end
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[5]) == 1 then
  local done = redis.call('HINCRBY', KEYS[5], 'matches_done', 1)
  redis.call('HINCRBY', KEYS[5], 'faults', ARGV[6])
  local total = tonumber(redis.call('HGET', KEYS[5], 'matches_total'))
  if total and done >= total then
    redis.call('HSET', KEYS[5], 'state', 'finished', 'finished_at', ARGV[7])
  end
end
return 1
"""


# --- values ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BotEntry:
    """A registered bot: ladder name, game id, gRPC endpoint "host:port", registered_at (s since epoch)."""

    name: str
    game: str
    endpoint: str
    registered_at: float


@dataclass(frozen=True)
class TournamentInfo:
    """A stored tournament and its progress.

    Attributes: id ("t3"); game; bots (names); seats_per_match (k); rounds (R); seed; config (JSON form);
    deadline_ms (Decide deadline, ms); matches_total; matches_done; faults (across finished matches);
    state ("running" | "finished"); created_at / finished_at (s since epoch; finished_at None while running).
    """

    id: str
    game: str
    bots: tuple[str, ...]
    seats_per_match: int
    rounds: int
    seed: int
    config: dict[str, Any]
    deadline_ms: int
    matches_total: int
    matches_done: int = 0
    faults: int = 0
    state: str = "running"
    created_at: float = 0.0
    finished_at: float | None = None


@dataclass(frozen=True)
class LadderEntry:
    """One line of the Elo ladder: standard competition rank by rating (1 = best), bot, rating (Elo points),
    matches played, wins (matches at rank 1; shared first places count), mean score per match (Take 5:
    bullheads, lower is better)."""

    rank: int
    bot: str
    rating: float
    matches: int
    wins: int
    mean_score: float


@dataclass(frozen=True)
class Job:
    """A match job read from the stream: its stream entry id and the spec (``None`` when malformed, with the
    reason in ``error``)."""

    entry_id: str
    spec: MatchSpec | None
    error: str = ""
    fields: dict[str, str] = field(default_factory=dict)


def _competition_ranks(ratings: Sequence[float]) -> list[int]:
    return [1 + sum(1 for o in ratings if o > r) for r in ratings]


# --- the store -------------------------------------------------------------------------------------------------


class Store:
    """All Redis reads and writes of the arena.

    Args:
        client: a redis-py client created with ``decode_responses=True`` (see ``Store.from_url``).
        initial_rating: Elo start of a new bot, points. k_factor: Elo K, points.
    Redis errors (``redis.RedisError``) pass through to the caller.
    """

    def __init__(self, client: redis.Redis, *, initial_rating: float = DEFAULTS.initial_rating,
                 k_factor: float = DEFAULTS.k_factor) -> None:
        self.client = client
        self.initial_rating = float(initial_rating)
        self.k_factor = float(k_factor)
        self._record_result = client.register_script(_RECORD_RESULT)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> "Store":
        """A store on the Redis at ``url`` (``redis://host:port/db``)."""
        return cls(redis.Redis.from_url(url, decode_responses=True), **kwargs)

    def close(self) -> None:
        self.client.close()

    def ping(self) -> bool:
        return bool(self.client.ping())

    # -- bots -----------------------------------------------------------------------------------------------

    def register_bot(self, game: str, name: str, endpoint: str, *, now: float | None = None) -> BotEntry:
        """Register or update (upsert) bot ``name`` of ``game`` at ``endpoint``. A bot registered again keeps
        its first ``registered_at`` and its ladder entry; only the endpoint changes."""
        now = time.time() if now is None else now
        self.client.sadd(GAMES_SET, game)
        key = bot_key(game, name)
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(key, mapping={"name": name, "game": game, "endpoint": endpoint})
        pipe.hsetnx(key, "registered_at", repr(float(now)))
        pipe.sadd(bots_key(game), name)
        pipe.hgetall(key)
        stored = pipe.execute()[-1]
        return self._bot(stored)

    @staticmethod
    def _bot(h: dict[str, str]) -> BotEntry:
        return BotEntry(name=h["name"], game=h["game"], endpoint=h["endpoint"],
                        registered_at=float(h.get("registered_at", 0.0)))

    def get_bot(self, game: str, name: str) -> BotEntry | None:
        """The bot ``name`` of ``game``, or ``None`` when it is not registered."""
        h = self.client.hgetall(bot_key(game, name))
        return self._bot(h) if h else None

    def list_bots(self, game: str | None = None) -> list[BotEntry]:
        """Registered bots of ``game`` (every game when ``None`` or empty), sorted by game then name."""
        games = [game] if game else sorted(self.client.smembers(GAMES_SET))
        out: list[BotEntry] = []
        for g in games:
            names = sorted(self.client.smembers(bots_key(g)))
            pipe = self.client.pipeline(transaction=False)
            for n in names:
                pipe.hgetall(bot_key(g, n))
            out.extend(self._bot(h) for h in pipe.execute() if h)
        return out

    # -- tournaments ----------------------------------------------------------------------------------------

    def next_tournament_id(self) -> str:
        """A new tournament id: "t1", "t2", ... (never reused)."""
        return f"t{self.client.incr(TOURNAMENT_IDS)}"

    def tournament_game(self, tournament_id: str) -> str | None:
        """Game of a stored tournament, or ``None`` when the id is unknown."""
        return self.client.hget(TOURNAMENTS, tournament_id)

    def create_tournament(self, info: TournamentInfo) -> None:
        """Store a new tournament (state "running", 0 matches done). Raises ``StoreError`` when the id exists."""
        spec = {
            "bots": list(info.bots),
            "seats_per_match": info.seats_per_match,
            "rounds": info.rounds,
            "seed": info.seed,
            "config": info.config,
            "deadline_ms": info.deadline_ms,
        }
        if not self.client.hsetnx(TOURNAMENTS, info.id, info.game):
            raise StoreError(f"tournament {info.id} exists already")
        self.client.hset(tournament_key(info.game, info.id), mapping={
            "id": info.id,
            "game": info.game,
            "spec": json.dumps(spec),
            "matches_total": info.matches_total,
            "matches_done": 0,
            "faults": 0,
            "state": "finished" if info.matches_total == 0 else "running",
            "created_at": repr(float(info.created_at)),
        })

    def get_tournament(self, tournament_id: str) -> TournamentInfo | None:
        """The tournament and its progress, or ``None`` when the id is unknown."""
        game = self.tournament_game(tournament_id)
        if game is None:
            return None
        h = self.client.hgetall(tournament_key(game, tournament_id))
        if not h:
            return None
        spec = json.loads(h["spec"])
        return TournamentInfo(
            id=h["id"], game=h["game"], bots=tuple(spec["bots"]), seats_per_match=int(spec["seats_per_match"]),
            rounds=int(spec["rounds"]), seed=int(spec["seed"]), config=dict(spec["config"]),
            deadline_ms=int(spec["deadline_ms"]), matches_total=int(h["matches_total"]),
            matches_done=int(h["matches_done"]), faults=int(h["faults"]), state=h["state"],
            created_at=float(h["created_at"]),
            finished_at=float(h["finished_at"]) if h.get("finished_at") else None,
        )

    # -- match jobs -----------------------------------------------------------------------------------------

    def ensure_job_group(self) -> None:
        """Create the stream and its consumer group "workers" (reading from the start) when missing."""
        try:
            self.client.xgroup_create(JOBS_STREAM, JOBS_GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def enqueue(self, specs: Sequence[MatchSpec], *, chunk: int = 1000) -> None:
        """Append one job per match spec to the stream, in order (pipelined in chunks)."""
        self.ensure_job_group()
        for start in range(0, len(specs), chunk):
            pipe = self.client.pipeline(transaction=False)
            for spec in specs[start:start + chunk]:
                pipe.xadd(JOBS_STREAM, {"spec": json.dumps(spec.to_dict())})
            pipe.execute()

    def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """Claim up to ``count`` new jobs for ``consumer`` through the group, waiting up to ``block_ms`` ms.

        Claimed jobs stay pending in the group until ``ack_job`` (so a later reclaim can find them)."""
        reply = self.client.xreadgroup(JOBS_GROUP, consumer, {JOBS_STREAM: ">"}, count=count, block=block_ms)
        jobs: list[Job] = []
        for _stream, entries in reply or []:
            for entry_id, fields in entries:
                try:
                    spec = MatchSpec.from_dict(json.loads(fields["spec"]))
                    jobs.append(Job(entry_id, spec, fields=fields))
                except (KeyError, ValueError, TypeError) as exc:  # TournamentError is a ValueError
                    jobs.append(Job(entry_id, None, error=f"malformed job {entry_id}: {exc}", fields=fields))
        return jobs

    def ack_job(self, entry_id: str) -> None:
        """Acknowledge a finished job and delete it from the stream."""
        pipe = self.client.pipeline(transaction=False)
        pipe.xack(JOBS_STREAM, JOBS_GROUP, entry_id)
        pipe.xdel(JOBS_STREAM, entry_id)
        pipe.execute()

    def pending_jobs(self) -> int:
        """Jobs claimed by a worker and not acknowledged yet."""
        try:
            return int(self.client.xpending(JOBS_STREAM, JOBS_GROUP)["pending"])
        except redis.ResponseError:  # no stream or group yet
            return 0

    def queued_jobs(self) -> int:
        """Jobs in the stream, claimed or not (acknowledged jobs are deleted)."""
        return int(self.client.xlen(JOBS_STREAM))

    # -- results and the ladder -----------------------------------------------------------------------------

    def has_result(self, game: str, match_id: str) -> bool:
        """True when the result of ``match_id`` is stored."""
        return bool(self.client.exists(result_key(game, match_id)))

    def record_result(
        self,
        game: str,
        match_id: str,
        seats: Sequence[str],
        scores: Sequence[float],
        ranks: Sequence[int],
        faults: Sequence[int],
        record: dict[str, Any],
        *,
        tournament_id: str | None = None,
    ) -> bool:
        """Store a match's result and apply its Elo update, atomically and once per match id.

        Args:
            game: game id. match_id: the idempotency key. seats: bot names in seat order (distinct, N >= 2).
            scores: game score per seat (Take 5: bullheads). ranks: competition rank per seat (1 = best).
            faults: faults per seat. record: the full match record (``MatchRecord.to_dict()``), stored beside.
            tournament_id: the tournament whose progress (matches_done, faults, state) this match bumps.
        Returns:
            True when stored now; False when the result of ``match_id`` was already stored (nothing changed).
        Raises:
            ValueError: lengths differ, fewer than 2 seats, or a bot seated twice.
            StoreError: the ratings of these bots kept moving under concurrent updates (100 attempts).
        """
        n = len(seats)
        if n < 2 or not (len(scores) == len(ranks) == len(faults) == n):
            raise ValueError(f"a result needs >= 2 seats and one score, rank and fault count each; got "
                             f"{n} seats, {len(scores)} scores, {len(ranks)} ranks, {len(faults)} fault counts")
        if len(set(seats)) != n:
            raise ValueError(f"a bot is seated twice in match {match_id}: {list(seats)}")
        keys = [
            result_key(game, match_id), match_key(game, match_id), ladder_key(game), results_log_key(game),
            tournament_key(game, tournament_id or "-"), ladder_stats_key(game),
        ]
        record_json = json.dumps(record)
        for _ in range(RECORD_ATTEMPTS):
            if self.has_result(game, match_id):
                return False
            current = self.client.zmscore(ladder_key(game), list(seats))
            before = [self.initial_rating if r is None else float(r) for r in current]
            deltas = elo_deltas(before, list(ranks), self.k_factor)
            result = {
                "match_id": match_id, "game": game, "tournament": tournament_id, "seats": list(seats),
                "scores": list(scores), "ranks": list(ranks), "faults": list(faults),
                "ratings_before": before, "deltas": deltas, "k": self.k_factor, "stored_at": time.time(),
            }
            args: list[Any] = [
                json.dumps(result), record_json, repr(self.initial_rating), n, "1" if tournament_id else "0",
                sum(int(f) for f in faults), repr(time.time()), match_id,
            ]
            for name, r, d, score, rank in zip(seats, before, deltas, scores, ranks):
                args += [name, repr(float(r)), repr(float(d)), repr(float(score)), 1 if rank == 1 else 0]
            outcome = int(self._record_result(keys=keys, args=args))
            if outcome == 1:
                return True
            if outcome == 0:
                return False
        raise StoreError(f"could not apply the result of {match_id}: ratings of {list(seats)} kept changing")

    def get_result(self, game: str, match_id: str) -> dict[str, Any] | None:
        """The stored result JSON of a match (seats, scores, ranks, faults, ratings_before, deltas, ...)."""
        raw = self.client.get(result_key(game, match_id))
        return json.loads(raw) if raw is not None else None

    def get_match_record(self, match_id: str, game: str | None = None) -> dict[str, Any] | None:
        """The stored full match record of ``match_id`` (a tournament match "t3-000041": the game is found from
        the tournament when not given), or ``None``."""
        if game is None:
            game = self.tournament_game(match_id.rsplit("-", 1)[0])
            if game is None:
                return None
        raw = self.client.get(match_key(game, match_id))
        return json.loads(raw) if raw is not None else None

    def ladder(self, game: str) -> list[LadderEntry]:
        """The Elo ladder of ``game``: every bot with a stored result, best rating first (ties by name), with
        standard competition ranks (1, 2, 2, 4). Ratings and counts are read in one transaction (a snapshot)."""
        pipe = self.client.pipeline(transaction=True)
        pipe.zrange(ladder_key(game), 0, -1, withscores=True)
        pipe.hgetall(ladder_stats_key(game))
        rated, stats = pipe.execute()
        rows = sorted(((bot, float(rating)) for bot, rating in rated), key=lambda row: (-row[1], row[0]))
        ranks = _competition_ranks([rating for _, rating in rows])
        out = []
        for rank, (bot, rating) in zip(ranks, rows):
            m = int(stats.get(f"matches:{bot}", 0))
            out.append(LadderEntry(rank=rank, bot=bot, rating=rating, matches=m,
                                   wins=int(stats.get(f"wins:{bot}", 0)),
                                   mean_score=float(stats.get(f"score_sum:{bot}", 0.0)) / m if m else 0.0))
        return out

    def rebuild_ladder(self, game: str) -> list[LadderEntry]:
        """The ladder recomputed from the stored results alone, in the order they were applied (read-only).

        DESIGN.md promises it equals ``ladder(game)``; a difference means a lost or double-applied update.
        """
        ratings: dict[str, float] = {}
        matches: dict[str, int] = {}
        wins: dict[str, int] = {}
        score_sum: dict[str, float] = {}
        for match_id in self.client.lrange(results_log_key(game), 0, -1):
            result = self.get_result(game, match_id)
            if result is None:
                raise StoreError(f"results log of {game} names {match_id}, whose result is missing")
            seats = result["seats"]
            before = [ratings.get(s, self.initial_rating) for s in seats]
            deltas = elo_deltas(before, result["ranks"], float(result.get("k", self.k_factor)))
            for s, r, d, score, rank in zip(seats, before, deltas, result["scores"], result["ranks"]):
                ratings[s] = r + d
                matches[s] = matches.get(s, 0) + 1
                wins[s] = wins.get(s, 0) + (1 if rank == 1 else 0)
                score_sum[s] = score_sum.get(s, 0.0) + float(score)
        order = sorted(ratings, key=lambda b: (-ratings[b], b))
        ranks = _competition_ranks([ratings[b] for b in order])
        return [LadderEntry(rank=rk, bot=b, rating=ratings[b], matches=matches[b], wins=wins[b],
                            mean_score=score_sum[b] / matches[b]) for rk, b in zip(ranks, order)]

