"""The viewer frames of finished matches, kept by the web process: a match's record does not change once stored, and
building its frames replays the whole game (``arena.render.frames.build_frames``: about 0.1 s of CPU and 1.3 MB of
JSON for a match of 1,800 decisions), so each (match, perspective, record) is built once, and concurrent askers of
the same one wait for that one build. Builds run one at a time in a process of their own (``FramesBuilder``): a
build is pure Python, and in a thread it held the GIL that the rest of the process waits for: ``arena serve --web``
runs the pages in the referee's process, its workers' event loop too, which starts no match while it is late (a
review's 8 clients asking for frames not built yet took 60 matches from 3.0 s to 14-17 s; one build at a time in a
thread, 8.8 s; in a process of its own, see ``FramesBuilder``).

The key holds a digest of the record as the referee gave it (``GetMatch``), so a record that differs (another
caller's notes, a record stored again) is never answered with frames built from another. At most
``MAX_KEPT_BYTES`` of answers are kept; the least recently asked go first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import multiprocessing
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from arena.core.orphans import exit_with_parent

MAX_KEPT_BYTES = 64 * 1024 * 1024  # answers kept at most (the frames of a match of 1,800 decisions: about 1.3 MB)
MAX_WAITING_BUILDS = 32  # builds asked and not done (one running, the others queued); one more is refused
BUILDER_NICE = 10  # the builder process's niceness: the referee, its workers and the bots come first


class FramesBusy(Exception):
    """No build now: ``MAX_WAITING_BUILDS`` are waiting already, or the builder's process died twice in a row.
    The message says why, for a person (the page answers 503: try again in a moment)."""


def _start_builder(parent: int) -> None:
    """The builder process's start: it ends with ``parent``, and gives the CPU to everything else first."""
    exit_with_parent(parent)
    try:
        os.nice(BUILDER_NICE)
    except OSError:  # not permitted here: it builds at the same priority
        pass

Key = tuple[str, str, bytes]


def frames_key(match_id: str, view: str, record_json: str) -> Key:
    """The cache key of the frames of ``view`` built from ``record_json`` (a digest of it: the same match id with
    another record is another key)."""
    digest = hashlib.blake2b(record_json.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return (match_id, view, digest)


def encode_json(data: Any) -> bytes:
    """``data`` as the JSON body of an ``/api/`` answer (as Starlette's ``JSONResponse`` renders it)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


class FramesBuilder:
    """One process (spawned at the first build, shared by every app of this process, at niceness
    ``BUILDER_NICE``) that runs builds one at a time, in the order asked. ``run(build)``: ``build()`` there (a
    picklable callable, e.g. a ``functools.partial`` of a module-level function, whose result is picklable); its
    exception is raised here. A process that died (killed, out of memory) is replaced, and the build asked again
    once; ``FramesBusy`` when it died again, or when ``max_waiting`` builds are asked and not done already. The
    process ends with this one, however it ends (``exit_with_parent``)."""

    def __init__(self, max_waiting: int = MAX_WAITING_BUILDS) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self.max_waiting = max_waiting
        self.waiting = 0  # builds asked and not done

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_start_builder, initargs=(os.getpid(),))
            return self._pool

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)

    async def run(self, build: Callable[[], Any]) -> Any:
        if self.waiting >= self.max_waiting:
            raise FramesBusy(f"{self.waiting} viewer frames are being built already")
        self.waiting += 1
        try:
            loop = asyncio.get_running_loop()
            for _ in range(2):
                pool = self._executor()
                try:
                    return await loop.run_in_executor(pool, build)
                except BrokenProcessPool:
                    self._replace(pool)
            raise FramesBusy("the process that builds the viewer's frames stopped twice in a row")
        finally:
            self.waiting -= 1


BUILDER = FramesBuilder()  # the frames builds of every app of this process


class FramesCache:
    """Built answers (JSON bytes) by key, at most ``max_bytes`` of them. For one event loop (the web app's); the
    builds go to ``builder`` (``BUILDER``: one process for the whole process's pages)."""

    def __init__(self, max_bytes: int = MAX_KEPT_BYTES, builder: FramesBuilder = BUILDER) -> None:
        self.max_bytes = max_bytes
        self.builder = builder
        self._kept: OrderedDict[Key, bytes] = OrderedDict()
        self._size = 0
        self._locks: dict[Key, asyncio.Lock] = {}
        self.builds = 0  # answers built so far (for tests)

    async def get(self, key: Key, build: Callable[[], bytes]) -> bytes:
        """The answer of ``key``: kept, or ``build()`` (the JSON bytes; run by the builder's process, so picklable)
        kept. An exception of ``build`` is raised to every asker waiting on that build, and nothing is kept."""
        kept = self._take(key)
        if kept is not None:
            return kept
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with lock:
                kept = self._take(key)  # built by the asker this one waited for
                if kept is None:
                    kept = await self.builder.run(build)
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
