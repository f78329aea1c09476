"""Bot health as the workers see it, and the matches deferred while a bot is unhealthy (``arena.worker.health`` says
the rules; this module only keeps the state, each change in one atomic step)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.core.specs import MatchSpec
from arena.store import scripts
from arena.store.base import RedisClient, StoreBase
from arena.store.keys import (
    BOT_CHECK,
    JOBS_GROUP,
    deferred_jobs_key,
    deferred_key,
    health_key,
    jobs_key,
    result_key,
    unhealthy_key,
)
from arena_sdk.games import GAMES

MISMATCH_PREFIX = "not as registered: "  # the health reason of a bot whose GetInfo does not match its registration
FORCED_FIELD = "forced"  # a job field: "1" = play this match whatever the health of its bots (deferral cap passed)
DEFERRED_AT_FIELD = "deferred_at"  # a job field: when the match was first deferred, s since epoch
# A job field: deliveries of the match's job before it was last deferred, each of which may have started it (a
# deferred job comes back as a new stream entry, delivered once); the workers count them towards max_deliveries.
EARLIER_DELIVERIES_FIELD = "earlier_deliveries"


@dataclass(frozen=True)
class BotHealth:
    """The health of one bot version (a bot id of one game).

    Attributes:
        bot: the bot id. healthy: False from the match that made it unhealthy until its GetInfo answers again (or
            it plays a match through). failures: failed matches in a row (0 after a match it played through).
        since: when it became unhealthy (s since epoch; None while healthy). reason: why, the failure that made it
            unhealthy ("" while healthy). last_failure / last_failure_at: the latest failed match's reason and time
            (kept after a recovery). recovered_at: the last time it became healthy again, or None.
    """

    bot: str
    healthy: bool = True
    failures: int = 0
    since: float | None = None
    reason: str = ""
    last_failure: str = ""
    last_failure_at: float | None = None
    recovered_at: float | None = None

    def relapsed(self, max_deferral_s: float) -> bool:
        """True when this bot became unhealthy again less than ``max_deferral_s`` seconds after it last recovered:
        its deferred matches wait for no second cap (they are forced at the workers' next check)."""
        return (not self.healthy and self.since is not None and self.recovered_at is not None
                and self.since - self.recovered_at < max_deferral_s)

    def forced_at(self, max_deferral_s: float, now: float) -> float:
        """About when the deferred matches of this unhealthy bot are played anyway (s since epoch): ``since`` plus
        the cap, or ``since`` itself when it ``relapsed`` (``now`` when its ``since`` is unknown)."""
        since = self.since if self.since is not None else now
        return since if self.relapsed(max_deferral_s) else since + max_deferral_s

    @classmethod
    def from_hash(cls, bot: str, h: Mapping[str, str]) -> BotHealth:
        unhealthy = h.get("state") == "unhealthy"

        def when(name: str) -> float | None:
            return float(h[name]) if h.get(name) else None

        return cls(bot=bot, healthy=not unhealthy, failures=int(h.get("failures", 0) or 0),
                   since=when("since") if unhealthy else None, reason=h.get("reason", "") if unhealthy else "",
                   last_failure=h.get("last_failure", ""), last_failure_at=when("last_failure_at"),
                   recovered_at=when("recovered_at"))


@dataclass(frozen=True)
class DeferredMatch:
    """A match put off because a seat's bot was unhealthy: its match id, when it was first deferred (s since epoch),
    its spec (None when the parked fields do not parse) and the job's stream fields."""

    match_id: str
    deferred_at: float
    spec: MatchSpec | None
    fields: dict[str, str] = field(default_factory=dict)


class HealthStore(StoreBase):
    """Bot health counters, the unhealthy set, and the deferred matches of each game."""

    def _bind(self, client: RedisClient) -> None:
        super()._bind(client)
        self._record_health = client.register_script(scripts.RECORD_HEALTH)
        self._mark_healthy = client.register_script(scripts.MARK_HEALTHY)
        self._defer_job = client.register_script(scripts.DEFER_JOB)
        self._release_deferred = client.register_script(scripts.RELEASE_DEFERRED)

    # -- health -------------------------------------------------------------------------------------------------

    def bot_health(self, game: str, bots: Iterable[str]) -> dict[str, BotHealth]:
        """The health of each bot id of ``bots`` (a bot that never failed: healthy, 0 failures)."""
        ids = list(bots)
        return dict(zip(ids, self.bots_health([(game, b) for b in ids])))

    def bots_health(self, bots: Sequence[tuple[str, str]]) -> list[BotHealth]:
        """The health of each (game, bot id) of ``bots``, in order, in one round trip."""
        if not bots:
            return []
        pipe = self.client.pipeline(transaction=False)
        for game, bot in bots:
            pipe.hgetall(health_key(game, bot))
        return [BotHealth.from_hash(bot, h or {}) for (_, bot), h in zip(bots, pipe.execute())]

    def unhealthy_bots(self, game: str) -> dict[str, float]:
        """The unhealthy bot ids of ``game`` -> since when (s since epoch)."""
        return {b: float(s) for b, s in self.client.zrange(unhealthy_key(game), 0, -1, withscores=True)}

    def unhealthy_among(self, game: str, bots: Sequence[str]) -> list[str]:
        """The bots of ``bots`` that are unhealthy now, in order."""
        if not bots:
            return []
        since = self.client.zmscore(unhealthy_key(game), list(bots))
        return [b for b, s in zip(bots, since) if s is not None]

    def record_match_health(self, game: str, match_id: str, outcomes: Mapping[str, str | None], *,
                            unhealthy_after: int, now: float | None = None,
                            length: float | None = None) -> dict[str, int]:
        """Count one stored match in the health of its bots: ``outcomes`` maps each bot id to None (it played the
        match through: its run of failures ends, and an unhealthy bot is healthy again, unless the match started,
        ``length`` seconds before ``now``, before the bot became unhealthy; None: whenever it started) or the reason
        its match failed (counted once per match id; the ``unhealthy_after``-th failure in a row marks it
        unhealthy).

        Returns bot id -> 0 nothing new, 1 unhealthy now, 2 healthy again, -1 this failure was counted before.
        Raises ``ValueError`` for ``unhealthy_after`` < 1."""
        bots, script_keys, args = self.health_call(game, match_id, outcomes, unhealthy_after=unhealthy_after, now=now,
                                                   length=length)
        if not bots:
            return {}
        replies = self._record_health(keys=script_keys, args=args)
        return {b: int(r) for b, r in zip(bots, replies)}

    @staticmethod
    def health_call(game: str, match_id: str, outcomes: Mapping[str, str | None], *, unhealthy_after: int,
                    now: float | None = None, length: float | None = None) -> tuple[list[str], list[str], list[Any]]:
        """(bots, KEYS, ARGV) of the RECORD_HEALTH script for ``record_match_health`` (same arguments), for a
        caller doing its own I/O; no bots: nothing to call. Raises ``ValueError`` for ``unhealthy_after`` < 1."""
        if unhealthy_after < 1:
            raise ValueError(f"unhealthy_after must be at least 1, got {unhealthy_after}")
        bots = list(outcomes)  # now None: the server's clock, in the script (the deferral cap counts from it)
        args: list[Any] = [int(unhealthy_after), "" if now is None else repr(float(now)), match_id,
                           "" if length is None else repr(max(0.0, float(length)))]
        for bot in bots:
            reason = outcomes[bot]
            args += [bot, "ok" if reason is None else "fail", reason or ""]
        return bots, [unhealthy_key(game)] + [health_key(game, b) for b in bots], args

    def mark_healthy(self, game: str, bot: str, *, now: float | None = None) -> bool:
        """``bot`` answered GetInfo again: healthy, its run of failures reset. True when it was unhealthy."""
        now = time.time() if now is None else now
        return bool(int(self._mark_healthy(keys=[unhealthy_key(game), health_key(game, bot)],
                                           args=[bot, repr(float(now))])))

    def mark_unhealthy(self, game: str, bot: str, reason: str, *, now: float | None = None) -> bool:
        """``bot`` answers GetInfo, but not as registered (another name, a game it no longer plays, another
        version): unhealthy now with ``reason`` (one public sentence that names no other bot), in one MULTI/EXEC,
        so the workers defer its matches until its GetInfo matches its registration again
        (``arena.worker.health.check_bots``). Its count of failed matches is kept. True when it was healthy.
        ``now``: s since the epoch; None: the Redis server's clock, which the deferral cap is checked against."""
        now = self.server_time() if now is None else now
        since = self.client.zscore(unhealthy_key(game), bot)
        pipe = self.client.pipeline(transaction=True)
        pipe.zadd(unhealthy_key(game), {bot: now if since is None else since})
        pipe.hset(health_key(game, bot), mapping={
            "state": "unhealthy", "reason": reason, "since": repr(float(now if since is None else since)),
            "last_failure": reason, "last_failure_at": repr(float(now))})
        pipe.execute()
        return since is None

    # -- deferred matches ------------------------------------------------------------------------------------------

    def defer_job(self, game: str, entry_id: str, match_id: str, fields: Mapping[str, str], *, deliveries: int = 1,
                  now: float | None = None) -> int:
        """Take a claimed job (delivered ``deliveries`` times) off its stream and park it as a deferred match,
        atomically (``scripts.DEFER_JOB``). The first deferral time travels in the job's fields (``deferred_at``), so a
        match deferred again keeps it, and so do its earlier deliveries (``earlier_deliveries``: a job whose
        workers keep dying is still given up after ``max_deliveries`` in all).

        Returns 1 deferred now, 2 its result is stored (only acknowledged), 0 it was no longer pending."""
        now = self.server_time() if now is None else now  # the clock the deferral cap is checked against
        parked = {k: v for k, v in fields.items() if k != FORCED_FIELD}
        parked.setdefault(DEFERRED_AT_FIELD, repr(float(now)))
        earlier = int(parked.get(EARLIER_DELIVERIES_FIELD, "0") or 0) + max(0, deliveries - 1)
        if earlier:
            parked[EARLIER_DELIVERIES_FIELD] = str(earlier)
        flat = [x for kv in parked.items() for x in kv]
        return int(self._defer_job(
            keys=[jobs_key(game), result_key(game, match_id), deferred_key(game), deferred_jobs_key(game)],
            args=[JOBS_GROUP, entry_id, match_id, json.dumps(flat), parked[DEFERRED_AT_FIELD]]))

    def deferred_matches(self, game: str) -> list[DeferredMatch]:
        """The deferred matches of ``game``, first deferred first."""
        ids = self.client.zrange(deferred_key(game), 0, -1, withscores=True)
        if not ids:
            return []
        raw = self.client.hmget(deferred_jobs_key(game), [mid for mid, _ in ids])
        out = []
        for (mid, at), blob in zip(ids, raw):
            fields: dict[str, str] = {}
            spec = None
            try:
                flat = json.loads(blob) if blob else []
                fields = dict(zip(flat[::2], flat[1::2]))
                spec = MatchSpec.from_dict(json.loads(fields["spec"]))
            except (KeyError, ValueError, TypeError):
                pass
            out.append(DeferredMatch(match_id=mid, deferred_at=float(at), spec=spec, fields=fields))
        return out

    def deferred_count(self, game: str | None = None) -> int:
        """Deferred matches of ``game`` (of every game the workers read when None)."""
        games = [game] if game else sorted(GAMES)
        return sum(int(self.client.zcard(deferred_key(g))) for g in games)

    def deferred_of(self, game: str, tournament_id: str) -> int:
        """How many matches of tournament ``tournament_id`` (of ``game``) are deferred now (their ids start with
        the tournament's, ``arena.core.specs.match_id``). Reads every deferred match id of the game."""
        prefix = tournament_id + "-"
        return sum(1 for mid in self.client.zrange(deferred_key(game), 0, -1) if mid.startswith(prefix))

    def release_deferred(self, game: str, match_id: str, *, forced: bool = False) -> bool:
        """Queue a deferred match again on its game's stream (with ``forced=1`` when ``forced``: the workers then
        play it whatever the health of its bots). False when it was not deferred (another worker released it)."""
        return bool(int(self._release_deferred(
            keys=[deferred_key(game), deferred_jobs_key(game), jobs_key(game)],
            args=[match_id, "1" if forced else "0"])))

    def claim_bot_check(self, owner: str, ttl_s: float) -> bool:
        """True when ``owner`` may run the periodic check of unhealthy bots now: nobody else took it within the last
        ``ttl_s`` seconds (one worker of the fleet per interval)."""
        return bool(self.client.set(BOT_CHECK, owner, nx=True, px=max(1, int(ttl_s * 1000))))
