"""The referee process's gRPC server: the ``arena.v1.Arena`` service, health, reflection and embedded workers.

The servicer is thin (STYLE.md habit 5): it validates requests, delegates to ``arena.store``,
``arena.tournaments`` and ``arena.scheduler``, and reports errors as canonical status codes with a message a
person can act on: INVALID_ARGUMENT (bad input), NOT_FOUND (unknown bot or tournament), FAILED_PRECONDITION (a
bot endpoint that does not answer or does not play the game), UNAVAILABLE (Redis unreachable).
"""

from __future__ import annotations

import functools
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable
from concurrent import futures
from typing import Any, TypeVar

import grpc
import redis
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena import scheduler
from arena.config import DEFAULTS
from arena.redis_server import redact_url
from arena.store import BotEntry, Store, TournamentInfo
from arena.tournaments import (
    BOT_NAME_RE,
    TOURNAMENT_ID_RE,
    TournamentError,
    round_robin,
    validate_round_robin,
)
from arena_sdk.games import GAMES
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2, bot_pb2_grpc
from arena_sdk.wire import config_from_dict, config_from_proto, config_to_dict, config_to_proto

log = logging.getLogger(__name__)

ARENA_SERVICE = arena_pb2.DESCRIPTOR.services_by_name["Arena"].full_name  # "arena.v1.Arena"
ENDPOINT_RE = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$")
VERIFY_TIMEOUT_S = 3.0
MAX_SEED_CHOICE = 2**31 - 1  # server-chosen seeds stay short enough to type back

_F = TypeVar("_F", bound=Callable[..., Any])


class ServiceError(RuntimeError):
    """The Arena server cannot start: Redis unreachable, or the listen address cannot be bound."""


def _known_games() -> str:
    return ", ".join(sorted(GAMES))


def _rpc(method: _F) -> _F:
    """Turn Redis failures into UNAVAILABLE with the Redis URL in the message."""

    @functools.wraps(method)
    def wrapper(self: "ArenaServicer", request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return method(self, request, context)
        except redis.RedisError as exc:
            log.warning("%s: Redis error: %s", method.__name__, exc)
            context.abort(grpc.StatusCode.UNAVAILABLE,
                          f"the arena's Redis at {redact_url(self.redis_url)} cannot be used: {exc}; "
                          f"is it running?")

    return wrapper  # type: ignore[return-value]


def _check_game(game: str, context: grpc.ServicerContext) -> None:
    if not game:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"game is required; known games: {_known_games()}")
    if game not in GAMES:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown game {game!r}; known games: {_known_games()}")


def _bot_message(bot: BotEntry) -> arena_pb2.BotRecord:
    return arena_pb2.BotRecord(name=bot.name, endpoint=bot.endpoint, game=bot.game,
                               registered_at=bot.registered_at)


def tournament_message(info: TournamentInfo) -> arena_pb2.Tournament:
    """The ``Tournament`` message of a stored tournament."""
    return arena_pb2.Tournament(
        id=info.id, game=info.game, bots=list(info.bots), seats_per_match=info.seats_per_match,
        rounds=info.rounds, seed=info.seed, matches_total=info.matches_total, matches_done=info.matches_done,
        faults=info.faults, state=info.state, created_at=info.created_at,
        config=config_to_proto(info.game, config_from_dict(info.game, info.config)), deadline_ms=info.deadline_ms,
    )


def verify_endpoint(endpoint: str, game: str, timeout_s: float = VERIFY_TIMEOUT_S) -> str | None:
    """Ask the bot at ``endpoint`` for its ``BotInfo``; ``None`` when it answers and plays ``game``, else the
    reason it cannot be registered (one sentence)."""
    with grpc.insecure_channel(endpoint) as channel:
        try:
            info = bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=timeout_s)
        except grpc.RpcError as exc:
            return (f"the bot at {endpoint} did not answer GetInfo within {timeout_s:.0f} s "
                    f"({exc.code().name}: {exc.details()}); start the bot first, or check host and port")
    if game not in info.games:
        return f"the bot at {endpoint} ({info.name}) plays {list(info.games)}, not {game!r}"
    return None


class ArenaServicer(arena_pb2_grpc.ArenaServicer):
    """The Arena service: bots, tournaments and the ladder, stored in Redis through ``Store``.

    Args:
        store: the arena's store. redis_url: for error messages.
        verify_bots: when True, RegisterBot calls the bot's GetInfo and refuses an endpoint that does not answer
            or does not play the game (FAILED_PRECONDITION).
    """

    def __init__(self, store: Store, redis_url: str, *, verify_bots: bool = True) -> None:
        self.store = store
        self.redis_url = redis_url
        self.verify_bots = verify_bots

    @_rpc
    def RegisterBot(self, request: arena_pb2.RegisterBotRequest,
                    context: grpc.ServicerContext) -> arena_pb2.BotRecord:
        _check_game(request.game, context)
        if not BOT_NAME_RE.match(request.name):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"bad bot name {request.name!r}: use 1..64 characters of A-Z a-z 0-9 _ . -")
        m = ENDPOINT_RE.match(request.endpoint)
        if not m or not 1 <= int(m.group(2)) <= 65535:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"bad endpoint {request.endpoint!r}: expected HOST:PORT with a port 1..65535, "
                          f"e.g. 127.0.0.1:50061")
        if self.verify_bots:
            problem = verify_endpoint(request.endpoint, request.game)
            if problem is not None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, problem)
        bot = self.store.register_bot(request.game, request.name, request.endpoint)
        log.info("registered bot %s (%s) at %s", bot.name, bot.game, bot.endpoint)
        return _bot_message(bot)

    @_rpc
    def ListBots(self, request: arena_pb2.ListBotsRequest,
                 context: grpc.ServicerContext) -> arena_pb2.ListBotsResponse:
        if request.game:
            _check_game(request.game, context)
        return arena_pb2.ListBotsResponse(bots=[_bot_message(b) for b in self.store.list_bots(request.game)])

    @_rpc
    def CreateTournament(self, request: arena_pb2.CreateTournamentRequest,
                         context: grpc.ServicerContext) -> arena_pb2.Tournament:
        game = request.game
        _check_game(game, context)
        bots = list(request.bots)
        if not bots:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a tournament needs the names of at least 2 bots")
        seats = request.seats_per_match or min(len(bots), DEFAULTS.seats_per_match)
        rounds = request.rounds or DEFAULTS.rounds
        deadline_ms = request.deadline_ms or DEFAULTS.deadline_ms
        seed = request.seed or secrets.randbelow(MAX_SEED_CHOICE) + 1
        try:
            config = config_from_proto(game, request.config if request.HasField("config") else None)
            validate_round_robin(game, bots, seats, rounds, seed, deadline_ms)
        except (TournamentError, ValueError) as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        unknown = [b for b in bots if self.store.get_bot(game, b) is None]
        if unknown:
            context.abort(grpc.StatusCode.NOT_FOUND,
                          f"not registered for {game}: {', '.join(unknown)}; register them first "
                          f"(arena bot register NAME HOST:PORT)")
        config_json = config_to_dict(game, config)
        tournament_id = self.store.next_tournament_id()
        try:
            specs = round_robin(tournament_id, game, bots, seats, rounds, seed, config_json, deadline_ms)
        except TournamentError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        info = TournamentInfo(
            id=tournament_id, game=game, bots=tuple(bots), seats_per_match=seats, rounds=rounds, seed=seed,
            config=config_json, deadline_ms=deadline_ms, matches_total=len(specs), created_at=time.time(),
        )
        self.store.create_tournament(info)
        scheduler.enqueue_matches(self.store, specs)
        log.info("tournament %s: %d matches of %s queued (%d bots, %d seats, %d rounds, seed %d)",
                 tournament_id, len(specs), game, len(bots), seats, rounds, seed)
        return tournament_message(info)

    @_rpc
    def GetTournament(self, request: arena_pb2.GetTournamentRequest,
                      context: grpc.ServicerContext) -> arena_pb2.Tournament:
        if not TOURNAMENT_ID_RE.match(request.id):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"bad tournament id {request.id!r}: ids look like t1, t2, ...")
        info = self.store.get_tournament(request.id)
        if info is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no tournament {request.id} in this arena")
        return tournament_message(info)

    @_rpc
    def GetLadder(self, request: arena_pb2.GetLadderRequest, context: grpc.ServicerContext) -> arena_pb2.Ladder:
        _check_game(request.game, context)
        entries = [
            arena_pb2.LadderEntry(rank=e.rank, bot=e.bot, rating=e.rating, matches=e.matches, wins=e.wins,
                                  mean_score=e.mean_score)
            for e in self.store.ladder(request.game)
        ]
        return arena_pb2.Ladder(game=request.game, entries=entries)


class ArenaServer:
    """The referee process: the Arena gRPC service (+ health and reflection) and ``workers`` embedded workers.

    Args:
        listen: address to bind, "host:port"; port 0 picks a free port (see ``port`` after ``start``).
        redis_url: the arena's Redis, ``redis://host:port/db``.
        workers: embedded worker threads (0 for none: then run ``arena worker`` elsewhere).
        concurrency: matches each worker runs at once.
        verify_bots: RegisterBot checks the endpoint answers GetInfo and plays the game.
        drain_s: on ``stop``, how long running matches may take to finish before they are cancelled.
    """

    def __init__(self, listen: str, redis_url: str, *, workers: int = DEFAULTS.workers,
                 concurrency: int = DEFAULTS.concurrency, verify_bots: bool = True,
                 drain_s: float = scheduler.DRAIN_S) -> None:
        if workers < 0:
            raise ValueError(f"workers must be 0 or more, got {workers}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.listen = listen
        self.redis_url = redis_url
        self.workers = workers
        self.concurrency = concurrency
        self.verify_bots = verify_bots
        self.drain_s = drain_s
        self.port = 0
        self._server: grpc.Server | None = None
        self._health: health.HealthServicer | None = None
        self._store: Store | None = None
        self._stop_workers = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> int:
        """Check Redis, bind, start serving and start the embedded workers. Returns the bound port.

        Raises ``ServiceError`` when Redis does not answer or the address cannot be bound."""
        if self._server is not None:
            return self.port
        store = Store.from_url(self.redis_url)
        try:
            store.ping()
        except redis.RedisError as exc:
            store.close()
            raise ServiceError(f"cannot reach Redis at {redact_url(self.redis_url)}: {exc}") from exc
        # so_reuseport off: a second referee on a taken port must fail, not silently share it
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=16, thread_name_prefix="arena-rpc"),
                             options=[("grpc.so_reuseport", 0)])
        arena_pb2_grpc.add_ArenaServicer_to_server(
            ArenaServicer(store, self.redis_url, verify_bots=self.verify_bots), server)
        health_servicer = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection((ARENA_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
        try:
            port = server.add_insecure_port(self.listen)
        except RuntimeError as exc:
            port = 0
            reason = str(exc)
        else:
            reason = "is the port in use?"
        if not port:
            store.close()
            raise ServiceError(f"cannot listen on {self.listen}: {reason}")
        server.start()
        for service in ("", ARENA_SERVICE):
            health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
        self._server, self._health, self._store, self.port = server, health_servicer, store, port
        self._stop_workers.clear()
        for i in range(self.workers):
            thread = threading.Thread(
                target=scheduler.run_worker, name=f"arena-worker-{i}", daemon=True,
                kwargs={"redis_url": self.redis_url, "concurrency": self.concurrency,
                        "name": f"{scheduler.default_worker_name()}-w{i}", "stop": self._stop_workers,
                        "drain_s": self.drain_s},
            )
            thread.start()
            self._threads.append(thread)
        log.info("arena serving on port %d with %d embedded workers (Redis %s)", port, self.workers,
                 redact_url(self.redis_url))
        return port

    def stop(self, grace: float = 5.0) -> None:
        """Stop serving (in-flight calls get ``grace`` seconds), then stop the embedded workers (running
        matches get ``drain_s`` seconds to finish). Safe to call twice."""
        if self._health is not None:
            self._health.enter_graceful_shutdown()
        if self._server is not None:
            self._server.stop(grace).wait()
        self._stop_workers.set()
        for thread in self._threads:
            thread.join(timeout=self.drain_s + scheduler.BLOCK_MS / 1000 + 5)
            if thread.is_alive():
                log.warning("%s did not stop in time", thread.name)
        self._threads.clear()
        if self._store is not None:
            self._store.close()
        self._server = self._health = self._store = None

    def wait(self) -> None:
        """Block until the server stops (``stop`` from another thread, or the process is told to quit)."""
        if self._server is not None:
            self._server.wait_for_termination()

    def __enter__(self) -> "ArenaServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
