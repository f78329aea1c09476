"""Results (exactly once, with their Elo update), the match indexes, and the ladder (live, rebuilt, checked)."""

from __future__ import annotations

import heapq
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis.client import NEVER_DECODE

from arena.core.specs import is_house_bot
from arena.ratings import elo_deltas
from arena.store.base import CHUNK, StoreError
from arena.store.codec import RecordCodecError, pack_record, unpack_record
from arena.store.keys import (
    GAMES_SET,
    bot_matches_key,
    cancelled_key,
    failed_key,
    ladder_key,
    ladder_stats_key,
    match_key,
    match_sequence_key,
    matches_index_key,
    name_matches_key,
    name_of,
    result_key,
    results_log_key,
    standings_key,
    tournament_key,
    tournament_matches_key,
)
from arena.store.tournaments import TournamentStore
from arena_sdk.games import GAMES

FILTERED_SCAN = 2_000  # results of a tournament one ListMatches of one bot in it reads at most (matches_page)
RECORD_ATTEMPTS = 100  # optimistic retries of one result when other workers keep moving the same ratings


@dataclass(frozen=True)
class LadderEntry:
    """One line of the Elo ladder: standard competition rank by rating (1 = best), bot id, rating (Elo points),
    matches played, wins (matches at rank 1; shared first places count), mean score per match (the
    game's score; lower is better in a game whose ``GameInfo.lower_score_is_better``)."""

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


class ResultStore(TournamentStore):
    """Match results, the results log and the ladder."""

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
        deal: dict[str, int] | None = None,
        rated: bool = True,
        void: bool = False,
    ) -> bool:
        """Store a match's result and apply its Elo update, atomically and once per match id.

        In the same atomic step: the results log is appended, the match indexed (game, tournament, each bot id
        and NAME), and the tournament's progress (matches_done, faults, state) and standings counters bumped.

        Args:
            game: game id. match_id: the idempotency key. seats: bot ids in seat order (distinct, N >= 2).
            scores: game score per seat (``lower_score_is_better``). ranks: competition rank per seat (1 = best).
            faults: faults per seat. record: the full match record (``MatchRecord.to_dict()``), stored beside.
            tournament_id: the tournament whose progress this match bumps.
            seed: deal seed of the match (default: the record's "seed"). worker: name of the worker storing it.
            deal: where a tournament match's seed comes from: ``{"round", "deal", "table", "attempt"}`` (see
                ``arena.tournaments.deal_seed``), kept in the result so the seed can be checked once revealed.
            rated: False for a match that does not count on the public ladder (``MatchSpec.rated``): stored,
                indexed and counted in its tournament's progress and standings, but neither the ladder, its
                stats nor the results log (hence no fit or rebuild) take it; its result says ``"rated": false``
                with deltas of 0.
            void: True for a match every seat of which failed (``arena.worker.health.every_seat_failed``): stored,
                indexed and counted in its tournament's progress only, not rated and in no standings (its result
                says ``"rated": false, "void": true``): it tells nothing of the bots.
        Returns:
            True when stored now; False when the result of ``match_id`` was already stored (nothing changed).
        Raises:
            ValueError: lengths differ, fewer than 2 seats, or a bot seated twice (only a house bot may be).
            StoreError: the ratings of these bots kept moving under concurrent updates (100 attempts).
        """
        keys, prepare = self.result_call(game, match_id, seats, scores, ranks, faults, record,
                                         tournament_id=tournament_id, seed=seed, worker=worker, deal=deal,
                                         rated=rated, void=void)
        for _ in range(RECORD_ATTEMPTS):
            pipe = self.client.pipeline(transaction=False)  # one round trip before the script
            pipe.exists(result_key(game, match_id))
            pipe.zmscore(ladder_key(game), list(seats))
            exists, current = pipe.execute()
            if exists:
                return False
            outcome = int(self._record_result(keys=keys, args=prepare(current)[0]))
            if outcome == 1:
                return True
            if outcome == 0:
                return False
        raise StoreError(f"could not apply the result of {match_id}: ratings of {list(seats)} kept changing")

    def result_call(
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
        deal: dict[str, int] | None = None,
        rated: bool = True,
        void: bool = False,
    ) -> tuple[list[str], Callable[[Sequence[Any]], tuple[list[Any], list[float]]]]:
        """(KEYS, prepare) of the RECORD_RESULT script for ``record_result`` (same arguments), for a caller doing
        its own I/O: ``prepare(current)`` gives the script's ARGV from the seats' current ratings (``ZMSCORE`` of
        the ladder: a number or None per seat, None being the initial rating), the Elo update computed from them
        (the script refuses it when a rating moved since), and the seats' ratings once it is applied. The record is
        packed once. Raises ``ValueError`` as ``record_result``."""
        n = len(seats)
        rated = rated and not void
        if n < 2 or not (len(scores) == len(ranks) == len(faults) == n):
            raise ValueError(f"a result needs >= 2 seats and one score, rank and fault count each; got "
                             f"{n} seats, {len(scores)} scores, {len(ranks)} ranks, {len(faults)} fault counts")
        if any(list(seats).count(b) > 1 and not is_house_bot(b) for b in set(seats)):  # a house bot may sit twice
            raise ValueError(f"a bot is seated twice in match {match_id}: {list(seats)}")
        tid = tournament_id or "-"
        keys = [
            result_key(game, match_id), match_key(game, match_id), ladder_key(game), results_log_key(game),
            tournament_key(game, tid), ladder_stats_key(game), standings_key(game, tid), matches_index_key(game),
            tournament_matches_key(game, tid), cancelled_key(game, tid), failed_key(game, tid),
        ]
        for bot in seats:
            keys += [bot_matches_key(game, bot), name_matches_key(game, name_of(bot))]
        keys.append(match_sequence_key(game))
        record_data = pack_record(record)  # compact and compressed (codec.py)
        if seed is None:
            raw_seed = record.get("seed") if isinstance(record, dict) else None
            seed = int(raw_seed) if isinstance(raw_seed, int) else None

        def prepare(current: Sequence[Any]) -> tuple[list[Any], list[float]]:
            before = [self.initial_rating if r is None else float(r) for r in current]
            deltas = elo_deltas(before, list(ranks), self.k_factor) if rated else [0.0] * n
            now = time.time()
            result: dict[str, object] = {
                "match_id": match_id, "game": game, "tournament": tournament_id, "seats": list(seats),
                "scores": list(scores), "ranks": list(ranks), "faults": list(faults),
                "ratings_before": before, "deltas": deltas, "k": self.k_factor, "stored_at": now,
                "seed": seed, "worker": worker,
            }
            if not rated:
                result["rated"] = False
            if void:
                result["void"] = True
            if deal is not None:
                result["deal"] = dict(deal)
            args: list[Any] = [
                json.dumps(result), record_data, repr(self.initial_rating), n, "1" if tournament_id else "0",
                sum(int(f) for f in faults), repr(now), match_id,
            ]
            for bot, r, d, score, rank in zip(seats, before, deltas, scores, ranks):
                args += [bot, repr(float(r)), repr(float(d)), repr(float(score)), int(rank), 1 if rank == 1 else 0]
            args.append("void" if void else "1" if rated else "0")
            return args, [r + d for r, d in zip(before, deltas)]

        return keys, prepare

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
        or ``None``. Raises ``RecordCodecError`` naming the match when the stored bytes are no record (damaged)."""
        game = game or self.match_game(match_id)
        if game is None:
            return None
        raw = self.match_record_bytes(match_id, game)
        return self.unpack_match_record(match_id, game, raw) if raw is not None else None

    def match_record_bytes(self, match_id: str, game: str) -> bytes | None:
        """The stored bytes of the match record of ``match_id`` (``unpack_match_record`` decodes them), or None."""
        raw = self.client.execute_command("GET", match_key(game, match_id), **{NEVER_DECODE: []})
        return bytes(raw) if raw is not None else None

    @staticmethod
    def unpack_match_record(match_id: str, game: str, raw: bytes) -> dict[str, Any]:
        """The match record of stored bytes ``raw``. Raises ``RecordCodecError`` naming the match when they are no
        record (damaged)."""
        try:
            return unpack_record(raw)
        except RecordCodecError as exc:
            raise RecordCodecError(f"the stored record of match {match_id} ({game}) cannot be read: {exc}") from None

    def list_matches(self, *, tournament_id: str | None = None, bot: str | None = None,
                     limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
        """Stored results (``get_result`` dicts), newest first: of one tournament and/or one bot ("NAME@VERSION",
        or "NAME" for every version of NAME), at most ``limit`` after skipping the first ``offset``. An unknown
        tournament gives []."""
        if limit < 1:
            return []
        offset = max(0, offset)
        limit += offset
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
        return out[offset:limit]

    def matches_page(self, *, tournament_id: str | None = None, bot: str | None = None,
                     after: Mapping[str, int] | None = None, size: int = 50,
                     offset: int = 0) -> tuple[list[tuple[dict[str, Any], str, int]], bool, dict[str, int]]:
        """One page of stored results, newest first, filtered as ``list_matches``: per game, the results indexed
        before number ``after[game]`` (the previous page's last of that game; a game not in ``after`` from its
        newest), merged by storage time, the first ``offset`` skipped, then ``size``. Returns ([(result, game, index
        number)], whether more may follow, where the next page starts: game -> the index number it goes on below).
        Reads about ``offset + size + 1`` results per game, however many are stored; with both filters (a bot's
        matches in one tournament) at most ``FILTERED_SCAN`` results of the tournament, so a page may hold fewer
        (even none) while more follow: a bot that played little of a large tournament is found page by page, never
        by one unbounded read. (Results stored before index numbers were unique, when unrated matches took the
        results log's length, may share a number: a page boundary between them skips the rest of them.)"""
        size, offset = max(1, size), max(0, offset)
        want = offset + size + 1
        if tournament_id:
            game = self.tournament_game(tournament_id)
            games = [game] if game else []
        else:
            games = sorted(self.client.smembers(GAMES_SET) | set(GAMES))
        resume = dict(after or {})
        streams = [self._page_stream(g, tournament_id, bot, resume.get(g), min(CHUNK, want)) for g in games]
        merged = heapq.merge(*streams, key=lambda item: float(item[0].get("stored_at", 0.0)) if item[0] else 0.0,
                             reverse=True)
        taken: list[tuple[dict[str, Any], str, int]] = []
        for scanned, (result, game, pos) in enumerate(merged, 1):
            if result is not None:
                taken.append((result, game, pos))
            if len(taken) == want:
                break
            if scanned >= FILTERED_SCAN and tournament_id and bot and len(taken) <= offset + size:
                # both filters, one game (the tournament's), read in index order: a short page, and the next
                # one goes on below the last result read
                resume[game] = pos
                return taken[offset:offset + size], True, resume
        page = taken[offset:offset + size]
        for _, game, pos in page:  # each game's rows come newest first: its last one is where it goes on
            resume[game] = pos
        return page, len(taken) == want, resume

    def _page_stream(self, game: str, tournament_id: str | None, bot: str | None, before: int | None,
                     chunk: int) -> Iterator[tuple[dict[str, Any] | None, str, int]]:
        """The results of one game's index (of ``tournament_id``, else of ``bot``, else all), newest first, indexed
        before position ``before`` (None: all), read ``chunk`` at a time; with both filters, ``bot``'s, and None in
        place of each of the others (read, so that the caller counts and skips them)."""
        if tournament_id:
            index = tournament_matches_key(game, tournament_id)
        elif bot:
            index = bot_matches_key(game, bot) if "@" in bot else name_matches_key(game, bot)
        else:
            index = matches_index_key(game)
        top: str = "+inf" if before is None else f"({before}"
        while True:
            rows = self.client.zrevrangebyscore(index, top, "-inf", start=0, num=chunk, withscores=True)
            if not rows:
                return
            results = self._results(game, [mid for mid, _ in rows])
            for (_mid, pos), result in zip(rows, results):
                yield (None if tournament_id and bot and not _plays(result, bot) else result), game, int(pos)
            top = f"({int(rows[-1][1])}"

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
    return any(name_of(s) == bot for s in seats)
