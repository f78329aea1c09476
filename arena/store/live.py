"""Matches being played now, as the workers publish them for the match viewer (``GetLiveMatch``): the match's
inputs and its decisions, faults and forfeits so far. The keys (``arena.store.keys``: ``live_head_key``,
``live_log_key``) expire ``LIVE_TTL_S`` after the last publication, so a worker that dies leaves nothing behind for
long. Once a match's result is stored, its worker's last publication (its head marked ``ended``) is kept
``LIVE_ENDED_TTL_S``, so that a viewer following it sees its end; the keys of a match stopped otherwise (its worker
stopping, a failure to store) are deleted.

What is kept here is the referee's own data (the seed among it): only the referee reads it, and its read method
answers the public perspective cut from it, never the data itself.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.store.base import StoreBase
from arena.store.keys import live_head_key, live_log_key

LIVE_TTL_S = 300  # seconds a live match's keys outlive its last publication
LIVE_ENDED_TTL_S = 120  # seconds an ended match's last publication is kept (a viewer that followed it sees its end)
MAX_LIVE_ENTRIES = 200_000  # a live log longer than this is not read (a match has far fewer decisions)


@dataclass(frozen=True)
class LiveWrite:
    """One live match's publication (``LiveStore.live_publish``): ``head_json``, its head as JSON (``LiveMatch``'s
    head, ``updated_at`` included); ``entries``, what it played since its last publication; ``first``: its first
    publication (an older log of the same match id is dropped); ``ttl_s``: how long both keys are kept after it
    (``LIVE_TTL_S``; ``LIVE_ENDED_TTL_S`` for the last publication of a match that ended)."""

    match_id: str
    head_json: str
    entries: Sequence[Mapping[str, Any]] = ()
    first: bool = False
    ttl_s: int = LIVE_TTL_S


@dataclass(frozen=True)
class LiveMatch:
    """A match being played, as published: ``head`` (game, config, seed, deals, seats, tournament, started_at,
    updated_at) and its ``decisions``, ``faults`` and ``forfeits`` so far (the match record's JSON forms);
    ``entries``: the length of its log as read (``LiveStore.live_peek`` compares with it)."""

    head: dict[str, Any]
    decisions: list[dict[str, Any]]
    faults: list[dict[str, Any]]
    forfeits: list[dict[str, Any]]
    entries: int = 0


class LiveStore(StoreBase):
    """The live matches (see the module docstring)."""

    def live_publish(self, writes: Sequence[LiveWrite], ends: Sequence[str] = ()) -> None:
        """One pipelined round trip for any number of live matches: first the keys of each match id in ``ends``
        are deleted (its result is stored, or it will not be played on), then each of ``writes`` is applied: its
        head written (TTL set to its ``ttl_s``), its entries ({"d": decision} | {"f": fault} | {"x": forfeit})
        appended to its log, whose TTL is set too; a ``first`` write drops any older log of that id before
        appending."""
        pipe = self.client.pipeline(transaction=False)
        for match_id in ends:
            pipe.delete(live_head_key(match_id), live_log_key(match_id))
        for w in writes:
            log_key = live_log_key(w.match_id)
            pipe.set(live_head_key(w.match_id), w.head_json, ex=w.ttl_s)
            if w.first:
                pipe.delete(log_key)
            if w.entries:
                pipe.rpush(log_key, *(json.dumps(e) for e in w.entries))
                pipe.expire(log_key, w.ttl_s)
            elif not w.first:
                pipe.expire(log_key, w.ttl_s)
        if ends or writes:
            pipe.execute()

    def live_start(self, match_id: str, head: Mapping[str, Any],
                   entries: Sequence[Mapping[str, Any]] = ()) -> None:
        """Publish that ``match_id`` is being played with ``head`` (JSON-ready) and the ``entries`` so far (as
        ``live_publish``), in one round trip; any older log of that id is dropped. ``started_at`` is now, or
        ``head["started_at"]`` when given (s since epoch)."""
        now = time.time()
        data = dict(head, updated_at=now)
        data.setdefault("started_at", now)
        self.live_publish([LiveWrite(match_id, json.dumps(data), tuple(entries), first=True)])

    def live_append(self, match_id: str, entries: Sequence[Mapping[str, Any]], head: Mapping[str, Any]) -> None:
        """Append ``entries`` to the log of ``match_id`` and renew both keys (``head`` is written again with a
        fresh ``updated_at``)."""
        self.live_publish([LiveWrite(match_id, json.dumps(dict(head, updated_at=time.time())), tuple(entries))])

    def live_end(self, match_id: str) -> None:
        """Forget the live match ``match_id`` (its result is stored, or it will not be played on)."""
        self.live_publish([], [match_id])

    def live_peek(self, match_id: str) -> tuple[dict[str, Any], int] | None:
        """The head of the live match ``match_id`` and the length of its log (one round trip, the log not read), or
        None when no worker is playing it (or its head is unreadable)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.get(live_head_key(match_id))
        pipe.llen(live_log_key(match_id))
        raw_head, length = pipe.execute()
        if raw_head is None:
            return None
        try:
            head = json.loads(raw_head)
        except ValueError:
            return None
        return (head, int(length)) if isinstance(head, dict) else None

    def live_match(self, match_id: str) -> LiveMatch | None:
        """The live match ``match_id`` as published, or None when no worker is playing it (or its log is
        unreadable)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.get(live_head_key(match_id))
        pipe.lrange(live_log_key(match_id), 0, MAX_LIVE_ENTRIES - 1)
        raw_head, raw_log = pipe.execute()
        if raw_head is None:
            return None
        try:
            head = json.loads(raw_head)
            entries = [json.loads(e) for e in raw_log]
        except ValueError:
            return None
        if not isinstance(head, dict):
            return None
        out = LiveMatch(head, [], [], [], len(raw_log))
        for entry in entries:
            if isinstance(entry, dict):
                for key, bucket in (("d", out.decisions), ("f", out.faults), ("x", out.forfeits)):
                    if isinstance(entry.get(key), dict):
                        bucket.append(entry[key])
        return out
