"""What the pages derive from the Arena read replies (pure functions over their JSON forms): a bot's rating after
each of its matches, its faults per match, its faults by kind and its decision latency from revealed records."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


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


def rating_history(current: float, summaries: Sequence[Mapping[str, Any]], bot: str) -> list[tuple[float, float]]:
    """The live Elo of ``bot`` after each of its matches, oldest first, as (match number, rating) pairs, ending
    at ``current``: walked back from the current rating through the matches' rating deltas (``summaries`` newest
    first, as ListMatches answers). The first pair is the rating before the oldest match given (number 0)."""
    rating = current
    after: list[float] = []
    for summary in summaries:
        seat = seat_of(summary, bot)
        deltas = summary.get("rating_deltas", [])
        if seat is None or seat >= len(deltas):
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


def record_stats(records: Iterable[Mapping[str, Any]], seats: Iterable[int]) -> dict[str, Any]:
    """Faults by kind and Decide latency (ms) of one bot over match records (the JSON of ``arena play --record``),
    ``seats`` giving its seat in each. Answers ``{"matches", "decisions", "faults": {kind: count}, "latency_ms":
    {"p50", "p95", "max"}}`` (latencies of the calls it was asked; None without any)."""
    kinds: Counter[str] = Counter()
    latencies: list[float] = []
    matches = 0
    for record, seat in zip(records, seats):
        matches += 1
        for fault in record.get("faults", []):
            if fault.get("seat") == seat:
                kinds[str(fault.get("kind", "?"))] += 1
        for decision in record.get("decisions", []):
            latency = decision.get("latency_ms")
            if decision.get("seat") == seat and isinstance(latency, int | float):
                latencies.append(float(latency))
    return {"matches": matches, "decisions": len(latencies), "faults": dict(sorted(kinds.items())),
            "latency_ms": {"p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95),
                           "max": max(latencies) if latencies else None}}
