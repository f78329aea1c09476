"""``ArenaServer``: the referee process (the ``arena.v1.Arena`` service of ``arena.server.servicer``, health,
reflection, optional TLS and the embedded workers), started by `arena serve`."""

from __future__ import annotations

import asyncio
import logging
import resource
import secrets
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent import futures
from typing import Any, TypeVar

import grpc
import grpc.aio
import redis
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.core import limits
from arena.core.config import DEFAULTS
from arena.match.channels import BotDialer
from arena.server import auth
from arena.server.metrics import RpcMetricsInterceptor
from arena.server.servicer import ARENA_SERVICE, ArenaServicer, ServiceError
from arena.server.shares import ClientShares, HeavyReads, StreamShares
from arena.store import Store
from arena.store.base import connect
from arena.store.keys import ARENA_ID
from arena.store.redis_urls import redact_url
from arena.worker import loop as scheduler
from arena.worker.fleet import default_worker_name
from arena.worker.settings import WorkerSettings
from arena_sdk.guard import add_guarded_service
from arena_sdk.listen import bind_problem
from arena_sdk.pb import arena_pb2

log = logging.getLogger("arena.server.servicer")

# RPC threads: the bot-check classes (arena.server.admission) hold at most 13 while they wait on bots, which
# leaves the rest for every other call. A call takes one only once its request has come (grpc.aio receives it on
# the server's event loop): a client that opens calls and never sends their requests holds no thread.
RPC_THREADS = 32
RPC_STREAMS = 64  # calls under way at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS)
RPC_STREAM_WINDOW = 16 * 1024  # bytes of a call's request the referee takes before it reads them (HTTP/2 window)
RPC_CONNECTION_AGE_S = 600  # a connection is closed (GOAWAY) after this long, its calls given RPC_CONNECTION_GRACE_S
RPC_CONNECTION_GRACE_S = 60
# calls of one client admitted at once, from its method's start until its answer is sent (arena.server.shares), and
# how long its next calls wait for one of them to end before RESOURCE_EXHAUSTED
RPC_CLIENT_SHARE = RPC_THREADS // 4
RPC_WEB_SHARE = RPC_THREADS // 2  # the web app's (its calls carry the web key): its own limits share it out
RPC_CLIENT_WAIT_S = 10.0
RPC_CLIENT_STREAMS = 8  # answer streams (health Watch, reflection) of one client open at once
# The reads whose cost grows with what they answer (pages of up to 1,000 matches, a match record, standings, a
# ladder page): one at a time in the whole service, clients in turn (arena.server.shares.HeavyReads), so that they
# never hold the GIL the embedded workers need for long; calls that wait do so for at most RPC_CLIENT_WAIT_S.
HEAVY_READS = frozenset({"ListMatches", "GetMatch", "GetStandings", "GetLadder", "ListTournaments"})
HEAVY_READS_AT_ONCE = 1

T = TypeVar("T")


class ClientLeftFilter(logging.Filter):
    """grpc.aio logs an ERROR with a traceback for every call whose client went while its answer was being sent
    ("ExecuteBatchError raised in core by servicer method [...]"): a client that opens calls and drops them could
    fill the referee's log with them (a review: 5,156 tracebacks, 2.9 MB). This filter on grpc's logger keeps at
    most one line per ``every_s`` seconds for them, without the traceback, saying how many there were."""

    def __init__(self, every_s: float = 10.0) -> None:
        super().__init__()
        self.every_s = every_s
        self._next = 0.0
        self._count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.startswith("ExecuteBatchError raised in core by servicer method"):
            return True
        self._count += 1
        now = time.monotonic()
        if now < self._next:
            return False
        method = message.rpartition("[")[2].rstrip("]")
        record.msg, record.args, record.exc_info, record.exc_text = (
            f"{self._count} call(s) ended by their client while the answer was being sent (last: {method})",
            (), None, None)
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        self._count, self._next = 0, now + self.every_s
        return True


def quiet_clients_that_left() -> None:
    """Put one ``ClientLeftFilter`` on grpc's logger (once per process)."""
    grpc_log = logging.getLogger("grpc._cython.cygrpc")
    if not any(isinstance(f, ClientLeftFilter) for f in grpc_log.filters):
        grpc_log.addFilter(ClientLeftFilter())


class ServerLoop:
    """The event loop the referee's ``grpc.aio`` server runs on, in a daemon thread of its own ("arena-rpc-loop");
    the Arena methods themselves are plain functions run in the server's thread pool (``RPC_THREADS``).
    ``run(coroutine)`` runs a coroutine on it from another thread and returns its result (or raises its
    exception); ``close()`` stops the loop and joins the thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="arena-rpc-loop", daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10.0)
        if not self._thread.is_alive():
            self.loop.close()


def rpc_connections() -> int:
    """Connections the Arena service accepts at once: a quarter of this process's file descriptor limit, at most
    ``limits.RPC_CONNECTIONS``, at least 64."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return limits.RPC_CONNECTIONS
    return max(64, min(limits.RPC_CONNECTIONS, soft // 4))


class ArenaServer:
    """The referee process: the Arena gRPC service (+ health and reflection) and ``workers`` embedded workers.

    Args:
        listen: address to bind, "host:port"; port 0 picks a free port (see ``port`` after ``start``).
        redis_url: the arena's Redis, ``redis://host:port/db``.
        workers: embedded workers, each its own consumer; they share one thread and event loop
            (``scheduler.run_workers``). 0 for none: then run ``arena worker`` elsewhere.
        concurrency: matches each worker runs at once.
        verify_bots: RegisterBot and UpdateBot check the endpoint answers GetInfo and plays the game, and
            CreateTournament checks every bot of the tournament answers (see ``ArenaServicer``). Keep it on;
            off only in tests with endpoints where nothing listens.
        verify_timeout_s: how long each of those GetInfo calls may take, seconds; a failed registration check
            answers no sooner (``arena.server.admission``).
        drain_s: on ``stop``, how long running matches may take to finish before they are cancelled.
        visibility_timeout_s, heartbeat_s, max_deliveries, max_deferral_s, unhealthy_after, bot_recheck_s: of the
            embedded workers (see ``arena.worker.loop.run_worker``).
        health_check_s: seconds between two PINGs of Redis; the standard gRPC health service reports SERVING for
            "" and "arena.v1.Arena" while Redis answers, NOT_SERVING while it does not (every call of the Arena
            service needs Redis).
        admin_token: the token organiser calls need (``arena.server.auth``); None generates one, readable as
            ``admin_token`` (tests and embedding; ``arena serve`` passes the one it saved for the CLI).
        tls: (certificate chain, private key), PEM bytes: serve over TLS instead of plaintext (clients then need
            the CA that signed the certificate: ``arena --tls-ca FILE``).
        bot_ca: PEM bytes of the CA bundle that the certificates of bots at ``tls://HOST:PORT`` endpoints are
            verified against, by the registration checks and the embedded workers; None: the system's roots.
        bot_notes: who ``GetMatch`` gives the bots' notes to with a record: "owner" (a call signed with the owner
            token of a seat's bot gets that seat's notes; the web pages hold no token, so they show none), "public"
            (everyone: the match viewer shows them at their decisions) or "hidden" (nobody: the stored records
            keep them).
        web_key: the key the web app's calls carry to count as a client of their own (``arena.server.shares``);
            None generates one, readable as ``web_key`` (``arena serve --web`` gives it to its pages).
    Raises ``ValueError`` for workers < 0, concurrency < 1, verify_timeout_s <= 0, health_check_s <= 0, or a
    bad worker option.
    """

    def __init__(self, listen: str, redis_url: str, *, workers: int = DEFAULTS.workers,
                 concurrency: int = DEFAULTS.concurrency, verify_bots: bool = True,
                 verify_timeout_s: float = DEFAULTS.verify_timeout_s,
                 drain_s: float = DEFAULTS.drain_s, visibility_timeout_s: float = DEFAULTS.visibility_timeout_s,
                 heartbeat_s: float = DEFAULTS.heartbeat_s, max_deliveries: int = DEFAULTS.max_deliveries,
                 health_check_s: float = DEFAULTS.health_check_s, admin_token: str | None = None,
                 tls: tuple[bytes, bytes] | None = None, bot_ca: bytes | None = None,
                 bot_notes: str = "owner", web_key: str | None = None,
                 max_deferral_s: float = DEFAULTS.max_deferral_s, unhealthy_after: int = DEFAULTS.unhealthy_after,
                 bot_recheck_s: float = DEFAULTS.bot_recheck_s) -> None:
        if admin_token is not None:
            auth.check_token_text(admin_token)  # AdminTokenError is a ValueError
        self.admin_token = admin_token or auth.new_admin_token()
        self.web_key = web_key or secrets.token_hex(16)
        self.tls = tls
        self.bot_ca = bot_ca
        self.bot_notes = bot_notes
        if workers < 0:
            raise ValueError(f"workers must be 0 or more, got {workers}")
        if not verify_timeout_s > 0:
            raise ValueError(f"verify timeout must be more than 0 s, got {verify_timeout_s}")
        if not health_check_s > 0:
            raise ValueError(f"health check interval must be more than 0 s, got {health_check_s}")
        self.health_check_s = health_check_s
        self.worker_settings = WorkerSettings(  # ValueError for a bad worker option
            concurrency=concurrency, drain_s=drain_s, visibility_timeout_s=visibility_timeout_s,
            heartbeat_s=heartbeat_s, max_deliveries=max_deliveries, bot_ca=bot_ca, max_deferral_s=max_deferral_s,
            unhealthy_after=unhealthy_after, bot_recheck_s=bot_recheck_s)
        self.visibility_timeout_s = visibility_timeout_s
        self.heartbeat_s = heartbeat_s
        self.max_deliveries = max_deliveries
        self.listen = listen
        self.redis_url = redis_url
        self.workers = workers
        self.concurrency = concurrency
        self.verify_bots = verify_bots
        self.verify_timeout_s = verify_timeout_s
        self.drain_s = drain_s
        self.port = 0
        # each client's calls under way and answer streams open (a stopped server's calls give their places back)
        self.shares = ClientShares(RPC_CLIENT_SHARE, RPC_CLIENT_WAIT_S, web_key=self.web_key, web_limit=RPC_WEB_SHARE)
        self.streams = StreamShares(RPC_CLIENT_STREAMS)
        self.heavy = HeavyReads(HEAVY_READS, HEAVY_READS_AT_ONCE, RPC_CLIENT_WAIT_S, self.shares.client_of)
        self._server: grpc.aio.Server | None = None
        self._loop: ServerLoop | None = None
        self._pool: futures.ThreadPoolExecutor | None = None
        self._health: Any = None  # grpc_health's aio HealthServicer, on the server's loop
        self._store: Store | None = None
        self._stop_workers = threading.Event()
        self._stop_health = threading.Event()
        self._threads: list[threading.Thread] = []
        self._health_thread: threading.Thread | None = None

    def start(self) -> int:
        """Check Redis, bind, start serving and start the embedded workers. Returns the bound port.

        Raises ``ServiceError`` when Redis does not answer or the address cannot be bound."""
        if self._server is not None:
            return self.port
        store = Store.from_url(self.redis_url)
        try:
            store.ping()
            adopted = store.migrate_owners()  # bot names of per-name owners become owner accounts (idempotent)
        except redis.RedisError as exc:
            store.close()
            raise ServiceError(f"cannot reach Redis at {redact_url(self.redis_url)}: {exc}") from exc
        if adopted:
            log.info("%d bot names registered before owners were accounts now belong to owner accounts", adopted)
        servicer = ArenaServicer(store, self.redis_url, verify_bots=self.verify_bots,
                                 verify_timeout_s=self.verify_timeout_s, admin_token=self.admin_token,
                                 dialer=BotDialer(self.bot_ca), bot_notes=self.bot_notes)
        try:
            servicer.store.index_owners()  # owners registered before signed calls: findable by owner id
        except redis.RedisError as exc:
            store.close()
            raise ServiceError(f"cannot read the owners from Redis at {redact_url(self.redis_url)}: {exc}") from exc
        quiet_clients_that_left()
        loop = ServerLoop()
        pool = futures.ThreadPoolExecutor(max_workers=RPC_THREADS, thread_name_prefix="arena-rpc")
        try:
            server, health_servicer, port = loop.run(self._serve(servicer, pool))
        except BaseException:
            loop.close()
            pool.shutdown(wait=False)
            store.close()
            raise
        self._pool = pool
        self._server, self._loop, self._health, self._store, self.port = server, loop, health_servicer, store, port
        self._stop_health.clear()
        self._health_thread = threading.Thread(target=self._watch_redis, args=(health_servicer,),
                                               name="arena-health", daemon=True)
        self._health_thread.start()
        self._stop_workers.clear()
        if self.workers:
            # one thread and one event loop for every embedded worker (see scheduler.run_workers)
            base = default_worker_name()
            thread = threading.Thread(
                target=scheduler.run_workers, name="arena-workers", daemon=True,
                args=(self.redis_url, [f"{base}-w{i}" for i in range(self.workers)], self.worker_settings),
                kwargs={"stop": self._stop_workers},
            )
            thread.start()
            self._threads.append(thread)
        log.info("arena serving on port %d with %d embedded workers (Redis %s)", port, self.workers,
                 redact_url(self.redis_url))
        return port

    async def _serve(self, servicer: ArenaServicer,
                     pool: futures.ThreadPoolExecutor) -> tuple[grpc.aio.Server, Any, int]:
        """Build, bind and start the gRPC server on the running (the server's) loop: the Arena service of
        ``servicer`` (its methods run in ``pool``), health (SERVING) and reflection. Returns (server, health
        servicer, bound port). Raises ``ServiceError`` when the address cannot be bound."""
        # the Arena methods' requests are awaited on this loop, then the methods run in its default executor
        # (arena_sdk.guard._aio_unary): the server's pool
        asyncio.get_running_loop().set_default_executor(pool)
        # so_reuseport off: a second referee on a taken port must fail, not silently share it
        server = grpc.aio.server(
            migration_thread_pool=pool,
            options=[("grpc.so_reuseport", 0),
                     ("grpc.max_receive_message_length", limits.MAX_REQUEST_BYTES),
                     # no client takes every file descriptor of the process: connections beyond this are
                     # refused, one that has not finished its HTTP/2 handshake in 10 s is closed, one idle for 2
                     # minutes too (clients reconnect by themselves). There is no cap per address here: that is a
                     # proxy's or firewall's job (docs/operators/security.md)
                     ("grpc.max_allowed_incoming_connections", rpc_connections()),
                     ("grpc.server_handshake_timeout_ms", 10_000),
                     ("grpc.max_connection_idle_ms", 120_000),
                     # a call waiting for its request costs no thread but ~15 KB: at most RPC_STREAMS of them per
                     # connection, and no connection lives past RPC_CONNECTION_AGE_S (+ its grace; a client
                     # reconnects by itself), so held calls are bounded in number and in time
                     ("grpc.max_concurrent_streams", RPC_STREAMS),
                     # and a request still coming holds at most RPC_STREAM_WINDOW bytes until it is complete (64 KiB
                     # and more with BDP probing: 100 connections x 64 requests never finished took 513 MB, 123 MB
                     # with a 16 KiB window); a larger request takes a few more round trips
                     ("grpc.http2.lookahead_bytes", RPC_STREAM_WINDOW),
                     ("grpc.http2.bdp_probe", 0),
                     ("grpc.max_connection_age_ms", RPC_CONNECTION_AGE_S * 1000),
                     ("grpc.max_connection_age_grace_ms", RPC_CONNECTION_GRACE_S * 1000)],
            # grpc_server_* metrics (docs/metrics.md); each client's answer streams (health Watch, reflection)
            interceptors=[RpcMetricsInterceptor(), self.streams])
        add_guarded_service(server, arena_pb2.DESCRIPTOR.services_by_name["Arena"], servicer,
                            validate=limits.request_problem, authorize=servicer.authorize, admit=self._admit)
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection((ARENA_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
        try:
            if self.tls is not None:
                chain, key = self.tls
                port = server.add_secure_port(self.listen, grpc.ssl_server_credentials([(key, chain)]))
            else:
                port = server.add_insecure_port(self.listen)
        except RuntimeError as exc:
            port = 0
            reason = str(exc)
        else:
            reason = "gRPC refused the address"
        if not port:
            problem = bind_problem(self.listen)
            if problem is not None:
                reason = problem + ("; choose another with --listen HOST:PORT" if "in use" in problem else "")
            raise ServiceError(f"cannot listen on {self.listen}: {reason}")
        await server.start()
        for service in ("", ARENA_SERVICE):
            await health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
        return server, health_servicer, port

    def arena_id(self) -> str:
        """The arena's id (``GetArenaInfo``); the server must be started."""
        if self._store is None:
            raise ServiceError("the arena server is not started")
        return self._store.arena_id()

    def _watch_redis(self, servicer: Any) -> None:
        """PING Redis every ``health_check_s`` seconds until stopped; set the health status of "" and the Arena
        service to SERVING or NOT_SERVING accordingly (logged when it changes). An arena id that changed or went
        (the Redis emptied, or restarted without persistence) is logged as an error."""
        timeout = max(0.5, min(self.health_check_s, 5.0))
        client = connect(self.redis_url, {"socket_connect_timeout": timeout, "socket_timeout": timeout})
        serving = True
        try:  # the id this serve started with (made now when new): an emptied Redis has none, or another
            known_id = self._store.arena_id() if self._store is not None else None
        except (redis.RedisError, OSError):
            known_id = None  # seen at the first answer
        try:
            while not self._stop_health.wait(self.health_check_s):
                try:
                    up = bool(client.ping())
                    error = ""
                    now_id = client.get(ARENA_ID)
                except (redis.RedisError, OSError) as exc:
                    up, error, now_id = False, f"{type(exc).__name__}: {exc}", known_id
                if now_id != known_id and known_id is not None:
                    log.error("the arena's Redis at %s holds another arena now (its id %s is %s now): it was "
                              "emptied or restarted without persistence (what was stored before is gone from it), or "
                              "another Redis or an older copy answers there; clients that pinned the old arena id "
                              "refuse this one. Restart arena serve, and see docs/operators/redis.md (\"When Redis "
                              "loses its data\")",
                              redact_url(self.redis_url), known_id[:8], (now_id or "none")[:8])
                known_id = now_id  # an emptied Redis's new id (none until asked) is taken silently
                if up == serving:
                    continue
                serving = up
                status = health_pb2.HealthCheckResponse.SERVING if up else health_pb2.HealthCheckResponse.NOT_SERVING
                for service in ("", ARENA_SERVICE):
                    assert self._loop is not None
                    self._loop.run(servicer.set(service, status))
                if up:
                    log.warning("Redis at %s answers again: health SERVING", redact_url(self.redis_url))
                else:
                    log.warning("Redis at %s does not answer (%s): health NOT_SERVING", redact_url(self.redis_url),
                                error)
        finally:
            client.close()

    async def _admit(self, method_name: str, context: Any) -> Callable[[], None] | None:
        """A call's admission (``arena_sdk.guard.AsyncAdmit``): its place in its client's share, then, for a heavy
        read, its place among them (given back once its method has returned)."""
        await self.shares.admit(method_name, context)
        return await self.heavy.enter(method_name, context)

    def stop(self, grace: float = 5.0, *, join_workers: bool = True) -> None:
        """Stop serving (in-flight calls get ``grace`` seconds), then stop the embedded workers (running
        matches get ``drain_s`` seconds to finish; without ``join_workers`` they are told to stop and not waited
        for: a process stopping now, whose daemon threads end with it, the jobs of their matches left pending for
        another worker). Safe to call twice."""
        self._stop_health.set()
        if self._health_thread is not None:
            self._health_thread.join(timeout=15.0)
            self._health_thread = None
        if self._loop is not None:
            if self._health is not None:
                self._loop.run(self._health.enter_graceful_shutdown())
            if self._server is not None:
                self._loop.run(self._server.stop(grace))
            self._loop.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        self._stop_workers.set()
        for thread in self._threads if join_workers else ():
            thread.join(timeout=self.drain_s + self.worker_settings.block_ms / 1000 + 5)
            if thread.is_alive():
                log.warning("%s did not stop in time", thread.name)
        self._threads.clear()
        if self._store is not None:
            self._store.close()
        self._server = self._health = self._store = self._loop = self._pool = None

    def wait(self) -> None:
        """Block until the server stops (``stop`` from another thread, or the process is told to quit)."""
        server, loop = self._server, self._loop
        if server is not None and loop is not None:
            loop.run(server.wait_for_termination())

    def __enter__(self) -> ArenaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
