"""Serve a bot class as an ``arena.v1.Bot`` gRPC server: ``create_server(MyBot, "127.0.0.1:0")`` for tests and
embedding; ``serve(MyBot)`` (``arena_sdk.bot_process``: the command line) for a bot's ``__main__``.

The servicer keeps one bot object per (match id, seat, seat key), created by ``StartMatch`` (a new one at every
StartMatch: the referee sends one per seat and play, and a match played again after a platform crash keeps its id)
or lazily by the first ``Decide`` of a match it never saw start (a restarted bot carries on: every request holds the
seat's complete current state). It also keeps each (match, seat)'s public history
(``StartMatchResponse.keeps_history``): the referee then sends only the history since the seat's last answered
decision, and the servicer gives the bot the complete view (``Game.view_from_message``), equal to the engine's
``observe``; a bot restarted mid-match gets the history from where the request's starts (the game's view says
where). Calls run on a thread pool, so concurrent matches are served in parallel; calls to one bot object are
serialised by a per-object lock, so an author never needs locks of their own. The seat key
(``StartMatchRequest.seat_key``, in every request of the seat's play) is known to the referee and this seat only: a
call from anyone else naming the same match and seat (a tablemate reads both from ``player_names``) reaches a bot
object of its own and can neither read, reset, end nor corrupt the referee's (its history, its bot's memory).
Referees that send no key (0) share one object per (match id, seat).

Both paths of the protocol are served with the same bot classes: the unary calls (StartMatch, Decide, EndMatch)
and the match stream (PlayMatch: one stream per seat and match, each request answered in order on the stream's
thread, a failed request answered with a ``StepFailure`` carrying the status the unary call would have had).
``GetInfo`` says ``serves_match_stream``. The thread pool (``max_workers``, default ``DEFAULT_MAX_WORKERS``) holds
one thread per unary call in progress and per open stream, so hundreds of concurrent matches are served at once;
a stream holds its thread from the moment it opens, so one whose first message is late (``guard.FIRST_MESSAGE_S``),
or that the secret check refuses and that sends nothing (``guard.REFUSED_WAIT_S``; no more than
``guard.REFUSED_WAITING`` refused streams wait at once, the others are refused at once), is cancelled: silent streams
opened by a stranger never take the threads the referee's calls need.

Errors leave as canonical gRPC status codes with a message a person can act on:

* ``INVALID_ARGUMENT``: a malformed request (empty match id, a game the bot does not play, decision kind
  unspecified or not matching the view, missing or inconsistent view).
* ``INTERNAL``: the author's method raised (the message carries the exception) or returned an answer that is not a
  legal answer of the view (the message says what it returned).
* ``UNAUTHENTICATED`` / ``PERMISSION_DENIED``: the bot was started with a secret (``--secret``, env
  ``ARENA_BOT_SECRET``) and a StartMatch, Decide or EndMatch call came without the ``arena-bot-secret`` call
  metadata, or with another value. The arena's referee sends the secret its owner gave at registration
  (``arena bot register NAME HOST:PORT --bot-secret S``), so only the arena can drive the bot; GetInfo stays
  open (registration and health checks use it).

TLS: given a certificate chain and its key (``--tls-cert/--tls-key`` PEM files, env ``ARENA_BOT_TLS_CERT`` /
``ARENA_BOT_TLS_KEY``), the bot serves TLS only, and is registered as ``tls://HOST:PORT`` (the arena verifies the
certificate against the CA bundle its operator gives it, else the system's roots; the certificate must name the
host the arena dials: a DNS name, or the IP address in its subjectAltName). A plaintext client gets no answer.

A request whose bytes are not a valid request message gets INVALID_ARGUMENT without a traceback in the log
(``arena_sdk.guard``), and requests larger than ``MAX_REQUEST_BYTES`` get RESOURCE_EXHAUSTED from gRPC.

The server names no game: the game of a request is the field set in its oneof (``DecideRequest.view``), looked
up in the game registry, whose entry decodes the view, asks the bot and encodes the answer.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc

from . import wire
from ._version import SDK_VERSION
from .bot import BOT_NAME_RE, Bot, BotDefinitionError, IllegalAnswerError, MatchInfo, MatchResult
from .games import GAMES, get_game
from .games.base import RulesError
from .guard import (
    BOT_SECRET_METADATA,
    add_guarded_service,
    metadata_value,
    secret_matches,
    secret_problem,
)
from .listen import bind_problem
from .match_table import Entry, Key, MatchTable
from .pb import bot_pb2, bot_pb2_grpc
from .peers import PeerShare
from .rng import MAX_SEAT_SEED
from .tracebacks import describe_exception

log = logging.getLogger("arena_sdk")

DEFAULT_HOST = "127.0.0.1"
# Threads serving calls: one per unary call being answered and one per open match stream (a seat of a running
# match), made only when needed. A worker may run hundreds of matches with this bot in every seat; when every
# thread is busy, a call waits for one, and that wait counts against the call's deadline.
DEFAULT_MAX_WORKERS = 4096
PEER_SHARE_DIVISOR = 2  # one client address holds at most max_workers / this at once with calls without the secret
MAX_FAILURE_CHARS = 1024  # StepFailure.message at most
MAX_REQUEST_BYTES = 1024 * 1024  # the server's max receive size: a Decide request is a few KiB
OPEN_METHODS = frozenset({"GetInfo"})  # answered without the bot secret

def _bot_classes() -> str:
    """The bot base classes of the registered games, for error messages ("XBot or YBot")."""
    return " or ".join(g.bot_class.__name__ for g in GAMES.values())


def cls_plays_a_game(bot_cls: type[Bot]) -> bool:
    """True when ``bot_cls`` declares at least one game (it subclasses a game's bot class)."""
    return bool(bot_cls.games)


class ServeError(RuntimeError):
    """The server could not start (e.g. the address is in use or invalid); the message names the address."""


class _Abort(Exception):
    """Internal: a status code and message to send back."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(message: str) -> _Abort:
    return _Abort(grpc.StatusCode.INVALID_ARGUMENT, message)


def _handles_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: BotServicer, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return method(self, request, context)
        except _Abort as exc:
            context.abort(exc.code, exc.message)

    return wrapper


class BotServicer(bot_pb2_grpc.BotServicer):
    """The ``arena.v1.Bot`` service for one bot class.

    ``factory()`` makes a new bot object (default: the class itself, called without arguments). ``name``
    overrides the class's ``name`` in ``GetInfo`` (to run two instances under different names). Thread-safe.
    Raises ``BotDefinitionError`` when ``bot_cls`` is not a subclass of a registered game's bot class, plays an
    unknown game, or the name is invalid.
    """

    def __init__(
        self, bot_cls: type[Bot], factory: Callable[[], Bot] | None = None, name: str | None = None
    ) -> None:
        if isinstance(bot_cls, Bot):
            raise BotDefinitionError(f"serve() needs the bot class, not an object of it: "
                                     f"serve({type(bot_cls).__name__}) (the SDK makes one object per match and seat)")
        if not (isinstance(bot_cls, type) and issubclass(bot_cls, Bot)):
            raise BotDefinitionError(f"serve() needs a subclass of {_bot_classes()}, got {bot_cls!r}")
        if name is None:
            bot_cls.check_definition()
        elif not cls_plays_a_game(bot_cls):
            raise BotDefinitionError(f"{bot_cls.__name__} plays no game: subclass {_bot_classes()}")
        elif not BOT_NAME_RE.fullmatch(name):
            raise BotDefinitionError(f"a bot name must be 1..64 characters of [A-Za-z0-9_.-], got {name!r}")
        for game in bot_cls.games:
            try:
                base = get_game(game).bot_class
            except ValueError as exc:
                raise BotDefinitionError(f"{bot_cls.__name__}.games: {exc}") from None
            if not issubclass(bot_cls, base):  # it would lack the decision methods of that game
                raise BotDefinitionError(
                    f"{bot_cls.__name__} says it plays {game!r} but is not a {base.__name__}: subclass {base.__name__}"
                )
        self.bot_cls = bot_cls
        self.name: str = bot_cls.name if name is None else name
        self._factory = factory or bot_cls
        self._matches = MatchTable()

    # --- match table ---------------------------------------------------------------------------------------

    def active_matches(self) -> list[tuple[str, int]]:
        """(match id, seat) of every bot object alive now, oldest first."""
        return self._matches.active()

    def _entry(self, key: Key, *, fresh: bool = False) -> Entry:
        """The live bot object of ``key``, made when there is none (``MatchTable.get_or_make``). Raises ``_Abort``
        when the author's constructor raises."""
        def make() -> Bot:
            try:
                return self._factory()
            except Exception as exc:  # the author's constructor
                log.exception("creating a %s object failed", self.bot_cls.__name__)
                raise _Abort(grpc.StatusCode.INTERNAL,
                             f"creating the bot object raised {describe_exception(exc)}") from exc

        return self._matches.get_or_make(key, make, fresh=fresh)

    def _start(self, key: Key, entry: Entry, info: MatchInfo) -> None:
        """Call on_start once per object; the caller holds ``entry.lock``."""
        if entry.started:
            return
        entry.bot.begin_match(info)
        try:
            entry.bot.on_start(info)
        except Exception as exc:
            log.exception("%s.on_start raised", self.bot_cls.__name__)
            self._matches.drop(key, entry)
            raise _Abort(grpc.StatusCode.INTERNAL, f"{self.name}: on_start raised {describe_exception(exc)}") from exc
        entry.started = True

    # --- RPCs ----------------------------------------------------------------------------------------------

    def GetInfo(self, request: bot_pb2.GetInfoRequest, context: grpc.ServicerContext) -> bot_pb2.BotInfo:
        cls = self.bot_cls
        return bot_pb2.BotInfo(
            name=self.name, version=cls.version, games=list(cls.games), sdk_version=SDK_VERSION, author=cls.author,
            serves_match_stream=True,
        )

    @_handles_errors
    def StartMatch(
        self, request: bot_pb2.StartMatchRequest, context: grpc.ServicerContext
    ) -> bot_pb2.StartMatchResponse:
        return self.start_match(request)

    @_handles_errors
    def Decide(self, request: bot_pb2.DecideRequest, context: grpc.ServicerContext) -> bot_pb2.DecideResponse:
        return self.decide(request)

    @_handles_errors
    def EndMatch(self, request: bot_pb2.EndMatchRequest, context: grpc.ServicerContext) -> bot_pb2.EndMatchResponse:
        return self.end_match(request)

    def PlayMatch(self, requests: Iterator[bot_pb2.RefereeMessage],
                  context: grpc.ServicerContext) -> Iterator[bot_pb2.BotMessage]:
        """The match stream (bot.proto, "The match stream"): one answer per ``RefereeMessage``, in order, made as
        the unary call would make it (``start_match``, ``decide``, ``end_match``); what would have been an error
        status becomes a ``StepFailure`` and the stream goes on. Runs on one server thread for the stream's life."""
        for message in requests:
            which = message.WhichOneof("request")
            if which == "decide":
                request = message.decide
                answer = bot_pb2.BotMessage(sequence=request.sequence)
                try:
                    self._decide_into(request, answer.decision)  # filled in place: no copy of the answer
                except _Abort as exc:
                    yield _failure(bot_pb2.MATCH_STEP_DECIDE, exc, request.sequence)
                else:
                    yield answer
            elif which == "start":
                try:
                    yield bot_pb2.BotMessage(started=self.start_match(message.start))
                except _Abort as exc:
                    yield _failure(bot_pb2.MATCH_STEP_START, exc)
            elif which == "end":
                try:
                    yield bot_pb2.BotMessage(ended=self.end_match(message.end))
                except _Abort as exc:
                    yield _failure(bot_pb2.MATCH_STEP_END, exc)
            else:
                yield _failure(bot_pb2.MATCH_STEP_UNSPECIFIED, _invalid("RefereeMessage carries no request"))

    # --- the calls, on either path (an error is an _Abort) -----------------------------------------------

    def start_match(self, request: bot_pb2.StartMatchRequest) -> bot_pb2.StartMatchResponse:
        """StartMatch: a fresh bot object for (match id, seat), its ``on_start`` called. Raises ``_Abort``."""
        info = self._match_info(request)
        key = (info.match_id, info.seat, request.seat_key)
        entry = self._entry(key, fresh=True)  # the referee sends one StartMatch per seat and play of a match
        with entry.lock:
            self._start(key, entry, info)
        return bot_pb2.StartMatchResponse(keeps_history=True)  # Decide completes each view's history

    def decide(self, request: bot_pb2.DecideRequest) -> bot_pb2.DecideResponse:
        """Decide: the bot's answer to the request's view (completed with the kept history). Raises ``_Abort``."""
        response = bot_pb2.DecideResponse()
        self._decide_into(request, response)
        return response

    def _decide_into(self, request: bot_pb2.DecideRequest, response: bot_pb2.DecideResponse) -> None:
        """``decide``, the answer written into ``response`` (an empty message; left unset when it raises)."""
        if not request.match_id:
            raise _invalid("DecideRequest.match_id is empty")
        try:
            kind = wire.kind_name(request.kind)
        except wire.WireError as exc:
            raise _invalid(f"DecideRequest.kind: {exc}") from exc
        game_id = request.WhichOneof("view")
        if game_id is None:
            raise _invalid(f"DecideRequest carries no view; {kind} needs one")
        if game_id not in self.bot_cls.games:
            raise _invalid(f"{self.name} plays {', '.join(self.bot_cls.games)}; the request carries a {game_id} view")
        game = get_game(game_id)
        if kind not in game.info.decision_kinds:
            raise _invalid(f"{kind} is not a {game.info.title} decision")

        key = (request.match_id, request.seat, request.seat_key)
        known = self._matches.find(key)  # the referee asks one seat one thing at a time (a re-ask repeats it)
        try:  # completed with the history kept from this seat's earlier requests (keeps_history)
            view, kept = game.view_from_message(getattr(request, game_id), kind,
                                                known.kept if known is not None else None)
        except (wire.WireError, RulesError) as exc:
            raise _invalid(f"DecideRequest.{game_id}: {exc}") from exc
        if view.seat != request.seat:
            raise _invalid(f"DecideRequest.seat is {request.seat} but the view is of seat {view.seat}")
        mismatch = game.check_view(view, kind)
        if mismatch:
            raise _invalid(f"{kind} does not match the view: {mismatch}")

        entry = known if known is not None else self._entry(key)
        name = self.name
        with entry.lock:
            entry.kept = kept
            if not entry.started:
                self._start(key, entry, MatchInfo(request.match_id, game_id, view.seat, view.num_players, (),
                                                  view.config))
            try:
                action = game.decide(entry.bot, view)
            except IllegalAnswerError as exc:
                log.error("%s: illegal answer (match %s seat %d): %s", name, *key[:2], exc)
                raise _Abort(grpc.StatusCode.INTERNAL, f"{name}: illegal answer: {exc}") from exc
            except Exception as exc:
                method = game.decision_methods.get(kind, kind)
                log.exception("%s.%s raised (match %s seat %d)", name, method, *key[:2])
                raise _Abort(grpc.StatusCode.INTERNAL, f"{name}: {method} raised {describe_exception(exc)}") from exc
            finally:  # the note of this answer (Bot.note), never carried over to the next one
                take_note = getattr(entry.bot, "take_note", None)
                note = take_note() if callable(take_note) else ""
        getattr(response, game_id).CopyFrom(game.action_to_proto(action))
        if note:
            response.note = note

    def end_match(self, request: bot_pb2.EndMatchRequest) -> bot_pb2.EndMatchResponse:
        """EndMatch: the bot object's ``on_end`` called and the object dropped. Raises ``_Abort``."""
        if not request.match_id:
            raise _invalid("EndMatchRequest.match_id is empty")
        key = (request.match_id, request.seat, request.seat_key)
        entry = self._matches.pop(key)
        if entry is None:  # never started here, or already ended: nothing to do
            return bot_pb2.EndMatchResponse()
        r = request.result
        result = MatchResult(request.match_id, request.seat, tuple(r.scores), tuple(r.ranks), tuple(r.faults))
        with entry.lock:
            if entry.started:
                try:
                    entry.bot.on_end(result)
                except Exception as exc:
                    log.exception("%s.on_end raised", self.bot_cls.__name__)
                    raise _Abort(
                        grpc.StatusCode.INTERNAL, f"{self.name}: on_end raised {describe_exception(exc)}"
                    ) from exc
        return bot_pb2.EndMatchResponse()

    # --- validation ----------------------------------------------------------------------------------------

    def _match_info(self, request: bot_pb2.StartMatchRequest) -> MatchInfo:
        if not request.match_id:
            raise _invalid("StartMatchRequest.match_id is empty")
        games = self.bot_cls.games
        if request.game not in games:
            raise _invalid(f"{self.name} plays {', '.join(games)}; StartMatchRequest.game is {request.game!r}")
        info = get_game(request.game).info
        n = request.num_players
        if not info.min_players <= n <= info.max_players:
            raise _invalid(
                f"StartMatchRequest.num_players must be {info.min_players}..{info.max_players}, got {n}"
            )
        if request.seat >= n:
            raise _invalid(f"StartMatchRequest.seat {request.seat} is not below num_players {n}")
        names = tuple(request.player_names)
        if names and len(names) != n:
            raise _invalid(f"StartMatchRequest.player_names holds {len(names)} names for {n} seats")
        try:
            config = wire.config_from_proto(request.game, request.config if request.HasField("config") else None)
        except wire.WireError as exc:
            raise _invalid(f"StartMatchRequest.config: {exc}") from exc
        seat_seed = request.seat_seed if request.HasField("seat_seed") else None
        if seat_seed is not None and seat_seed > MAX_SEAT_SEED:
            raise _invalid(f"StartMatchRequest.seat_seed must be 0..2**63-1, got {seat_seed}")
        return MatchInfo(request.match_id, request.game, request.seat, n, names, config, seat_seed)


def _failure(step: int, exc: _Abort, sequence: int = 0) -> bot_pb2.BotMessage:
    """The match stream's answer for a request that failed with ``exc``."""
    return bot_pb2.BotMessage(sequence=sequence, failure=bot_pb2.StepFailure(
        step=step, code=exc.code.value[0], message=exc.message[:MAX_FAILURE_CHARS]))  # type: ignore[arg-type]


def create_server(
    bot_cls: type[Bot],
    address: str = f"{DEFAULT_HOST}:0",
    *,
    options: dict[str, Any] | None = None,
    max_workers: int = DEFAULT_MAX_WORKERS,
    name: str | None = None,
    secret: str | None = None,
    tls: tuple[bytes, bytes] | None = None,
) -> tuple[grpc.Server, int]:
    """A gRPC server serving ``bot_cls`` on ``address`` ("host:port"; port 0 picks a free port), not started.

    Each bot object is made as ``bot_cls(**options)``; ``name`` overrides the class's name in ``GetInfo``.
    With a ``secret`` (non-empty), StartMatch, Decide and EndMatch calls without the ``arena-bot-secret`` call
    metadata get UNAUTHENTICATED, with another value PERMISSION_DENIED (compared in constant time); GetInfo stays
    open. The calls and streams under way from one client address (``arena_sdk.peers.PeerShare``: an IPv4
    address, an IPv6 /64, every loopback address as one) without the secret (every call of a bot without one) are
    at most ``max_workers // PEER_SHARE_DIVISOR``, and on a bot with a secret those of every address together too;
    more get
    RESOURCE_EXHAUSTED at once, so that a stranger holding streams, slow calls or calls that never send their request
    leaves the rest of the threads to the referee (with a secret: from any number of addresses). With ``tls``
    (certificate chain, private key; PEM bytes) it serves TLS only.
    Returns ``(server, port)``; call ``server.start()`` and, later, ``server.stop(grace)``; ``server.servicer`` is
    the ``BotServicer``. Raises ``BotDefinitionError`` for an unservable class or name and ``ServeError`` when the
    address cannot be bound (in use, bad host), the certificate and key are not usable PEM, ``secret`` is no bot
    secret (``guard.secret_problem``: 16..256 visible ASCII characters without spaces, as registration asks), or a
    secret comes with fewer than 2 ``max_workers``.
    """
    problem = secret_problem(secret) if secret else None
    if problem is not None:
        raise ServeError(f"the bot secret {problem}")
    if secret and max_workers < 2:
        raise ServeError(f"a bot with a secret needs at least 2 threads (max_workers {max_workers}): half of them are "
                         f"kept for the calls that carry the secret")
    factory = functools.partial(bot_cls, **options) if options else None
    servicer = BotServicer(bot_cls, factory, name)
    pool = futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=f"bot-{servicer.name}")
    server = grpc.server(
        pool,
        options=[
            ("grpc.so_reuseport", 0),  # a second bot on the same port must fail, not share it
            ("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
        ],
    )
    # one address (a stranger's) holds at most half of the threads with calls that do not carry the secret: every
    # call of a bot without one, a public GetInfo (or a refused call) of a bot with one; on a bot with a secret all
    # addresses together too, so that the referee's calls keep the other half
    add_guarded_service(server, bot_pb2.DESCRIPTOR.services_by_name["Bot"], servicer,
                        gate=secret_gate(secret) if secret else None,
                        share=PeerShare(max_workers // PEER_SHARE_DIVISOR,
                                        exempt=carries_secret(secret) if secret else None,
                                        total=max_workers // PEER_SHARE_DIVISOR if secret else None))
    if tls is not None and (b"-----BEGIN CERTIFICATE-----" not in tls[0] or b"PRIVATE KEY-----" not in tls[1]):
        raise ServeError("TLS needs a PEM certificate chain (-----BEGIN CERTIFICATE-----) and its PEM private key "
                         "(-----BEGIN ... PRIVATE KEY-----)")
    try:
        if tls is not None:
            chain, key = tls
            port = server.add_secure_port(address, grpc.ssl_server_credentials([(key, chain)]))
        else:
            port = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise ServeError(_listen_error(address, tls is not None, str(exc))) from exc
    if port == 0:
        raise ServeError(_listen_error(address, tls is not None, ""))
    server.servicer = servicer  # type: ignore[attr-defined]  # for tests and embedding
    server.pool = pool  # type: ignore[attr-defined]  # the threads serving calls (bot_process waits for them)
    return server, port


def _listen_error(address: str, tls: bool, grpc_reason: str) -> str:
    """The message of a server that cannot listen on ``address``: the cause ``bind_problem`` finds with what to
    do about it, else gRPC's own reason."""
    problem = bind_problem(address)
    if problem is not None:
        advice = " choose another port with --port, or --port 0 for a free one" if "in use" in problem else ""
        return f"cannot listen on {address}: {problem};{advice}".rstrip(";")
    hint = " (do the TLS certificate and key go together?)" if tls else ""
    return f"cannot listen on {address}{hint}: {grpc_reason or 'gRPC refused the address'}"


def carries_secret(secret: str) -> Callable[[grpc.ServicerContext], bool]:
    """Whether a call carries ``secret`` in its ``arena-bot-secret`` metadata (compared in constant time): the
    referee's calls, which the per-address share does not count."""
    return lambda context: secret_matches(metadata_value(context, BOT_SECRET_METADATA), secret)


def secret_gate(secret: str) -> Callable[[str, grpc.ServicerContext], tuple[grpc.StatusCode, str] | None]:
    """The ``arena_sdk.guard`` gate of a bot started with ``secret``: every method but GetInfo needs it in the
    ``arena-bot-secret`` call metadata."""

    def gate(method: str, context: grpc.ServicerContext) -> tuple[grpc.StatusCode, str] | None:
        if method in OPEN_METHODS:
            return None
        given = metadata_value(context, BOT_SECRET_METADATA)
        if given is None:
            return (grpc.StatusCode.UNAUTHENTICATED,
                    f"this bot answers {method} only to its arena: the call carries no {BOT_SECRET_METADATA} "
                    f"metadata (the secret given at registration)")
        if not secret_matches(given, secret):
            return (grpc.StatusCode.PERMISSION_DENIED,
                    f"this bot answers {method} only to its arena: wrong {BOT_SECRET_METADATA}")
        return None

    return gate
