"""What a worker knows of the other workers of its fleet, from their heartbeats (``Store.list_workers``): its own
name, how long a job must go unrefreshed before it is taken for its worker's and reclaimed, and whether another
live worker bears its name."""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Sequence

from arena.store import Store

log = logging.getLogger(__name__)


def default_worker_name() -> str:
    """A consumer name unique to this process: ``<host>-<pid>-<6 hex>``."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def heartbeat_interval(heartbeat_s: float, visibility_timeout_s: float) -> float:
    """Seconds between two heartbeats (and refreshes of the running jobs): ``heartbeat_s``, but at most a third of
    the visibility timeout, so that a live worker's jobs are refreshed several times before they could be
    reclaimed."""
    return min(heartbeat_s, visibility_timeout_s / 3)


def reclaim_idle_s(store: Store, visibility_timeout_s: float) -> float:
    """How long a job must go unrefreshed to be reclaimed: the visibility timeout, or the longest ``timeout_s`` of
    the workers listed (a live one refreshes its jobs within it; no clock read: a fast clock sees none dead)."""
    return max([visibility_timeout_s, *(w.timeout_s for w in store.list_workers() if not w.stopped)])


def warn_of_namesakes(store: Store, names: Sequence[str]) -> None:
    """Log a warning for each of ``names`` that a live worker of another process holds (its heartbeats and this
    one's would overwrite each other: `arena worker list` shows one); a worker restarted after a crash under its old
    name finds its own last heartbeat, which says the same, so this warns rather than refuses."""
    now = time.time()
    for w in store.list_workers():
        if w.name in names and w.alive(now) and (w.host, w.pid) != (socket.gethostname(), os.getpid()):
            log.warning("a worker named %s sent a heartbeat %.0f s ago (pid %d on %s): unless that was this worker "
                        "before a restart, give each worker its own --name (their heartbeats overwrite each "
                        "other, and `arena worker list` shows one)", w.name, max(0.0, now - w.last_seen), w.pid,
                        w.host)
