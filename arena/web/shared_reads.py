"""The costly reads behind a page, shared by every client of the web process: a finished tournament's page checks
every one of its deals (up to ``VERIFY_MATCHES`` of them, about half a millisecond each), a running SPRT's chart
reads every match so far, and a ladder reads each bot's newest matches. Made anew for each request, one client
reloading such a page (or many following a tournament, whose live part reloads every 2 s) would keep the web
process busy for everyone.

``SharedReads.get(key, version, read)`` makes ``read()`` once for all the clients asking for ``key`` at the same
time (the others wait for that one), and answers later askers with it while ``version`` (facts the page read
cheaply first, such as a tournament's state and matches done) is unchanged; once it changed, for at most
``fresh_s`` seconds after the answer was made, so a page followed while matches finish is at most that old. At
most ``most_weight`` of answers are kept (each ``read`` says what its answer weighs, e.g. the matches it holds); the
least recently asked go first. Only answers that are the same for every client may be kept here: pages are
public, and so is everything the web process reads.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

FRESH_S = 2.0  # an answer whose version moved is still given for this long after it was made
MOST_WEIGHT = 100_000  # weight of the answers kept at most (a weight of about one match summary each)


@dataclass(slots=True)
class _Kept:
    version: Hashable
    made_at: float  # time.monotonic()
    weight: int
    value: Any


class SharedReads:
    """Answers of costly reads by key (see the module docstring). For one event loop (the web app's)."""

    def __init__(self, fresh_s: float = FRESH_S, most_weight: int = MOST_WEIGHT) -> None:
        self.fresh_s = fresh_s
        self.most_weight = most_weight
        self._kept: OrderedDict[Hashable, _Kept] = OrderedDict()
        self._weight = 0
        self._reading: dict[Hashable, asyncio.Task[tuple[Any, int]]] = {}
        self.reads = 0  # reads made so far (tests, operators)

    async def get(self, key: Hashable, version: Hashable,
                  read: Callable[[], Awaitable[tuple[Any, int]]]) -> Any:
        """The answer of ``key``: the kept one while ``version`` is its version or it is under ``fresh_s`` old,
        else the answer of ``read()`` (a coroutine function returning (answer, weight)), made once for every asker
        of ``key`` meanwhile and kept. An exception of ``read`` reaches every asker of that read, and nothing is
        kept. An asker that is cancelled does not cancel the read of the others."""
        kept = self._kept.get(key)
        if kept is not None and (kept.version == version or time.monotonic() - kept.made_at < self.fresh_s):
            self._kept.move_to_end(key)
            return kept.value
        task = self._reading.get(key)
        if task is None:
            task = asyncio.ensure_future(self._read(key, version, read))
            self._reading[key] = task
            task.add_done_callback(lambda done: self._done(key, done))
        value, _weight = await asyncio.shield(task)
        return value

    def _done(self, key: Hashable, task: asyncio.Task[tuple[Any, int]]) -> None:
        if self._reading.get(key) is task:
            del self._reading[key]
        if not task.cancelled():
            task.exception()  # retrieved here too: every asker may have gone

    async def _read(self, key: Hashable, version: Hashable,
                    read: Callable[[], Awaitable[tuple[Any, int]]]) -> tuple[Any, int]:
        made_at = time.monotonic()
        value, weight = await read()
        self.reads += 1
        self._put(key, _Kept(version, made_at, max(1, weight), value))
        return value, weight

    def _put(self, key: Hashable, kept: _Kept) -> None:
        old = self._kept.pop(key, None)
        if old is not None:
            self._weight -= old.weight
        if kept.weight > self.most_weight:
            return
        self._kept[key] = kept
        self._weight += kept.weight
        while self._weight > self.most_weight:
            _, dropped = self._kept.popitem(last=False)
            self._weight -= dropped.weight
