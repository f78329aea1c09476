"""Helpers of the platform tests (imported by the tests and by conftest.py), all on real parts: workers in
threads or in separate OS processes (which a test may SIGKILL), and a waiting loop with a hang guard (never a
speed assertion)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.worker import loop as scheduler
from arena.worker.settings import WorkerSettings

HERE = Path(__file__).parent
SLOW_BOT = str(HERE.parent / "bots" / "slow_bot.py")
STREAM_BOT = str(HERE.parent / "bots" / "stream_bot.py")
INFO_BOT = str(HERE.parent / "bots" / "info_bot.py")
VERSIONED_BOT = str(HERE / "bots" / "versioned_bot.py")
WAIT_S = 120.0  # a hang guard, not a speed requirement

# A worker process: run_worker until SIGTERM (graceful stop) or SIGKILL (a crash).
_WORKER_CODE = """
import logging, signal, sys, threading
from arena.worker.loop import run_worker
from arena.worker.settings import WorkerSettings
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
settings = WorkerSettings(concurrency=int(sys.argv[3]), visibility_timeout_s=float(sys.argv[4]),
                          heartbeat_s=float(sys.argv[5]), block_ms=100)
run_worker(sys.argv[1], settings, name=sys.argv[2], stop=stop)
"""


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Poll ``predicate`` every 50 ms until it returns something truthy (returned); fail the test after
    ``timeout`` seconds saying ``what`` was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting {timeout:.0f} s for {what}")
        time.sleep(0.05)


class ThreadWorker:
    """``run_workers`` (one worker per name, one event loop) in a thread of the test process; ``stop()`` sets its
    stop event and joins it. Run at most one at a time in a process: the referee's gRPC AsyncIO clients are not
    safe across event loops in several threads (see ``arena.worker.loop.run_workers``); use ``ProcessWorker`` for
    more."""

    def __init__(self, redis_url: str, name: str | list[str], **settings: Any) -> None:
        settings.setdefault("concurrency", 2)
        settings.setdefault("block_ms", 100)
        names = [name] if isinstance(name, str) else list(name)
        self.name = ", ".join(names)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=scheduler.run_workers,
                                       args=(redis_url, names, WorkerSettings(**settings)),
                                       kwargs={"stop": self.stop_event}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(timeout=WAIT_S)
        assert not self.thread.is_alive(), f"worker {self.name} did not honour its stop event"


class ProcessWorker:
    """``run_worker`` in a separate OS process (``python -c``); its log goes to ``log_path``."""

    def __init__(self, redis_url: str, name: str, log_path: Path, *, concurrency: int = 1,
                 visibility_timeout_s: float = 2.0, heartbeat_s: float = 0.3) -> None:
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE, redis_url, name, str(concurrency), str(visibility_timeout_s),
             str(heartbeat_s)], stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        """SIGKILL: the worker dies at once, leaving its jobs pending."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(WAIT_S)

    def stop(self) -> None:
        """SIGTERM (a graceful stop), SIGKILL after the hang guard; idempotent."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(WAIT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def rpc_error(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    """The status code and details of the ``grpc.RpcError`` that ``call()`` raises (fails if none)."""
    with pytest.raises(grpc.RpcError) as excinfo:
        call()
    return excinfo.value.code(), excinfo.value.details()


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Each of ``calls`` in its own thread, all released at once (a barrier): what each returned, or the
    ``grpc.RpcError`` it raised, in the order given."""
    barrier = threading.Barrier(len(calls))
    answers: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        try:
            answers[i] = calls[i]()
        except grpc.RpcError as exc:
            answers[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


def damage_appendonly(aof: Path) -> None:
    """Damage the Redis appendonly file ``aof`` in its middle (a command's ``*3`` header made a line of garbage), as
    a bad disk or a cut write would: redis-server then refuses to load it ("Bad file format")."""
    content = aof.read_bytes()
    cut = content.index(b"*3", len(content) // 2)
    aof.write_bytes(content[:cut] + b"#garbage\r\n" + content[cut + 2:])


class SwitchForwarder:
    """A TCP forwarder on 127.0.0.1 (``endpoint``) to ``target`` ("host:port"); ``switch(target)`` sends new
    connections to another target and drops the open ones at once: another process taking a bot's port between two
    calls, with no time for a reconnection to fail. ``close()`` stops it."""

    def __init__(self, target: str) -> None:
        import socket

        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._open: list[Any] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="forwarder", daemon=True).start()

    def _accept(self) -> None:
        import socket

        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            host, port = self.target.rsplit(":", 1)
            try:
                server = socket.create_connection((host, int(port)), timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: Any, sink: Any) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.close()
            except OSError:
                pass

    def switch(self, target: str) -> None:
        import socket

        self.target = target
        with self._lock:
            dropped, self._open = self._open, []
        for sock in dropped:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self._listener.close()
        self.switch(self.target)
