"""A worker publishes the match it plays for the match viewer (``GetLiveMatch``): once it has been playing for
``PUBLISH_PERIOD_S`` seconds, its inputs and the decisions, faults and forfeits so far, then the new ones about
every ``PUBLISH_PERIOD_S`` seconds, through ``arena.store.live`` (one pipelined write off the event loop each time,
so a match's round trips to its bots are not slowed). A match over sooner is never published: it costs Redis
nothing, and the viewer, which polls every second, finds it stored. The keys are deleted when a published match
ends, whatever the outcome. A failure to publish is logged once and never stops a match.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from arena.match.record import Fault, Forfeit
from arena.store import Store

log = logging.getLogger("arena.worker")
PUBLISH_PERIOD_S = 0.5


def _fault(f: Fault) -> dict[str, Any]:
    return {"kind": f.kind, "seat": f.seat, "hand": f.hand, "turn": f.turn, "detail": f.detail,
            "decision": f.decision}


def _forfeit(f: Forfeit) -> dict[str, Any]:
    return {"seat": f.seat, "reason": f.reason, "hand": f.hand, "turn": f.turn, "detail": f.detail,
            "fault": f.fault}


class LivePublisher:
    """Publishes one match as it is played. Use as ``async with LivePublisher(store, match_id, head) as live:``
    and pass ``live.follow`` as ``run_match(on_start=...)``. ``head``: game, config (JSON), seed, deals (JSON),
    seats (bot ids), tournament ("" outside tournaments). Nothing is written before the first publication,
    ``period_s`` seconds after entering; on exit a publication under way is waited for (never cut off in its
    thread, so it cannot land after the keys are deleted), then the keys are deleted if anything was written."""

    def __init__(self, store: Store, match_id: str, head: Mapping[str, Any],
                 period_s: float = PUBLISH_PERIOD_S) -> None:
        self.store, self.match_id, self.head, self.period_s = store, match_id, dict(head), period_s
        self.lists: tuple[list[dict[str, Any]], list[Fault], list[Forfeit]] | None = None
        self.sent = [0, 0, 0]
        self.task: asyncio.Task[None] | None = None
        self.failed = False
        self.published = False  # a publication was attempted: the keys may exist
        self.publishing = False  # a publication is in its thread now
        self.closing = False

    def follow(self, decisions: list[dict[str, Any]], faults: list[Fault], forfeits: list[Forfeit]) -> None:
        """``run_match``'s ``on_start``: keep the match's growing lists to publish from."""
        self.lists = (decisions, faults, forfeits)

    async def __aenter__(self) -> LivePublisher:
        self.head.setdefault("started_at", time.time())  # kept in every publication
        self.task = asyncio.ensure_future(self._run())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.task is not None:
            self.closing = True
            if not self.publishing:  # asleep: nothing in flight
                self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        if not self.published:
            return
        try:
            await asyncio.to_thread(self.store.live_end, self.match_id)
        except Exception as exc:  # noqa: BLE001
            self._failed(exc)

    def _failed(self, exc: BaseException) -> None:
        if not self.failed:
            log.warning("match %s: cannot publish it for the live viewer: %s", self.match_id, exc)
        self.failed = True

    def _new_entries(self) -> list[dict[str, Any]]:
        """The entries not published yet: read in one go between two awaits, so whole rounds only."""
        if self.lists is None:
            return []
        decisions, faults, forfeits = self.lists
        entries: list[dict[str, Any]] = [{"d": dict(d)} for d in decisions[self.sent[0]:]]
        entries += [{"f": _fault(f)} for f in faults[self.sent[1]:]]
        entries += [{"x": _forfeit(f)} for f in forfeits[self.sent[2]:]]
        self.sent = [len(decisions), len(faults), len(forfeits)]
        return entries

    async def _run(self) -> None:
        while not self.closing:
            await asyncio.sleep(self.period_s)
            entries = self._new_entries()
            first = not self.published
            self.published = self.publishing = True
            try:
                if first:  # the inputs, with everything so far (an older log of this match id is dropped)
                    await asyncio.to_thread(self.store.live_start, self.match_id, self.head, entries)
                else:
                    await asyncio.to_thread(self.store.live_append, self.match_id, entries, self.head)
            except Exception as exc:  # noqa: BLE001
                self._failed(exc)
            finally:
                self.publishing = False
