"""`arena web` (and `arena serve --web`) on a port another process holds: one line saying so and what to do, as
the gRPC port's error does, not the bare errno."""

from __future__ import annotations

import socket

from click.testing import CliRunner

from arena.cli import cli


def test_a_taken_web_port_says_so_and_what_to_do() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["web", "--listen", f"127.0.0.1:{port}", "--server", "127.0.0.1:9"])
    assert result.exit_code == 1, result.output
    assert f"cannot serve the web pages on 127.0.0.1:{port}: port {port} is already in use" in result.stderr, \
        result.stderr
    assert "choose another HOST:PORT (port 0 picks a free one)" in result.stderr and "Errno" not in result.stderr
