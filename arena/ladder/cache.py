"""The ratings cache: pairwise counts and batch fits of the stored results, kept in Redis so that any arena process
answers the ladder at once (keys in ``arena.store.keys``: ``ratings:*`` and ``tournament:*:fit``).

* **Pairwise counts** (``ratings:pairs``: ``PairCounts`` of the first ``results`` entries of the results log),
  behind the live ladder's margins and LOS. A ladder read counts the new results itself when there are at most
  ``sync_pairs_backlog`` of them, else leaves it to a background refresh and answers with the counts it has.
* **The ladder fit** (``ratings:fit``): ``arena.ratings.ladder.fit_for_ladder`` over every stored result of the
  game, computed again when it is read after the results log has grown (a read answers with the fit it has and
  starts the refresh). The results read so far are kept compactly
  (``ratings:matches``: ``arena.ladder.fits.encode_matches``), so a refresh reads only the results stored
  since the last one (the log is append-only) instead of re-reading and re-parsing every stored JSON result.
* **Tournament fits** (``tournament:<id>:fit``): the same fit over one tournament's results, keyed by the
  ``matches_done`` it counts (re-read whole: a tournament is small next to a ladder).

A refresh runs in a background thread of the process that noticed the growth; one at a time per game (or
tournament) across processes: a Redis lock (SET NX PX with a random token, renewed every third of its expiry while
it works, so a dead process's lock lapses), and every write of a refresh is made only while its lock is still its
own (``SET_IF_LOCKED``). A fit of more than ``SUBPROCESS_FIT_RESULTS`` results runs in a child process
(``arena.ladder.fits``), so its minutes of CPU never hold this process's GIL against its gRPC threads and the
referee's deadlines. Readers never wait for a refresh, except when no fit is cached at all and the data is small
(``sync_fit_results``): then the fit is computed in the call.
"""

from __future__ import annotations

import json
import logging
import math
import queue
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis.client import NEVER_DECODE

from arena.ladder.fits import CachedFit, elsewhere, fit_document, fit_elsewhere, matches_count, refit
from arena.ratings.design import RatedMatch, fitted_matches
from arena.ratings.ladder import PairCounts
from arena.store import Store, StoreError, write_refusal
from arena.store.base import REDIS_ERRORS
from arena.store.keys import (
    ratings_fit_key,
    ratings_lock_key,
    ratings_matches_key,
    ratings_pairs_key,
    result_key,
    results_log_key,
    tournament_fit_key,
    tournament_fit_lock_key,
    tournament_matches_key,
)
from arena.store.scripts import DROP_LOCK, RENEW_LOCK, SET_IF_LOCKED

log = logging.getLogger(__name__)

SYNC_FIT_RESULTS = 200  # no fit cached and at most this many results: the reader fits them itself (seconds)
SYNC_PAIRS_BACKLOG = 1_000  # new results a live-ladder read counts itself (~0.1 s); more: a background refresh
SUBPROCESS_FIT_RESULTS = 1_000  # a fit of more results runs in a child process (``arena.ladder.fits.fit_elsewhere``)
LOCK_MS = 60_000  # refresh lock expiry, ms (renewed every third of it while the refresh runs)
# A synchronous reader waits this long for another process's refresh of the same data, then answers with what is
# cached (a refresh follows in the background). Short: such reads are heavy reads (arena.server.shares.HeavyReads),
# one at a time in the service, and one that waited 25 s on a lock whose holder had died held every other's turn.
SYNC_WAIT_S = 2.0
LOG_CHUNK = 5_000  # results-log ids per LRANGE
GET_CHUNK = 500  # results per pipelined GET


@dataclass(frozen=True)
class PairsAnswer:
    """Pairwise counts for the live ladder: counts (of ``counts.results`` stored results), stored (results stored
    now), computed_at (s since epoch; 0 when nothing is counted), refreshing (a refresh runs somewhere)."""

    counts: PairCounts
    stored: int
    computed_at: float
    refreshing: bool


@dataclass(frozen=True)
class FitAnswer:
    """A cached fit (None: none yet), the results (or tournament matches) stored now, and whether a refresh runs."""

    fit: CachedFit | None
    stored: int
    refreshing: bool


class RatingsCache:
    """The ratings cache of one arena process, on the store's Redis (module docstring).

    Args:
        store: the arena's store (its current client is used for every call, so a retargeted store is followed).
        sync_fit_results: with no fit cached, at most this many results are fitted in the reader's call.
        sync_pairs_backlog: at most this many new results are counted in a live-ladder read.
        lock_ms: refresh lock expiry, ms. seed: bootstrap seed of every fit.
    Redis errors pass through; a failing background refresh is logged and tried again at the next read.
    """

    def __init__(self, store: Store, *, sync_fit_results: int = SYNC_FIT_RESULTS,
                 sync_pairs_backlog: int = SYNC_PAIRS_BACKLOG, lock_ms: int = LOCK_MS, seed: int = 0) -> None:
        self.store = store
        self.sync_fit_results = sync_fit_results
        self.sync_pairs_backlog = sync_pairs_backlog
        self.lock_ms = lock_ms
        self.seed = seed
        self._jobs: queue.Queue[tuple[str, Callable[[], object]]] = queue.Queue()
        self._pending: set[str] = set()
        self._mu = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()

    # -- reads ----------------------------------------------------------------------------------------------------

    @property
    def _client(self) -> Any:
        return self.store.client

    def ladder_pairs(self, game: str) -> PairsAnswer:
        """The pairwise counts of ``game`` (counting up to ``sync_pairs_backlog`` new results now; a larger backlog
        is left to a background refresh, and the answer then counts fewer results than are stored)."""
        stored = int(self._client.llen(results_log_key(game)))
        counts, computed_at = self._pairs(game)
        if counts.results < stored and stored - counts.results <= self.sync_pairs_backlog:
            n0 = counts.results
            for result in self._read_results(game, n0, stored):
                counts.add(result["seats"], result["ranks"])
            computed_at = time.time()
            self._write_pairs(game, counts, computed_at, n0)
        elif counts.results < stored:
            self._submit(f"ladder:{game}", lambda: self.refresh_ladder(game))
        return PairsAnswer(counts, stored, computed_at, self._busy(ratings_lock_key(game), f"ladder:{game}"))

    def ladder_fit(self, game: str) -> FitAnswer:
        """The cached fit of ``game``'s ladder. When results were stored since, a background refresh is started
        (the answer says so); with no fit cached and at most ``sync_fit_results`` results, the fit is computed now
        (or awaited from the process computing it, up to ``SYNC_WAIT_S``)."""
        stored = int(self._client.llen(results_log_key(game)))
        fit = self._cached(ratings_fit_key(game))
        if fit is None and 0 < stored <= self.sync_fit_results:
            self._now_or_wait(ratings_lock_key(game), lambda: self.refresh_ladder(game))
            fit = self._cached(ratings_fit_key(game))
        if stored and (fit is None or fit.results < stored):
            self._submit(f"ladder:{game}", lambda: self.refresh_ladder(game))
        return FitAnswer(fit, stored, self._busy(ratings_lock_key(game), f"ladder:{game}"))

    def tournament_fit(self, game: str, tournament_id: str, matches_done: int, running: bool) -> FitAnswer:
        """The cached fit of one tournament's results. Newer results: refreshed in the background; computed now
        when at most ``sync_fit_results`` matches are done and no fit is cached, or the tournament is no longer
        running (its final fit)."""
        key, lock = tournament_fit_key(game, tournament_id), tournament_fit_lock_key(game, tournament_id)
        fit = self._cached(key)
        job = f"tournament:{game}:{tournament_id}"
        stale = matches_done > 0 and (fit is None or fit.results < matches_done)
        if stale and matches_done <= self.sync_fit_results and (fit is None or not running):
            self._now_or_wait(lock, lambda: self.refresh_tournament(game, tournament_id))
            fit = self._cached(key)
            stale = fit is None or fit.results < matches_done
        if stale:
            self._submit(job, lambda: self.refresh_tournament(game, tournament_id))
        return FitAnswer(fit, matches_done, self._busy(lock, job))

    # -- refreshes -----------------------------------------------------------------------------------------------

    def refresh_ladder(self, game: str) -> bool:
        """Bring ``game``'s pairwise counts, matches and fit up to the results stored now, under the game's lock.
        Returns False (doing nothing) when another process holds the lock. Raises ``StoreError`` when the log
        names a result that is missing."""
        lock = ratings_lock_key(game)
        with self._lock(lock) as token:
            if token is None:
                return False
            stored = int(self._client.llen(results_log_key(game)))
            counts, _ = self._pairs(game)
            blob = self._client.execute_command("GET", ratings_matches_key(game), **{NEVER_DECODE: []})
            n_rows = matches_count(blob)
            if n_rows > stored:  # a copy of another log (Redis emptied and refilled): read everything again
                blob, n_rows = None, 0
            start, n_pairs0 = min(counts.results, n_rows), counts.results
            new: list[RatedMatch] = []
            for pos, result in enumerate(self._read_results(game, start, stored), start):
                if pos >= counts.results:
                    counts.add(result["seats"], result["ranks"])
                if pos >= n_rows:
                    new.append(RatedMatch.from_stored(result))
            if counts.results > n_pairs0:
                self._set_locked(lock, token, ratings_pairs_key(game),
                                 json.dumps({"computed_at": time.time(), **counts.to_dict()}))
            total = n_rows + len(new)
            fit = self._cached(ratings_fit_key(game))
            refit_now = total > 0 and (fit is None or fit.results < total)
            if not new and not refit_now:
                return True
            try:  # small: here; large: in a child process (decoding 100,000 rows holds the GIL for a second)
                blob_out, doc = (refit(blob, new, self.seed, refit_now) if total <= SUBPROCESS_FIT_RESULTS
                                 else elsewhere("refit", blob, new, self.seed, refit_now))
            except (ValueError, RuntimeError) as exc:
                if "malformed compact matches" not in str(exc):
                    raise
                log.warning("re-reading every result of %s: %s", game, exc)
                self._client.delete(ratings_matches_key(game))
                return True
            self._set_locked(lock, token, ratings_matches_key(game), blob_out)
            if doc is not None:
                self._set_locked(lock, token, ratings_fit_key(game), doc.to_json())
                log.info("ladder fit of %s: %d results, %d replicates, %.1f s (%.1f s CPU)", game, total,
                         doc.replicates, doc.seconds, doc.cpu_seconds)
            return True

    def refresh_tournament(self, game: str, tournament_id: str) -> bool:
        """Fit the stored results of one tournament and cache it, under the tournament's lock; False when another
        process holds it. Raises ``StoreError`` when an indexed result is missing."""
        lock = tournament_fit_lock_key(game, tournament_id)
        with self._lock(lock) as token:
            if token is None:
                return False
            ids = self._client.zrange(tournament_matches_key(game, tournament_id), 0, -1)
            cached = self._cached(tournament_fit_key(game, tournament_id))
            if cached is not None and cached.results >= len(ids):
                return True  # another process fitted these while this one waited for the lock
            matches = fitted_matches(self._get_results(game, ids))  # void results left out, counted as read
            if matches:
                fit_now = fit_document if len(matches) <= SUBPROCESS_FIT_RESULTS else fit_elsewhere
                doc = fit_now(matches, len(ids), self.seed, True)
                self._set_locked(lock, token, tournament_fit_key(game, tournament_id), doc.to_json())
            return True

    def close(self) -> None:
        """Stop the background thread after its current refresh (whose writes then find their lock or not)."""
        self._stopped.set()
        self._jobs.put(("", lambda: None))

    # -- helpers -------------------------------------------------------------------------------------------------

    def _cached(self, key: str) -> CachedFit | None:
        raw = self._client.get(key)
        if raw is None:
            return None
        try:
            return CachedFit.from_json(raw)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring a malformed cached fit at %s: %s", key, exc)
            return None

    def _pairs(self, game: str) -> tuple[PairCounts, float]:
        raw = self._client.get(ratings_pairs_key(game))
        if raw is None:
            return PairCounts(), 0.0
        try:
            data = json.loads(raw)
            return PairCounts.from_dict(data), float(data.get("computed_at", 0.0))
        except ValueError as exc:
            log.warning("ignoring malformed pair counts of %s: %s", game, exc)
            return PairCounts(), 0.0

    def _write_pairs(self, game: str, counts: PairCounts, computed_at: float, based_on: int) -> None:
        """Store ``counts`` unless the stored counts already count as many results. Not atomic, on purpose: two
        processes racing store counts of two prefixes of the same append-only log, both right; the shorter one
        is only caught up again by the next read."""
        if counts.results <= based_on:
            return
        current, _ = self._pairs(game)
        if current.results < counts.results:
            try:
                self._client.set(ratings_pairs_key(game), json.dumps({"computed_at": computed_at, **counts.to_dict()}))
            except redis.ResponseError as exc:  # a cache: while Redis refuses writes (its disk full), reads go on
                if not write_refusal(exc):
                    raise

    def _read_results(self, game: str, start: int, stop: int) -> Iterator[dict[str, Any]]:
        """The stored results at log positions start..stop-1 (0-based), in log order."""
        for first in range(start, stop, LOG_CHUNK):
            ids = self._client.lrange(results_log_key(game), first, min(stop, first + LOG_CHUNK) - 1)
            yield from self._get_results(game, ids)

    def _get_results(self, game: str, ids: Sequence[str]) -> Iterator[dict[str, Any]]:
        for first in range(0, len(ids), GET_CHUNK):
            chunk = ids[first:first + GET_CHUNK]
            pipe = self._client.pipeline(transaction=False)
            for mid in chunk:
                pipe.get(result_key(game, mid))
            for mid, raw in zip(chunk, pipe.execute()):
                if raw is None:
                    raise StoreError(f"match {mid} of {game} is in the results log but its result is missing")
                yield json.loads(raw)

    def _set_locked(self, lock: str, token: str, key: str, value: str | bytes) -> None:
        if not int(self._client.eval(SET_IF_LOCKED, 2, lock, key, token, value)):
            log.warning("a refresh lost its lock %s before writing %s: nothing written", lock, key)

    def _busy(self, lock: str, job: str) -> bool:
        with self._mu:
            if job in self._pending:
                return True
        return bool(self._client.exists(lock))

    class _Held:
        def __init__(self, cache: RatingsCache, lock: str) -> None:
            self.cache, self.lock = cache, lock
            self.token: str | None = None
            self.done = threading.Event()

        def __enter__(self) -> str | None:
            client, token = self.cache._client, secrets.token_hex(12)
            if not client.set(self.lock, token, nx=True, px=self.cache.lock_ms):
                return None
            self.token = token
            threading.Thread(target=self._renew, args=(client, token), daemon=True,
                             name=f"lock-{self.lock}").start()
            return token

        def _renew(self, client: Any, token: str) -> None:
            while not self.done.wait(self.cache.lock_ms / 3000.0):
                try:
                    if not int(client.eval(RENEW_LOCK, 1, self.lock, token, self.cache.lock_ms)):
                        return
                except Exception:  # noqa: BLE001 - Redis away: the lock lapses, the writes check it
                    return

        def __exit__(self, *exc: object) -> None:
            self.done.set()
            if self.token is not None:
                try:
                    self.cache._client.eval(DROP_LOCK, 1, self.lock, self.token)
                except Exception:  # noqa: BLE001 - it expires by itself
                    log.debug("could not drop lock %s", self.lock)

    def _lock(self, lock: str) -> RatingsCache._Held:
        return RatingsCache._Held(self, lock)

    def _now_or_wait(self, lock: str, refresh: Callable[[], bool]) -> None:
        """Run ``refresh`` now; when another process holds its lock, wait (up to ``SYNC_WAIT_S``) for it to end.
        While Redis refuses writes (``write_refusal``: its disk full, MISCONF), nothing is refreshed and the read
        goes on with what is cached (a fit is a cache: standings and status keep answering)."""
        deadline = time.monotonic() + SYNC_WAIT_S
        try:
            while not refresh():
                if time.monotonic() > deadline or not self._client.exists(lock):
                    return
                time.sleep(0.05)
        except redis.ResponseError as exc:
            if not write_refusal(exc):
                raise
            log.warning("a fit was not refreshed: Redis refuses writes (%s); answered with what is cached", exc)

    def _submit(self, job: str, fn: Callable[[], object]) -> None:
        with self._mu:
            if job in self._pending or self._stopped.is_set():
                return
            self._pending.add(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="arena-ratings", daemon=True)
                self._thread.start()
        self._jobs.put((job, fn))

    def _run(self) -> None:
        while not self._stopped.is_set():
            job, fn = self._jobs.get()
            try:
                if job:
                    fn()
            except REDIS_ERRORS as exc:  # Redis away (or stopped under a stopping server): the next read retries
                log.warning("ratings refresh %s stopped: Redis %s (%s)", job,
                            "refuses writes" if write_refusal(exc) else "unavailable", exc)
            except Exception:  # noqa: BLE001 - logged; the next read tries again
                log.exception("ratings refresh %s failed", job)
            finally:
                with self._mu:
                    self._pending.discard(job)


def finite_or_none(x: float | None) -> float | None:
    """``x`` when it is a finite number, else None (for JSON and tables)."""
    return x if x is not None and math.isfinite(x) else None

