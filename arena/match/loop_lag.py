"""The referee's measure of its own event loop's lateness (``LoopLag``), which excuses a Decide timeout that was
the referee's fault (``docs/failure-policy.md``), and the one monitor task per event loop that every match running
on it shares (``hold_loop_lag``, ``release_loop_lag``).
"""

from __future__ import annotations

import asyncio
import collections
import weakref
from dataclasses import dataclass

LAG_TICK_S = 0.02  # the lag monitor's sleep; lags shorter than LAG_MIN_S are not kept
LAG_MIN_S = 0.005
LAG_KEEP_S = 120.0  # longer than any Decide deadline (MAX_DEADLINE_MS)


class LoopLag:
    """Measures the event loop's own lateness: ``run()`` (a task) sleeps ``tick_s`` at a time and keeps how late
    it woke up; ``max_since(t)`` is the longest lateness, seconds, that fell after loop time ``t`` (including a
    lateness still going on, seen before the task could wake up)."""

    def __init__(self, tick_s: float = LAG_TICK_S) -> None:
        self.tick_s = tick_s
        self.samples: collections.deque[tuple[float, float]] = collections.deque()  # (woke at, late by), seconds
        self.expected: float | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def run(self) -> None:
        self.loop = loop = asyncio.get_running_loop()
        while True:
            self.expected = loop.time() + self.tick_s
            await asyncio.sleep(self.tick_s)
            now = loop.time()
            late = now - self.expected
            if late >= LAG_MIN_S:
                self.samples.append((now, late))
            while self.samples and self.samples[0][0] < now - LAG_KEEP_S:
                self.samples.popleft()

    def max_since(self, t: float) -> float:
        if self.loop is None:
            return 0.0
        now = self.loop.time()
        lag = max((min(late, woke - t) for woke, late in self.samples if woke > t), default=0.0)
        if self.expected is not None and now > self.expected:  # late right now, the task has not woken yet
            lag = max(lag, now - max(self.expected, t))
        return max(lag, 0.0)


@dataclass(eq=False)
class _SharedLag:
    lag: LoopLag
    task: asyncio.Task[None]
    holders: int = 0


_SHARED_LAG: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _SharedLag] = weakref.WeakKeyDictionary()


def hold_loop_lag() -> LoopLag:
    """The ``LoopLag`` of the running event loop, shared by every match running on it: one task waking every
    ``LAG_TICK_S`` however many matches run (one per match cost 50 wake-ups per second each, a quarter of a core at
    300 matches in flight), started by its first holder. Give it back with ``release_loop_lag``."""
    loop = asyncio.get_running_loop()
    shared = _SHARED_LAG.get(loop)
    if shared is None or shared.task.done():
        lag = LoopLag()
        shared = _SharedLag(lag, loop.create_task(lag.run()))
        _SHARED_LAG[loop] = shared
    shared.holders += 1
    return shared.lag


def release_loop_lag(lag: LoopLag) -> None:
    """A match that held ``lag`` (``hold_loop_lag``) is over; the last holder stops its task."""
    loop = asyncio.get_running_loop()
    shared = _SHARED_LAG.get(loop)
    if shared is None or shared.lag is not lag:
        return
    shared.holders -= 1
    if shared.holders <= 0:
        shared.task.cancel()
        del _SHARED_LAG[loop]
