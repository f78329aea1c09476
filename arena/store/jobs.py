"""Match jobs on the games' Redis Streams (claim, refresh, reclaim, settle) and the workers' heartbeats."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import redis
from redis.cluster import RedisCluster

from arena.core.config import DEFAULTS
from arena.core.specs import MatchSpec
from arena.store.base import StoreBase
from arena.store.keys import (
    JOBS_GROUP,
    WORKERS,
    cancelled_key,
    failed_key,
    jobs_key,
    result_key,
    tournament_key,
    worker_key,
)
from arena_sdk.games import GAMES


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
    heartbeat counts as alive for this long); stopped (it said goodbye); max_deferral_s (its cap on a deferred
    match, ``arena.worker.health``; the default for a heartbeat that does not say).
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
    max_deferral_s: float = DEFAULTS.max_deferral_s

    def alive(self, now: float) -> bool:
        """True when the worker has not stopped and its last heartbeat is younger than its timeout."""
        return not self.stopped and now - self.last_seen <= self.timeout_s


def job_fields(spec: MatchSpec) -> dict[str, str]:
    """The fields of a match's job entry on its game's jobs stream."""
    return {"match": spec.match_id, "tournament": spec.tournament, "spec": json.dumps(spec.to_dict())}


def _parse_job(game: str, entry_id: str, fields: dict[str, str], deliveries: int) -> Job:
    try:
        spec = MatchSpec.from_dict(json.loads(fields["spec"]))
        return Job(entry_id, spec, fields=fields, game=game, deliveries=deliveries)
    except (KeyError, ValueError, TypeError) as exc:  # TournamentError is a ValueError
        return Job(entry_id, None, error=f"malformed job {entry_id} of {game}: {exc}", fields=fields, game=game,
                   deliveries=deliveries)


def _entry_ids_by_game(jobs: Iterable[Job]) -> dict[str, list[str]]:
    """The entry ids of ``jobs`` by game (their jobs stream), in order."""
    by_game: dict[str, list[str]] = {}
    for job in jobs:
        by_game.setdefault(job.game, []).append(job.entry_id)
    return by_game


class JobStore(StoreBase):
    """The match queue: one stream per game, read through the consumer group "workers"; worker heartbeats."""

    _claim_turns: ClassVar[Iterator[int]] = itertools.count()  # the claims made in this process (read_jobs)

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
                pipe.xadd(jobs_key(spec.game), job_fields(spec))
            pipe.execute()

    def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """Claim up to ``count`` new jobs for ``consumer`` through the group. Every game's stream is read first
        without waiting (in one round trip on one server: ``_claim_from``), starting at the next game each call (a
        job waiting in any stream is taken at once, and a busy game's jobs never hold back another game's); only
        when none holds a job does it wait, up to ``block_ms`` ms: on every stream at once on one server
        (``_read_new``: then a few more than ``count`` may come), split over the streams one at a time on a Redis
        Cluster (each stream has its own slot).

        Claimed jobs stay pending in the group until settled (``ack_job`` / ``drop_job``), so that a reclaim
        can find them when their worker dies."""
        games = self.job_games()
        turn = next(self._claim_turns) % len(games)  # each claim starts at the next game: none starves another
        games = games[turn:] + games[:turn]
        jobs: list[Job] = []
        if not isinstance(self.client, RedisCluster):  # one server: every stream in one script, then one wait
            jobs = self._claim_from(consumer, games, count)
            if jobs or block_ms <= 0:
                return jobs
            return self._read_new(consumer, games, count, block_ms)
        for game in games:
            if len(jobs) >= count:
                return jobs
            jobs += self._read_new(consumer, [game], count - len(jobs), None)
        if jobs or block_ms <= 0:
            return jobs
        per_game = max(1, block_ms // len(games))
        for game in games:
            jobs += self._read_new(consumer, [game], count, per_game)
            if jobs:
                break
        return jobs

    def _claim_from(self, consumer: str, games: Sequence[str], count: int) -> list[Job]:
        """Up to ``count`` new jobs for ``consumer``, the first game's first, then the next game's (one server: the
        script ``CLAIM_NEW`` reads the streams in one round trip, without waiting). A stream without its group gets
        it, and gives nothing this time."""
        missing, claimed = self._claim_new(keys=[jobs_key(g) for g in games], args=[JOBS_GROUP, consumer, count])
        for k in missing:
            self.ensure_job_group(games[int(k) - 1])
        return [_parse_job(games[int(k) - 1], entry_id, dict(zip(flat[::2], flat[1::2])), 1)
                for k, entry_id, flat in claimed]

    def _read_new(self, consumer: str, games: Sequence[str], count: int, block_ms: int | None) -> list[Job]:
        """New jobs of ``games``' streams for ``consumer`` in one command (several streams: one server only, they
        are in different cluster slots), up to ``count`` per stream, waiting up to ``block_ms`` ms for the first
        (None: no wait); jobs arriving in two streams at the same moment may bring more than ``count`` (the worker
        claims the extra ones ahead). A stream without its group (a new game, a flushed Redis) gets it, and the
        call gives nothing this time."""
        try:
            reply = self.client.xreadgroup(JOBS_GROUP, consumer, {jobs_key(g): ">" for g in games}, count=count,
                                           block=block_ms)
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            for game in games:
                self.ensure_job_group(game)
            return []
        by_key = {jobs_key(g): g for g in games}
        return [_parse_job(by_key[stream], entry_id, fields or {}, 1)
                for stream, entries in reply or [] for entry_id, fields in entries]

    def reclaim_jobs(self, consumer: str, count: int, min_idle_ms: int) -> list[Job]:
        """Claim for ``consumer`` up to ``count`` jobs that other (dead) workers, or this one, left pending for at
        least ``min_idle_ms`` ms. Each claim counts as a delivery (``Job.deliveries``). A job whose stream entry
        is gone comes back with ``spec=None``."""
        jobs: list[Job] = []
        for game in self.job_games():
            if len(jobs) >= count:
                break
            try:
                claimed = self._reclaim(
                    keys=[jobs_key(game)], args=[JOBS_GROUP, consumer, int(min_idle_ms), count - len(jobs)])
            except redis.ResponseError as exc:  # no group yet: nothing to reclaim there
                if "NOGROUP" not in str(exc):
                    raise
                continue
            for entry_id, deliveries, flat in claimed:
                fields = dict(zip(flat[::2], flat[1::2]))
                jobs.append(_parse_job(game, entry_id, fields, int(deliveries)))
        return jobs

    def refresh_jobs(self, consumer: str, jobs: Iterable[Job]) -> dict[str, str]:
        """Reset the idle time of ``consumer``'s running ``jobs`` (a live worker's heartbeat), so they are not
        reclaimed. Returns the jobs no longer pending for ``consumer``: entry id -> the consumer that holds it
        now (reclaimed by another worker), or "" (settled: acknowledged)."""
        by_game = _entry_ids_by_game(jobs)
        lost: dict[str, str] = {}
        for game, ids in by_game.items():
            for entry_id, holder in self._refresh(keys=[jobs_key(game)], args=[JOBS_GROUP, consumer, *ids]):
                lost[entry_id] = holder
        return lost

    def release_jobs(self, consumer: str, jobs: Iterable[Job], idle_ms: int) -> int:
        """Hand back ``jobs`` that ``consumer`` claimed ahead and never started (a stopping worker's prefetched
        jobs), so that the next reclaim of any worker takes them at once (their idle time becomes ``idle_ms``, the
        visibility timeout) and counts no extra delivery. Jobs no longer pending for ``consumer`` are left alone.
        Returns how many were handed back."""
        by_game = _entry_ids_by_game(jobs)
        return sum(int(self._release(keys=[jobs_key(game)], args=[JOBS_GROUP, consumer, int(idle_ms), *ids]))
                   for game, ids in by_game.items())

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

    def jobs_held(self) -> dict[str, int]:
        """Consumer (worker name) -> its jobs claimed and not settled yet, over every game (one XPENDING summary
        per game)."""
        held: dict[str, int] = {}
        for game in self.job_games():
            try:
                summary = self.client.xpending(jobs_key(game), JOBS_GROUP)
            except redis.ResponseError:  # no stream or group yet
                continue
            for consumer in summary.get("consumers") or ():
                name = consumer["name"]
                held[name] = held.get(name, 0) + int(consumer["pending"])
        return held

    def queued_jobs(self) -> int:
        """Jobs in the streams, claimed or not (settled jobs are deleted), over every game."""
        return sum(int(self.client.xlen(jobs_key(g))) for g in self.job_games())

    def stream_figures(self, game: str) -> tuple[int, int]:
        """(jobs in the stream of ``game``, claimed or not; jobs of it claimed and not settled yet): 0 and 0 before
        the stream or its consumer group exists."""
        queued = int(self.client.xlen(jobs_key(game)))
        try:
            pending = int(self.client.xpending(jobs_key(game), JOBS_GROUP)["pending"])
        except redis.ResponseError:  # no stream or group yet
            pending = 0
        return queued, pending

    def pending_details(self, game: str) -> list[dict[str, Any]]:
        """The pending jobs of ``game``: ``message_id``, ``consumer``, ``time_since_delivered`` (ms),
        ``times_delivered``, oldest first (at most 10000)."""
        try:
            return list(self.client.xpending_range(jobs_key(game), JOBS_GROUP, "-", "+", 10000))
        except redis.ResponseError:
            return []

    def refresh_and_beat(self, consumer: str, jobs: Sequence[Job], status: WorkerStatus, *,
                         forget_s: float = DEFAULTS.worker_forget_s) -> dict[str, str]:
        """``refresh_jobs(consumer, jobs)`` (none: nothing to refresh), then ``heartbeat(status)``: one round trip
        on one server (two or more on a Redis Cluster). Returns the jobs lost, as ``refresh_jobs``."""
        if isinstance(self.client, RedisCluster) or not jobs:
            lost = self.refresh_jobs(consumer, jobs) if jobs else {}
            self.heartbeat(status, forget_s=forget_s)
            return lost
        by_game = _entry_ids_by_game(jobs)
        pipe = self.client.pipeline(transaction=False)
        for game, ids in by_game.items():
            pipe.evalsha(self._refresh.sha, 1, jobs_key(game), JOBS_GROUP, consumer, *ids)
        self._beat(pipe, status, forget_s)
        try:
            replies = pipe.execute()
        except redis.exceptions.NoScriptError:  # a Redis that lost its scripts (restarted): the heartbeat stands
            return self.refresh_jobs(consumer, jobs)  # and the script is loaded again
        return {entry_id: holder for reply in replies[:len(by_game)] for entry_id, holder in reply}

    def heartbeat(self, status: WorkerStatus, *, forget_s: float = DEFAULTS.worker_forget_s) -> None:
        """Write a worker's heartbeat; its key lives ``forget_s`` seconds after the last one."""
        pipe = self.client.pipeline(transaction=False)
        self._beat(pipe, status, forget_s)
        pipe.execute()

    @staticmethod
    def _beat(pipe: Any, status: WorkerStatus, forget_s: float) -> None:
        """The heartbeat's commands, queued on ``pipe``."""
        key = worker_key(status.name)
        pipe.hset(key, mapping={
            "name": status.name, "host": status.host, "pid": status.pid, "started_at": repr(status.started_at),
            "last_seen": repr(status.last_seen), "concurrency": status.concurrency,
            "running": json.dumps(list(status.running)), "matches_done": status.matches_done,
            "timeout_s": repr(float(status.timeout_s)), "stopped": 1 if status.stopped else 0,
            "max_deferral_s": repr(float(status.max_deferral_s)),
        })
        pipe.expire(key, max(1, int(forget_s)))
        pipe.zadd(WORKERS, {status.name: status.last_seen})

    def workers_page(self, after: str | None, size: int) -> tuple[list[WorkerStatus], bool]:
        """One page of workers with a heartbeat key, by name: the first ``size`` named after ``after`` (the previous
        page's last; None: from the first). Returns (workers, whether more may follow). Reads the names index (one
        short name per worker, which only holders of Redis credentials add to) and about ``size + 1`` heartbeats."""
        size = max(1, size)
        names = sorted(n for n in self.client.zrange(WORKERS, 0, -1) if after is None or n > after)
        out: list[WorkerStatus] = []
        start = 0
        while start < len(names) and len(out) <= size:
            chosen = names[start:start + size + 1 - len(out)]
            start += len(chosen)
            out += self._workers(chosen)
        return out[:size], len(out) > size

    def list_workers(self) -> list[WorkerStatus]:
        """Workers with a heartbeat key, by name (forgotten ones are pruned from the index)."""
        return self._workers(sorted(self.client.zrange(WORKERS, 0, -1)))

    def _workers(self, names: list[str]) -> list[WorkerStatus]:
        """The heartbeats of the workers ``names``, in order; names without one are pruned from the index."""
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
                stopped=h.get("stopped") == "1",
                max_deferral_s=float(h.get("max_deferral_s", DEFAULTS.max_deferral_s))))
        if gone:
            self.client.zrem(WORKERS, *gone)
        return out
