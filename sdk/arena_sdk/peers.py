"""Who a gRPC call comes from, as every per-client share and quota of the SDK and the arena counts it
(``client_address``, ``peer_address``), and a share of a server's calls per client (``PeerShare``); the guard of the
bot and referee servers (``arena_sdk.guard``) uses them."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable
from urllib.parse import unquote

import grpc


def client_address(host: str) -> str:
    """The client an address ``host`` belongs to, as every per-client share and quota of the SDK and the arena
    counts it: "loopback" for every loopback address (127.0.0.0/8, ::1, IPv4-mapped 127.x: a local process can
    connect from any of them, so they hold one share between them); an IPv6 address's /64 network (one host gets
    many addresses of it); an IPv4-mapped IPv6 address as its IPv4 address; an IPv4 address as it is; anything that
    is no IP address as it is (a zone id dropped), cut to 64 characters."""
    host = host.split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


def peer_address(peer: str) -> str:
    """The client of a gRPC call by its ``context.peer()`` (``client_address`` of its host): "ipv4:10.1.2.3:5555"
    -> "10.1.2.3"; "ipv6:[2001:db8::1]:5555" (or %-encoded) -> "2001:db8::/64"; "ipv4:127.0.0.2:5555" or
    "ipv6:[::1]:5555" -> "loopback"; "unix:..." -> "unix" (every local caller is one); anything else -> itself, at
    most 64 characters."""
    kind, _, rest = unquote(peer).partition(":")
    if kind in ("ipv4", "ipv6"):
        return client_address(rest.rsplit(":", 1)[0].strip("[]"))  # the host: no port, no brackets
    if kind.startswith("unix"):
        return "unix"
    return peer[:64]


class PeerShare:
    """At most ``limit`` calls, streams or connections under way at once from one client address: a stranger's
    flood of held streams or slow calls takes no more than that share of a server's threads, and the rest stay for
    its other clients (a bot's referee calls from an address of its own). ``take(address)`` -> whether it may have
    one more, ``enter(context)`` the same for a gRPC call's ``peer_address`` (-> the address, or None over the
    share; "" for a call ``exempt(context)`` says is not counted, e.g. one carrying the bot's secret);
    ``leave(address)`` once it is over (nothing for ""). With ``total``, every address together holds at most that
    many (so that calls ``exempt`` keeps the rest of the threads, whatever addresses a stranger has). Thread-safe."""

    def __init__(self, limit: int, exempt: Callable[[grpc.ServicerContext], bool] | None = None,
                 total: int | None = None) -> None:
        self.limit = max(1, limit)
        self.exempt = exempt
        self.total = None if total is None else max(1, total)
        self._held: dict[str, int] = {}
        self._sum = 0
        self._lock = threading.Lock()

    def take(self, address: str) -> bool:
        with self._lock:
            held = self._held.get(address, 0)
            if held >= self.limit or (self.total is not None and self._sum >= self.total):
                return False
            self._held[address] = held + 1
            self._sum += 1
        return True

    def enter(self, context: grpc.ServicerContext) -> str | None:
        if self.exempt is not None and self.exempt(context):
            return ""
        address = peer_address(context.peer() or "")
        return address if self.take(address) else None

    def held(self) -> dict[str, int]:
        """Address -> what it holds now (a copy)."""
        with self._lock:
            return dict(self._held)

    def leave(self, address: str) -> None:
        if not address:
            return
        with self._lock:
            held = self._held.get(address, 0) - 1
            if held > 0:
                self._held[address] = held
            else:
                self._held.pop(address, None)
            if held >= 0:
                self._sum -= 1

    def refuse(self, context: grpc.ServicerContext) -> None:
        """Abort the call over the share with RESOURCE_EXHAUSTED, saying so."""
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                      f"{self.limit} calls and streams of this address are under way at once, this server's share "
                      f"for one address; wait for one to end")
