"""Never send the private Redis's password to another user's process.

The private redis-server of ``arena serve`` (``arena.store.redis_server``) listens on a TCP port of 127.0.0.1, and
its clients (the referee, the workers, the commands that find it through the data folder) send its password on every
new connection. While that server is down (restarting after a crash, or between two ``arena serve`` runs), any local
user may bind the port and would receive the password from the next client, and with it every secret in Redis.

So a connection to a port marked here (``guard_port``: the private server's, by whoever starts, adopts or finds it
through the data folder) first checks who listens there, in ``/proc/net/tcp`` and ``/proc/net/tcp6``: a listener of
another user (``foreign_listener``) gets the connection closed before a byte is sent, and the client a
``redis.ConnectionError`` saying so; a restarted private server, this user's, is reached as before. Where ``/proc``
cannot be read (not Linux) nothing is checked. An external Redis (``ARENA_REDIS_URL``) is not checked: its operator
chose it, and it may well run as another user.
"""

from __future__ import annotations

import os
import threading
import urllib.parse
from typing import Any

import redis
from redis.connection import Connection

_PROC_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
_LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_GUARDED: set[int] = set()
_LOCK = threading.Lock()


def foreign_listener(port: int) -> int | None:
    """The uid of another user's process listening on TCP ``port`` of this machine (any local address, IPv4 or
    IPv6), or None: only this user's processes listen there, or none, or ``/proc/net`` cannot be read."""
    me = os.getuid()
    for table in _PROC_TABLES:
        try:
            with open(table, encoding="ascii") as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8 or fields[3] != _LISTEN:
                continue
            try:
                local_port = int(fields[1].rsplit(":", 1)[1], 16)
                uid = int(fields[7])
            except (IndexError, ValueError):
                continue
            if local_port == port and uid != me:
                return uid
    return None


class OwnListenerConnection(Connection):
    """A redis-py connection that refuses (``redis.ConnectionError``) a server port another user listens on,
    before anything (the password first) is sent to it."""

    def _connect(self) -> Any:
        sock = super()._connect()  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
        uid = foreign_listener(int(self.port))
        if uid is not None:
            sock.close()
            raise redis.ConnectionError(
                f"another user's process (uid {uid}) listens on {self.host}:{self.port}, where this arena's private "
                f"Redis should be: its password is not sent there (the private Redis is down, and its port taken)")
        return sock


def guard_port(port: int) -> None:
    """Connections to ``port`` of a loopback address made through ``client_options`` check its listener from now
    on (the private Redis's port)."""
    with _LOCK:
        _GUARDED.add(int(port))


def guard_url(url: str) -> None:
    """``guard_port`` of the port of the private server's URL ``url`` (a URL without one, or malformed: none)."""
    try:
        port = urllib.parse.urlsplit(url).port
    except ValueError:
        return
    if port:
        guard_port(port)


def client_options(url: str) -> dict[str, Any]:
    """Extra redis-py client options for ``url``: the checking connection class for a ``redis://`` URL to a
    loopback address whose port ``guard_port`` marked; none otherwise."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return {}
    if parts.scheme != "redis" or parts.hostname not in _LOOPBACK or port is None:
        return {}
    with _LOCK:
        guarded = port in _GUARDED
    return {"connection_class": OwnListenerConnection} if guarded else {}
