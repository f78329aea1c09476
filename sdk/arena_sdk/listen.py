"""Why an address cannot be listened on, in words a person can act on.

gRPC's own error for a port it cannot bind ("Failed to bind to address ...") says neither that the port is taken
nor what to do. ``bind_problem(address)`` binds a plain TCP socket to the same address the way gRPC does
(``SO_REUSEADDR`` on) and names the cause: the port in use, a host that is not this machine's, a privileged
port, a malformed address. Servers call it after gRPC refused the address, to explain the refusal.
"""

from __future__ import annotations

import errno
import socket


def split_address(address: str) -> tuple[str, str]:
    """``(host, port text)`` of "host:port", "[v6]:port" or ":port" (host "" = every address)."""
    host, _, port = address.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def bind_problem(address: str) -> str | None:
    """What stops a TCP server from listening on ``address`` ("host:port"), as a short clause ("port 50100 is
    already in use on 127.0.0.1"), or None when a socket binds there now (the cause was elsewhere, e.g. TLS).
    Never raises."""
    host, port_text = split_address(address)
    try:
        port = int(port_text)
    except ValueError:
        return f"{port_text!r} is not a port number (the address must be HOST:PORT)"
    if not 0 <= port <= 65535:
        return f"port {port} is out of range (0..65535)"
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        return f"the host {host!r} is not known to this machine"
    family, kind, proto, _, sockaddr = infos[0]
    try:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(sockaddr)
    except OSError as exc:
        where = host or "every address"
        if exc.errno == errno.EADDRINUSE:
            return f"port {port} is already in use on {where} ({_user_of(port)})"
        if exc.errno == errno.EADDRNOTAVAIL:
            return f"{host} is not an address of this machine"
        if exc.errno == errno.EACCES:
            return f"port {port} needs privileges this process lacks (ports below 1024 do)"
        return exc.strerror or str(exc)
    return None


def _user_of(port: int) -> str:
    """Who may hold ``port``: a listening process, or, inside this machine's ephemeral range (Linux:
    ``/proc/sys/net/ipv4/ip_local_port_range``), also a connection using it as its local port."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            low, high = (int(x) for x in f.read().split()[:2])
    except (OSError, ValueError):
        return "another process listens there"
    if low <= port <= high:
        return (f"another process listens there, or a connection uses it as its own port (ports {low}-{high} are "
                f"this machine's ephemeral range, which outgoing connections take; should it happen again, a port "
                f"below {low} never clashes with them)")
    return "another process listens there"
