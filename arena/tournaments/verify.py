"""Checking a revealed tournament: its seed against its commitment, every deal seed against the seed, and
the deal guarantee (no bot receives cards of one deal twice)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from arena.core.errors import TournamentError
from arena.core.seeds import deal_seed, parse_seed_hex, seat_seed, seed_commitment
from arena.core.specs import is_house_bot


def verify_deals(tournament_id: str, seed_text: str, commitment: str,
                 matches: Iterable[Mapping[str, Any]], twice_allowed: Iterable[str] = ()) -> list[str]:
    """Check a revealed tournament: its seed against its commitment, and every match's deal seed against the seed.

    Args:
        tournament_id: e.g. ``"t3"``. seed_text: the revealed seed, 64 hex digits. commitment: the SHA-256 hex
            published at creation.
        matches: one mapping per stored match with ``match_id``, ``seed`` and its deal coordinates ``round``,
            ``deal``, ``table``, ``attempt``, ``seats`` (e.g. the ``--json`` of ``arena match list``), plus an
            optional ``record_seed`` and ``record_seat_seeds`` (the deal seed and the seat seeds in the match record,
            when it was fetched).
        twice_allowed: bots that may receive cards of one deal (and attempt) in two matches, never more: V1 and V2
            of a head-to-head SPRT, which play each other at both tables of every block by design
            (``arena.tournaments.sprt_plan``).
    Returns:
        One sentence per problem found (empty when everything checks): a commitment that is not the seed's, a
        match whose seed is not HMAC-SHA256(seed, "<tournament>/<round>/<deal>/<attempt>"), a record seed that
        differs from its match's, a record's seat seed that is not ``seat_seed(seed, tournament, round, deal, attempt,
        seat)``, two matches on one deal and attempt sharing a bot, or a table played twice. House bots
        (``house:NAME``: the arena's own, keeping nothing between matches) may receive a deal any number of times.
    """
    try:
        seed = parse_seed_hex(seed_text)
    except TournamentError as exc:
        return [str(exc)]
    problems = []
    if seed_commitment(seed) != commitment.lower():
        problems.append(f"the revealed seed does not match the commitment: SHA-256 of the seed is "
                        f"{seed_commitment(seed)}, the commitment published at creation is {commitment}")
    allowed = frozenset(twice_allowed)
    seen_at: dict[tuple[int, int, int], dict[str, str]] = {}
    seen_twice: dict[tuple[int, int, int], set[str]] = {}
    tables: dict[tuple[int, int, int], str] = {}
    for m in matches:
        mid = str(m.get("match_id", "?"))
        try:
            r, d, t, a = (int(m[key]) for key in ("round", "deal", "table", "attempt"))
        except (KeyError, TypeError, ValueError):
            problems.append(f"match {mid} does not say its deal (round, deal, table, attempt)")
            continue
        expected = deal_seed(seed, tournament_id, r, d, a)
        if int(m.get("seed") or 0) != expected:
            problems.append(f"match {mid}: seed {m.get('seed')} is not the deal seed {expected} of round {r}, deal "
                            f"{d}, attempt {a}")
        if m.get("record_seed") is not None and int(m["record_seed"]) != expected:
            problems.append(f"match {mid}: its record was played with seed {m['record_seed']}, not {expected}")
        for seat, got in enumerate(m.get("record_seat_seeds") or ()):
            want = seat_seed(seed, tournament_id, r, d, a, seat)
            if int(got) != want:
                problems.append(f"match {mid}: seat {seat} was given seat seed {got}, not {want} (HMAC-SHA256 of "
                                f"the seed and seat/{tournament_id}/{r}/{d}/{a}/{seat})")
        if (r, d, t) in tables:
            problems.append(f"matches {tables[(r, d, t)]} and {mid} are both table {t} of round {r}, deal {d}")
        tables[(r, d, t)] = mid
        holders = seen_at.setdefault((r, d, a), {})
        twice = seen_twice.setdefault((r, d, a), set())
        for bot in m.get("seats", ()):
            if is_house_bot(bot):
                continue
            if bot in holders and holders[bot] != mid and bot in allowed and bot not in twice:
                twice.add(bot)  # its second table of this deal: expected
            elif bot in holders:
                problems.append(f"bot {bot} received cards of round {r}, deal {d} twice: matches {holders[bot]} "
                                f"and {mid}")
            holders[bot] = mid
    return problems
