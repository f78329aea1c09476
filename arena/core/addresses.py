"""Which client an address belongs to, for the per-client shares of the Arena service and of the web pages."""

from __future__ import annotations

import ipaddress


def client_address(host: str) -> str:
    """The client of an IP address ``host``: an IPv4 address as it is; an IPv6 address as its /64 network (one /64
    is one client: a host gets many addresses of it), an IPv4-mapped one as its IPv4 address; anything that is no
    IP address as it is, cut to 64 characters."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)
