"""The web server's connection limits (``arena.web.connections``), on a real uvicorn over loopback: one peer address
holds at most its share of open connections, all peers at most the total, and a connection that sends nothing is
closed; asyncio's accept errors are held to one line per period."""

from __future__ import annotations

import http.client
import logging
import socket
import time

import pytest

from arena.web.app import WebOptions
from arena.web.connections import ConnectionLimits, _AcceptErrorFilter
from arena.web.serving import WebServer


def open_idle(port: int, source: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    return sock


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    """Whether the server closes or resets ``sock`` within ``within_s`` seconds (it never answers an idle one)."""
    sock.settimeout(within_s)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def healthz(port: int, source: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=(source, 0))
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.fixture()
def server() -> WebServer:
    web = WebServer(WebOptions(server="127.0.0.1:1"), "127.0.0.1:0",
                    connections=ConnectionLimits(per_client=3, total=5, first_request_s=1.0))
    web.start()
    yield web
    web.stop()


def test_one_address_holds_its_share_and_others_are_served(server: WebServer, outside_address: str) -> None:
    held = [open_idle(server.port, "127.0.0.1") for _ in range(3)]
    try:
        time.sleep(0.2)
        extra = open_idle(server.port, "127.0.0.1")
        assert closed_by_server(extra, 2.0)  # reset at once, no answer
        extra.close()
        alias = open_idle(server.port, "127.0.0.2")  # every loopback address is one client: no more room
        assert closed_by_server(alias, 2.0)
        alias.close()
        assert healthz(server.port, outside_address) == 200
        assert server.connections is not None and server.connections.refused >= 1
    finally:
        for sock in held:
            sock.close()


def test_the_total_is_held_across_addresses(server: WebServer, outside_address: str) -> None:
    # the total of 5: 3 from loopback (its share), 2 from the machine's network address
    held = [open_idle(server.port, source) for source in ["127.0.0.1"] * 3 + [outside_address] * 2]
    try:
        time.sleep(0.2)
        late = open_idle(server.port, outside_address)  # within its address's share, over the total
        assert closed_by_server(late, 2.0)
        late.close()
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.2)
    assert healthz(server.port, outside_address) == 200  # freed: served again


def test_a_silent_connection_is_closed_and_its_place_given_back(server: WebServer) -> None:
    held = [open_idle(server.port, "127.0.0.1") for _ in range(3)]
    try:
        assert all(closed_by_server(sock, 5.0) for sock in held)  # first_request_s = 1
        time.sleep(0.2)
        assert healthz(server.port, "127.0.0.1") == 200
        counts = server.connections
        assert counts is not None
        end = time.monotonic() + 5
        while counts.total and time.monotonic() < end:  # the last request's connection is being closed
            time.sleep(0.05)
        assert counts.total == 0 and not counts.open
    finally:
        for sock in held:
            sock.close()


def test_accept_errors_are_one_line_per_period() -> None:
    guard = _AcceptErrorFilter()

    def record() -> logging.LogRecord:
        try:
            raise OSError(24, "Too many open files")
        except OSError:
            import sys
            return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "socket.accept() out of system resource",
                                     (), sys.exc_info())

    first = record()
    assert guard.filter(first) and first.exc_info is None and "no file descriptor left" in first.getMessage()
    assert [guard.filter(record()) for _ in range(50)] == [False] * 50
    other = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "Task exception was never retrieved", (), None)
    assert guard.filter(other)
    guard.last -= 11  # the period has passed
    again = record()
    assert guard.filter(again) and "(50 more such errors" in again.getMessage()


def test_limits_below_one_are_refused() -> None:
    with pytest.raises(ValueError):
        ConnectionLimits(per_client=0)


def test_a_request_whose_headers_never_finish_is_closed(server: WebServer) -> None:
    slow = open_idle(server.port, "127.0.0.1")
    try:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and the rest never comes
        started = time.monotonic()
        assert closed_by_server(slow, 5.0)  # first_request_s = 1
        assert time.monotonic() - started < 4.0
    finally:
        slow.close()


def test_a_kept_alive_connection_serves_request_after_request(server: WebServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        for _ in range(3):
            connection.request("GET", "/healthz")
            assert connection.getresponse().read() == b"ok"
            time.sleep(0.3)  # well within the time a request has
    finally:
        connection.close()


def test_a_request_dripping_a_body_the_pages_never_read_is_closed(server: WebServer) -> None:
    drip = open_idle(server.port, "127.0.0.1")
    try:
        drip.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n")
        drip.settimeout(0.5)
        closed = False
        for _ in range(12):  # 10 bytes every half second, for 6 s: first_request_s is 1
            try:
                drip.sendall(b"a" * 10)
                while drip.recv(4096):  # the answer (the page reads no body), then the close
                    pass
                closed = True
                break
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            except TimeoutError:
                continue
        assert closed
    finally:
        drip.close()
