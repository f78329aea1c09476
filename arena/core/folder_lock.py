"""One process per data folder: an advisory ``flock`` on ``<folder>/serve.lock``.

``arena serve`` holds the lock of its ``--data-dir`` for its whole life, so a second ``arena serve`` on the same
folder stops at once with a message naming the holder, instead of sharing the first one's private Redis and being
left answering UNAVAILABLE when the first stops. The kernel releases the lock when the holder exits, however it
exits (``kill -9`` included), so a stale lock file never blocks a restart; the file's text (pid, address, start
time) only informs the message.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import IO

from arena.core.errors import ArenaError

LOCK_NAME = "serve.lock"


class FolderInUse(ArenaError):
    """The data folder is held by another live process; the message names it (pid, address, since)."""


class FolderLock:
    """The exclusive lock of one data folder, held from :meth:`acquire` until :meth:`release` or process exit.

    Raises:
        FolderInUse: from :meth:`acquire` when another process holds the folder.
        OSError: when the folder cannot be created or the lock file opened.
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self._file: IO[str] | None = None

    def acquire(self, holder: str) -> None:
        """Take the lock without waiting; ``holder`` is what the message of a refused second process shows."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)  # private like the folder's other files
        os.fchmod(fd, 0o600)
        handle = os.fdopen(fd, "r+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            text = handle.read(4096)
            handle.close()
            raise FolderInUse(f"data folder {self.path.parent} is in use by {_describe(text)}; stop that process "
                              f"first, or give this one another --data-dir") from None
        self._file = handle
        self.update(holder)

    def update(self, holder: str) -> None:
        """Rewrite the holder's description (e.g. once the listening port is known)."""
        if self._file is None:
            return
        self._file.seek(0)
        self._file.truncate()
        json.dump({"pid": os.getpid(), "holder": holder, "since": int(time.time())}, self._file)
        self._file.flush()

    def lost(self) -> str | None:
        """Why the held lock no longer guards its folder: its file was removed (the folder deleted) or replaced (the
        folder deleted and made again, perhaps by another ``arena serve``, which could take it then); None while it
        guards it, or when not held."""
        if self._file is None:
            return None
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            return f"{self.path} was removed (the data folder deleted?)"
        except OSError:  # cannot tell now (a permission changed, a network file system's hiccup): not gone
            return None
        held = os.fstat(self._file.fileno())
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            return (f"{self.path} is another file now (the data folder deleted and made again, perhaps by another "
                    f"process)")
        return None

    def release(self) -> None:
        """Drop the lock (the file stays; its text is ignored until a holder rewrites it)."""
        if self._file is not None:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
            self._file.close()
            self._file = None


def folder_held(folder: Path) -> bool:
    """True when a process holds the lock of data folder ``folder`` now (an ``arena serve`` running or starting
    there); False when none does or the folder has no lock file. Never blocks, never creates anything."""
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops the shared lock taken, if any
    return False


SERVE_LISTENING = "arena serve listening on "  # how ``arena serve`` describes itself once it listens
SERVE_STOPPING = "arena serve stopping"  # ... and once it stops (its workers' matches finishing first)


def serve_stopping(folder: Path) -> bool:
    """True when the ``arena serve`` holding data folder ``folder`` says it is stopping (its lock file). Never
    blocks."""
    holder = _holder(folder)
    return holder is not None and holder.startswith(SERVE_STOPPING)


def serve_address(folder: Path) -> str | None:
    """The HOST:PORT the ``arena serve`` holding data folder ``folder`` listens on, as its lock file says; None
    while none holds it or the one that does has not said yet (still starting). Never blocks."""
    holder = _holder(folder)
    if holder is None or not holder.startswith(SERVE_LISTENING):
        return None
    return holder.removeprefix(SERVE_LISTENING).split()[0] or None


def _holder(folder: Path) -> str | None:
    """How the process holding data folder ``folder`` describes itself (its lock file); None when none holds it."""
    if not folder_held(folder):
        return None
    try:
        holder = json.loads((folder / LOCK_NAME).read_text(encoding="utf-8")[:4096])["holder"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return holder if isinstance(holder, str) else None


def _describe(text: str) -> str:
    try:
        info = json.loads(text)
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(int(info["since"])))
        return f"{info['holder']} (pid {int(info['pid'])}, since {since})"
    except (ValueError, KeyError, TypeError):
        return "another process"
