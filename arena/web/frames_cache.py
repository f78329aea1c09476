"""The viewer frames of finished matches, kept by the web process: a match's record does not change once stored, and
building its frames replays the whole game (``arena.render.frames.build_frames``: about 0.1 s of CPU and 1.3 MB of
JSON for a match of 1,800 decisions), so each (match, perspective, record) is built once, in a worker thread (the
event loop keeps answering other pages meanwhile), and concurrent askers of the same one wait for that one build.

The key holds a digest of the record as the referee gave it (``GetMatch``), so a record that differs (another
caller's notes, a record stored again) is never answered with frames built from another. At most
``MAX_KEPT_BYTES`` of answers are kept; the least recently asked go first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

MAX_KEPT_BYTES = 64 * 1024 * 1024  # answers kept at most (the frames of a match of 1,800 decisions: about 1.3 MB)

Key = tuple[str, str, bytes]


def frames_key(match_id: str, view: str, record_json: str) -> Key:
    """The cache key of the frames of ``view`` built from ``record_json`` (a digest of it: the same match id with
    another record is another key)."""
    digest = hashlib.blake2b(record_json.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return (match_id, view, digest)


def encode_json(data: Any) -> bytes:
    """``data`` as the JSON body of an ``/api/`` answer (as Starlette's ``JSONResponse`` renders it)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


class FramesCache:
    """Built answers (JSON bytes) by key, at most ``max_bytes`` of them. For one event loop (the web app's)."""

    def __init__(self, max_bytes: int = MAX_KEPT_BYTES) -> None:
        self.max_bytes = max_bytes
        self._kept: OrderedDict[Key, bytes] = OrderedDict()
        self._size = 0
        self._locks: dict[Key, asyncio.Lock] = {}
        self.builds = 0  # answers built so far (for tests)

    async def get(self, key: Key, build: Callable[[], Any]) -> bytes:
        """The answer of ``key``: kept, or ``build()`` (in a worker thread) encoded as JSON and kept. An exception
        of ``build`` is raised to every asker waiting on that build, and nothing is kept."""
        kept = self._take(key)
        if kept is not None:
            return kept
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with lock:
                kept = self._take(key)  # built by the asker this one waited for
                if kept is None:
                    kept = await run_in_threadpool(lambda: encode_json(build()))
                    self.builds += 1
                    self._put(key, kept)
                return kept
        finally:
            if not lock.locked() and self._locks.get(key) is lock:
                del self._locks[key]

    def _take(self, key: Key) -> bytes | None:
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
        return kept

    def _put(self, key: Key, body: bytes) -> None:
        if len(body) > self.max_bytes:
            return
        self._kept[key] = body
        self._size += len(body)
        while self._size > self.max_bytes:
            _, old = self._kept.popitem(last=False)
            self._size -= len(old)
