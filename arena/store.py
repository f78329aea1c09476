"""Every Redis key and script of the arena, in one place (STYLE.md habit 12; DESIGN.md "Scheduling and storage").

Key layout (all under the prefix ``arena:``). Keys that one script or transaction touches share the hash tag
``{<game>}``, so the same code runs on Redis Cluster::

    arena:games                              set    game ids that have registered bots
    arena:{G}:bots                           set    bot ids "NAME@VERSION" registered for game G
    arena:{G}:bot:<bot id>                   hash   name, version, bot_id, game, endpoint, registered_at,
                                                    updated_at (s since epoch), sdk_version, author
    arena:{G}:versions:<NAME>                zset   VERSION -> registered_at: the registered versions of NAME
    arena:{G}:owner:<NAME>                   string sha256 (hex) of NAME's owner token; kept when every version
                                                    is removed, so nobody else can take over NAME's ladder history
    arena:tournament-ids                     string counter behind the ids "t1", "t2", ...
    arena:tournaments                        hash   tournament id -> game
    arena:{G}:tournament:<id>                hash   id, game, spec (JSON), matches_total, matches_done, faults,
                                                    state ("running" | "finished" | "cancelled"), created_at,
                                                    finished_at, cancelled_at. "running" becomes "finished"
                                                    when matches_done + |cancelled| + |failed| = matches_total;
                                                    "cancelled" (CancelTournament) is final
    arena:{G}:tournament:<id>:standings      hash   per-bot counters of the tournament (see ``BotTally``):
                                                    matches:<b>, score_sum:<b>, half_points:<b>, pairs:<b>,
                                                    wins:<b>, losses:<b>, vs:<b>|<opponent>
    arena:{G}:tournament:<id>:matches        zset   match ids of the tournament's stored results -> log position
    arena:{G}:tournament:<id>:cancelled      set    match ids dropped by a cancellation (never played)
    arena:{G}:tournament:<id>:failed         set    match ids given up after ``max_deliveries`` deliveries
    arena:{G}:jobs                           stream match jobs (fields match, tournament, spec = MatchSpec
                                                    JSON), consumer group "workers"
    arena:{G}:result:<match id>              string result JSON, written once per match id (the idempotency key)
    arena:{G}:match:<match id>               string full match record JSON (``MatchRecord.to_dict``)
    arena:{G}:results                        list   match ids in the order their ratings were applied: the
                                                    append-only results log (position 1 = first)
    arena:{G}:matches                        zset   match id -> log position (newest = highest)
    arena:{G}:bot-matches:<bot id>           zset   the same, for the matches of one bot version
    arena:{G}:name-matches:<NAME>            zset   the same, for the matches of every version of NAME
    arena:{G}:ladder                         zset   bot id -> Elo rating (points)
    arena:{G}:ladder-stats                   hash   matches:<bot>, wins:<bot> (rank 1, shared firsts count),
                                                    score_sum:<bot> (sum of game scores)
    arena:workers                            zset   worker name -> last heartbeat (s since epoch)
    arena:worker:<name>                      hash   one worker's heartbeat (see ``WorkerStatus``); TTL
                                                    ``worker_forget_s``

Exactly once: a result is stored, its Elo update applied, the results log appended, the match indexes and the
tournament's progress and standings counters bumped in ONE atomic step (the Lua script ``_RECORD_RESULT``). The
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

import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis

from arena.config import DEFAULTS
from arena.ratings import elo_deltas
from arena.tournaments import BotTally, MatchSpec, bot_id, round_robin_formula, split_bot_ref
from arena_sdk.games import GAMES

PREFIX = "arena:"
JOBS_GROUP = "workers"
GAMES_SET = PREFIX + "games"
TOURNAMENT_IDS = PREFIX + "tournament-ids"
TOURNAMENTS = PREFIX + "tournaments"
WORKERS = PREFIX + "workers"
RECORD_ATTEMPTS = 100  # optimistic retries of one result when other workers keep moving the same ratings
CHUNK = 500  # entries per pipelined batch of reads
UNVERIFIED_VERSION = "0"  # version of a bot registered without asking its GetInfo (tests, verify_bots=False)


class StoreError(RuntimeError):
    """A stored value is missing or inconsistent, or an atomic update could not be applied."""


class OwnershipError(StoreError):
    """A bot NAME is owned by someone else: the owner token given does not match the stored one."""


# --- key names -------------------------------------------------------------------------------------------------


def _tag(game: str) -> str:
    return f"{PREFIX}{{{game}}}:"


def bots_key(game: str) -> str:
    return _tag(game) + "bots"


def bot_key(game: str, bot: str) -> str:
    return _tag(game) + "bot:" + bot


def versions_key(game: str, name: str) -> str:
    return _tag(game) + "versions:" + name


def owner_key(game: str, name: str) -> str:
    return _tag(game) + "owner:" + name


def tournament_key(game: str, tournament_id: str) -> str:
    return _tag(game) + "tournament:" + tournament_id


def standings_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":standings"


def tournament_matches_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":matches"


def cancelled_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":cancelled"


def failed_key(game: str, tournament_id: str) -> str:
    return tournament_key(game, tournament_id) + ":failed"


def jobs_key(game: str) -> str:
    return _tag(game) + "jobs"


def result_key(game: str, match_id: str) -> str:
    return _tag(game) + "result:" + match_id


def match_key(game: str, match_id: str) -> str:
    return _tag(game) + "match:" + match_id


def results_log_key(game: str) -> str:
    return _tag(game) + "results"


def matches_index_key(game: str) -> str:
    return _tag(game) + "matches"


def bot_matches_key(game: str, bot: str) -> str:
    return _tag(game) + "bot-matches:" + bot


def name_matches_key(game: str, name: str) -> str:
    return _tag(game) + "name-matches:" + name


def ladder_key(game: str) -> str:
    return _tag(game) + "ladder"


def ladder_stats_key(game: str) -> str:
    return _tag(game) + "ladder-stats"


def worker_key(name: str) -> str:
    return PREFIX + "worker:" + name


def token_hash(token: str) -> str:
    """What the store keeps of an owner token: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def _name_of(bot: str) -> str:
    return bot.split("@", 1)[0]


# --- scripts ---------------------------------------------------------------------------------------------------

# KEYS: 1 result, 2 match record, 3 ladder zset, 4 results log, 5 tournament hash, 6 ladder stats hash,
#       7 tournament standings hash, 8 game match index, 9 tournament match index, 10 cancelled set,
#       11 failed set, then per seat i (1-based): 10 + 2i bot match index, 11 + 2i name match index
# ARGV: 1 result JSON, 2 record JSON, 3 initial rating, 4 seats n, 5 "1" when KEYS[5] is a tournament,
#       6 fault total, 7 now, 8 match id, then per seat (6 each): bot, pre-match rating, delta, score, rank, win 0/1
# Returns 1 stored, 0 already stored (nothing changed), -1 a rating moved since it was read (nothing changed).
_RECORD_RESULT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[4])
local initial = tonumber(ARGV[3])
local function arg(i, f) return ARGV[8 + (i - 1) * 6 + f] end
for i = 1, n do
  local cur = redis.call('ZSCORE', KEYS[3], arg(i, 1))
  local rating = initial
  if cur then rating = tonumber(cur) end
  if rating ~= tonumber(arg(i, 2)) then return -1 end
end
local mid = ARGV[8]
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
local pos = redis.call('RPUSH', KEYS[4], mid)
redis.call('ZADD', KEYS[8], pos, mid)
for i = 1, n do
  local bot = arg(i, 1)
  redis.call('ZADD', KEYS[10 + 2 * i], pos, mid)
  redis.call('ZADD', KEYS[11 + 2 * i], pos, mid)
  if not redis.call('ZSCORE', KEYS[3], bot) then redis.call('ZADD', KEYS[3], ARGV[3], bot) end
  redis.call('ZINCRBY', KEYS[3], arg(i, 3), bot)
  redis.call('HINCRBY', KEYS[6], 'matches:' .. bot, 1)
  redis.call('HINCRBY', KEYS[6], 'wins:' .. bot, arg(i, 6))
  redis.call('HINCRBYFLOAT', KEYS[6], 'score_sum:' .. bot, arg(i, 4))
end
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('ZADD', KEYS[9], pos, mid)
  redis.call('SREM', KEYS[10], mid)
  redis.call('SREM', KEYS[11], mid)
  local done = redis.call('HINCRBY', KEYS[5], 'matches_done', 1)
  redis.call('HINCRBY', KEYS[5], 'faults', ARGV[6])
  for i = 1, n do
    local bot = arg(i, 1)
    local rank = tonumber(arg(i, 5))
    redis.call('HINCRBY', KEYS[7], 'matches:' .. bot, 1)
    redis.call('HINCRBYFLOAT', KEYS[7], 'score_sum:' .. bot, arg(i, 4))
    for j = 1, n do
      if j ~= i then
        local other = tonumber(arg(j, 5))
        redis.call('HINCRBY', KEYS[7], 'pairs:' .. bot, 1)
        redis.call('HINCRBY', KEYS[7], 'vs:' .. bot .. '|' .. arg(j, 1), 1)
        if rank < other then
          redis.call('HINCRBY', KEYS[7], 'wins:' .. bot, 1)
          redis.call('HINCRBY', KEYS[7], 'half_points:' .. bot, 2)
        elseif rank == other then
          redis.call('HINCRBY', KEYS[7], 'half_points:' .. bot, 1)
        else
          redis.call('HINCRBY', KEYS[7], 'losses:' .. bot, 1)
        end
      end
    end
  end
  local total = tonumber(redis.call('HGET', KEYS[5], 'matches_total'))
  local settled = done + redis.call('SCARD', KEYS[10]) + redis.call('SCARD', KEYS[11])
  if total and settled >= total and redis.call('HGET', KEYS[5], 'state') == 'running' then
    redis.call('HSET', KEYS[5], 'state', 'finished', 'finished_at', ARGV[7])
  end
end
return 1
"""

# Settle a job without running it: acknowledge and delete it; when it was still pending and its result is not
# stored, add its match id to the cancelled set (ARGV[5] "cancelled") or the failed set ("failed") and finish a
# running tournament when nothing is left to run (done + cancelled + failed = total).
# KEYS: 1 jobs stream, 2 result, 3 tournament hash, 4 cancelled set, 5 failed set
# ARGV: 1 group, 2 entry id, 3 match id, 4 now, 5 "cancelled" | "failed" | "" (only acknowledge)
# Returns 0 the job was not pending (settled before), 2 its result is stored, 1 settled now.
_DROP_JOB = """
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if acked == 0 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
if ARGV[5] ~= '' and redis.call('EXISTS', KEYS[3]) == 1 then
  if ARGV[5] == 'cancelled' then redis.call('SADD', KEYS[4], ARGV[3]) else redis.call('SADD', KEYS[5], ARGV[3]) end
  local total = tonumber(redis.call('HGET', KEYS[3], 'matches_total'))
  local done = tonumber(redis.call('HGET', KEYS[3], 'matches_done'))
  if total and done and done + redis.call('SCARD', KEYS[4]) + redis.call('SCARD', KEYS[5]) >= total
      and redis.call('HGET', KEYS[3], 'state') == 'running' then
    redis.call('HSET', KEYS[3], 'state', 'finished', 'finished_at', ARGV[4])
  end
end
return 1
"""

# Cancel a running tournament and drop its jobs that no worker has received yet (entries after the group's
# last-delivered id); jobs already delivered are left to their workers (a running match finishes and counts; a
# dead worker's job is dropped by whoever reclaims it).
# KEYS: 1 tournament hash, 2 jobs stream, 3 cancelled set
# ARGV: 1 group, 2 tournament id, 3 now
# Returns {status, dropped}: status -1 unknown tournament, 0 not running (nothing changed), 1 cancelled now.
_CANCEL_TOURNAMENT = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return {-1, 0} end
if state ~= 'running' then return {0, 0} end
redis.call('HSET', KEYS[1], 'state', 'cancelled', 'cancelled_at', ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 0 then return {1, 0} end
local last = '0-0'
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[2])) do
  local name, delivered
  for i = 1, #g, 2 do
    if g[i] == 'name' then name = g[i + 1] end
    if g[i] == 'last-delivered-id' then delivered = g[i + 1] end
  end
  if name == ARGV[1] then last = delivered end
end
local dropped = 0
local start = '(' .. last
while true do
  local entries = redis.call('XRANGE', KEYS[2], start, '+', 'COUNT', 1000)
  if #entries == 0 then break end
  for _, e in ipairs(entries) do
    local f = e[2]
    local tournament, mid
    for i = 1, #f, 2 do
      if f[i] == 'tournament' then tournament = f[i + 1] end
      if f[i] == 'match' then mid = f[i + 1] end
    end
    if tournament == ARGV[2] then
      redis.call('XDEL', KEYS[2], e[1])
      if mid then dropped = dropped + redis.call('SADD', KEYS[3], mid) end
    end
    start = '(' .. e[1]
  end
end
return {1, dropped}
"""

# Claim for ARGV[2] up to ARGV[4] pending jobs idle for at least ARGV[3] ms (their workers are taken for dead).
# KEYS: 1 jobs stream. ARGV: 1 group, 2 consumer, 3 min idle ms, 4 count.
# Returns {entry id, deliveries including this one, fields (flat list; empty when the entry was deleted)} each.
_RECLAIM = """
local out = {}
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], '-', '+', ARGV[4])
for _, p in ipairs(pending) do
  local claimed = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], p[1])
  if #claimed > 0 then
    local fields = {}
    if claimed[1] then fields = claimed[1][2] end
    table.insert(out, {p[1], p[4] + 1, fields})
  end
end
return out
"""

# Reset the idle time of the jobs ARGV[3..] that are still pending for consumer ARGV[2] (without counting a
# delivery). KEYS: 1 jobs stream. ARGV: 1 group, 2 consumer, 3.. entry ids.
# Returns {entry id, consumer now holding it} for each job no longer its own ('' when it is settled).
_REFRESH = """
local lost = {}
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  elseif p[1] then
    table.insert(lost, {ARGV[i], p[1][2]})
  else
    table.insert(lost, {ARGV[i], ''})
  end
end
return lost
"""

# Register (or re-register) a bot version, claiming NAME for the owner hash ARGV[1] when nobody owns it.
# KEYS: 1 owner, 2 versions zset, 3 bot hash, 4 bots set
# ARGV: 1 owner hash ('' = no ownership), 2 name, 3 version, 4 bot id, 5 game, 6 endpoint, 7 now,
#       8 sdk_version, 9 author
# Returns {claimed 1/0, registered_at} or {-1, ''} when NAME belongs to another owner hash.
_REGISTER_BOT = """
local claimed = 0
if ARGV[1] ~= '' then
  local owner = redis.call('GET', KEYS[1])
  if not owner then
    redis.call('SET', KEYS[1], ARGV[1])
    claimed = 1
  elseif owner ~= ARGV[1] then
    return {-1, ''}
  end
end
redis.call('HSET', KEYS[3], 'name', ARGV[2], 'version', ARGV[3], 'bot_id', ARGV[4], 'game', ARGV[5],
           'endpoint', ARGV[6], 'updated_at', ARGV[7], 'sdk_version', ARGV[8], 'author', ARGV[9])
redis.call('HSETNX', KEYS[3], 'registered_at', ARGV[7])
local registered = redis.call('HGET', KEYS[3], 'registered_at')
redis.call('ZADD', KEYS[2], 'NX', registered, ARGV[3])
redis.call('SADD', KEYS[4], ARGV[4])
return {claimed, registered}
"""

# Change the endpoint (and GetInfo details) of a registered bot version. KEYS: 1 bot hash.
# ARGV: 1 endpoint, 2 now, 3 sdk_version, 4 author. Returns 1 updated, 0 not registered.
_UPDATE_BOT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'endpoint', ARGV[1], 'updated_at', ARGV[2], 'sdk_version', ARGV[3], 'author', ARGV[4])
return 1
"""


# --- values ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BotEntry:
    """A registered bot version.

    Attributes: name (NAME); game; endpoint "host:port"; registered_at (first registration of this version, s
    since epoch); version (from the bot's GetInfo); sdk_version and author (GetInfo); updated_at (last
    registration or update, s since epoch). ``bot_id`` is the ladder identity "NAME@VERSION".
    """

    name: str
    game: str
    endpoint: str
    registered_at: float
    version: str = UNVERIFIED_VERSION
    sdk_version: str = ""
    author: str = ""
    updated_at: float = 0.0

    @property
    def bot_id(self) -> str:
        return bot_id(self.name, self.version)


@dataclass(frozen=True)
class TournamentInfo:
    """A stored tournament and its progress.

    Attributes: id ("t3"); game; bots (bot ids); seats_per_match (k); rounds (R); seed; config (JSON form);
    deadline_ms (Decide deadline, ms); matches_total; matches_done (results stored); faults (across finished
    matches); state ("running" | "finished" | "cancelled"); created_at / finished_at / cancelled_at (s since
    epoch; None until it happens); matches_cancelled (dropped by a cancellation, never played); matches_failed
    (given up after ``max_deliveries`` deliveries, see ``arena.scheduler``). ``formula`` explains matches_total.
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
    matches_cancelled: int = 0
    matches_failed: int = 0
    cancelled_at: float | None = None

    @property
    def formula(self) -> str:
        return round_robin_formula(len(self.bots), self.seats_per_match, self.rounds)


@dataclass(frozen=True)
class LadderEntry:
    """One line of the Elo ladder: standard competition rank by rating (1 = best), bot id, rating (Elo points),
    matches played, wins (matches at rank 1; shared first places count), mean score per match (Take 5:
    bullheads, lower is better)."""

    rank: int
    bot: str
    rating: float
    matches: int
    wins: int
    mean_score: float


@dataclass(frozen=True)
class LadderCheck:
    """A ladder rebuilt from the results log beside the live one, read at the same moment.

    Attributes: rebuilt and live (``LadderEntry`` lists); equal (same bots, ratings and mean scores within
    1e-6, same matches and wins); results (entries of the log replayed).
    """

    rebuilt: list[LadderEntry]
    live: list[LadderEntry]
    equal: bool
    results: int


@dataclass(frozen=True)
class Job:
    """A match job read from a jobs stream: its entry id, the spec (``None`` when malformed, with the reason in
    ``error``), its game (the stream it came from) and how many times it has been delivered (1 = first time)."""

    entry_id: str
    spec: MatchSpec | None
    error: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    game: str = ""
    deliveries: int = 1


@dataclass(frozen=True)
class WorkerStatus:
    """A worker's last heartbeat.

    Attributes: name; host; pid; started_at and last_seen (s since epoch); concurrency (matches at once);
    running (match ids it was running); matches_done (results it stored since it started); timeout_s (its
    heartbeat counts as alive for this long); stopped (it said goodbye).
    """

    name: str
    host: str
    pid: int
    started_at: float
    last_seen: float
    concurrency: int
    running: tuple[str, ...]
    matches_done: int
    timeout_s: float
    stopped: bool = False

    def alive(self, now: float) -> bool:
        """True when the worker has not stopped and its last heartbeat is younger than its timeout."""
        return not self.stopped and now - self.last_seen <= self.timeout_s


def _competition_ranks(values: Sequence[float]) -> list[int]:
    return [1 + sum(1 for o in values if o > r) for r in values]


def ladders_equal(a: Sequence[LadderEntry], b: Sequence[LadderEntry], tolerance: float = 1e-6) -> bool:
    """True when two ladders hold the same bots with ratings and mean scores within ``tolerance`` and the same
    matches and wins (order and ranks are not compared: they follow from the ratings)."""
    left = {e.bot: e for e in a}
    right = {e.bot: e for e in b}
    if left.keys() != right.keys():
        return False
    for bot, x in left.items():
        y = right[bot]
        if (x.matches, x.wins) != (y.matches, y.wins):
            return False
        if abs(x.rating - y.rating) > tolerance or abs(x.mean_score - y.mean_score) > tolerance:
            return False
    return True


def _job_fields(spec: MatchSpec) -> dict[str, str]:
    """The fields of a match's job entry on its game's jobs stream."""
    return {"match": spec.match_id, "tournament": spec.tournament, "spec": json.dumps(spec.to_dict())}


def _parse_job(game: str, entry_id: str, fields: dict[str, str], deliveries: int) -> Job:
    try:
        spec = MatchSpec.from_dict(json.loads(fields["spec"]))
        return Job(entry_id, spec, fields=fields, game=game, deliveries=deliveries)
    except (KeyError, ValueError, TypeError) as exc:  # TournamentError is a ValueError
        return Job(entry_id, None, error=f"malformed job {entry_id} of {game}: {exc}", fields=fields, game=game,
                   deliveries=deliveries)


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
        self.initial_rating = float(initial_rating)
        self.k_factor = float(k_factor)
        self._client_options: dict[str, Any] = {}
        self._bind(client)

    def _bind(self, client: redis.Redis) -> None:
        self.client = client
        self._record_result = client.register_script(_RECORD_RESULT)
        self._drop_job = client.register_script(_DROP_JOB)
        self._cancel = client.register_script(_CANCEL_TOURNAMENT)
        self._reclaim = client.register_script(_RECLAIM)
        self._refresh = client.register_script(_REFRESH)
        self._register = client.register_script(_REGISTER_BOT)
        self._update = client.register_script(_UPDATE_BOT)

    @classmethod
    def from_url(cls, url: str, *, client_options: dict[str, Any] | None = None, **kwargs: Any) -> "Store":
        """A store on the Redis at ``url`` (``redis://host:port/db``); ``client_options`` go to
        ``redis.Redis.from_url`` (e.g. ``socket_timeout``, seconds), also when the store is retargeted."""
        store = cls(redis.Redis.from_url(url, decode_responses=True, **(client_options or {})), **kwargs)
        store._client_options = dict(client_options or {})
        return store

    def close(self) -> None:
        self.client.close()

    def retarget(self, url: str) -> None:
        """Use the Redis at ``url`` from now on (a private Redis restarted on another port): later calls go
        there; the old client is closed, so a call still running on it fails with a Redis error."""
        old = self.client
        self._bind(redis.Redis.from_url(url, decode_responses=True, **self._client_options))
        old.close()

    def ping(self) -> bool:
        return bool(self.client.ping())

    # -- bots -----------------------------------------------------------------------------------------------

    def register_bot(self, game: str, name: str, endpoint: str, *, version: str = UNVERIFIED_VERSION,
                     sdk_version: str = "", author: str = "", owner_hash: str | None = None,
                     now: float | None = None) -> BotEntry:
        """Register bot version ``name@version`` of ``game`` at ``endpoint``, or update it (upsert): a version
        registered again keeps its first ``registered_at`` and its ladder entry.

        Ownership: with ``owner_hash`` (``token_hash`` of the owner token), an unowned NAME is claimed for it
        and an owned one must be owned by it; ``owner_hash=None`` skips ownership (internal use and tests; the
        Arena service always passes one).
        Raises ``OwnershipError`` when NAME is owned by another hash (nothing changed).
        """
        entry, _claimed = self.register_bot_claim(game, name, endpoint, version=version, sdk_version=sdk_version,
                                                  author=author, owner_hash=owner_hash, now=now)
        return entry

    def register_bot_claim(self, game: str, name: str, endpoint: str, *, version: str = UNVERIFIED_VERSION,
                           sdk_version: str = "", author: str = "", owner_hash: str | None = None,
                           now: float | None = None) -> tuple[BotEntry, bool]:
        """``register_bot``, also telling whether this call claimed NAME (its first registration)."""
        now = time.time() if now is None else now
        bid = bot_id(name, version)
        claimed, _registered = self._register(
            keys=[owner_key(game, name), versions_key(game, name), bot_key(game, bid), bots_key(game)],
            args=[owner_hash or "", name, version, bid, game, endpoint, repr(float(now)), sdk_version, author])
        if int(claimed) == -1:
            raise OwnershipError(f"bot name {name!r} of {game} belongs to another owner token")
        self.client.sadd(GAMES_SET, game)
        entry = self.get_bot(game, bid)
        if entry is None:  # removed between the two calls
            raise StoreError(f"bot {bid} of {game} vanished while it was being registered")
        return entry, bool(int(claimed))

    def owner_token_matches(self, game: str, name: str, token: str) -> bool | None:
        """Whether ``token`` is the owner token of bot NAME ``name`` of ``game`` (constant-time comparison of the
        hashes); ``None`` when nobody owns NAME yet."""
        stored = self.client.get(owner_key(game, name))
        if stored is None:
            return None
        return hmac.compare_digest(token_hash(token).encode(), stored.encode())

    def owner_hash(self, game: str, name: str) -> str | None:
        """The stored hash of NAME's owner token, or ``None`` when nobody owns NAME."""
        return self.client.get(owner_key(game, name))

    @staticmethod
    def _bot(h: dict[str, str]) -> BotEntry:
        return BotEntry(name=h["name"], game=h["game"], endpoint=h["endpoint"],
                        registered_at=float(h.get("registered_at", 0.0)),
                        version=h.get("version", UNVERIFIED_VERSION), sdk_version=h.get("sdk_version", ""),
                        author=h.get("author", ""), updated_at=float(h.get("updated_at", 0.0)))

    def bot_versions(self, game: str, name: str) -> list[str]:
        """The registered versions of NAME, oldest registration first."""
        return list(self.client.zrange(versions_key(game, name), 0, -1))

    def resolve_bot(self, game: str, ref: str) -> str | None:
        """The bot id that ``ref`` names: "NAME@VERSION" itself when registered, "NAME" its latest registered
        version (newest first registration); ``None`` when not registered. Raises ``TournamentError`` (a
        ``ValueError``) for a malformed ref."""
        name, version = split_bot_ref(ref)
        if version is not None:
            return ref if self.client.exists(bot_key(game, ref)) else None
        latest = self.client.zrevrange(versions_key(game, name), 0, 0)
        return bot_id(name, latest[0]) if latest else None

    def get_bot(self, game: str, ref: str) -> BotEntry | None:
        """The bot ``ref`` ("NAME@VERSION", or "NAME" for its latest version) of ``game``, or ``None`` when it is
        not registered (or ``ref`` is malformed)."""
        try:
            bid = self.resolve_bot(game, ref)
        except ValueError:
            return None
        if bid is None:
            return None
        h = self.client.hgetall(bot_key(game, bid))
        return self._bot(h) if h else None

    def list_bots(self, game: str | None = None) -> list[BotEntry]:
        """Registered bot versions of ``game`` (every game when ``None`` or empty), sorted by game, name, then
        registration time."""
        games = [game] if game else sorted(self.client.smembers(GAMES_SET))
        out: list[BotEntry] = []
        for g in games:
            ids = sorted(self.client.smembers(bots_key(g)))
            pipe = self.client.pipeline(transaction=False)
            for b in ids:
                pipe.hgetall(bot_key(g, b))
            bots = [self._bot(h) for h in pipe.execute() if h]
            out.extend(sorted(bots, key=lambda b: (b.name, b.registered_at, b.version)))
        return out

    def update_bot(self, game: str, bot: str, endpoint: str, *, sdk_version: str = "", author: str = "",
                   now: float | None = None) -> BotEntry | None:
        """Point the registered version ``bot`` (a bot id) at ``endpoint``; ``None`` when it is not registered."""
        now = time.time() if now is None else now
        if not int(self._update(keys=[bot_key(game, bot)],
                                args=[endpoint, repr(float(now)), sdk_version, author])):
            return None
        return self.get_bot(game, bot)

    def remove_bot(self, game: str, ref: str) -> list[str]:
        """Unregister "NAME@VERSION", or every version of "NAME". Ladder history, results and NAME's owner stay.
        Returns the bot ids removed (empty when none was registered)."""
        name, version = split_bot_ref(ref)
        versions = [version] if version is not None else self.bot_versions(game, name)
        ids = [bot_id(name, v) for v in versions if self.client.exists(bot_key(game, bot_id(name, v)))]
        if not ids:
            return []
        pipe = self.client.pipeline(transaction=True)
        for bid, v in zip(ids, [split_bot_ref(b)[1] for b in ids]):
            pipe.delete(bot_key(game, bid))
            pipe.zrem(versions_key(game, name), v)
            pipe.srem(bots_key(game), bid)
        pipe.execute()
        return ids

    # -- tournaments ----------------------------------------------------------------------------------------

    def next_tournament_id(self) -> str:
        """A new tournament id: "t1", "t2", ... (never reused)."""
        return f"t{self.client.incr(TOURNAMENT_IDS)}"

    def tournament_game(self, tournament_id: str) -> str | None:
        """Game of a stored tournament, or ``None`` when the id is unknown."""
        return self.client.hget(TOURNAMENTS, tournament_id)

    def create_tournament(self, info: TournamentInfo, specs: Sequence[MatchSpec] = ()) -> None:
        """Store a new tournament (state "running", 0 matches done) and queue its matches ``specs``, in order, in
        one MULTI/EXEC: a crash leaves either the whole tournament with every job, or nothing of it but a dangling
        id in the index (which readers skip). The tournament hash and the jobs stream share the game's hash tag,
        so the transaction also runs on Redis Cluster. Raises ``StoreError`` when the id exists or a spec is of
        another game."""
        if any(spec.game != info.game for spec in specs):
            raise StoreError(f"tournament {info.id} is of {info.game}; every match spec must be too")
        if specs:
            self.ensure_job_group(info.game)
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
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(tournament_key(info.game, info.id), mapping={
            "id": info.id,
            "game": info.game,
            "spec": json.dumps(spec),
            "matches_total": info.matches_total,
            "matches_done": 0,
            "faults": 0,
            "state": "finished" if info.matches_total == 0 else "running",
            "created_at": repr(float(info.created_at)),
        })
        for spec in specs:
            pipe.xadd(jobs_key(spec.game), _job_fields(spec))
        pipe.execute()

    @staticmethod
    def _tournament(h: dict[str, str], cancelled: int, failed: int) -> TournamentInfo:
        spec = json.loads(h["spec"])
        return TournamentInfo(
            id=h["id"], game=h["game"], bots=tuple(spec["bots"]), seats_per_match=int(spec["seats_per_match"]),
            rounds=int(spec["rounds"]), seed=int(spec["seed"]), config=dict(spec["config"]),
            deadline_ms=int(spec["deadline_ms"]), matches_total=int(h["matches_total"]),
            matches_done=int(h["matches_done"]), faults=int(h["faults"]), state=h["state"],
            created_at=float(h["created_at"]),
            finished_at=float(h["finished_at"]) if h.get("finished_at") else None,
            matches_cancelled=int(cancelled), matches_failed=int(failed),
            cancelled_at=float(h["cancelled_at"]) if h.get("cancelled_at") else None,
        )

    def get_tournament(self, tournament_id: str) -> TournamentInfo | None:
        """The tournament and its progress, or ``None`` when the id is unknown."""
        game = self.tournament_game(tournament_id)
        if game is None:
            return None
        pipe = self.client.pipeline(transaction=True)
        pipe.hgetall(tournament_key(game, tournament_id))
        pipe.scard(cancelled_key(game, tournament_id))
        pipe.scard(failed_key(game, tournament_id))
        h, cancelled, failed = pipe.execute()
        return self._tournament(h, cancelled, failed) if h else None

    def list_tournaments(self, game: str | None = None) -> list[TournamentInfo]:
        """Stored tournaments (of ``game`` when given), newest first."""
        ids = self.client.hgetall(TOURNAMENTS)
        chosen = sorted((tid for tid, g in ids.items() if not game or g == game),
                        key=lambda tid: int(tid[1:]) if tid[1:].isdigit() else 0, reverse=True)
        out: list[TournamentInfo] = []
        for start in range(0, len(chosen), CHUNK):
            pipe = self.client.pipeline(transaction=False)
            for tid in chosen[start:start + CHUNK]:
                g = ids[tid]
                pipe.hgetall(tournament_key(g, tid))
                pipe.scard(cancelled_key(g, tid))
                pipe.scard(failed_key(g, tid))
            replies = pipe.execute()
            for i in range(0, len(replies), 3):
                if replies[i]:
                    out.append(self._tournament(replies[i], replies[i + 1], replies[i + 2]))
        return out

    def tournament_state(self, game: str, tournament_id: str) -> str | None:
        """State of a tournament ("running" | "finished" | "cancelled"), ``None`` when unknown."""
        return self.client.hget(tournament_key(game, tournament_id), "state")

    def cancel_tournament(self, tournament_id: str, *, now: float | None = None) -> tuple[TournamentInfo, int]:
        """Cancel a running tournament: its state becomes "cancelled" and its jobs that no worker has received
        yet are dropped (counted in ``matches_cancelled``); jobs already with a worker are left to it (a running
        match finishes and counts; the job of a dead worker is dropped when reclaimed).

        Returns the tournament after the call and the number of jobs dropped now (0 when it was not running:
        a finished or cancelled tournament is left as it is). Raises ``StoreError`` for an unknown id.
        """
        game = self.tournament_game(tournament_id)
        if game is None:
            raise StoreError(f"no tournament {tournament_id}")
        now = time.time() if now is None else now
        status, dropped = self._cancel(
            keys=[tournament_key(game, tournament_id), jobs_key(game), cancelled_key(game, tournament_id)],
            args=[JOBS_GROUP, tournament_id, repr(float(now))])
        info = self.get_tournament(tournament_id)
        if int(status) == -1 or info is None:
            raise StoreError(f"no tournament {tournament_id}")
        return info, int(dropped)

    def tournament_tally(self, game: str, tournament_id: str) -> dict[str, BotTally]:
        """The tournament's per-bot counters (bot id -> ``BotTally``), as the result script keeps them."""
        raw = self.client.hgetall(standings_key(game, tournament_id))
        tally: dict[str, BotTally] = {}
        for key, value in raw.items():
            kind, _, rest = key.partition(":")
            if kind == "vs":
                bot, _, opponent = rest.partition("|")
                tally.setdefault(bot, BotTally()).opponents[opponent] = int(value)
                continue
            t = tally.setdefault(rest, BotTally())
            if kind == "score_sum":
                t.score_sum = float(value)
            elif kind in ("matches", "half_points", "pairs", "wins", "losses"):
                setattr(t, kind, int(value))
        return tally

    def failed_matches(self, game: str, tournament_id: str) -> list[str]:
        """Match ids of the tournament given up after too many deliveries, sorted."""
        return sorted(self.client.smembers(failed_key(game, tournament_id)))

    # -- match jobs -----------------------------------------------------------------------------------------

    @staticmethod
    def job_games() -> list[str]:
        """Games whose jobs stream the workers read: every game the rules package knows."""
        return sorted(GAMES)

    def ensure_job_group(self, game: str | None = None) -> None:
        """Create the jobs stream of ``game`` (every known game when ``None``) and its consumer group "workers"
        (reading from the start) when missing."""
        for g in [game] if game else self.job_games():
            try:
                self.client.xgroup_create(jobs_key(g), JOBS_GROUP, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    def enqueue(self, specs: Sequence[MatchSpec], *, chunk: int = 1000) -> None:
        """Append one job per match spec to its game's jobs stream, in order (pipelined in chunks)."""
        for game in sorted({s.game for s in specs}):
            self.ensure_job_group(game)
        for start in range(0, len(specs), chunk):
            pipe = self.client.pipeline(transaction=False)
            for spec in specs[start:start + chunk]:
                pipe.xadd(jobs_key(spec.game), _job_fields(spec))
            pipe.execute()

    def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """Claim up to ``count`` new jobs for ``consumer`` through the group, waiting up to ``block_ms`` ms in all
        (split over the games' streams, read one at a time so that the same code runs on Redis Cluster).

        Claimed jobs stay pending in the group until settled (``ack_job`` / ``drop_job``), so that a reclaim
        can find them when their worker dies."""
        games = self.job_games()
        per_game = max(1, block_ms // len(games))
        jobs: list[Job] = []
        for game in games:
            if len(jobs) >= count:
                break
            reply = self.client.xreadgroup(JOBS_GROUP, consumer, {jobs_key(game): ">"}, count=count - len(jobs),
                                           block=per_game if not jobs else None)
            for _stream, entries in reply or []:
                for entry_id, fields in entries:
                    jobs.append(_parse_job(game, entry_id, fields or {}, 1))
        return jobs

    def reclaim_jobs(self, consumer: str, count: int, min_idle_ms: int) -> list[Job]:
        """Claim for ``consumer`` up to ``count`` jobs that other (dead) workers, or this one, left pending for at
        least ``min_idle_ms`` ms. Each claim counts as a delivery (``Job.deliveries``). A job whose stream entry
        is gone comes back with ``spec=None``."""
        jobs: list[Job] = []
        for game in self.job_games():
            if len(jobs) >= count:
                break
            for entry_id, deliveries, flat in self._reclaim(
                    keys=[jobs_key(game)], args=[JOBS_GROUP, consumer, int(min_idle_ms), count - len(jobs)]):
                fields = dict(zip(flat[::2], flat[1::2]))
                jobs.append(_parse_job(game, entry_id, fields, int(deliveries)))
        return jobs

    def refresh_jobs(self, consumer: str, jobs: Iterable[Job]) -> dict[str, str]:
        """Reset the idle time of ``consumer``'s running ``jobs`` (a live worker's heartbeat), so they are not
        reclaimed. Returns the jobs no longer pending for ``consumer``: entry id -> the consumer that holds it
        now (reclaimed by another worker), or "" (settled: acknowledged)."""
        by_game: dict[str, list[str]] = {}
        for job in jobs:
            by_game.setdefault(job.game, []).append(job.entry_id)
        lost: dict[str, str] = {}
        for game, ids in by_game.items():
            for entry_id, holder in self._refresh(keys=[jobs_key(game)], args=[JOBS_GROUP, consumer, *ids]):
                lost[entry_id] = holder
        return lost

    def job_holder(self, job: Job) -> str:
        """The consumer that holds ``job`` now (delivered to it, not settled), or "" when it is settled
        (acknowledged) or its stream is gone."""
        try:
            pending = self.client.xpending_range(jobs_key(job.game), JOBS_GROUP, job.entry_id, job.entry_id, 1)
        except redis.ResponseError:  # no stream or group
            return ""
        return str(pending[0]["consumer"]) if pending else ""

    def ack_job(self, job: Job) -> None:
        """Acknowledge a settled job and delete it from its stream."""
        pipe = self.client.pipeline(transaction=True)
        pipe.xack(jobs_key(job.game), JOBS_GROUP, job.entry_id)
        pipe.xdel(jobs_key(job.game), job.entry_id)
        pipe.execute()

    def drop_job(self, job: Job, reason: str) -> int:
        """Settle a job without running it: ``reason`` "cancelled" (its tournament was cancelled), "failed" (it
        was delivered too often) or "" (just acknowledge). Atomically: acknowledge and delete it and, unless its
        result is stored, count its match in the tournament's cancelled or failed set (a failed match lets the
        tournament finish when nothing else is left).

        Returns 1 settled now, 2 its result was stored (only acknowledged), 0 it was no longer pending."""
        if reason not in ("cancelled", "failed", ""):
            raise ValueError(f"reason must be 'cancelled', 'failed' or '', got {reason!r}")
        spec = job.spec
        game = job.game or (spec.game if spec else "")
        tid = spec.tournament if spec and spec.tournament else "-"
        mid = spec.match_id if spec else "-"
        return int(self._drop_job(
            keys=[jobs_key(game), result_key(game, mid), tournament_key(game, tid), cancelled_key(game, tid),
                  failed_key(game, tid)],
            args=[JOBS_GROUP, job.entry_id, mid, repr(time.time()), reason if spec and spec.tournament else ""]))

    def pending_jobs(self) -> int:
        """Jobs claimed by a worker and not settled yet, over every game."""
        total = 0
        for game in self.job_games():
            try:
                total += int(self.client.xpending(jobs_key(game), JOBS_GROUP)["pending"])
            except redis.ResponseError:  # no stream or group yet
                pass
        return total

    def queued_jobs(self) -> int:
        """Jobs in the streams, claimed or not (settled jobs are deleted), over every game."""
        return sum(int(self.client.xlen(jobs_key(g))) for g in self.job_games())

    def pending_details(self, game: str) -> list[dict[str, Any]]:
        """The pending jobs of ``game``: ``message_id``, ``consumer``, ``time_since_delivered`` (ms),
        ``times_delivered``, oldest first (at most 10000)."""
        try:
            return list(self.client.xpending_range(jobs_key(game), JOBS_GROUP, "-", "+", 10000))
        except redis.ResponseError:
            return []

    # -- workers --------------------------------------------------------------------------------------------

    def heartbeat(self, status: WorkerStatus, *, forget_s: float = DEFAULTS.worker_forget_s) -> None:
        """Write a worker's heartbeat; its key lives ``forget_s`` seconds after the last one."""
        key = worker_key(status.name)
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(key, mapping={
            "name": status.name, "host": status.host, "pid": status.pid, "started_at": repr(status.started_at),
            "last_seen": repr(status.last_seen), "concurrency": status.concurrency,
            "running": json.dumps(list(status.running)), "matches_done": status.matches_done,
            "timeout_s": repr(float(status.timeout_s)), "stopped": 1 if status.stopped else 0,
        })
        pipe.expire(key, max(1, int(forget_s)))
        pipe.zadd(WORKERS, {status.name: status.last_seen})
        pipe.execute()

    def list_workers(self) -> list[WorkerStatus]:
        """Workers with a heartbeat key, by name (forgotten ones are pruned from the index)."""
        names = sorted(self.client.zrange(WORKERS, 0, -1))
        pipe = self.client.pipeline(transaction=False)
        for name in names:
            pipe.hgetall(worker_key(name))
        out: list[WorkerStatus] = []
        gone: list[str] = []
        for name, h in zip(names, pipe.execute()):
            if not h:
                gone.append(name)
                continue
            out.append(WorkerStatus(
                name=h["name"], host=h.get("host", ""), pid=int(h.get("pid", 0)),
                started_at=float(h.get("started_at", 0.0)), last_seen=float(h.get("last_seen", 0.0)),
                concurrency=int(h.get("concurrency", 0)), running=tuple(json.loads(h.get("running", "[]"))),
                matches_done=int(h.get("matches_done", 0)), timeout_s=float(h.get("timeout_s", 0.0)),
                stopped=h.get("stopped") == "1"))
        if gone:
            self.client.zrem(WORKERS, *gone)
        return out

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
        seed: int | None = None,
        worker: str = "",
    ) -> bool:
        """Store a match's result and apply its Elo update, atomically and once per match id.

        In the same atomic step: the results log is appended, the match indexed (game, tournament, each bot id
        and NAME), and the tournament's progress (matches_done, faults, state) and standings counters bumped.

        Args:
            game: game id. match_id: the idempotency key. seats: bot ids in seat order (distinct, N >= 2).
            scores: game score per seat (Take 5: bullheads). ranks: competition rank per seat (1 = best).
            faults: faults per seat. record: the full match record (``MatchRecord.to_dict()``), stored beside.
            tournament_id: the tournament whose progress this match bumps.
            seed: deal seed of the match (default: the record's "seed"). worker: name of the worker storing it.
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
        tid = tournament_id or "-"
        keys = [
            result_key(game, match_id), match_key(game, match_id), ladder_key(game), results_log_key(game),
            tournament_key(game, tid), ladder_stats_key(game), standings_key(game, tid), matches_index_key(game),
            tournament_matches_key(game, tid), cancelled_key(game, tid), failed_key(game, tid),
        ]
        for bot in seats:
            keys += [bot_matches_key(game, bot), name_matches_key(game, _name_of(bot))]
        record_json = json.dumps(record)
        if seed is None:
            raw_seed = record.get("seed") if isinstance(record, dict) else None
            seed = int(raw_seed) if isinstance(raw_seed, int) else None
        for _ in range(RECORD_ATTEMPTS):
            if self.has_result(game, match_id):
                return False
            current = self.client.zmscore(ladder_key(game), list(seats))
            before = [self.initial_rating if r is None else float(r) for r in current]
            deltas = elo_deltas(before, list(ranks), self.k_factor)
            now = time.time()
            result = {
                "match_id": match_id, "game": game, "tournament": tournament_id, "seats": list(seats),
                "scores": list(scores), "ranks": list(ranks), "faults": list(faults),
                "ratings_before": before, "deltas": deltas, "k": self.k_factor, "stored_at": now,
                "seed": seed, "worker": worker,
            }
            args: list[Any] = [
                json.dumps(result), record_json, repr(self.initial_rating), n, "1" if tournament_id else "0",
                sum(int(f) for f in faults), repr(now), match_id,
            ]
            for bot, r, d, score, rank in zip(seats, before, deltas, scores, ranks):
                args += [bot, repr(float(r)), repr(float(d)), repr(float(score)), int(rank), 1 if rank == 1 else 0]
            outcome = int(self._record_result(keys=keys, args=args))
            if outcome == 1:
                return True
            if outcome == 0:
                return False
        raise StoreError(f"could not apply the result of {match_id}: ratings of {list(seats)} kept changing")

    def get_result(self, game: str, match_id: str) -> dict[str, Any] | None:
        """The stored result JSON of a match (seats, scores, ranks, faults, ratings_before, deltas, stored_at,
        seed, worker, ...)."""
        raw = self.client.get(result_key(game, match_id))
        return json.loads(raw) if raw is not None else None

    def match_game(self, match_id: str) -> str | None:
        """The game of a stored match: from its tournament ("t3-000041" -> t3), else the first game holding a
        result of that id; ``None`` when no game has it."""
        game = self.tournament_game(match_id.rsplit("-", 1)[0]) if "-" in match_id else None
        if game is not None:
            return game
        for g in sorted(set(self.client.smembers(GAMES_SET)) | set(GAMES)):
            if self.has_result(g, match_id):
                return g
        return None

    def get_match_record(self, match_id: str, game: str | None = None) -> dict[str, Any] | None:
        """The stored full match record of ``match_id`` (the game is found with ``match_game`` when not given),
        or ``None``."""
        game = game or self.match_game(match_id)
        if game is None:
            return None
        raw = self.client.get(match_key(game, match_id))
        return json.loads(raw) if raw is not None else None

    def list_matches(self, *, tournament_id: str | None = None, bot: str | None = None,
                     limit: int = 50) -> list[dict[str, Any]]:
        """Stored results (``get_result`` dicts), newest first: of one tournament and/or one bot ("NAME@VERSION",
        or "NAME" for every version of NAME), at most ``limit``. An unknown tournament gives []."""
        if limit < 1:
            return []
        if tournament_id:
            game = self.tournament_game(tournament_id)
            games = [game] if game else []
        else:
            games = sorted(self.client.smembers(GAMES_SET) | set(GAMES))
        out: list[dict[str, Any]] = []
        for game in games:
            if tournament_id:
                index = tournament_matches_key(game, tournament_id)
            elif bot:
                index = bot_matches_key(game, bot) if "@" in bot else name_matches_key(game, bot)
            else:
                index = matches_index_key(game)
            taken: list[dict[str, Any]] = []
            start = 0
            while len(taken) < limit:
                ids = self.client.zrevrange(index, start, start + CHUNK - 1)
                if not ids:
                    break
                start += len(ids)
                for result in self._results(game, ids):
                    if tournament_id and bot and not _plays(result, bot):
                        continue
                    taken.append(result)
                    if len(taken) >= limit:
                        break
            out += taken
        out.sort(key=lambda r: r.get("stored_at", 0.0), reverse=True)
        return out[:limit]

    def _results(self, game: str, match_ids: Sequence[str]) -> list[dict[str, Any]]:
        pipe = self.client.pipeline(transaction=False)
        for mid in match_ids:
            pipe.get(result_key(game, mid))
        out = []
        for mid, raw in zip(match_ids, pipe.execute()):
            if raw is None:
                raise StoreError(f"match {mid} of {game} is indexed but its result is missing")
            out.append(json.loads(raw))
        return out

    def ladder(self, game: str) -> list[LadderEntry]:
        """The Elo ladder of ``game``: every bot id with a stored result, best rating first (ties by id), with
        standard competition ranks (1, 2, 2, 4). Ratings and counts are read in one transaction (a snapshot)."""
        return self._ladder_snapshot(game)[0]

    def _ladder_snapshot(self, game: str) -> tuple[list[LadderEntry], int]:
        pipe = self.client.pipeline(transaction=True)
        pipe.zrange(ladder_key(game), 0, -1, withscores=True)
        pipe.hgetall(ladder_stats_key(game))
        pipe.llen(results_log_key(game))
        rated, stats, log_length = pipe.execute()
        rows = sorted(((bot, float(rating)) for bot, rating in rated), key=lambda row: (-row[1], row[0]))
        ranks = _competition_ranks([rating for _, rating in rows])
        out = []
        for rank, (bot, rating) in zip(ranks, rows):
            m = int(stats.get(f"matches:{bot}", 0))
            out.append(LadderEntry(rank=rank, bot=bot, rating=rating, matches=m,
                                   wins=int(stats.get(f"wins:{bot}", 0)),
                                   mean_score=float(stats.get(f"score_sum:{bot}", 0.0)) / m if m else 0.0))
        return out, int(log_length)

    def ratings(self, game: str, bots: Iterable[str]) -> dict[str, float]:
        """Live ratings of ``bots`` (bot ids); a bot without results gets the initial rating."""
        bots = list(bots)
        if not bots:
            return {}
        current = self.client.zmscore(ladder_key(game), bots)
        return {b: self.initial_rating if r is None else float(r) for b, r in zip(bots, current)}

    def rebuild_ladder(self, game: str, *, results: int | None = None) -> list[LadderEntry]:
        """The ladder recomputed from the results log alone (its first ``results`` entries; all when ``None``),
        in the order the results were applied (read-only).

        DESIGN.md promises it equals ``ladder(game)``; a difference means a lost or double-applied update.
        Raises ``StoreError`` when the log names a match whose result is missing.
        """
        ratings: dict[str, float] = {}
        matches: dict[str, int] = {}
        wins: dict[str, int] = {}
        score_sum: dict[str, float] = {}
        end = -1 if results is None else results - 1
        ids = self.client.lrange(results_log_key(game), 0, end) if end != -1 or results is None else []
        for start in range(0, len(ids), CHUNK):
            for result in self._results(game, ids[start:start + CHUNK]):
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

    def check_ladder(self, game: str) -> LadderCheck:
        """Rebuild the ladder of ``game`` from its results log and compare it with the live ladder, both as of
        one moment (the live ladder and the log length are read in one transaction; the log is append-only, so
        its first entries never change)."""
        live, length = self._ladder_snapshot(game)
        rebuilt = self.rebuild_ladder(game, results=length)
        return LadderCheck(rebuilt=rebuilt, live=live, equal=ladders_equal(rebuilt, live), results=length)


def _plays(result: dict[str, Any], bot: str) -> bool:
    seats = result.get("seats", [])
    if "@" in bot:
        return bot in seats
    return any(_name_of(s) == bot for s in seats)
