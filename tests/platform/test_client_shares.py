"""``arena.server.shares.ClientShares`` on its own event loop: places handed over in order, given back by calls
that end while waiting, refusals after the wait. The contexts here stand in for grpc.aio's (peer, done callbacks,
abort); the service with real gRPC is in ``test_service.py``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from arena.core.limits import WEB_KEY_METADATA
from arena.server.shares import WEB_CLIENT, ClientShares, HeavyReads


class Aborted(Exception):
    pass


class Call:
    """What ``ClientShares.admit`` uses of a grpc.aio servicer context; ``end()`` runs its done callbacks."""

    def __init__(self, peer: str = "ipv4:10.0.0.1:5000", metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self._peer = peer
        self._metadata = metadata
        self.callbacks: list[Callable[[Any], None]] = []
        self.code: grpc.StatusCode | None = None

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        self.callbacks.append(callback)

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.code = code
        raise Aborted(details)

    def end(self) -> None:
        for callback in self.callbacks:
            callback(self)


def test_places_are_handed_over_in_order_and_other_clients_never_wait() -> None:
    async def scenario() -> None:
        shares = ClientShares(2, wait_s=5.0)
        first, second = Call(), Call()
        await shares.admit("M", first)
        await shares.admit("M", second)
        waiting = [Call(), Call()]
        tasks = [asyncio.create_task(shares.admit("M", call)) for call in waiting]
        await asyncio.sleep(0.01)
        assert not any(task.done() for task in tasks)
        await asyncio.wait_for(shares.admit("M", Call("ipv6:[2001:db8::1]:1")), 0.5)  # another client: at once
        first.end()
        await asyncio.sleep(0.01)
        assert [task.done() for task in tasks] == [True, False]  # the longest waiting first
        second.end()
        await asyncio.wait_for(tasks[1], 0.5)
        assert shares.held()["10.0.0.1"] == 2
        for call in waiting:
            call.end()
        assert shares.held() == {"2001:db8::/64": 1}

    asyncio.run(scenario())


def test_a_call_that_waits_too_long_is_refused_and_one_that_leaves_gives_its_place_on() -> None:
    async def scenario() -> None:
        shares = ClientShares(1, wait_s=0.05)
        holder = Call()
        await shares.admit("ListMatches", holder)
        late = Call()
        with pytest.raises(Aborted, match="ListMatches waited 0.05 s"):
            await shares.admit("ListMatches", late)
        assert late.code == grpc.StatusCode.RESOURCE_EXHAUSTED and not late.callbacks
        shares.wait_s = 5.0
        leaving, next_one = Call(), Call()
        leaving_task = asyncio.create_task(shares.admit("M", leaving))
        next_task = asyncio.create_task(shares.admit("M", next_one))
        await asyncio.sleep(0.01)
        leaving_task.cancel()  # its client goes; before its task runs again, a place is handed to it
        holder.end()
        with pytest.raises(asyncio.CancelledError):
            await leaving_task
        await asyncio.wait_for(next_task, 0.5)  # the place was passed on, not lost
        next_one.end()
        assert shares.held() == {}

    asyncio.run(scenario())


def test_the_web_key_makes_a_client_of_its_own_and_waiting_calls_are_bounded() -> None:
    async def scenario() -> None:
        shares = ClientShares(1, wait_s=5.0, web_key="k" * 32, web_limit=2, waiting=2)
        local = "ipv4:127.0.0.2:5000"
        await shares.admit("M", Call(local))  # a local process holds loopback's one place
        web = [Call(local, ((WEB_KEY_METADATA, "k" * 32),)) for _ in range(2)]
        for call in web:  # the pages, from the same machine: their own share of 2, at once
            await asyncio.wait_for(shares.admit("M", call), 0.5)
        assert shares.held() == {"loopback": 1, WEB_CLIENT: 2}
        wrong = Call(local, ((WEB_KEY_METADATA, "x" * 32),))  # a wrong key: the peer's share, so it waits
        waiting = [asyncio.create_task(shares.admit("M", c)) for c in (wrong, Call(local))]
        await asyncio.sleep(0.01)
        assert not any(task.done() for task in waiting)
        third = Call(local)
        with pytest.raises(Aborted, match="2 wait"):  # beyond `waiting`: refused at once, no request held
            await asyncio.wait_for(shares.admit("M", third), 0.5)
        assert third.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        for task in waiting:
            task.cancel()

    asyncio.run(scenario())


def test_calls_dropped_by_their_clients_are_one_log_line_per_period() -> None:
    import logging

    from arena.server.app import ClientLeftFilter

    def record(message: str) -> logging.LogRecord:
        try:
            raise RuntimeError("Failed execute_batch")
        except RuntimeError:
            import sys

            return logging.LogRecord("grpc._cython.cygrpc", logging.ERROR, __file__, 1, message, (), sys.exc_info())

    left = ClientLeftFilter(every_s=3600)
    dropped = "ExecuteBatchError raised in core by servicer method [/arena.v1.Arena/ListBots]"
    first = record(dropped)
    assert left.filter(first) and first.exc_info is None and first.levelno == logging.WARNING
    assert first.getMessage() == ("1 call(s) ended by their client while the answer was being sent "
                                  "(last: /arena.v1.Arena/ListBots)")
    assert not any(left.filter(record(dropped)) for _ in range(100))  # within the period: counted, not logged
    other = record("something else went wrong")
    assert left.filter(other) and other.exc_info is not None  # any other line as it is


def _heavy(at_once: int = 1, wait_s: float = 5.0) -> HeavyReads:
    return HeavyReads(frozenset({"Heavy"}), at_once, wait_s, lambda context: context.peer())


def test_heavy_reads_run_one_at_a_time_and_clients_take_turns() -> None:
    """A client with three reads waiting delays another's, which came after them, by one read, not three; a
    method that is no heavy read never waits."""
    async def scenario() -> None:
        heavy = _heavy()
        first = await heavy.enter("Heavy", Call("a"))
        assert first is not None and heavy.running == 1
        assert await asyncio.wait_for(heavy.enter("Light", Call("a")), 0.5) is None  # not gated
        order: list[str] = []

        async def read(client: str) -> Callable[[], None] | None:
            done = await heavy.enter("Heavy", Call(client))
            order.append(client)
            return done

        tasks = [asyncio.create_task(read("a")) for _ in range(3)]
        await asyncio.sleep(0.01)
        tasks.append(asyncio.create_task(read("b")))
        await asyncio.sleep(0.01)
        assert order == []
        first()
        ended: set[asyncio.Task[Callable[[], None] | None]] = set()
        for _ in range(4):
            await asyncio.sleep(0.01)
            running = [t for t in tasks if t.done() and t not in ended]
            assert len(running) == 1 and heavy.running == 1  # one at a time
            ended.add(running[0])
            done = running[0].result()
            assert done is not None
            done()
        assert order == ["a", "b", "a", "a"]
        assert heavy.running == 0 and not heavy._waiting

    asyncio.run(scenario())


def test_a_heavy_read_that_waits_too_long_is_refused_and_one_that_leaves_passes_its_turn_on() -> None:
    async def scenario() -> None:
        heavy = _heavy(wait_s=0.05)
        first = await heavy.enter("Heavy", Call("a"))
        late = Call("b")
        with pytest.raises(Aborted, match="heavy reads are all under way"):
            await heavy.enter("Heavy", late)
        assert late.code == grpc.StatusCode.RESOURCE_EXHAUSTED and not heavy._waiting
        heavy.wait_s = 5.0
        leaving = asyncio.create_task(heavy.enter("Heavy", Call("b")))
        staying = asyncio.create_task(heavy.enter("Heavy", Call("c")))
        await asyncio.sleep(0.01)
        leaving.cancel()  # its client left while it waited
        await asyncio.sleep(0.01)
        assert first is not None
        first()
        done = await asyncio.wait_for(staying, 0.5)
        assert done is not None and heavy.running == 1
        done()
        assert heavy.running == 0

    asyncio.run(scenario())


def test_a_cancelled_call_gives_its_place_back_only_once_its_thread_is_done() -> None:
    """``arena_sdk.guard._run_then``: cancelling a call whose method runs frees nothing until the method returns
    (a client cancelling its reads at once cannot run more of them than the gate allows); one cancelled before its
    method started gives it back at once, and the method never runs."""
    from concurrent.futures import ThreadPoolExecutor

    from arena_sdk.guard import _run_then

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
        released: list[str] = []
        gate = threading.Event()
        ran: list[str] = []

        def method(request: str, context: Any) -> str:
            ran.append(request)
            gate.wait(5)
            return request

        busy = asyncio.create_task(_run_then(loop, lambda: released.append("busy"), method, "busy", None))
        queued = asyncio.create_task(_run_then(loop, lambda: released.append("queued"), method, "queued", None))
        await asyncio.sleep(0.05)
        busy.cancel()
        queued.cancel()  # waits behind "busy" for the one thread: never started
        await asyncio.sleep(0.05)
        assert released == ["queued"] and ran == ["busy"]
        gate.set()
        for _ in range(100):
            if "busy" in released:
                break
            await asyncio.sleep(0.01)
        assert released == ["queued", "busy"] and ran == ["busy"]  # the queued method never ran
        done = await _run_then(loop, lambda: released.append("plain"), method, "plain", None)
        assert done == "plain" and released[-1] == "plain"

    asyncio.run(scenario())
