"""``RedisWatch``: keeps the private ``redis-server`` of an ``arena serve`` running: the one it started, or the one an
``arena serve`` of the folder that died left running, which it took over (``PrivateRedis.adopt``). When its process
exits without being asked to (``kill -9``, the OOM killer, a crash), the watch starts it again on the same port, in
the same folder, with the same password and config (``PrivateRedis.restart``): it reloads its appendonly data, and
every client (the referee, its embedded workers, ``arena worker`` processes) reconnects to the same URL. One warning
line each time, no traceback.

A redis-server that keeps dying (a broken appendonly file, a full disk, its port taken meanwhile) is not restarted in
a loop: the attempts back off (at once, then 1, 2, 4, 8 s apart), and once ``max_restarts`` attempts within
``window_s`` seconds have not kept it running the watch gives up and says what to do: it records the message
(``gave_up``) and hands it to ``on_give_up`` (``arena serve`` then stops with it), else logs it as an error.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from arena.store import listeners
from arena.store.redis_files import DAMAGED_REPAIR
from arena.store.redis_server import LOG_FILE, PrivateRedis

log = logging.getLogger("arena.store.redis_watch")

CHECK_INTERVAL_S = 0.2  # how often the process is looked at (a wait on a thread: no Redis call)
MAX_RESTARTS = 5  # attempts ...
WINDOW_S = 60.0  # ... within this many seconds before the watch gives up
BACKOFF_S = (0.0, 1.0, 2.0, 4.0, 8.0)  # the wait before the 1st, 2nd, ... attempt of a window (the last repeats)


class RedisWatch:
    """A thread that restarts ``server`` (a ``PrivateRedis``, started or adopted before ``start()``) whenever its
    process has exited, until ``stop()`` or ``close()`` (which stops watching before it stops the server: a server
    shut down on purpose is not restarted), and never while ``stopping`` is set (e.g. the event SIGTERM sets:
    redis-server may get the same signal first, from a service manager stopping the lot).

    Args:
        server: the private Redis to keep running: its process (``PrivateRedis.exited``) is watched, the child it
            started or the one it took over (no child: seen through a pidfd).
        stopping: while set, a dead server is left alone (its owner is stopping).
        on_give_up: called once, with the message (what happened and what to do), when the watch gives up;
            without it the message is logged as an error.
        max_restarts, window_s: it gives up when the server is found dead again after ``max_restarts`` attempts
            within the last ``window_s`` seconds.
        backoff_s: the waits before the successive attempts of a window (the last one repeats).
        check_interval_s: how often the process is looked at.
        folder_lost: says why the data folder is no longer this serve's (``FolderLock.lost``), None while it is:
            then the watch gives up at once (its server is never restarted in a folder another process may hold
            now, nor left to write into one: two servers would share an appendonly file).
    """

    def __init__(self, server: PrivateRedis, *, stopping: threading.Event | None = None,
                 on_give_up: Callable[[str], None] | None = None, max_restarts: int = MAX_RESTARTS,
                 window_s: float = WINDOW_S, backoff_s: tuple[float, ...] = BACKOFF_S,
                 check_interval_s: float = CHECK_INTERVAL_S,
                 folder_lost: Callable[[], str | None] | None = None) -> None:
        self.server = server
        self.folder_lost = folder_lost
        self.stopping = stopping or threading.Event()
        self.on_give_up = on_give_up
        self.max_restarts = max_restarts
        self.window_s = window_s
        self.backoff_s = backoff_s or (0.0,)
        self.check_interval_s = check_interval_s
        self.restarts = 0  # successful restarts
        self.gave_up: str | None = None  # the message, once the watch gave up
        self._attempts: list[float] = []  # monotonic times of the attempts within the window
        self._last = ""  # why the last attempt was needed or failed (for the give-up message)
        self.restarted_last = False  # the last attempt restarted it (a death after it is what the give-up names)
        self.folder_gone = False  # gave up because the data folder is no longer this serve's
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> RedisWatch:
        """Start watching (a daemon thread); returns self."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="redis-watch", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching; waits for a restart under way to end (the server is then running or not, never half
        started), so that ``server.stop()`` can follow."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def close(self) -> None:
        """Stop watching, then stop the server (``PrivateRedis.stop``): what its owner does as it stops."""
        self.stop()
        self.server.stop()

    def _quit(self) -> bool:
        return self._stop.is_set() or self.stopping.is_set()

    def _run(self) -> None:
        while not self._stop.wait(self.check_interval_s):
            if self._quit():
                continue
            lost = self.folder_lost() if self.folder_lost is not None else None
            if lost is not None:
                self._lose_folder(lost)
                return
            ended = self.server.exited()
            if ended is not None and not self._attempt(self.server.pid or 0, ended):
                return

    def _attempt(self, pid: int, ended: str) -> bool:
        """One restart of the dead server (process ``pid``, which ended as ``ended`` says), after its back-off wait;
        False once given up."""
        now = time.monotonic()
        self._attempts = [t for t in self._attempts if now - t < self.window_s]
        tried = len(self._attempts)
        if tried >= self.max_restarts:
            if self.restarted_last:  # the last attempt worked: this death is the news, not the one before
                self._last = f"the private redis-server (pid {pid}) exited unexpectedly ({ended})"
            self._give_up()
            return False
        wait = self._backoff(tried)
        if wait > 0 and self._stop.wait(wait):
            return True  # stopped meanwhile: the loop ends
        if self._quit():
            return True
        self._attempts.append(time.monotonic())
        died = f"the private redis-server (pid {pid}) exited unexpectedly ({ended})"
        self._last = died
        started = time.monotonic()
        try:
            self.server.restart()
        except Exception as exc:  # noqa: BLE001 - RedisStartError, or an OSError writing its files: tried again
            lines = str(exc).strip().splitlines() or [type(exc).__name__]
            reason = " ".join(lines[0].split()).removesuffix("log tail:").rstrip(" ;:,")
            repair = next((line.strip() for line in lines[1:] if DAMAGED_REPAIR in line), "")  # damaged_aof_text's
            self._last = f"{reason}: {repair}" if repair else reason
            more = f"; next try in {self._backoff(tried + 1):g} s" if tried + 1 < self.max_restarts else ""
            self.restarted_last = False
            log.warning("%s; restarting it on port %d failed (attempt %d of %d within %.0f s%s): %s; see %s", died,
                        self.server.port, tried + 1, self.max_restarts, self.window_s, more, self._last,
                        self.server.data_dir / LOG_FILE)
            return True
        self.restarts += 1
        self.restarted_last = True
        log.warning("%s; restarted it on port %d with the same data folder and password (pid %d, %.1f s; restart %d "
                    "of at most %d within %.0f s)", died, self.server.port, self.server.pid or 0,
                    time.monotonic() - started, tried + 1, self.max_restarts, self.window_s)
        return True

    def _backoff(self, tried: int) -> float:
        return self.backoff_s[min(tried, len(self.backoff_s) - 1)]

    def _lose_folder(self, lost: str) -> None:
        """The data folder is no longer this serve's: give up with the message (``arena serve`` stops)."""
        self.gave_up = (f"the data folder {self.server.data_dir} of this arena serve is gone: {lost}. Stopping, so "
                        f"that its private redis-server (port {self.server.port}) never writes into a folder another "
                        f"arena serve may hold now, nor is started again there. A folder moved elsewhere keeps its "
                        f"data: move it back (or give --data-dir its new place) and start arena serve again; a folder "
                        f"deleted lost what the arena stored since (restore it from a backup)")
        self.folder_gone = True
        if self.on_give_up is not None:
            self.on_give_up(self.gave_up)
        else:
            log.error("%s", self.gave_up)

    def _give_up(self) -> None:
        folder = self.server.data_dir
        squatter = listeners.foreign_listener(self.server.port)
        if squatter is not None:  # the cause is known: say it, not "could not be kept running"
            message = (f"the port {self.server.port} of the private redis-server of {folder} is held by another "
                       f"user's process (uid {squatter}), so it cannot start again there; its password was not sent "
                       f"to it. Stop that process, then start arena serve again (the data stays in the appendonly "
                       f"files); on a machine shared with others, prefer an external Redis (ARENA_REDIS_URL)")
        else:
            message = (f"the private redis-server of {folder} (port {self.server.port}) could not be kept running: "
                       f"{self.max_restarts} restart attempts within {self.window_s:.0f} s, the last: {self._last}; "
                       f"not restarting it again. See {folder / LOG_FILE} for why (e.g. a full disk, the port taken "
                       f"by another program, a damaged appendonly file: docs/operators/redis.md), fix it, then start "
                       f"arena serve again (the data stays in the appendonly files)")
        self.gave_up = message
        if self.on_give_up is not None:
            self.on_give_up(message)
        else:
            log.error("%s", message)
