"""What the pages derive from the Arena read replies (pure functions over their JSON forms): a bot's rating after
each of its matches, its faults per match, its faults by kind and its decision latency from revealed records, and
an SPRT's log-likelihood ratio after each block."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.ratings import score_sprt
from arena.ratings.sprt import SprtError, SprtState, block_outcome, llr, update
from arena_sdk.games import GAMES


def seat_of(summary: Mapping[str, Any], bot: str) -> int | None:
    """The seat of ``bot`` (a bot id "NAME@VERSION", or a NAME: its first seat of any version) in a match
    summary; None when it did not play."""
    seats = list(summary.get("seats", []))
    if bot in seats:
        return seats.index(bot)
    for i, seat in enumerate(seats):
        if seat.partition("@")[0] == bot:
            return i
    return None


def seats_of(summary: Mapping[str, Any], bot: str) -> list[int]:
    """Every seat of ``bot`` in a match summary, in seat order: for a bot id "NAME@VERSION" the seats it sat in, for
    a NAME those of any of its versions (an SPRT of two versions seats both); [] when it did not play."""
    seats = [str(s) for s in summary.get("seats", [])]
    if "@" in bot:
        return [i for i, seat in enumerate(seats) if seat == bot]
    return [i for i, seat in enumerate(seats) if seat == bot or seat.partition("@")[0] == bot]


def rating_history(current: float, summaries: Sequence[Mapping[str, Any]], bot: str) -> list[tuple[float, float]]:
    """The live Elo of ``bot`` after each of its matches, oldest first, as (match number, rating) pairs, ending
    at ``current``: walked back from the current rating through the matches' rating deltas (``summaries`` newest
    first, as ListMatches answers). The first pair is the rating before the oldest match given (number 0). A match
    that moved no rating (one off the ladder, e.g. an SPRT's paired matches, stored with deltas of 0) is no point
    of it."""
    rating = current
    after: list[float] = []
    for summary in summaries:
        seat = seat_of(summary, bot)
        deltas = summary.get("rating_deltas", [])
        if seat is None or seat >= len(deltas) or not any(float(d) for d in deltas):
            continue
        after.append(rating)
        rating -= float(deltas[seat])
    values = [rating, *reversed(after)]
    return [(float(i), v) for i, v in enumerate(values)]


def faults_per_match(summaries: Sequence[Mapping[str, Any]], bot: str) -> float | None:
    """Mean faults of ``bot`` per match over ``summaries``; None when it played none of them."""
    counts = [int(s["faults"][seat]) for s in summaries
              if (seat := seat_of(s, bot)) is not None and seat < len(s.get("faults", []))]
    return sum(counts) / len(counts) if counts else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank method; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return float(ordered[rank - 1])


@dataclass(frozen=True)
class SeatStats:
    """One seat's faults by kind and the latencies (ms) of the calls it was asked, in one match record."""

    faults: tuple[tuple[str, int], ...]
    latencies: tuple[float, ...]


def seat_stats(record: Any, seat: int) -> SeatStats | None:
    """The faults by kind and Decide latencies of seat ``seat`` in ``record`` (the JSON of ``arena play --record``);
    None for a record that is not of that shape (not an object, or faults or decisions that are not lists of
    objects: damaged)."""
    if not _readable(record):
        return None
    kinds: Counter[str] = Counter(str(f.get("kind", "?")) for f in record.get("faults", []) if f.get("seat") == seat)
    latencies = tuple(float(d["latency_ms"]) for d in record.get("decisions", [])
                      if d.get("seat") == seat and isinstance(d.get("latency_ms"), int | float))
    return SeatStats(tuple(sorted(kinds.items())), latencies)


def combined_stats(seats: Iterable[SeatStats | None]) -> dict[str, Any]:
    """One bot's faults by kind and Decide latency (ms) over its seats' ``seat_stats`` (None: a damaged record,
    skipped, not counted): ``{"matches", "decisions", "faults": {kind: count}, "latency_ms": {"p50", "p95",
    "max"}}`` (latencies of the calls it was asked; None without any)."""
    kinds: Counter[str] = Counter()
    latencies: list[float] = []
    matches = 0
    for one in seats:
        if one is None:
            continue
        matches += 1
        kinds.update(dict(one.faults))
        latencies.extend(one.latencies)
    return {"matches": matches, "decisions": len(latencies), "faults": dict(sorted(kinds.items())),
            "latency_ms": {"p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95),
                           "max": max(latencies) if latencies else None}}


def _readable(record: Any) -> bool:
    """Whether ``record`` has the shape ``seat_stats`` reads: an object whose ``faults`` and ``decisions`` (when
    present) are lists of objects."""
    if not isinstance(record, Mapping):
        return False
    for key in ("faults", "decisions"):
        items = record.get(key, [])
        if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
            return False
    return True


def sprt_llr_history(sprt: Mapping[str, Any], matches: Iterable[Mapping[str, Any]]) -> list[tuple[float, float]]:
    """An SPRT's LLR after each block, in block order, as (blocks, LLR) pairs from (0, 0.0): block b is the
    tournament's matches number 2b (V1 at seat s) and 2b + 1 (V2 at seat s), compared as the referee does
    (``arena.ratings.sprt.block_outcome``); a block stops the history when one of its tables is not in
    ``matches`` (summaries with ``match_id`` "<tournament>-NNNNNN", ``seats`` and ``ranks``: public while the test
    runs). ``sprt`` is the Sprt reply's JSON form (v1, v2, seats, field, elo0, elo1, statistic, tournament.game). A
    test on the relative score (statistic "score") compares the tables' ``scores``
    (``arena.ratings.score_sprt.block_score_outcome``). A block replaced after a void table ends the history there
    too, and so does a decided test's ``blocks`` (the blocks its verdict was taken on: the tables a worker had
    already started then still finish, and count on the ladder, not in the test)."""
    by_index: dict[int, Mapping[str, Any]] = {}
    for m in matches:
        number = str(m.get("match_id", "")).rpartition("-")[2]
        if number.isdigit():
            by_index[int(number)] = m
    seats = int(sprt.get("seats") or 2)
    try:
        state = SprtState.new(seats)
    except SprtError:
        return []
    head_to_head = not sprt.get("field") and not sprt.get("house")
    by_score = sprt.get("statistic") == score_sprt.STATISTIC
    game = GAMES.get(str((sprt.get("tournament") or {}).get("game", "")))
    if by_score and game is None:
        return []
    scored = score_sprt.ScoreState.new()
    points = [(0.0, 0.0)]
    block = 0
    last = int(sprt.get("blocks") or 0) if sprt.get("verdict") else None
    while (2 * block) in by_index and (2 * block + 1) in by_index and (last is None or block < last):
        table1, table2 = by_index[2 * block], by_index[2 * block + 1]
        seats1, seats2 = list(table1.get("seats", [])), list(table2.get("seats", []))
        if sprt.get("v1") not in seats1 or sprt.get("v2") not in seats2:
            break
        seat = seats1.index(sprt["v1"])
        if seats2.index(sprt["v2"]) != seat:
            break
        elo0, elo1 = float(sprt.get("elo0", 0.0)), float(sprt.get("elo1", 5.0))
        try:
            if by_score and game is not None:
                scored = score_sprt.update(scored, score_sprt.block_score_outcome(
                    table1["scores"], table2["scores"], seat, game.info.lower_score_is_better, table1["ranks"],
                    table2["ranks"]))
                value = score_sprt.llr(scored, elo0, elo1)
            else:
                state = update(state, block_outcome(table1["ranks"], table2["ranks"], seat))
                value = llr(state, elo0, elo1, head_to_head)
        except (SprtError, KeyError, TypeError, ValueError):
            break
        block += 1
        points.append((float(block), value))
    return points
