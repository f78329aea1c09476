"""``SharedReads``: one read for every client asking at the same time, kept while its version holds or for
``fresh_s``, at most ``most_weight`` kept, errors and cancellations confined to what they concern."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.web.shared_reads import SharedReads


class Reads:
    """A read that counts its calls and answers when ``release`` is set."""

    def __init__(self, weight: int = 1) -> None:
        self.calls = 0
        self.release = asyncio.Event()
        self.weight = weight
        self.fail: Exception | None = None

    async def __call__(self) -> tuple[Any, int]:
        self.calls += 1
        await self.release.wait()
        if self.fail is not None:
            raise self.fail
        return {"answer": self.calls}, self.weight


def test_askers_at_the_same_time_share_one_read() -> None:
    async def main() -> None:
        shared, read = SharedReads(), Reads()
        askers = [asyncio.create_task(shared.get("k", 1, read)) for _ in range(20)]
        await asyncio.sleep(0)
        read.release.set()
        answers = await asyncio.gather(*askers)
        assert read.calls == 1 and shared.reads == 1
        assert all(a is answers[0] for a in answers) and answers[0] == {"answer": 1}

    asyncio.run(main())


def test_an_answer_is_kept_while_its_version_holds_and_read_again_once_stale() -> None:
    async def main() -> None:
        shared, read = SharedReads(fresh_s=0.05), Reads()
        read.release.set()
        assert await shared.get("k", "v1", read) == {"answer": 1}
        await asyncio.sleep(0.1)  # older than fresh_s, same version: still kept
        assert await shared.get("k", "v1", read) == {"answer": 1} and read.calls == 1
        assert await shared.get("k", "v2", read) == {"answer": 2}  # the version moved, and it is stale: read again
        assert await shared.get("k", "v3", read) == {"answer": 2}  # moved again, but under fresh_s old: kept
        await asyncio.sleep(0.1)
        assert await shared.get("k", "v3", read) == {"answer": 3}
        assert await shared.get("other", "v3", read) == {"answer": 4}  # keys apart

    asyncio.run(main())


def test_a_failed_read_reaches_every_asker_and_keeps_nothing() -> None:
    async def main() -> None:
        shared, read = SharedReads(), Reads()
        read.fail = LookupError("no such tournament")
        askers = [asyncio.create_task(shared.get("k", 1, read)) for _ in range(3)]
        await asyncio.sleep(0)
        read.release.set()
        results = await asyncio.gather(*askers, return_exceptions=True)
        assert all(isinstance(r, LookupError) for r in results) and read.calls == 1
        read.fail = None
        assert await shared.get("k", 1, read) == {"answer": 2}

    asyncio.run(main())


def test_a_cancelled_asker_leaves_the_read_to_the_others() -> None:
    async def main() -> None:
        shared, read = SharedReads(), Reads()
        first = asyncio.create_task(shared.get("k", 1, read))
        second = asyncio.create_task(shared.get("k", 1, read))
        await asyncio.sleep(0)
        first.cancel()  # a client that went away
        await asyncio.sleep(0)
        read.release.set()
        assert await second == {"answer": 1}
        with pytest.raises(asyncio.CancelledError):
            await first
        assert await shared.get("k", 1, read) == {"answer": 1} and read.calls == 1

    asyncio.run(main())


def test_at_most_most_weight_is_kept_the_least_recently_asked_first() -> None:
    async def main() -> None:
        shared, read = SharedReads(most_weight=10), Reads(weight=4)
        read.release.set()
        for key in ("a", "b"):
            await shared.get(key, 1, read)
        await shared.get("a", 1, read)  # asked again: "b" is now the least recently asked
        await shared.get("c", 1, read)  # 12 > 10: "b" goes
        calls = read.calls
        await shared.get("a", 1, read)
        await shared.get("c", 1, read)
        assert read.calls == calls
        await shared.get("b", 1, read)
        assert read.calls == calls + 1
        heavy = Reads(weight=11)  # heavier than all that may be kept: answered, never kept
        heavy.release.set()
        await shared.get("h", 1, heavy)
        await shared.get("h", 1, heavy)
        assert heavy.calls == 2

    asyncio.run(main())
