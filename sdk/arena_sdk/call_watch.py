"""``CallWatch``: one daemon thread that cancels the server calls it is given once their time is up (a silent
stream's first message, a refused stream's wait), so that no server thread is held for long by a caller that sends
nothing, and no thread is spent per call on watching it. ``CALL_WATCH`` is the process's one watch."""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Any

import grpc


class CallWatch:
    """One daemon thread that cancels the server calls given to ``watch`` once their time is up, unless
    ``done`` was called first: a silent stream never holds a server thread for long, and no thread is spent per
    stream on watching it."""

    def __init__(self) -> None:
        self._heap: list[list[Any]] = []  # [deadline (monotonic s), sequence, context, still watched]
        self._cond = threading.Condition()
        self._sequence = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, context: grpc.ServicerContext, seconds: float) -> list[Any]:
        """Cancel the call of ``context`` in ``seconds`` (up to ``SLACK_S`` later) unless ``done(handle)`` is called
        first; the handle. The watching thread is woken only when this deadline comes before every other (a call
        costs a push on a heap, not a thread's wake-up)."""
        entry = [time.monotonic() + seconds, next(self._sequence), context, True]
        with self._cond:
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="arena-sdk-stream-watch", daemon=True)
                self._thread.start()
            if self._heap[0] is entry:
                self._cond.notify()
        return entry

    @staticmethod
    def done(handle: list[Any]) -> None:
        handle[3] = False

    SLACK_S = 0.05  # deadlines this close are handled in one wake-up

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    self._cond.wait(self._heap[0][0] - time.monotonic() + self.SLACK_S if self._heap else None)
                due = []
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    _, _, context, watched = heapq.heappop(self._heap)
                    if watched:
                        due.append(context)
            for context in due:
                try:
                    context.cancel()
                except Exception:  # noqa: BLE001, S110 - the call is over already
                    pass


CALL_WATCH = CallWatch()  # the one watch of this process
