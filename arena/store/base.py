"""The connection every part of the store shares: the redis-py client, its registered scripts, the rating
constants, and the store's errors."""

from __future__ import annotations

import re
import secrets
import threading
from typing import Any, Self

import redis
from redis.exceptions import RedisClusterException

from arena.core.config import DEFAULTS
from arena.core.errors import ArenaError
from arena.store import keys, listeners, scripts

CHUNK = 500  # entries per pipelined batch of reads


CLUSTER_SCHEME = "redis+cluster://"

# What a store call raises while Redis is away: redis-py's errors and, on a cluster whose master is restarting,
# RedisClusterException too (e.g. SlotNotCoveredError after the client's own retries), which is not a RedisError.
REDIS_ERRORS: tuple[type[Exception], ...] = (redis.RedisError, RedisClusterException)
# what Redis answers while it refuses every write (its disk full: MISCONF; maxmemory: OOM; a replica: READONLY;
# too few replicas: NOREPLICAS), at the start of its error, or inside a script's ("Error running script ...: -MISCONF")
_REFUSES_WRITES = re.compile(r"(?:^|-)((?:MISCONF|OOM|READONLY|NOREPLICAS)\b.*)")


def write_refusal(exc: BaseException) -> str | None:
    """Redis's refusal of every write in ``exc`` (a ``redis.ResponseError``), e.g. "MISCONF Errors writing to the
    AOF file: No space left on device" (its disk full), "OOM ...", "READONLY ..." or "NOREPLICAS ..."; None for any
    other error."""
    found = _REFUSES_WRITES.search(str(exc)) if isinstance(exc, redis.ResponseError) else None
    return found.group(1) if found else None

# The store's client: a ``redis.Redis`` or a ``redis.cluster.RedisCluster``, made with ``decode_responses=True``.
# Typed Any on purpose: redis-py types every reply ``bytes | str`` (or ``Awaitable | Any``) whatever
# ``decode_responses`` says, and the two clients share no typed base. The store's methods type what they return.
RedisClient = Any


def connect(url: str, client_options: dict[str, Any] | None = None) -> RedisClient:
    """A redis-py client (``decode_responses=True``) for ``url``: ``redis://`` / ``rediss://`` / ``unix://`` for
    one server, ``redis+cluster://host:port`` for a Redis Cluster (``redis.cluster.RedisCluster``). The private
    Redis's port is reached only where this user listens (``arena.store.listeners``)."""
    options = {**listeners.client_options(url), **(client_options or {})}
    if url.startswith(CLUSTER_SCHEME):
        from redis.cluster import RedisCluster

        return RedisCluster.from_url("redis://" + url[len(CLUSTER_SCHEME):], decode_responses=True, **options)
    return redis.Redis.from_url(url, decode_responses=True, **options)


class StoreError(ArenaError, RuntimeError):
    """A stored value is missing or inconsistent, or an atomic update could not be applied."""


class OwnershipError(StoreError):
    """A bot NAME is owned by someone else: the owner token given does not match the stored one."""


class VersionsExhausted(StoreError):
    """A new version of a bot NAME that holds the most versions one name may have; the message says how to make
    room."""


class StoreBase:
    """The Redis client of a ``Store`` and the scripts registered on it.

    Args:
        client: a redis-py client created with ``decode_responses=True`` (see ``from_url``).
        initial_rating: Elo start of a new bot, points. k_factor: Elo K, points.
    Redis errors (``redis.RedisError``) pass through to the caller.
    """

    def __init__(self, client: RedisClient, *, initial_rating: float = DEFAULTS.initial_rating,
                 k_factor: float = DEFAULTS.k_factor) -> None:
        self.initial_rating = float(initial_rating)
        self.k_factor = float(k_factor)
        self._client_options: dict[str, Any] = {}
        self._settle_lock = threading.Lock()  # ResultStore.settle_match: one settle at a time per store
        self._known_ratings: dict[str, dict[str, float | None]] = {}  # game -> bot -> rating after our last settle
        self._bind(client)

    def _bind(self, client: RedisClient) -> None:
        self.client: RedisClient = client
        self._record_result = client.register_script(scripts.RECORD_RESULT)
        self._settle = client.register_script(scripts.SETTLE_MATCH)
        self._drop_job = client.register_script(scripts.DROP_JOB)
        self._cancel = client.register_script(scripts.CANCEL_TOURNAMENT)
        self._reclaim = client.register_script(scripts.RECLAIM)
        self._refresh = client.register_script(scripts.REFRESH)
        self._claim_new = client.register_script(scripts.CLAIM_NEW)
        self._release = client.register_script(scripts.RELEASE)
        self._register = client.register_script(scripts.REGISTER_BOT)
        self._update = client.register_script(scripts.UPDATE_BOT)

    @classmethod
    def from_url(cls, url: str, *, client_options: dict[str, Any] | None = None, **kwargs: Any) -> Self:
        """A store on the Redis at ``url``: ``redis://host:port/db`` (one server) or ``redis+cluster://host:port``
        (any node of a Redis Cluster; redis-py's ``RedisCluster`` routes every command by its keys' hash slot,
        and every script or transaction of the store touches keys of one hash tag). ``client_options`` go to the
        client (e.g. ``socket_timeout``, seconds), also when the store is retargeted."""
        store = cls(connect(url, client_options), **kwargs)
        store._client_options = dict(client_options or {})
        return store

    def close(self) -> None:
        self.client.close()

    def retarget(self, url: str) -> None:
        """Use the Redis at ``url`` from now on (a private Redis restarted on another port): later calls go
        there; the old client is closed, so a call still running on it fails with a Redis error."""
        old = self.client
        self._bind(connect(url, self._client_options))
        old.close()

    def ping(self) -> bool:
        return bool(self.client.ping())

    def server_time(self) -> float:
        """The Redis server's clock (``TIME``), seconds since the epoch: one clock for every worker, whatever their
        machines' clocks say (a cluster: its default node's)."""
        reply: Any = self.client.time()
        if isinstance(reply, dict):  # a cluster client may answer per node
            reply = next(iter(reply.values()))
        seconds, micros = reply
        return int(seconds) + int(micros) / 1e6

    def arena_id(self) -> str:
        """This arena's id: 16 random bytes as 32 hex digits, chosen by the first caller (SET NX, so concurrent
        first callers agree) and kept in Redis, so it stays the same through restarts and is new only for a new
        or emptied Redis. Read first, so that once it exists asking it writes nothing (reads go on while Redis
        refuses writes, its disk full)."""
        value = self.client.get(keys.ARENA_ID)
        if value:
            return str(value)
        self.client.set(keys.ARENA_ID, secrets.token_hex(16), nx=True)
        value = self.client.get(keys.ARENA_ID)
        if not value:  # deleted between the two calls
            raise StoreError("the arena id vanished from Redis while it was being read")
        return str(value)
