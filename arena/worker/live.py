"""A worker publishes the matches it plays for the match viewer (``GetLiveMatch``) through one ``LiveHub``: about every
``PUBLISH_PERIOD_S`` seconds, each match that has been playing for at least that long gets its inputs (the first time)
and the decisions, faults and forfeits played since its last publication, all matches together in one pipelined write
off the event loop (``arena.store.live.LiveStore.live_publish``), so neither a match's round trips to its bots nor the
worker's other matches are slowed: 400 matches in flight cost two thread hops a second, not eight hundred. A match over
sooner is never published: it costs Redis nothing, and the viewer, which polls every second, finds it stored. A
published match that ends (this play's result stored) gets a last publication in the hub's next write, marked ``ended``
and kept ``LIVE_ENDED_TTL_S`` (its final moves: the viewer shows the end of what it followed while the record is
withheld); the keys of one stopped otherwise are deleted in that write. A failure to publish is logged once per hub and
never stops a match: the matches of a write that failed are published whole at the next period (an older log replaced,
never left with a gap), its deletions made again (an end not published is deleted).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from arena.match.record import Fault, Forfeit
from arena.store import LiveWrite, Store
from arena.store.live import LIVE_ENDED_TTL_S, LIVE_TTL_S

log = logging.getLogger("arena.worker")
PUBLISH_PERIOD_S = 0.5


def _fault(f: Fault) -> dict[str, Any]:
    return {"kind": f.kind, "seat": f.seat, "hand": f.hand, "turn": f.turn, "detail": f.detail,
            "decision": f.decision}


def _forfeit(f: Forfeit) -> dict[str, Any]:
    return {"seat": f.seat, "reason": f.reason, "hand": f.hand, "turn": f.turn, "detail": f.detail,
            "fault": f.fault}


class LiveHub:
    """The live publications of the matches of one event loop (a worker's): ``LivePublisher`` objects join it
    while their match plays. A task of the hub wakes every ``period_s`` seconds while any match is open or any
    deletion is due, gathers every publication due, and writes them in one ``live_publish`` call in a thread;
    publications are never written concurrently, so a match's deletion always lands after its last append.
    ``aclose()`` writes the deletions still due and stops the task (a worker calls it when it stops)."""

    def __init__(self, store: Store, period_s: float = PUBLISH_PERIOD_S) -> None:
        self.store, self.period_s = store, period_s
        self.open: dict[int, LivePublisher] = {}
        self.ends: list[str] = []  # match ids whose keys are to be deleted in the next write
        self.finals: list[LiveWrite] = []  # the last publications of matches that ended, for the next write
        self.task: asyncio.Task[None] | None = None
        self.writing = False  # a write is in its thread now
        self.closing = False
        self.failed = False

    def join(self, publisher: LivePublisher) -> None:
        self.open[id(publisher)] = publisher
        self._tick()

    def leave(self, publisher: LivePublisher, ended: bool = False) -> None:
        """``publisher``'s match stopped: it is published no more. When it was ever published, the next write
        publishes its end (``ended``: its result is stored; the last entries, kept ``LIVE_ENDED_TTL_S``) or
        deletes its keys (it stopped otherwise)."""
        if self.open.pop(id(publisher), None) is not None and publisher.published:
            if ended:
                self.finals.append(publisher.take(time.time(), ended=True))
            else:
                self.ends.append(publisher.match_id)
            self._tick()

    def _tick(self) -> None:
        if self.task is None and not self.closing:
            self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            while not self.closing and (self.open or self.ends or self.finals):
                await asyncio.sleep(self.period_s)
                await self._write(self._due())
        finally:
            self.task = None

    def _due(self) -> list[LiveWrite]:
        """The publications due now, read between two awaits (so whole rounds only)."""
        now, started_before = time.time(), time.monotonic() - self.period_s
        return [p.take(now) for p in self.open.values() if p.opened <= started_before]

    async def _write(self, writes: list[LiveWrite]) -> None:
        ends, self.ends = self.ends, []
        finals, self.finals = self.finals, []
        writes = writes + finals
        if not writes and not ends:
            return
        self.writing = True
        try:
            await asyncio.to_thread(self.store.live_publish, writes, ends)
        except Exception as exc:  # noqa: BLE001 - the viewer misses an update; the matches go on
            if not self.failed:
                log.warning("cannot publish %d live matches for the match viewer: %s", len(writes), exc)
            self.failed = True
            # nothing of that write may have landed: each match written is published whole again next time (its
            # older log replaced, never appended to with a gap), each deletion is made again
            written = {w.match_id for w in writes}
            for publisher in self.open.values():
                if publisher.match_id in written:
                    publisher.publish_whole()
            self.ends[:0] = ends + [w.match_id for w in finals]  # an end not published: its keys deleted
        finally:
            self.writing = False

    async def aclose(self) -> None:
        """Stop publishing: a write under way is waited for (never cut off in its thread), then the deletions
        still due are written."""
        self.closing = True
        task = self.task
        if task is not None:
            if not self.writing:  # asleep: nothing in flight
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._write([])


class LivePublisher:
    """Publishes one match as it is played. Use as ``async with LivePublisher(store, match_id, head, hub=hub) as live:``
    and pass ``live.follow`` as ``run_match(on_start=...)``; set ``live.stored`` once its result is stored (not a
    duplicate of another play's), so that its last publication is kept, marked ended (else deleted). ``head``: game,
    config (JSON), seed, deals (JSON), seats (bot ids), tournament ("" outside tournaments). ``hub``: the worker's
    ``LiveHub``; None: a hub of this match's own (``period_s``), closed on exit, so that its last write is made before
    the exit returns. Nothing is written before the first publication, at least ``period_s`` seconds after entering."""

    def __init__(self, store: Store, match_id: str, head: Mapping[str, Any], period_s: float = PUBLISH_PERIOD_S,
                 hub: LiveHub | None = None) -> None:
        self.match_id = match_id
        self.own_hub = hub is None
        self.hub = LiveHub(store, period_s) if hub is None else hub
        head = dict(head)
        head.setdefault("started_at", time.time())  # kept in every publication
        self.head_prefix = json.dumps(head)[:-1]  # "updated_at" is added to each publication's copy
        self.lists: tuple[list[dict[str, Any]], list[Fault], list[Forfeit]] | None = None
        self.sent = [0, 0, 0]
        self.opened = time.monotonic()
        self.published = False  # a publication was taken: the keys may exist
        self.stored = False  # set by the caller once this play's result is the match's stored one: its end is shown
        self.whole = True  # the next publication is whole (its inputs and every entry, an older log replaced)

    def follow(self, decisions: list[dict[str, Any]], faults: list[Fault], forfeits: list[Forfeit]) -> None:
        """``run_match``'s ``on_start``: keep the match's growing lists to publish from."""
        self.lists = (decisions, faults, forfeits)

    async def __aenter__(self) -> LivePublisher:
        self.opened = time.monotonic()
        self.hub.join(self)
        return self

    async def __aexit__(self, exc_type: object, *exc_info: object) -> None:
        self.hub.leave(self, ended=exc_type is None and self.stored)  # another play's result: not this play's end
        if self.own_hub:
            await self.hub.aclose()

    def publish_whole(self) -> None:
        """The last publication may not have landed: publish everything again next time."""
        self.sent = [0, 0, 0]
        self.whole = True

    def take(self, now: float, ended: bool = False) -> LiveWrite:
        """This match's publication now: its head stamped ``updated_at`` = ``now`` (and ``ended`` true for its
        last, kept ``LIVE_ENDED_TTL_S``) and the entries not published yet."""
        entries: list[dict[str, Any]] = []
        if self.lists is not None:
            decisions, faults, forfeits = self.lists
            entries = [{"d": dict(d)} for d in decisions[self.sent[0]:]]
            entries += [{"f": _fault(f)} for f in faults[self.sent[1]:]]
            entries += [{"x": _forfeit(f)} for f in forfeits[self.sent[2]:]]
            self.sent = [len(decisions), len(faults), len(forfeits)]
        first, self.whole = self.whole, False
        self.published = True
        sep = ", " if len(self.head_prefix) > 1 else ""
        end = ", \"ended\": true" if ended else ""
        return LiveWrite(self.match_id, f"{self.head_prefix}{sep}\"updated_at\": {json.dumps(now)}{end}}}", entries,
                         first, LIVE_ENDED_TTL_S if ended else LIVE_TTL_S)
