"""Tournaments: creation with their jobs (one transaction), progress, cancellation, standings counters."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import WatchError

from arena.core.seeds import seed_commitment, seed_hex
from arena.core.specs import BotTally, MatchSpec
from arena.store.base import CHUNK, StoreError
from arena.store.jobs import JobStore, job_fields
from arena.store.keys import (
    JOBS_GROUP,
    TOURNAMENT_IDS,
    TOURNAMENTS,
    attempts_key,
    cancelled_key,
    failed_key,
    format_state_key,
    jobs_key,
    standings_key,
    tournament_key,
)


@dataclass(frozen=True)
class TournamentInfo:
    """A stored tournament and its progress.

    Attributes: id ("t3"); game; bots (bot ids); seats_per_match (k); rounds (R); seed (the SECRET tournament
    seed, 0 .. 2**256-1, the HMAC key of its deals: never shown before ``ended``, see ``commitment``); config (JSON
    form); deadline_ms (Decide deadline, ms); matches_total; matches_done (results stored); faults (across
    finished matches); state ("running" | "finished" | "cancelled"); created_at / finished_at / cancelled_at (s
    since epoch; None until it happens); matches_cancelled (dropped by a cancellation, never played);
    matches_failed (given up after ``max_deliveries`` deliveries, see ``arena.worker.loop``); deals (the deal plan,
    "duplicate", "unique" or "rotate", see ``arena.tournaments.deal_plan``); deal_count (distinct deals of the plan);
    kind (its format's name); extra (what its format keeps, JSON form); grows (its format is ``controlled``: set at
    creation from the format, stored as the hash's ``controlled``; None stands for what ``kind`` says of a built-in
    format: every one but the round robin grows).
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
    deals: str = "duplicate"
    deal_count: int = 0
    kind: str = "round_robin"
    extra: dict[str, Any] = field(default_factory=dict)
    grows: bool | None = None

    def __post_init__(self) -> None:
        if self.grows is None:
            object.__setattr__(self, "grows", self.kind != "round_robin")

    @property
    def controlled(self) -> bool:
        """True for a tournament that grows while it runs (``grows``; its format's ``control`` is called by
        ``arena.tournaments.controllers``): only that controller finishes it."""
        return bool(self.grows)

    @property
    def commitment(self) -> str:
        """SHA-256 (hex) of the secret seed's 32 bytes: public from creation on."""
        return seed_commitment(self.seed)

    @property
    def ended(self) -> bool:
        """True when no match of the tournament can be dealt any more, so its seed may be revealed: it is
        finished, or cancelled with every match settled (played, dropped or failed; a match that a worker had
        already received when the tournament was cancelled is still being played until then)."""
        settled = self.matches_done + self.matches_cancelled + self.matches_failed >= self.matches_total
        return self.state in ("finished", "cancelled") and settled

    def revealed_seed(self) -> str:
        """The seed as 64 hex digits once ``ended``, else ""."""
        return seed_hex(self.seed) if self.ended else ""


def tournament_position(tournament_id: str) -> tuple[int, str]:
    """Where a tournament stands in the newest-first order of ``tournaments_page``: (N of "t<N>", else 0; its id)."""
    return (int(tournament_id[1:]) if tournament_id[1:].isdigit() else 0), tournament_id


class TournamentStore(JobStore):
    """Stored tournaments and their progress."""

    def next_tournament_id(self) -> str:
        """A new tournament id: "t1", "t2", ... (never reused)."""
        return f"t{self.client.incr(TOURNAMENT_IDS)}"

    def tournament_game(self, tournament_id: str) -> str | None:
        """Game of a stored tournament, or ``None`` when the id is unknown."""
        game: str | None = self.client.hget(TOURNAMENTS, tournament_id)
        return game

    def create_tournament(self, info: TournamentInfo, specs: Sequence[MatchSpec] = (),
                          state: Mapping[str, str] | None = None) -> None:
        """Store a new tournament (state "running", 0 matches done) and queue its matches ``specs``, in order, in
        one MULTI/EXEC: a crash leaves either the whole tournament with every job, or nothing of it but a dangling
        id in the index (which readers skip). ``state`` (field -> text) goes into the tournament's format state
        (``format_state``) in the same transaction. The tournament hash and the jobs stream share the game's hash
        tag, so the transaction also runs on Redis Cluster. Raises ``StoreError`` when the id exists or a spec is
        of another game."""
        if any(spec.game != info.game for spec in specs):
            raise StoreError(f"tournament {info.id} is of {info.game}; every match spec must be too")
        if specs:
            self.ensure_job_group(info.game)
        stored_spec = {
            "bots": list(info.bots),
            "seats_per_match": info.seats_per_match,
            "rounds": info.rounds,
            "seed": info.seed,
            "config": info.config,
            "deadline_ms": info.deadline_ms,
            "deals": info.deals,
            "deal_count": info.deal_count,
            "kind": info.kind,
            "extra": info.extra,
        }
        if not self.client.hsetnx(TOURNAMENTS, info.id, info.game):
            raise StoreError(f"tournament {info.id} exists already")
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(tournament_key(info.game, info.id), mapping={
            "id": info.id,
            "game": info.game,
            "spec": json.dumps(stored_spec),
            "matches_total": info.matches_total,
            "matches_done": 0,
            "faults": 0,
            "state": "finished" if info.matches_total == 0 and not info.controlled else "running",
            "created_at": repr(float(info.created_at)),
            "controlled": "1" if info.controlled else "0",
        })
        if state:
            pipe.hset(format_state_key(info.game, info.id), mapping=dict(state))
        for spec in specs:
            pipe.xadd(jobs_key(spec.game), job_fields(spec))
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
            deals=str(spec.get("deals", "rotate")), deal_count=int(spec.get("deal_count", 0)),
            kind=str(spec.get("kind", "round_robin")), extra=dict(spec.get("extra") or {}),
            grows=h["controlled"] == "1" if "controlled" in h else None,
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

    def tournaments_page(self, game: str | None, before: tuple[int, str] | None,
                         size: int) -> tuple[list[TournamentInfo], bool]:
        """One page of stored tournaments (of ``game`` when given), newest first: the first ``size`` whose (number
        N of ``t<N>``, id) comes after ``before`` (the previous page's last, ``tournament_position``; None: from the
        newest). Returns (tournaments, whether more may follow). Reads the id index (a hash of short strings, one
        field per tournament, which only organisers add to) and ``size`` tournaments."""
        ids = self.client.hgetall(TOURNAMENTS)
        numbered = sorted((tournament_position(tid) for tid, g in ids.items() if not game or g == game),
                          reverse=True)
        if before is not None:
            numbered = [(n, tid) for n, tid in numbered if (n, tid) < before]
        chosen = numbered[:max(1, size)]
        pipe = self.client.pipeline(transaction=False)
        for _, tid in chosen:
            pipe.hgetall(tournament_key(ids[tid], tid))
            pipe.scard(cancelled_key(ids[tid], tid))
            pipe.scard(failed_key(ids[tid], tid))
        replies = pipe.execute()
        out = [self._tournament(replies[i], replies[i + 1], replies[i + 2])
               for i in range(0, len(replies), 3) if replies[i]]
        return out, len(numbered) > len(chosen)

    def extend_tournament(self, game: str, tournament_id: str, specs: Sequence[MatchSpec], *,
                          expect_total: int | None = None, state: Mapping[str, str] | None = None) -> bool:
        """Queue more matches of a running controlled tournament: its ``matches_total`` grows by ``len(specs)``
        and their jobs are added, and ``state`` (field -> text) is set in its format state, in one MULTI/EXEC
        watched on the tournament hash (the hash and the stream share the game's hash tag). Returns False (nothing
        queued) when the tournament is not running any more, or when ``expect_total`` is given and
        ``matches_total`` is not that number (another controller call queued these matches first: a
        compare-and-set, so match ids derived from ``matches_total`` are queued once). Raises ``StoreError`` for an
        unknown tournament or a spec of another game or tournament."""
        if any(spec.game != game or spec.tournament != tournament_id for spec in specs):
            raise StoreError(f"every match added to {tournament_id} must be of {game} and of that tournament")
        key = tournament_key(game, tournament_id)
        format_state = dict(state or {})
        if specs:
            self.ensure_job_group(game)
        with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(key)
                    state = pipe.hget(key, "state")
                    if state is None:
                        raise StoreError(f"no tournament {tournament_id} of {game}")
                    if state != "running":
                        return False
                    if expect_total is not None and int(pipe.hget(key, "matches_total") or 0) != expect_total:
                        return False
                    pipe.multi()
                    pipe.hincrby(key, "matches_total", len(specs))
                    if format_state:
                        pipe.hset(format_state_key(game, tournament_id), mapping=format_state)
                    for spec in specs:
                        pipe.xadd(jobs_key(game), job_fields(spec))
                    pipe.execute()
                    return True
                except WatchError:
                    continue

    def format_state(self, game: str, tournament_id: str) -> dict[str, str]:
        """The format state of a tournament (field -> text, empty when it has none): what its format stored with
        the matches it queued (``create_tournament`` and ``extend_tournament``, ``state=``)."""
        return dict(self.client.hgetall(format_state_key(game, tournament_id)))

    def finish_tournament(self, game: str, tournament_id: str, *, now: float | None = None) -> bool:
        """Mark a running (controlled) tournament finished; its seed may then be revealed once every queued
        match is settled (``TournamentInfo.ended``). Returns False when it was not running."""
        key = tournament_key(game, tournament_id)
        with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(key)
                    if pipe.hget(key, "state") != "running":
                        return False
                    pipe.multi()
                    pipe.hset(key, mapping={"state": "finished", "finished_at": repr(time.time() if now is None
                                                                                    else float(now))})
                    pipe.execute()
                    return True
                except WatchError:
                    continue

    def tournament_seed(self, game: str, tournament_id: str) -> int | None:
        """The secret seed of a stored tournament (for the workers, which derive each match's deal from it), or
        ``None`` when the tournament is unknown."""
        raw = self.client.hget(tournament_key(game, tournament_id), "spec")
        return int(json.loads(raw)["seed"]) if raw else None

    def next_attempt(self, game: str, tournament_id: str, match_id: str) -> int:
        """Count one more start of match ``match_id`` and return how many starts came before (0 the first time):
        the attempt number of its deal, so a match played again (after a crash of ours, a reclaim, a deferral)
        never gets cards that were dealt before."""
        return int(self.client.hincrby(attempts_key(game, tournament_id), match_id, 1)) - 1

    def tournament_state(self, game: str, tournament_id: str) -> str | None:
        """State of a tournament ("running" | "finished" | "cancelled"), ``None`` when unknown."""
        state: str | None = self.client.hget(tournament_key(game, tournament_id), "state")
        return state

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
