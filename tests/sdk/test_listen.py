"""``arena_sdk.listen.bind_problem``: the cause of an address a server cannot listen on, found with real sockets."""

from __future__ import annotations

import socket

import pytest

from arena_sdk.listen import bind_problem, split_address


def test_a_port_someone_listens_on_is_named_in_use() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        problem = bind_problem(f"127.0.0.1:{port}")
    assert problem is not None and f"port {port} is already in use on 127.0.0.1" in problem


def test_a_port_held_by_a_connection_says_so_in_the_ephemeral_range() -> None:
    """A connection's own port (an ephemeral one, not a listener) also makes a port "in use": the message no longer
    says only that a process listens there."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as client:
            port = client.getsockname()[1]  # the client's ephemeral port: no process listens on it
            problem = bind_problem(f"127.0.0.1:{port}")
    assert problem is not None and f"port {port} is already in use on 127.0.0.1" in problem
    assert "a connection uses it as its own port" in problem and "ephemeral range" in problem


def test_a_free_port_has_no_problem() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert bind_problem(f"127.0.0.1:{port}") is None


@pytest.mark.parametrize(("address", "expected"), [
    ("127.0.0.1:http", "'http' is not a port number"),
    ("127.0.0.1:70000", "port 70000 is out of range"),
    ("no-such-host.invalid:5000", "the host 'no-such-host.invalid' is not known"),
    ("192.0.2.1:5000", "192.0.2.1 is not an address of this machine"),  # TEST-NET-1: never local
])
def test_each_cause_is_named(address: str, expected: str) -> None:
    problem = bind_problem(address)
    assert problem is not None and expected in problem


def test_addresses_split_with_v6_brackets_and_an_empty_host() -> None:
    assert split_address("[::1]:50100") == ("::1", "50100")
    assert split_address(":50100") == ("", "50100")
    assert split_address("0.0.0.0:1") == ("0.0.0.0", "1")
