"""The referee's measure of its own lateness (``arena.match.loop_lag.LoopLag``) is one task per event loop, shared by
every match running on it, so a worker holding hundreds of matches wakes 50 times a second, not 50 times per match."""

from __future__ import annotations

import asyncio
import time

from arena.match.loop_lag import LAG_MIN_S, hold_loop_lag, release_loop_lag


def _monitors() -> int:
    return sum(1 for t in asyncio.all_tasks() if not t.done() and t.get_coro().__qualname__ == "LoopLag.run")


def test_matches_of_one_loop_share_one_lag_monitor_which_stops_after_the_last() -> None:
    async def play() -> tuple[int, int, bool, float, int]:
        first, second = hold_loop_lag(), hold_loop_lag()
        await asyncio.sleep(0.05)
        both = _monitors()
        t = asyncio.get_running_loop().time()
        release_loop_lag(first)
        await asyncio.sleep(0.03)
        one = _monitors()  # the second match still holds it
        time.sleep(0.1)  # the loop blocked: the shared monitor sees it for the match still holding it
        await asyncio.sleep(0.03)
        late = second.max_since(t)
        release_loop_lag(second)
        await asyncio.sleep(0.01)
        third = hold_loop_lag()  # a new holder after the last left: a fresh monitor
        fresh = third is not second
        release_loop_lag(third)
        await asyncio.sleep(0.01)
        return both, one, fresh, late, _monitors()

    both, one, fresh, late, after = asyncio.run(play())
    assert (both, one, after) == (1, 1, 0)
    assert fresh
    assert late >= 0.05 > LAG_MIN_S
