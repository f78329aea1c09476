"""Tournaments run until their bots are separated (``arena.tournaments.until_separated``, kind "until_separated"): the
controller's notes in Redis, and its stop, written together with the tournament's finish in one transaction. Every key
is under the tournament's game hash tag (``keys.separation_key``), so the transaction also runs on Redis Cluster.

Plain functions over a store's client (the controller and the service call them with their ``Store``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from redis.exceptions import WatchError

from arena.store.base import StoreBase
from arena.store.keys import separation_key, tournament_key


@dataclass(frozen=True)
class SeparationRecord:
    """What Redis holds of one until-separated tournament.

    Attributes: checked_total (matches_total when the last fit was taken, 0 before the first); last_check (that
    fit's verdict, one sentence, "" before the first); stopped_by ("separated" | "cap", "" while it runs or when it
    was cancelled); reason (why it stopped, one sentence); rounds and matches (rounds queued and matches played when
    it stopped); order (bot ids, best first by the last fit; empty before the first fit).
    """

    checked_total: int = 0
    last_check: str = ""
    stopped_by: str = ""
    reason: str = ""
    rounds: int = 0
    matches: int = 0
    order: tuple[str, ...] = ()


def _record(raw: dict[str, str]) -> SeparationRecord:
    return SeparationRecord(
        checked_total=int(raw.get("checked_total") or 0), last_check=raw.get("last_check", ""),
        stopped_by=raw.get("stopped_by", ""), reason=raw.get("reason", ""), rounds=int(raw.get("rounds") or 0),
        matches=int(raw.get("matches") or 0), order=tuple(json.loads(raw.get("order") or "[]")))


def separation_record(store: StoreBase, game: str, tournament_id: str) -> SeparationRecord:
    """The notes and stop of one tournament (all empty for a tournament without them)."""
    return _record(store.client.hgetall(separation_key(game, tournament_id)))


def separation_records(store: StoreBase, tournaments: Sequence[tuple[str, str]]) -> list[SeparationRecord]:
    """``separation_record`` of each (game, tournament id), read in one pipelined round trip."""
    pipe = store.client.pipeline(transaction=False)
    for game, tid in tournaments:
        pipe.hgetall(separation_key(game, tid))
    return [_record(raw) for raw in pipe.execute()] if tournaments else []


def note_check(store: StoreBase, game: str, tournament_id: str, total: int, text: str,
               order: Sequence[str]) -> bool:
    """Keep the verdict ``text`` of the fit taken at ``matches_total == total`` and its order of bots (best first),
    unless a fit of a later total was noted before (a compare-and-set on checked_total). Returns True when noted."""
    key = separation_key(game, tournament_id)
    with store.client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(key)
                if int(pipe.hget(key, "checked_total") or 0) > total:
                    return False
                pipe.multi()
                pipe.hset(key, mapping={"checked_total": total, "last_check": text, "order": json.dumps(list(order))})
                pipe.execute()
                return True
            except WatchError:
                continue


def stop_separation(store: StoreBase, game: str, tournament_id: str, *, expect_total: int, stopped_by: str,
                    reason: str, rounds: int, matches: int, order: Sequence[str], now: float | None = None) -> bool:
    """Finish a running tournament and store why, in one MULTI/EXEC watched on the tournament hash: its state
    becomes "finished" (``finished_at`` = ``now``, s since epoch) and its separation hash gets ``stopped_by``
    ("separated" | "cap"), ``reason``, ``rounds``, ``matches`` and ``order`` (also as the last check). Returns False,
    changing nothing, when the tournament is not running or its ``matches_total`` is not ``expect_total`` (the
    decision was taken on other matches). Raises ``ValueError`` for another ``stopped_by``."""
    if stopped_by not in ("separated", "cap"):
        raise ValueError(f"stopped_by is 'separated' or 'cap', got {stopped_by!r}")
    tkey, skey = tournament_key(game, tournament_id), separation_key(game, tournament_id)
    at = repr(time.time() if now is None else float(now))
    with store.client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(tkey)
                state, total = (str(v) if v is not None else None for v in pipe.hmget(tkey, ["state", "matches_total"]))
                if state != "running" or int(total or -1) != expect_total:
                    return False
                pipe.multi()
                pipe.hset(skey, mapping={
                    "stopped_by": stopped_by, "reason": reason, "rounds": rounds, "matches": matches,
                    "order": json.dumps(list(order)), "checked_total": expect_total, "last_check": reason})
                pipe.hset(tkey, mapping={"state": "finished", "finished_at": at})
                pipe.execute()
                return True
            except WatchError:
                continue
