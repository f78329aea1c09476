"""The bot objects of the matches a bot serves (``arena_sdk.server.BotServicer``): one per (match id, seat, seat
key), the least recently used dropped beyond ``MAX_MATCHES`` (a referee that never ends its matches, a stranger's
flood), with a warning at most once per ``DROP_SAID_EVERY_S``.

The seat key (bot.proto ``StartMatchRequest.seat_key``) is random per seat and play of a match and sent to that seat
only, so the calls of anyone else naming the same match and seat (a tablemate calling a bot without a bot secret)
reach objects of their own, never the referee's. Referees that send none (0) share one object per (match id, seat).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .bot import Bot

log = logging.getLogger("arena_sdk.server")

MAX_MATCHES = 4096  # bot objects kept at most; the oldest is dropped (without on_end) when a referee never ends
DROP_SAID_EVERY_S = 60.0  # the warning about dropped bot objects: at most one line this often

Key = tuple[str, int, int]  # (match id, seat, seat key)


@dataclass
class Entry:
    """One bot object and what the servicer keeps with it; ``lock`` serialises the calls to it."""

    bot: Bot
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: bool = False
    kept: Any = None  # what the game keeps of this seat's views (``Game.view_from_message``)


class MatchTable:
    """The live bot objects by ``Key``, least recently used first. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[Key, Entry] = OrderedDict()
        self._dropped = 0  # bot objects dropped over MAX_MATCHES since the last warning about it
        self._said_at = -DROP_SAID_EVERY_S

    def active(self) -> list[tuple[str, int]]:
        """(match id, seat) of every bot object alive now, oldest first."""
        with self._lock:
            return [(match_id, seat) for match_id, seat, _ in self._entries]

    def find(self, key: Key) -> Entry | None:
        """The entry of ``key`` (now the most recently used), or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def get_or_make(self, key: Key, make: Callable[[], Bot], *, fresh: bool = False) -> Entry:
        """The entry of ``key``, made with a bot object ``make()`` when there is none; ``fresh``: a new one in any
        case (StartMatch: a match played again after a platform crash has the same id, and its bot object must not
        carry over the state, nor the kept history, of the play that was lost). ``make`` runs outside the lock and
        its exceptions pass through."""
        if not fresh:
            found = self.find(key)
            if found is not None:
                return found
        bot = make()
        with self._lock:
            if fresh:
                entry = self._entries[key] = Entry(bot)
            else:
                entry = self._entries.setdefault(key, Entry(bot))  # another thread may have won the race
            self._entries.move_to_end(key)
            while len(self._entries) > MAX_MATCHES:
                old, _ = self._entries.popitem(last=False)
                self._dropped += 1
                now = time.monotonic()
                if now >= self._said_at + DROP_SAID_EVERY_S:  # a flood of new matches logs a line a minute
                    log.warning("dropping the bot object of match %s seat %d (over %d live matches; %d dropped "
                                "since the last such line)", *old[:2], MAX_MATCHES, self._dropped)
                    self._said_at, self._dropped = now, 0
            return entry

    def pop(self, key: Key) -> Entry | None:
        """Remove and return the entry of ``key`` (None when there is none)."""
        with self._lock:
            return self._entries.pop(key, None)

    def drop(self, key: Key, entry: Entry) -> None:
        """Remove ``entry`` if ``key`` still holds it."""
        with self._lock:
            if self._entries.get(key) is entry:
                del self._entries[key]
