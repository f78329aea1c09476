"""A worker publishes the match it plays for the match viewer (``GetLiveMatch``): its inputs once, then its new
decisions, faults and forfeits about every ``PUBLISH_PERIOD_S`` seconds, through ``arena.store.live`` (one
pipelined write off the event loop each time, so a match's round trips to its bots are not slowed). The keys are
deleted when the match ends, whatever the outcome. A failure to publish is logged once and never stops a match.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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
    seats (bot ids), tournament ("" outside tournaments)."""

    def __init__(self, store: Store, match_id: str, head: Mapping[str, Any],
                 period_s: float = PUBLISH_PERIOD_S) -> None:
        self.store, self.match_id, self.head, self.period_s = store, match_id, dict(head), period_s
        self.lists: tuple[list[dict[str, Any]], list[Fault], list[Forfeit]] | None = None
        self.sent = [0, 0, 0]
        self.task: asyncio.Task[None] | None = None
        self.failed = False

    def follow(self, decisions: list[dict[str, Any]], faults: list[Fault], forfeits: list[Forfeit]) -> None:
        """``run_match``'s ``on_start``: keep the match's growing lists to publish from."""
        self.lists = (decisions, faults, forfeits)

    async def __aenter__(self) -> LivePublisher:
        try:
            await asyncio.to_thread(self.store.live_start, self.match_id, self.head)
        except Exception as exc:  # noqa: BLE001 - publishing is a courtesy: never stops a match
            self._failed(exc)
            return self
        self.task = asyncio.ensure_future(self._run())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
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
        while True:
            await asyncio.sleep(self.period_s)
            entries = self._new_entries()
            try:
                await asyncio.to_thread(self.store.live_append, self.match_id, entries, self.head)
            except Exception as exc:  # noqa: BLE001
                self._failed(exc)
