"""Run the web app under uvicorn in a thread of its own: ``WebServer(options, listen).start()`` -> the port,
``stop()``. Used by ``arena web`` and ``arena serve --web``; tests and tools run it the same way."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from arena.web.app import WebOptions, create_app
from arena.web.connections import ConnectionCounts, ConnectionLimits, guarded_http, quiet_accept_errors

START_TIMEOUT_S = 30.0


class WebServer:
    """The pages of ``options`` served on ``listen`` ("host:port"; port 0: a free one, see ``start``'s answer),
    holding at most the connections of ``connections`` (``arena.web.connections``; None: the defaults).
    ``trusted_proxies``: the addresses (IP addresses or networks) whose ``X-Forwarded-For`` header names the client
    (uvicorn's proxy headers); none: the header is ignored and every request is its peer's."""

    def __init__(self, options: WebOptions, listen: str, app: Any = None,
                 connections: ConnectionLimits | None = None, trusted_proxies: tuple[str, ...] = ()) -> None:
        self.options = options
        self.trusted_proxies = trusted_proxies
        self.listen = listen
        self.app = app if app is not None else create_app(options)
        self.connection_limits = connections if connections is not None else ConnectionLimits()
        self.connections: ConnectionCounts | None = None  # the open connections, once started
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def start(self) -> int:
        """Bind ``listen`` and serve in a daemon thread; answers the port. Raises ``OSError`` when the address
        cannot be bound, ``RuntimeError`` when uvicorn does not start within ``START_TIMEOUT_S`` seconds."""
        host, _, port = self.listen.rpartition(":")
        host = host.strip("[]")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without
        # it every answer written in two parts (headers, body) waits out the client's delayed ACK (40 ms).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, int(port)))
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        protocol, self.connections = guarded_http(self.connection_limits)
        quiet_accept_errors()
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=2, http=protocol,
                                proxy_headers=bool(self.trusted_proxies),
                                forwarded_allow_ips=list(self.trusted_proxies) or None)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="arena-web", daemon=True)
        self._thread.start()
        end = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > end:
                raise RuntimeError(f"the web server on {self.listen} did not start")
            time.sleep(0.02)
        return self.port

    def url(self) -> str:
        host = self.listen.rpartition(":")[0]
        if host in ("0.0.0.0", "[::]", ""):
            host = "127.0.0.1"
        return f"http://{host}:{self.port}/"

    def stop(self) -> None:
        """Stop serving (open answers get 2 s to finish) and wait for the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None
