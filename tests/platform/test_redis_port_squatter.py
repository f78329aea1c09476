"""The private Redis's password never goes to another user's process (``arena.store.listeners``): while the private
redis-server is down, a local user may bind its port; the referee, the workers and the commands that find it
through the data folder then refuse to connect there, before sending a byte, instead of sending the password.
Real redis-server, real sockets; "another user" is either a real one (as root: a child that drops to uid 65534)
or this user seen as another (``os.getuid`` patched), since the check compares the listener's uid with ours."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from arena.store import Store, listeners
from arena.store.redis_server import PrivateRedis, resolve_redis_url


class Squatter:
    """A TCP listener on 127.0.0.1:``port`` that keeps every byte its clients send (``received``)."""

    def __init__(self, port: int = 0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            conn.settimeout(0.3)
            try:
                while chunk := conn.recv(4096):
                    self.received += chunk
            except (TimeoutError, OSError):
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def squatter() -> Iterator[Squatter]:
    s = Squatter()
    try:
        yield s
    finally:
        s.close()


def _as_another_user(monkeypatch: Any) -> None:
    """Every listener now belongs to "another user": this process's uid seen as another."""
    real = os.getuid()
    monkeypatch.setattr(listeners.os, "getuid", lambda: real + 1)


def _url(port: int) -> str:
    return f"redis://:the-private-password-0123@127.0.0.1:{port}/0"


def test_a_guarded_port_is_refused_before_a_byte_when_another_user_listens(squatter: Squatter,
                                                                          monkeypatch: Any) -> None:
    assert listeners.foreign_listener(squatter.port) is None  # ours
    listeners.guard_port(squatter.port)
    _as_another_user(monkeypatch)
    assert listeners.foreign_listener(squatter.port) == os.getuid() - 1  # the real uid, not "ours" any more
    store = Store.from_url(_url(squatter.port), client_options={"socket_timeout": 1, "socket_connect_timeout": 1})
    with pytest.raises(redis.ConnectionError, match="another user's process .* listens on 127.0.0.1:"):
        store.client.ping()
    time.sleep(0.3)
    assert squatter.received == b""  # not a byte, the password least of all
    assert b"the-private-password" not in squatter.received


def test_an_unguarded_url_or_our_own_listener_is_reached_as_before(squatter: Squatter, monkeypatch: Any) -> None:
    other = Squatter()
    try:
        # an external Redis (ARENA_REDIS_URL) is not checked: its operator chose it, another user may run it
        _as_another_user(monkeypatch)
        client = redis.Redis.from_url(_url(other.port), socket_timeout=0.5, socket_connect_timeout=0.5,
                                      **listeners.client_options(_url(other.port)))
        with pytest.raises(redis.RedisError):
            client.ping()  # the squatter never answers: a timeout, after the password went out
        time.sleep(0.4)
        assert b"the-private-password" in other.received  # what the check exists to prevent, on guarded ports
    finally:
        other.close()


def test_the_private_redis_is_reached_and_a_squatter_after_it_gets_nothing(tmp_path: Path, monkeypatch: Any) -> None:
    private = PrivateRedis(tmp_path)
    url = private.start()
    try:
        assert resolve_redis_url(tmp_path) == url  # found through the data folder, its listener this user's
        store = Store.from_url(url)
        assert store.client.ping()
        port = private.port
        private.stop()
        store.client.connection_pool.disconnect()
        squatter = Squatter(port)  # the port of the private Redis, taken while it is down
        try:
            _as_another_user(monkeypatch)
            with pytest.raises(redis.ConnectionError, match="its password is not sent there"):
                store.client.ping()
            time.sleep(0.4)
            assert squatter.accepted >= 1 and squatter.received == b""
        finally:
            squatter.close()
    finally:
        private.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a listener as another user (uid 65534)")
def test_a_real_other_users_listener_is_refused(tmp_path: Path) -> None:
    code = ("import os, socket, sys, time\n"
            "os.setgid(65534); os.setuid(65534)\n"  # the socket is of the user that makes it
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind(('127.0.0.1', 0)); s.listen(4)\n"
            "print(s.getsockname()[1], flush=True)\n"
            "c, _ = s.accept(); c.settimeout(1.0)\n"
            "try:\n    data = c.recv(4096)\nexcept OSError:\n    data = b''\n"
            "print(len(data), flush=True); time.sleep(1)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        assert listeners.foreign_listener(port) == 65534
        listeners.guard_port(port)
        store = Store.from_url(_url(port), client_options={"socket_timeout": 1, "socket_connect_timeout": 1})
        with pytest.raises(redis.ConnectionError, match=r"\(uid 65534\) listens on 127.0.0.1:"):
            store.client.ping()
        assert child.stdout.readline().strip() == "0"  # it accepted the connection and received nothing
    finally:
        child.kill()
        child.wait()


def test_serve_gives_up_saying_another_user_holds_the_port(tmp_path: Path, monkeypatch: Any) -> None:
    """The watch of `arena serve` cannot start the private Redis again on a port another user holds: it gives up
    saying so (not "keeps dying"), and its restarts send the password to nobody."""
    from arena.store.redis_watch import RedisWatch

    private = PrivateRedis(tmp_path)
    private.start()
    port = private.port
    watch = RedisWatch(private, max_restarts=2, backoff_s=(0.0, 0.1), check_interval_s=0.05)
    squatter = None
    try:
        _as_another_user(monkeypatch)
        assert private.process is not None
        private.process.kill()
        private.process.wait()
        squatter = Squatter(port)  # taken while the Redis is down, before the watch looks
        watch.start()
        deadline = time.monotonic() + 30
        while watch.gave_up is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watch.gave_up is not None and f"the port {port} of the private redis-server" in watch.gave_up
        assert "held by another user's process" in watch.gave_up, watch.gave_up
        time.sleep(0.3)
        assert squatter.received == b""
    finally:
        watch.close()
        if squatter is not None:
            squatter.close()
        private.stop()
