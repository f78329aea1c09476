"""The referee process's gRPC server: the ``arena.v1.Arena`` service, health, reflection and embedded workers.

The servicer is thin (STYLE.md habit 5): it validates requests, delegates to ``arena.store``, ``arena.tournaments``
and ``arena.worker.loop``, and reports errors as canonical status codes with a message a person can act on:
INVALID_ARGUMENT (bad input), NOT_FOUND (unknown bot, tournament or match), ALREADY_EXISTS, FAILED_PRECONDITION (a
bot endpoint that does not answer, does not play the game, says it is another bot than the NAME it is registered as,
or reports another version; a new tournament, or its dry run, with a bot that does not answer GetInfo; a finished
tournament cancelled), PERMISSION_DENIED (a missing or wrong owner token, a wrong admin token), UNAUTHENTICATED (an
organiser call without the admin token), RESOURCE_EXHAUSTED (too many bot checks of the caller's class running at
once, or a request over 64 KiB), UNAVAILABLE (Redis unreachable), DATA_LOSS (a stored match record that cannot be
decoded: damaged in the store; the message names the match only, the referee's log has the decoding error). A stored
record that decodes but has not the shape of a match record is given as stored (``without_notes`` still withholds
the bots' notes): its readers say it cannot be shown.

Hardening: organiser calls need the admin token (``arena.server.auth``); every request is checked against the size
limits of ``arena.core.limits`` before it is served (INVALID_ARGUMENT naming the field), and a request that does not
decode gets INVALID_ARGUMENT without a traceback (``arena_sdk.guard``). Calls to bots' GetInfo (registration,
updates, tournament and list checks) are admitted by caller class (organiser, owner, stranger, list;
``arena.server.admission``: strangers never take the organiser's or owners' capacity, and are limited per client),
each within ``verify_timeout_s``, with recent outcomes reused; a registration that gets no valid answer is refused
with one message whatever the reason (closed port, another service, a silent socket), no sooner than
``verify_timeout_s``, and no refusal names another bot, so RegisterBot is no port scanner.

Bot lifecycle: a bot version is identified as NAME@VERSION, the VERSION being what the bot's
GetInfo reports at registration. A NAME belongs to an owner account (``arena.server.owners``): a new NAME registered
with an owner's token joins that owner; without one it creates a new owner (open registration only, within the
quotas) whose token the answer carries once (``secrets.token_urlsafe``; the store keeps only its SHA-256, compared
in constant time); registering NAME again or a new version of it, and UpdateBot / RemoveBot, need that token. A
NAME that has no owner (through ``Store.register_bot`` without one) is claimed by its next registration through
this service.
"""

from __future__ import annotations

import functools
import hmac
import importlib.metadata
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import grpc
import redis

from arena.core.config import DEFAULTS
from arena.core.errors import REDIS_DOWN
from arena.core.sealing import public_key
from arena.ladder import replies as ladder_view
from arena.ladder.cache import RatingsCache
from arena.match.channels import PLAINTEXT_OR_SYSTEM_ROOTS, BotDialer
from arena.server import auth, registration
from arena.server import lists as list_service
from arena.server import live as live_service
from arena.server import owners as owner_service
from arena.server import sprt as sprt_service
from arena.server import tournaments as tournament_service
from arena.server.admission import AdmissionRefused, BotChecks, Caller
from arena.server.checks import EndpointError, check_bots_ready
from arena.server.match_records import PublicRecords
from arena.server.replies import ladder_message, match_summary, tournament_message, withheld_reason
from arena.server.requests import (
    abort,
    check_game,
    check_tournament_id,
)
from arena.store import Store, StoreError, TournamentInfo
from arena.store.codec import RecordCodecError
from arena.store.redis_urls import redact_url
from arena_sdk.games import GAMES
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2
from arena_sdk.peers import peer_address

log = logging.getLogger(__name__)

ARENA_SERVICE = arena_pb2.DESCRIPTOR.services_by_name["Arena"].full_name  # "arena.v1.Arena"
VERIFY_TIMEOUT_S = DEFAULTS.verify_timeout_s
OWNER_TOKEN_BYTES = 32

_F = TypeVar("_F", bound=Callable[..., Any])


class ServiceError(RuntimeError):
    """The Arena server cannot start: Redis unreachable, or the listen address cannot be bound."""


def _platform_version() -> str:
    """The installed version of the bot-arena package ("" when it is not installed, e.g. run from a checkout)."""
    try:
        return importlib.metadata.version("bot-arena")
    except importlib.metadata.PackageNotFoundError:
        return ""


# arena serve --bot-notes: who GetMatch gives the bots' notes to: its owner (a call signed with the owner token of
# the seat's bot NAME: its own seats' notes only), everyone, or nobody
BOT_NOTES = ("owner", "public", "hidden")


def _rpc(method: _F) -> _F:
    """Turn Redis failures into UNAVAILABLE (``REDIS_DOWN``; the Redis URL, redacted, and the error in the log),
    and a stored match record that does not decode into DATA_LOSS (the decoding error goes to the log, not to the
    caller)."""

    @functools.wraps(method)
    def wrapper(self: ArenaServicer, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return method(self, request, context)
        except redis.RedisError as exc:  # the Redis address and the error stay in the log: no client's business
            log.warning("%s: the Redis at %s cannot be used: %s", method.__name__, redact_url(self.redis_url), exc)
            context.abort(grpc.StatusCode.UNAVAILABLE, REDIS_DOWN)
        except RecordCodecError as exc:
            log.error("%s: %s", method.__name__, exc)
            context.abort(grpc.StatusCode.DATA_LOSS, _unreadable(getattr(request, "match_id", "")))

    return wrapper  # type: ignore[return-value]


def _unreadable(match_id: str) -> str:
    """The DATA_LOSS message of a stored match record that does not decode: the match, and nothing of the bytes."""
    which = f"of match {match_id} " if match_id else ""
    return (f"the stored record {which}cannot be read: it is damaged in the arena's store (the referee's log has "
            f"the details)")


class ArenaServicer(arena_pb2_grpc.ArenaServicer):
    """The Arena service: bots, tournaments, matches, the ladder and the workers, stored in Redis through
    ``Store``.

    Args:
        store: the arena's store. redis_url: for error messages.
        verify_bots: when True, RegisterBot and UpdateBot call the bot's GetInfo, refuse an endpoint that does not
            answer, does not play the game or gives another name than NAME (FAILED_PRECONDITION) and take the
            version from it; CreateTournament
            (dry runs too) calls the GetInfo of every bot of the tournament, concurrently, and refuses
            (FAILED_PRECONDITION, naming them) when any does not answer, no longer plays the game or reports
            another version or name than registered (such a bot is marked unhealthy: ``arena.server.checks``),
            before anything is stored or queued. When False (tests only)
            nothing is called and every bot is version "0".
        verify_timeout_s: how long each of those GetInfo calls may take, seconds; a failed registration check
            answers no sooner (``arena.server.admission``).
        dialer: how those calls dial a bot (``tls://`` endpoints over TLS, verified against its CA bundle).
    """

    def __init__(self, store: Store, redis_url: str, *, verify_bots: bool = True,
                 verify_timeout_s: float = DEFAULTS.verify_timeout_s, admin_token: str | None = None,
                 dialer: BotDialer = PLAINTEXT_OR_SYSTEM_ROOTS, bot_notes: str = "owner") -> None:
        if bot_notes not in BOT_NOTES:
            raise ValueError(f"bot_notes must be one of {', '.join(BOT_NOTES)}, got {bot_notes!r}")
        self.bot_notes = bot_notes  # who GetMatch's records keep the bots' notes for (BOT_NOTES)
        self.store = store
        self.redis_url = redis_url
        self.verify_bots = verify_bots
        self.verify_timeout_s = verify_timeout_s
        self.dialer = dialer
        self.admin_token = admin_token or auth.new_admin_token()  # never logged, never in a reply
        self.checks = BotChecks(verify_timeout_s, dialer)  # admission by caller class, reuse, padding
        self.challenges = auth.Challenges(store)
        self._proofs = threading.local()  # (id of the call's context, its CallProof): see ``authorize``
        self.live_frames = live_service.LiveFramesCache()  # the live matches' frames, one build per publication
        self.public_records = PublicRecords()  # revealed records as anyone gets them, encoded once each
        self.ratings = RatingsCache(store)  # margins, LOS and batch fits, cached in Redis (arena.ladder.cache)

    # -- bots -----------------------------------------------------------------------------------------------

    def bot_info(self, endpoint: str, game: str, name: str, caller: Caller,
                 context: grpc.ServicerContext,
                 secret_of: Callable[[str], tuple[str, bool]] | None = None) -> bot_pb2.BotInfo:
        """The GetInfo of the bot at ``endpoint``, which must play ``game``, call itself ``name``, report a
        well-formed version, keep within the limits of a ``BotInfo``, accept ``secret_of(version)`` (None: no
        secret) as its bot secret and, when it says ``serves_match_stream``, implement ``PlayMatch`` (else
        FAILED_PRECONDITION, no sooner than ``verify_timeout_s``), so that no bot plays under another's ladder
        line, a bot with a secret is registered only by whoever knows it, and none that would fault at every
        call; checked in a slot of ``caller``'s class (none free: RESOURCE_EXHAUSTED)."""
        if not self.verify_bots:
            return bot_pb2.BotInfo(name=name, version="0", games=[game])
        try:
            return self.checks.registration(endpoint, game, name, caller, peer_address(context.peer() or ""),
                                            secret_of)
        except AdmissionRefused as exc:
            abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except EndpointError as exc:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, str(exc))

    def authorize(self, method: str, request: Any, context: grpc.ServicerContext) -> tuple[grpc.StatusCode, str] | None:
        """The guard's hook before every call (``arena_sdk.guard``): work out what the call proves
        (``auth.prove``, once per call: a signature's nonce serves once), keep it for ``owner_key`` and
        ``is_admin``, and refuse an organiser call without the admin token. Returns None, or (code, message)."""
        self._proofs.current = None
        try:
            proof = auth.prove(f"/{ARENA_SERVICE}/{method}", request, context, self.store, self.challenges,
                               self.admin_token)
        except auth.Refused as exc:
            return exc.code, exc.message
        except redis.RedisError as exc:
            log.warning("%s: the Redis at %s cannot be used while checking its signature: %s", method,
                        redact_url(self.redis_url), exc)
            return grpc.StatusCode.UNAVAILABLE, REDIS_DOWN
        self._proofs.current = (id(context), proof)
        return auth.admin_proof_refusal(method, proof, context)

    def _proof(self, request: Any, context: grpc.ServicerContext) -> auth.CallProof:
        """What this call proves: the proof ``authorize`` kept for it, else (a servicer method called directly,
        e.g. by a test) worked out now; an invalid signature aborts with its status."""
        current = getattr(self._proofs, "current", None)
        if current is not None and current[0] == id(context):
            proof: auth.CallProof = current[1]
            return proof
        method = type(request).DESCRIPTOR.name.removesuffix("Request")
        try:
            proof = auth.prove(f"/{ARENA_SERVICE}/{method}", request, context, self.store, self.challenges,
                               self.admin_token)
        except auth.Refused as exc:
            abort(context, exc.code, exc.message)
        self._proofs.current = (id(context), proof)
        return proof

    def owner_key(self, request: Any, context: grpc.ServicerContext) -> str | None:
        """The owner key (``token_hash`` of an owner token: SHA-256, hex) that this call proves it holds (by a
        signed call, or by the plain ``owner_token`` field), or None when it proves none. Every owner check of the
        service goes through here; the token of an owner the organiser removed proves nothing any more
        (PERMISSION_DENIED)."""
        key = self._proof(request, context).owner_key
        if key and self.store.owner_removed(key):
            abort(context, grpc.StatusCode.PERMISSION_DENIED,
                  "the organiser removed the owner of this token (arena owner remove): it is no owner's any more")
        return key

    def is_admin(self, request: Any, context: grpc.ServicerContext) -> bool:
        """True when this call proves it holds the arena's admin token (``arena.server.auth``)."""
        return self._proof(request, context).admin

    @_rpc
    def RegisterBot(self, request: arena_pb2.RegisterBotRequest,
                    context: grpc.ServicerContext) -> arena_pb2.BotRecord:
        return registration.register_bot(self, request, context)

    @_rpc
    def UpdateBot(self, request: arena_pb2.UpdateBotRequest,
                  context: grpc.ServicerContext) -> arena_pb2.BotRecord:
        return registration.update_bot(self, request, context)

    @_rpc
    def RemoveBot(self, request: arena_pb2.RemoveBotRequest,
                  context: grpc.ServicerContext) -> arena_pb2.RemoveBotResponse:
        return registration.remove_bot(self, request, context)

    @_rpc
    def ListBots(self, request: arena_pb2.ListBotsRequest,
                 context: grpc.ServicerContext) -> arena_pb2.ListBotsResponse:
        return list_service.list_bots(self, request, context)

    # -- tournaments ----------------------------------------------------------------------------------------

    @_rpc
    def CreateTournament(self, request: arena_pb2.CreateTournamentRequest,
                         context: grpc.ServicerContext) -> arena_pb2.Tournament:
        return tournament_service.create_tournament(self, request, context)

    def _check_bots_ready(self, game: str, bots: Sequence[str], context: grpc.ServicerContext) -> None:
        """FAILED_PRECONDITION unless every bot of a new tournament answers GetInfo as registered: a tournament
        among bots that are down would only record faults, and rate them."""
        entries = [self.store.get_bot(game, bid) for bid in bots]
        gone = [bid for bid, entry in zip(bots, entries) if entry is None]
        if gone:
            abort(context, grpc.StatusCode.NOT_FOUND, f"not registered for {game}: {', '.join(gone)} (removed "
                                                       f"meanwhile); register them first")
        ready = [e for e in entries if e is not None]
        try:  # an organiser call (the admin gate let it in): one organiser slot for all its bots
            outcomes = self.checks.ready([e.endpoint for e in ready],
                                         secrets={e.endpoint: e.secret for e in ready if e.secret})
            problem = check_bots_ready(ready, outcomes, store=self.store)
        except AdmissionRefused as exc:
            abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        if problem:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                   f"{problem}; nothing was queued: start the bots (or move them with arena bot update, or "
                   f"leave them out: arena bot remove) and create the tournament again")

    def _tournament(self, tournament_id: str, context: grpc.ServicerContext) -> TournamentInfo:
        check_tournament_id(tournament_id, context)
        info = self.store.get_tournament(tournament_id)
        if info is None:
            abort(context, grpc.StatusCode.NOT_FOUND, f"no tournament {tournament_id} in this arena")
        return info

    @_rpc
    def GetTournament(self, request: arena_pb2.GetTournamentRequest,
                      context: grpc.ServicerContext) -> arena_pb2.Tournament:
        info = self._tournament(request.id, context)
        message = tournament_message(info, self.store)
        if info.state == "running":  # the bots it waits for: their matches are deferred while they are unhealthy
            health = self.store.bot_health(info.game, self.store.unhealthy_among(info.game, list(info.bots)))
            sick = [h for h in health.values() if not h.healthy]
            if sick:
                now = time.time()
                caps = [w.max_deferral_s for w in self.store.list_workers() if w.alive(now)]
                message.waiting_for.extend(
                    arena_pb2.WaitingBot(bot=h.bot, unhealthy_since=h.since or 0.0, reason=h.reason,
                                         forced_at=h.forced_at(min(caps), now) if caps else 0.0)
                    for h in sick)
                message.matches_deferred = self.store.deferred_of(info.game, info.id)
        return message

    @_rpc
    def ListTournaments(self, request: arena_pb2.ListTournamentsRequest,
                        context: grpc.ServicerContext) -> arena_pb2.ListTournamentsResponse:
        return list_service.list_tournaments(self, request, context)

    @_rpc
    def CancelTournament(self, request: arena_pb2.CancelTournamentRequest,
                         context: grpc.ServicerContext) -> arena_pb2.Tournament:
        self._tournament(request.id, context)
        info, dropped = self.store.cancel_tournament(request.id)
        if info.state == "finished":
            abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                   f"tournament {request.id} is finished ({info.matches_done} of {info.matches_total} matches "
                   f"played); there is nothing to cancel")
        log.info("tournament %s cancelled: %d queued matches dropped", request.id, dropped)
        message = tournament_message(info, self.store)
        message.matches_dropped_now = dropped
        return message

    @_rpc
    def GetStandings(self, request: arena_pb2.GetStandingsRequest,
                     context: grpc.ServicerContext) -> arena_pb2.Standings:
        info = self._tournament(request.id, context)
        try:
            return ladder_view.standings_message(self.store, self.ratings, info)
        except StoreError as exc:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"the tournament's results cannot be read: {exc}")

    @_rpc
    def CreateSprt(self, request: arena_pb2.CreateSprtRequest, context: grpc.ServicerContext) -> arena_pb2.Sprt:

        return sprt_service.create_sprt(self, request, context)

    @_rpc
    def GetSprt(self, request: arena_pb2.GetSprtRequest, context: grpc.ServicerContext) -> arena_pb2.Sprt:

        return sprt_service.get_sprt(self, request, context)

    # -- matches and the ladder -----------------------------------------------------------------------------

    @_rpc
    def ListMatches(self, request: arena_pb2.ListMatchesRequest,
                    context: grpc.ServicerContext) -> arena_pb2.ListMatchesResponse:
        return list_service.list_matches(self, request, context)

    def _withheld(self, result: dict[str, Any], tournaments: dict[str, TournamentInfo | None]) -> str:
        """Why the deal and record of a stored match are not shown yet ("" when they are: a match outside
        tournaments, or of a tournament that has ended); ``tournaments`` caches the tournaments read."""
        tid = result.get("tournament") or ""
        if not tid:
            return ""
        if tid not in tournaments:
            tournaments[tid] = self.store.get_tournament(tid)
        return withheld_reason(tid, tournaments[tid])

    @_rpc
    def GetMatch(self, request: arena_pb2.GetMatchRequest, context: grpc.ServicerContext) -> arena_pb2.MatchDetail:
        if not request.match_id:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT, "match_id is required, e.g. t3-000041")
        game = self.store.match_game(request.match_id)
        result = self.store.get_result(game, request.match_id) if game else None
        if game is None or result is None:
            abort(context, grpc.StatusCode.NOT_FOUND,
                   f"no finished match {request.match_id} in this arena (matches of a running tournament appear "
                   f"once played)")
        withheld = self._withheld(result, {})
        if withheld:  # only the summary: seats, result, faults; no seed, no deal, no decisions
            return arena_pb2.MatchDetail(summary=match_summary(result, False), withheld=withheld,
                                         own_faults=self._own_faults(game, result, request, context))
        own = self._own_seats(game, result, request, context) if self.bot_notes != "public" else None
        text = self.public_records.record_json(self.store, game, request.match_id, self.bot_notes != "public",
                                               own or None)
        return arena_pb2.MatchDetail(summary=match_summary(result), record_json=text)

    def _own_faults(self, game: str, result: dict[str, Any], request: Any,
                    context: grpc.ServicerContext) -> list[arena_pb2.SeatFault]:
        """The faults of a withheld match's seats whose bot NAME's owner token this call proves (a signed call),
        from its stored record; none for anyone else, or when no seat faulted."""
        if not any(result.get("faults") or ()):
            return []
        seats = self._proven_seats(game, result, self.owner_key(request, context))
        try:
            record = self.store.get_match_record(request.match_id, game) if seats else None
        except RecordCodecError:  # a damaged record: the summary still answers (its faults counted)
            record = None
        return [arena_pb2.SeatFault(seat=f["seat"], kind=str(f["kind"]), hand=int(f["hand"]), turn=int(f["turn"]),
                                    detail=str(f["detail"]))
                for f in (record or {}).get("faults") or () if f.get("seat") in seats]

    def _own_seats(self, game: str, result: dict[str, Any], request: Any,
                   context: grpc.ServicerContext) -> frozenset[int]:
        """Under ``bot_notes="owner"``, the seats of the stored match whose bot NAME's owner token this call proves
        (a signed call); none otherwise."""
        return self._proven_seats(game, result, self.owner_key(request, context) if self.bot_notes == "owner"
                                  else None)

    def _proven_seats(self, game: str, result: dict[str, Any], key: str | None) -> frozenset[int]:
        """The seats of a stored match whose bot NAME's owner key is ``key`` (none for None)."""
        if not key:
            return frozenset()
        seats = result.get("seats") or []
        return frozenset(s for s, bot in enumerate(seats) if isinstance(bot, str) and hmac.compare_digest(
            (self.store.owner_hash(game, bot.split("@", 1)[0]) or "").encode(), key.encode()))

    @_rpc
    def GetLiveMatch(self, request: arena_pb2.GetLiveMatchRequest,
                     context: grpc.ServicerContext) -> arena_pb2.LiveMatch:
        return live_service.get_live_match(self.store, request, context, self.live_frames)

    @_rpc
    def GetLadder(self, request: arena_pb2.GetLadderRequest, context: grpc.ServicerContext) -> arena_pb2.Ladder:
        check_game(request.game, context)
        method = request.method or "elo"
        if method not in ladder_view.METHODS:
            abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                   f"unknown ladder method {request.method!r}; choose {' or '.join(ladder_view.METHODS)}")
        try:
            return ladder_view.ladder_message(self.store, self.ratings, request.game, method)
        except StoreError as exc:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"the results log cannot be read: {exc}")

    @_rpc
    def RebuildLadder(self, request: arena_pb2.RebuildLadderRequest,
                      context: grpc.ServicerContext) -> arena_pb2.RebuildLadderResponse:
        check_game(request.game, context)
        try:
            check = self.store.check_ladder(request.game)
        except StoreError as exc:
            abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"the results log cannot be replayed: {exc}")
        return arena_pb2.RebuildLadderResponse(
            rebuilt=ladder_message(request.game, check.rebuilt), live=ladder_message(request.game, check.live),
            equal=check.equal, results=check.results)

    @_rpc
    def ListWorkers(self, request: arena_pb2.ListWorkersRequest,
                    context: grpc.ServicerContext) -> arena_pb2.ListWorkersResponse:
        return list_service.list_workers(self, request, context)

    @_rpc
    def GetArenaInfo(self, request: arena_pb2.GetArenaInfoRequest,
                     context: grpc.ServicerContext) -> arena_pb2.ArenaInfo:
        return arena_pb2.ArenaInfo(arena_id=self.store.arena_id(), version=_platform_version(),
                                   games=sorted(GAMES), registration=owner_service.registration_message(self.store),
                                   seal_key=public_key(self.store.seal_key()))

    @_rpc
    def GetChallenge(self, request: arena_pb2.GetChallengeRequest,
                     context: grpc.ServicerContext) -> arena_pb2.Challenge:
        return arena_pb2.Challenge(nonce=self.challenges.issue(), expires_in_ms=self.challenges.ttl_ms,
                                   arena_id=self.store.arena_id())

    # -- owners (arena.server.owners) ------------------------------------------------------------------------

    @_rpc
    def CreateOwner(self, request: arena_pb2.CreateOwnerRequest, context: grpc.ServicerContext) -> arena_pb2.Owner:
        return owner_service.create_owner(self, request, context)

    @_rpc
    def GetOwner(self, request: arena_pb2.GetOwnerRequest, context: grpc.ServicerContext) -> arena_pb2.Owner:
        return owner_service.get_owner(self, request, context)

    @_rpc
    def ListOwners(self, request: arena_pb2.ListOwnersRequest,
                   context: grpc.ServicerContext) -> arena_pb2.ListOwnersResponse:
        return owner_service.list_owners(self, request, context)

    @_rpc
    def RemoveOwner(self, request: arena_pb2.RemoveOwnerRequest,
                    context: grpc.ServicerContext) -> arena_pb2.RemoveOwnerResponse:
        return owner_service.remove_owner(self, request, context)

    @_rpc
    def SetRegistration(self, request: arena_pb2.SetRegistrationRequest,
                        context: grpc.ServicerContext) -> arena_pb2.Registration:
        return owner_service.set_registration(self, request, context)
