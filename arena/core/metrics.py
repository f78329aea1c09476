"""The Prometheus metrics of the arena's processes (``arena serve --metrics``, ``arena worker --metrics``): every
metric object, the bounded label values, the event loop's lag and the HTTP endpoint that exports them
(prometheus-client's exposition format). The metric names, labels and the figures to watch: ``docs/metrics.md``.

The metrics live in prometheus-client's default registry, one per process, beside its ``process_*`` and
``python_*`` collectors. A process without ``--metrics`` still counts (a few hundred nanoseconds per update) but
exports nothing.

Label values stay bounded, so a long-running arena never grows an unbounded number of series: ``game`` is a key
of the game registry, ``bot`` is a bot id kept by ``BOT_LABELS`` (the first ``MAX_BOT_LABELS`` distinct bot ids
seen by the process keep their own series; every later one is counted under ``"other"``), the fault kinds, forfeit
reasons, decision sources and job outcomes are closed sets, and the gRPC method labels only name methods the
server serves. No match id, tournament id, endpoint or secret is ever a label.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import REGISTRY, Counter, Gauge, Histogram, make_wsgi_app

from arena.core import limits
from arena_sdk import peers
from arena_sdk.games import GAMES
from arena_sdk.peers import PeerShare

MAX_BOT_LABELS = 200  # distinct bot ids with series of their own in one process; later ones are "other"
OTHER = "other"  # the label value of everything past a bound
LAG_TICK_S = 0.25  # the event loop's lag is sampled this often, seconds
METRICS_HOST = "127.0.0.1"  # the host ``--metrics PORT`` binds: loopback only, unless HOST:PORT says otherwise

# seconds; decisions are answered in a few ms by local bots and time out at the deadline (1 s by default)
DECISION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# seconds; a small match takes a fraction of a second, a long one against slow bots minutes
MATCH_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
RPC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class BoundedLabel:
    """A label's values, capped: the first ``limit`` distinct values given to ``value`` are kept as they are,
    every later distinct value becomes ``OTHER``. Thread-safe. The values it kept: ``kept``.

    Raises ``ValueError`` for ``limit`` < 1.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a bounded label keeps at least 1 value, got {limit}")
        self.limit = limit
        self._kept: set[str] = set()
        self._lock = threading.Lock()

    def value(self, raw: str) -> str:
        """``raw`` when it is kept (or there is room to keep it), else ``OTHER``."""
        if raw in self._kept:
            return raw
        with self._lock:
            if raw in self._kept or len(self._kept) < self.limit:
                self._kept.add(raw)
                return raw
        return OTHER

    @property
    def kept(self) -> frozenset[str]:
        return frozenset(self._kept)


BOT_LABELS = BoundedLabel(MAX_BOT_LABELS)


def game_label(game: str) -> str:
    """``game`` when the game registry knows it, else ``OTHER`` (a malformed job names any string)."""
    return game if game in GAMES else OTHER


def bot_label(bot: str) -> str:
    """The ``bot`` label of a bot id (``NAME@VERSION``): itself among the first ``MAX_BOT_LABELS``, else
    ``OTHER``."""
    return BOT_LABELS.value(bot)


# --- matches and decisions (the workers) ------------------------------------------------------------------------

MATCHES_STARTED = Counter("arena_matches_started", "Matches a worker of this process started to play.", ["game"])
MATCHES_PLAYING = Gauge("arena_matches_playing", "Matches a worker of this process is playing now.", ["game"])
MATCHES_FINISHED = Counter("arena_matches_finished", "Matches played here whose result was stored now (a match "
                           "played twice counts once: the second result is refused).", ["game"])
MATCHES_FAILED = Counter("arena_matches_failed", "Match jobs that failed for a platform reason: left pending for "
                         "a reclaim after an error (reason platform_error), or recorded as failed (reason failed: "
                         "delivered too often, or a config that can never run).", ["game", "reason"])
JOBS_SETTLED = Counter("arena_jobs_settled", "Claimed match jobs by what became of them (stored, duplicate, "
                       "cancelled, failed, deferred, dropped, pending).", ["game", "outcome"])
MATCH_DURATION = Histogram("arena_match_duration_seconds", "Wall time of a stored match, from its first StartMatch "
                           "to its last EndMatch, seconds.", ["game"], buckets=MATCH_BUCKETS)
DECISIONS = Counter("arena_decisions", "Decisions of stored matches, by seat's bot and source: bot (its answer), "
                    "default (after a fault), forfeit and time_limit (the default without a call).",
                    ["game", "bot", "source"])
DECISION_LATENCY = Histogram("arena_decision_latency_seconds", "Wall time of the charged Decide call of every "
                             "decision a bot was asked in a stored match, seconds.", ["game", "bot"],
                             buckets=DECISION_BUCKETS)
FAULTS = Counter("arena_faults", "Faults of stored matches (timeout, error, unreachable, illegal, malformed), by "
                 "the bot at fault.", ["game", "bot", "kind"])
FORFEITS = Counter("arena_forfeits", "Forfeits of stored matches (faults, timeouts, time_limit), by the bot that "
                   "forfeited.", ["game", "bot", "reason"])
JOBS_RECLAIMED = Counter("arena_jobs_reclaimed", "Match jobs this process took over from a worker taken for dead "
                         "(no refresh for the visibility timeout).", ["game"])
LOOP_LAG = Histogram("arena_event_loop_lag_seconds", f"How late the workers' event loop woke from a sleep of "
                     f"{LAG_TICK_S:g} s, seconds, sampled every {LAG_TICK_S:g} s.", buckets=LAG_BUCKETS)

# --- the queue, read from Redis at every scrape (arena.worker.metrics.QueueCollector) -----------------------------

QUEUE_LENGTH = "arena_queue_length"  # gauge per game: entries in the jobs stream, claimed or not
JOBS_PENDING = "arena_jobs_pending"  # gauge per game: jobs claimed by a worker, not yet settled
MATCHES_DEFERRED = "arena_matches_deferred"  # gauge per game: matches parked while a seat's bot is unhealthy
BOTS_UNHEALTHY = "arena_bots_unhealthy"  # gauge per game: bots marked unhealthy (their matches are deferred)
WORKERS_ALIVE = "arena_workers_alive"  # gauge: workers of the fleet whose heartbeat is recent
QUEUE_UP = "arena_queue_up"  # gauge: 1 when the last scrape could read the queue from Redis, else 0

# --- the Arena gRPC service (arena.server.metrics), named as the gRPC ecosystem's interceptors name them -----------

RPC_STARTED = Counter("grpc_server_started", "RPCs started on the server.",
                      ["grpc_type", "grpc_service", "grpc_method"])
RPC_HANDLED = Counter("grpc_server_handled", "RPCs completed on the server, by status code.",
                      ["grpc_type", "grpc_service", "grpc_method", "grpc_code"])
RPC_SECONDS = Histogram("grpc_server_handling_seconds", "Time the server took to answer an RPC, seconds.",
                        ["grpc_type", "grpc_service", "grpc_method"], buckets=RPC_BUCKETS)


async def watch_loop_lag(tick_s: float = LAG_TICK_S) -> None:
    """Observe ``LOOP_LAG`` until cancelled: sleep ``tick_s`` seconds at a time and record how late each wake-up
    was (a loop busy with CPU work or a blocking call wakes late, and so does every deadline it keeps)."""
    loop = asyncio.get_running_loop()
    while True:
        expected = loop.time() + tick_s
        await asyncio.sleep(tick_s)
        LOOP_LAG.observe(max(0.0, loop.time() - expected))


def parse_metrics_address(text: str) -> tuple[str, int]:
    """``"HOST:PORT"`` or ``"PORT"`` (host ``METRICS_HOST``, loopback) -> (host, port); ``[::1]:PORT`` for IPv6.
    Port 0 picks a free port. Raises ``ValueError`` naming the text when it is neither."""
    value = text.strip()
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = METRICS_HOST, value
    bracketed = host.startswith("[") and host.endswith("]")
    host = host[1:-1] if bracketed else host
    if (not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535 or any(c.isspace() for c in host)
            or (":" in host and not bracketed)):
        raise ValueError(f"{text!r} is not HOST:PORT or PORT (e.g. 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464 or "
                         "9464)")
    return host, int(port_text)


class _DeadlineReader:
    """A connection's read file whose reads must all end by ``deadline`` (``time.monotonic()`` s): each read's
    socket timeout is what is left, so a client sending its request a byte at a time cannot hold the connection
    past it (a ``TimeoutError`` ends the request)."""

    def __init__(self, raw: Any, connection: socket.socket, deadline: float) -> None:
        self.raw, self.connection, self.deadline = raw, connection, deadline

    def _left(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not come in time")
        self.connection.settimeout(left)

    def readline(self, size: int = -1) -> bytes:
        self._left()
        line: bytes = self.raw.readline(size)
        return line

    def read(self, size: int = -1) -> bytes:
        self._left()
        data: bytes = self.raw.read(size)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class _QuietHandler(WSGIRequestHandler):
    """A metrics request: no log line per request; its request line and headers must all come within
    ``limits.METRICS_READ_S`` of the connection's start (a silent or dripping client holds no thread for long)."""

    timeout = limits.METRICS_READ_S

    def setup(self) -> None:
        super().setup()
        self.rfile = _DeadlineReader(self.rfile, self.connection,  # type: ignore[assignment]
                                     time.monotonic() + limits.METRICS_READ_S)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


class _BoundedServer(ThreadingMixIn, WSGIServer):
    """prometheus-client's threading WSGI server, serving at most ``limits.METRICS_CONNECTIONS`` connections at
    once and ``limits.METRICS_CONNECTIONS_PER_CLIENT`` from one peer (``arena_sdk.peers.client_address``: every
    loopback address is one): one more is closed as soon as it is accepted, so no client can take the process's
    threads and file descriptors (the referee's gRPC service and web pages share them), nor, from one peer, the
    slots of a Prometheus elsewhere. A connection that ends badly (timed out, reset) is dropped without a traceback."""

    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.slots = threading.BoundedSemaphore(limits.METRICS_CONNECTIONS)
        self.by_client = PeerShare(limits.METRICS_CONNECTIONS_PER_CLIENT)
        super().__init__(*args, **kwargs)

    def _take(self, client: str) -> bool:
        if not self.by_client.take(client):
            return False
        if not self.slots.acquire(blocking=False):
            self.by_client.leave(client)
            return False
        return True

    def _give_back(self, client: str) -> None:
        self.by_client.leave(client)
        self.slots.release()

    def process_request(self, request: Any, client_address: Any) -> None:
        client = peers.client_address(str(client_address[0]))
        if not self._take(client):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._give_back(client)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._give_back(peers.client_address(str(client_address[0])))

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out or went away: nothing for the operator's log


class MetricsEndpoint:
    """The HTTP endpoint of this process's metrics (prometheus-client's WSGI app on a bounded threading server, in
    a daemon thread: at most ``limits.METRICS_CONNECTIONS`` connections at once, ``METRICS_CONNECTIONS_PER_CLIENT``
    from one address, each closed when its whole request has not come within ``limits.METRICS_READ_S``), serving
    the exposition format at ``/metrics`` (and every other path).

    Args: address: ``HOST:PORT`` or ``PORT`` (``parse_metrics_address``).
    ``start()`` binds and returns the bound port; raises ``ValueError`` for a bad address and ``OSError`` when
    the address cannot be bound.
    """

    def __init__(self, address: str) -> None:
        self.host, self.requested_port = parse_metrics_address(address)
        self.port = 0
        self._server: Any = None

    def start(self) -> int:
        family = socket.getaddrinfo(self.host, self.requested_port, type=socket.SOCK_STREAM,
                                    flags=socket.AI_PASSIVE)[0][0]  # as prometheus-client picks it
        server_cls = type("MetricsServer", (_BoundedServer,), {"address_family": family})
        server: _BoundedServer = make_server(self.host, self.requested_port, make_wsgi_app(REGISTRY), server_cls,
                                             handler_class=_QuietHandler)
        threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
        self._server = server
        self.port = int(server.server_port)
        return self.port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

