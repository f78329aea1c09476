"""Channels to bots, reused across matches: a pool of ``grpc.aio`` channels, one per bot endpoint (and
credentials), shared by every match a worker process runs; and how the arena dials a bot, in plaintext or over TLS.

Without a pool every match would open a new channel, so a new HTTP/2 connection (a TCP handshake, and more with
TLS), to every bot. The pool (``BotChannels``) lends a match one channel per endpoint (``lease``) and takes it back
(``release``); a channel nobody has leased for ``idle_s`` seconds is closed, and so is every channel when the
pool closes (the worker stops).

A bot that restarts on the same port is reachable again quickly, whatever gRPC's reconnect back-off (by default
it grows to 120 s):

- every channel gets short back-offs (``CHANNEL_OPTIONS``: the first reconnection after 100 ms, never more than
  1 s between two attempts) and its own subchannel (``grpc.use_local_subchannel_pool``), so a channel made fresh
  never inherits the back-off of an old one to the same address;
- a call that finds its bot unreachable (UNAVAILABLE) *retires* the channel it went through (``retire``): the
  matches holding it keep it until they end (closing a channel cancels every call on it, and those calls are
  other matches' business), new matches get a fresh channel, which connects at once;
- ``lease`` never hands out a channel in TRANSIENT_FAILURE (gRPC fails a call there at once, without trying to
  connect): it retires it and makes a fresh one. A call through a channel that is connecting waits at most for
  its own deadline, as before.

So no call ever waits out a back-off of an old channel.

A call to a bot that is down fails at once (UNAVAILABLE); when its bot has answered earlier in the match, the referee
calls again with ``wait_for_ready`` for what is left of the call's deadline (``arena.match.running``), so a bot
restarting on its port is reached within that deadline (or costs that one call an ``unreachable`` fault), and a bot
never reached fails at once.

Whoever answers at an endpoint may change with a connection: a match whose call found its bot unreachable, whose
match stream to it broke, or whose call was made on a channel that was not READY (it reconnects for that call,
without any error) tells the pool (``connection_went``), and so does a lease of a channel that is not READY; the
channel then forgets the bot's GetInfo answer (``BotLease.info``) and counts one more lost connection
(``connection_marks``), so the worker asks GetInfo again before it trusts that bot's identity.
Deadlines, per-bot secrets (call metadata) and fault handling are the referee's, per call. One bot's broken
connection touches only the channel to that bot.

The pool's stubs are ``arena.match.bot_stub.GuardedBotStub``: an answer whose bytes are not the method's message
comes back as an ``UndecodableAnswer`` (a ``malformed`` fault), never as grpcio's logged traceback.

Endpoints: ``"host:port"`` is dialed in plaintext; ``"tls://host:port"`` over TLS (``BotDialer``), the bot's
certificate verified against the CA bundle the operator gives (``arena serve --bot-ca FILE``, ``arena worker
--bot-ca FILE``, env ``ARENA_BOT_CA``), else against the system's roots, and required to name that host (a DNS
name, or an IP address in its subjectAltName). A bot serves TLS with the SDK's ``--tls-cert/--tls-key``.

A pool belongs to one event loop (``grpc.aio`` channels do): the loop that first leases from it. Its channels
are keyed by (``host:port``, TLS or not), so the plaintext and the TLS endpoint of one address never share one;
the CA bundle is the pool's dialer's, one per pool.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from arena.core.config import DEFAULTS
from arena.core.limits import MAX_BOT_ANSWER_BYTES, MAX_BOT_METADATA_BYTES
from arena.match.bot_stub import GuardedBotStub
from arena_sdk.pb import bot_pb2_grpc

log = logging.getLogger(__name__)

# Options of every channel to a bot. Back-offs (gRPC's own defaults: 1 s, growing 1.6 times to 120 s): the first
# reconnection 100 ms after a failure, at most 1 s between two attempts; a connection attempt may last 5 s
# (gRPC's "min_reconnect_backoff_ms" is the shortest connect timeout; default 20 s). A bot's answer is read up to
# MAX_BOT_ANSWER_BYTES, its metadata (an error status's text) up to MAX_BOT_METADATA_BYTES, where grpc's default
# soft limit of 8 KiB would turn a bot's long error text into a RESOURCE_EXHAUSTED of grpc's own now and then (the
# fault keeps the first limits.BOT_STATUS_TEXT characters of it). A subchannel of its own, never shared with
# another channel to the same address.
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_receive_message_length", MAX_BOT_ANSWER_BYTES),
    ("grpc.max_metadata_size", MAX_BOT_METADATA_BYTES),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
    ("grpc.min_reconnect_backoff_ms", 5000),
    ("grpc.use_local_subchannel_pool", 1),
)


TLS_SCHEME = "tls://"  # an endpoint "tls://host:port" is dialed over TLS
BOT_CA_ENV = "ARENA_BOT_CA"  # the CA bundle (PEM file) that bots' certificates are verified against
PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"


def split_endpoint(endpoint: str) -> tuple[str, bool]:
    """``"tls://host:port"`` -> ``("host:port", True)``; ``"host:port"`` -> ``("host:port", False)``."""
    if endpoint.startswith(TLS_SCHEME):
        return endpoint[len(TLS_SCHEME):], True
    return endpoint, False


def dns_target(address: str) -> str:
    """The gRPC target of a network ``"host:port"``: ``"dns:///host:port"``, so that gRPC never reads the host as
    the scheme of another resolver (``"unix:1234"`` would be a socket file, ``"fake:1"`` a test resolver)."""
    return f"dns:///{address}"


def read_ca_bundle(path: str | os.PathLike[str]) -> bytes:
    """The PEM bytes of the CA bundle at ``path``. Raises ``ValueError`` naming the file when it cannot be read or
    holds no PEM certificate."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the bot CA bundle {path}: {exc.strerror or exc}") from None
    if PEM_CERTIFICATE not in data:
        raise ValueError(f"the bot CA bundle {path} holds no PEM certificate ({PEM_CERTIFICATE.decode()} ...)")
    return data


def system_roots() -> bytes | None:
    """The system's CA bundle (where Python's ``ssl`` module finds it), or None when there is none (gRPC then uses
    the roots it ships)."""
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.cafile, paths.openssl_cafile):
        if candidate and os.path.isfile(candidate):
            try:
                return Path(candidate).read_bytes()
            except OSError:
                continue
    return None


class BotDialer:
    """How the arena dials a bot: ``"host:port"`` in plaintext, ``"tls://host:port"`` over TLS with the bot's
    certificate verified against ``ca`` (PEM bytes of a CA bundle; None: the system's roots, see ``system_roots``).
    Immutable; one credentials object for every TLS channel it makes."""

    def __init__(self, ca: bytes | None = None) -> None:
        self.ca = ca
        self._credentials: grpc.ChannelCredentials | None = None

    def __repr__(self) -> str:
        return f"BotDialer({'a CA bundle' if self.ca else 'system roots'})"

    def credentials(self) -> grpc.ChannelCredentials:
        """The TLS channel credentials (made once)."""
        if self._credentials is None:
            roots = self.ca if self.ca is not None else system_roots()
            self._credentials = grpc.ssl_channel_credentials(root_certificates=roots)
        return self._credentials

    def aio_channel(self, endpoint: str, options: Sequence[tuple[str, Any]] = CHANNEL_OPTIONS) -> grpc.aio.Channel:
        """A new ``grpc.aio`` channel to ``endpoint`` (of the running event loop)."""
        address, tls = split_endpoint(endpoint)
        if tls:
            return grpc.aio.secure_channel(dns_target(address), self.credentials(), options=options)
        return grpc.aio.insecure_channel(dns_target(address), options=options)

    def channel(self, endpoint: str, options: Sequence[tuple[str, Any]] = ()) -> grpc.Channel:
        """A new blocking ``grpc`` channel to ``endpoint`` (the service's registration checks)."""
        address, tls = split_endpoint(endpoint)
        if tls:
            return grpc.secure_channel(dns_target(address), self.credentials(), options=options)
        return grpc.insecure_channel(dns_target(address), options=options)


PLAINTEXT_OR_SYSTEM_ROOTS = BotDialer()


@dataclass(eq=False)
class _Entry:
    """One channel of the pool, with its stub and the number of matches that hold it."""

    key: tuple[str, bool]  # (host:port, over TLS)
    endpoint: str
    channel: grpc.aio.Channel
    stub: bot_pb2_grpc.BotStub
    leases: int = 0
    retired: bool = False
    closed: bool = False
    idle_timer: asyncio.TimerHandle | None = None
    info: Any = None  # the bot's GetInfo answer (BotInfo) through this channel's connection; None: not asked
    serial: int = 0  # the pool's number of this channel (its n-th made)
    connections_lost: int = 0  # times its connection was seen gone (``connection_went``, or not READY when leased)


@dataclass(eq=False)
class BotLease:
    """A channel lent to one match: ``stub`` (a ``GuardedBotStub``: an undecodable answer is an
    ``arena.match.bot_stub.UndecodableAnswer``) for its calls; give it back with
    ``BotChannels.release`` (once; again is a no-op)."""

    endpoint: str
    stub: bot_pb2_grpc.BotStub
    _entry: _Entry = field(repr=False)
    _released: bool = field(default=False, repr=False)

    @property
    def channel(self) -> grpc.aio.Channel:
        """The channel of ``stub`` (e.g. to see whether it is connected: ``channel.get_state()``)."""
        return self._entry.channel

    @property
    def info(self) -> Any:
        """The ``BotInfo`` the bot behind this channel answered to ``GetInfo`` through its connection now, None when
        not asked yet; kept for every match that leases the channel while its connection lasts (a fresh channel,
        e.g. after the bot was unreachable, and a channel whose connection was lost ask again: whoever answers there
        now may be another process)."""
        return self._entry.info

    @info.setter
    def info(self, value: Any) -> None:
        self._entry.info = value

    @property
    def serves_match_stream(self) -> bool | None:
        """Whether the bot behind this channel serves the match stream (``info.serves_match_stream``), None when
        not asked yet."""
        info = self._entry.info
        return bool(info.serves_match_stream) if info is not None else None


class BotChannels:
    """A pool of ``grpc.aio`` channels to bots: one per endpoint ("host:port" or "tls://host:port"), lent to every
    match that plays the bot there (see the module docstring).

    Args:
        dialer: how to dial (plaintext, or TLS verified against its CA bundle); default: system roots for TLS.
        idle_s: a channel that no match has held for this many seconds is closed (> 0).
    Raises ``ValueError`` for idle_s <= 0.
    """

    def __init__(self, dialer: BotDialer = PLAINTEXT_OR_SYSTEM_ROOTS, *,
                 idle_s: float = DEFAULTS.bot_channel_idle_s) -> None:
        if not idle_s > 0:
            raise ValueError(f"idle_s must be more than 0 s, got {idle_s!r}")
        self.dialer = dialer
        self.idle_s = idle_s
        self._entries: dict[tuple[str, bool], _Entry] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False
        self.opened = 0  # channels made so far (for tests and logs)

    def __len__(self) -> int:
        """Channels in the pool now (those retired but still held by a match are not counted)."""
        return len(self._entries)

    def lease(self, endpoint: str) -> BotLease:
        """A channel to ``endpoint`` for one match (the pool's, or a fresh one when it has none, or only one that
        gRPC cannot connect now). Raises ``RuntimeError`` once the pool is closed."""
        if self._closed:
            raise RuntimeError("the pool of bot channels is closed")
        key = split_endpoint(endpoint)
        entry = self._entries.get(key)
        state = entry.channel.get_state() if entry is not None else None
        if entry is not None and state == grpc.ChannelConnectivity.TRANSIENT_FAILURE:
            self._retire(entry)  # in back-off: a fresh channel connects at once
            entry = None
        elif entry is not None and state != grpc.ChannelConnectivity.READY:
            entry.info = None  # its connection was lost (or never made): what answers next may be another process
            entry.connections_lost += 1
        if entry is None:
            channel = self.dialer.aio_channel(endpoint)
            self.opened += 1
            entry = self._entries[key] = _Entry(key, endpoint, channel, GuardedBotStub(channel), serial=self.opened)
        if entry.idle_timer is not None:
            entry.idle_timer.cancel()
            entry.idle_timer = None
        entry.leases += 1
        return BotLease(endpoint, entry.stub, entry)

    @staticmethod
    def connection_went(lease: BotLease) -> None:
        """A match saw the connection of ``lease``'s channel go (a call found its bot unreachable, or its match
        stream broke), even if it got through again: whoever answers now may be another process. The bot's GetInfo
        answer is forgotten (asked again before the next match) and ``connection_marks`` moves."""
        lease._entry.info = None
        lease._entry.connections_lost += 1

    def connection_marks(self, endpoints: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Per endpoint, a mark of the connection a lease of it gets now: (the channel's number, its connections
        lost so far); (0, 0) with no channel. Two marks of an endpoint differ when its connection went between
        them (or its channel was replaced): whoever answers there may have changed."""
        marks = {}
        for endpoint in endpoints:
            entry = self._entries.get(split_endpoint(endpoint))
            marks[endpoint] = (entry.serial, entry.connections_lost) if entry is not None else (0, 0)
        return marks

    def identity_known(self, endpoint: str) -> bool:
        """Whether the bot's GetInfo answer through the endpoint's channel is known (asked on its connection now,
        and no connection lost since)."""
        entry = self._entries.get(split_endpoint(endpoint))
        return entry is not None and entry.info is not None

    def release(self, lease: BotLease) -> None:
        """Give ``lease`` back. A channel no match holds is closed after ``idle_s`` seconds (at once when it was
        retired, or the pool is closed)."""
        if lease._released:
            return
        lease._released = True
        entry = lease._entry
        entry.leases -= 1
        if entry.leases > 0:
            return
        if entry.retired or self._closed:
            self._close_soon(entry)
        else:
            entry.idle_timer = asyncio.get_running_loop().call_later(self.idle_s, self._expire, entry)

    def retire(self, lease: BotLease) -> None:
        """A call through ``lease`` found its bot unreachable: the next ``lease`` of that endpoint gets a fresh
        channel; this one stays with the matches that hold it and is closed when the last gives it back."""
        self._retire(lease._entry)

    def _retire(self, entry: _Entry) -> None:
        if entry.retired:
            return
        entry.retired = True
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]
        if entry.leases == 0:
            self._close_soon(entry)

    def _expire(self, entry: _Entry) -> None:
        entry.idle_timer = None
        if entry.leases == 0 and not entry.retired:
            log.debug("closing the idle channel to %s", entry.endpoint)
            self._retire(entry)

    def _close_soon(self, entry: _Entry) -> None:
        if entry.idle_timer is not None:
            entry.idle_timer.cancel()
            entry.idle_timer = None
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]
        if entry.closed:
            return
        entry.closed = True
        task = asyncio.get_running_loop().create_task(entry.channel.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Close every channel of the pool (the calls still running on them are cancelled) and refuse new leases.
        Call it once the matches that lease from it have ended."""
        self._closed = True
        for entry in list(self._entries.values()):
            self._close_soon(entry)
        self._entries.clear()
        while self._closing:
            await asyncio.gather(*list(self._closing), return_exceptions=True)
