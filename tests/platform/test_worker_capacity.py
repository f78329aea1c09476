"""A worker's concurrency can be raised without harm: however many matches it runs at once, its Redis calls go
through an executor of at most ``io_threads`` threads and a connection pool with room for every one of them (a
thread per match against redis-py's default pool of 100 connections failed every match past about 93 in flight)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from arena.store import Store
from arena.worker.loop import MATCH_IO_THREADS, io_threads, worker_store
from arena.worker.settings import WorkerSettings

MATCHES = 300  # Redis calls at once, one per match in flight


async def _calls_at_once(store: Store, threads: int, hold_s: float = 0.02) -> None:
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(threads))
    # each call holds its connection for hold_s, as a call waiting on a busy Redis does
    await asyncio.gather(*(asyncio.to_thread(store.client.blpop, ["capacity:none"], hold_s) for _ in range(MATCHES)))


def test_a_worker_store_serves_every_thread_however_high_the_concurrency(redis_url: str) -> None:
    settings = WorkerSettings(concurrency=5000)
    threads = io_threads(1, settings.concurrency)
    assert threads == 4 + 3 + MATCH_IO_THREADS  # capped: matches beyond wait for a thread
    store = worker_store(redis_url, settings)
    try:
        asyncio.run(_calls_at_once(store, threads))
    finally:
        store.close()


def test_a_thread_per_match_runs_out_of_connections(redis_url: str) -> None:
    store = Store.from_url(redis_url)  # redis-py's default pool, as a worker had
    try:
        with pytest.raises(redis.exceptions.MaxConnectionsError):
            # held for 1 s, so that more than the pool's 100 are surely open at once even on a loaded machine
            asyncio.run(_calls_at_once(store, MATCHES, hold_s=1.0))
    finally:
        store.close()
