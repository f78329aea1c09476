"""``Kept``: a thread-safe map that keeps its most recently used entries up to a total weight (an entry's weight:
1 by default, or what ``weigh`` says, e.g. its size in bytes); the least recently used go first. For answers that
are costly to make and the same for every asker (the referee's handlers share them)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Kept(Generic[K, V]):
    """At most ``max_weight`` of entries (each weighing ``weigh(value)``, 1 when not given); an entry heavier than
    that alone is not kept."""

    def __init__(self, max_weight: int, weigh: Callable[[V], int] | None = None) -> None:
        self.max_weight = max_weight
        self._weigh = weigh or (lambda _value: 1)
        self._lock = threading.Lock()
        self._kept: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0

    def get(self, key: K) -> V | None:
        """The value kept under ``key`` (now the most recently used), or None."""
        with self._lock:
            entry = self._kept.get(key)
            if entry is None:
                return None
            self._kept.move_to_end(key)
            return entry[0]

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key`` (a value kept there before is replaced), dropping the least recently used
        entries beyond ``max_weight``."""
        weight = self._weigh(value)
        if weight > self.max_weight:
            return
        with self._lock:
            old = self._kept.pop(key, None)
            if old is not None:
                self._weight -= old[1]
            self._kept[key] = (value, weight)
            self._weight += weight
            while self._weight > self.max_weight:
                _, (_, dropped) = self._kept.popitem(last=False)
                self._weight -= dropped
