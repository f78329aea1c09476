"""The list methods of the Arena service (ListBots, ListTournaments, ListMatches, ListWorkers), one page each
(``arena.server.pages``): the servicer forwards to these functions."""

from __future__ import annotations

import time
from typing import Any, Protocol

import grpc

from arena.core import limits
from arena.core.specs import BOT_NAME_RE
from arena.server import pages
from arena.server.admission import BotChecks
from arena.server.checks import bot_problems, mark_mismatches
from arena.server.replies import bot_message, match_summary, tournament_message
from arena.server.requests import abort, check_game, split_ref
from arena.store import Store, TournamentInfo
from arena.store.tournaments import tournament_position
from arena_sdk.pb import arena_pb2


class ArenaServicer(Protocol):
    """What the list methods need of ``arena.server.servicer.ArenaServicer``."""

    store: Store
    checks: BotChecks

    def _tournament(self, tournament_id: str, context: grpc.ServicerContext) -> TournamentInfo: ...

    def _withheld(self, result: dict[str, Any], tournaments: dict[str, TournamentInfo | None]) -> str: ...


def _tournament_position(value: Any) -> tuple[int, str]:
    number, tid = value
    if not isinstance(number, int) or isinstance(number, bool) or not isinstance(tid, str):
        raise ValueError("not a tournament position")
    if len(tid) > limits.TOURNAMENT_ID or tournament_position(tid) != (number, tid):
        raise ValueError("not a tournament position")
    return number, tid


def _matches_position(value: Any) -> dict[str, int]:
    if not isinstance(value, list) or len(value) > 64:
        raise ValueError("not a matches position")
    out: dict[str, int] = {}
    for game, pos in value:
        if (not isinstance(game, str) or len(game) > limits.GAME_ID or not isinstance(pos, int)
                or isinstance(pos, bool) or not 0 <= pos < 2 ** 53):  # an index number Redis keeps exactly
            raise ValueError("not a matches position")
        out[game] = pos
    return out


def list_bots(servicer: ArenaServicer, request: arena_pb2.ListBotsRequest,
              context: grpc.ServicerContext) -> arena_pb2.ListBotsResponse:
    """One page of ``ListBots``: the bots with their health and, with ``check_endpoints``, whether each answers
    GetInfo as registered (a bot reporting another name or game is marked in its health, its other name never
    shown)."""
    if request.game:
        check_game(request.game, context)
    store = servicer.store
    if request.name:  # one NAME's versions, in one answer (at most limits.VERSIONS_PER_NAME per game)
        if not BOT_NAME_RE.match(request.name):
            abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                  f"bad bot name {request.name!r}: use 1..64 characters of A-Z a-z 0-9 _ . -")
        bots, more = store.versions_of(request.game or None, request.name), False
    else:
        query = (store.arena_id(), request.game)
        size, after = pages.page_request(pages.BOTS, query, request, pages.strings_position(2), context)
        if request.check_endpoints:  # every bot of the page is called: a check's cost stays bounded
            size = min(size, pages.CHECKED_BOTS)
        bots, more = store.bots_page(request.game or None, (after[0], after[1]) if after else None, size)
    if request.check_endpoints:
        bots, more = bots[:pages.CHECKED_BOTS], more or len(bots) > pages.CHECKED_BOTS
    messages = [bot_message(b, o) for b, o in zip(bots, store.owner_ids_of([(b.game, b.name) for b in bots]))]
    for message, state in zip(messages, store.bots_health([(b.game, b.bot_id) for b in bots])):
        message.health = "healthy" if state.healthy else "unhealthy"
        message.consecutive_failures = state.failures
        if not state.healthy:
            message.unhealthy_since = state.since or 0.0
            message.health_reason = pages.text(state.reason)
    keep = pages.fitting(messages)
    if keep < len(messages):
        bots, messages, more = bots[:keep], messages[:keep], True
    if request.check_endpoints and bots:  # recent outcomes, else dialed when the list's slot is free
        problems = bot_problems(bots, servicer.checks.probe([b.endpoint for b in bots]))  # never blocks
        for message, problem in zip(messages, problems):
            if problem is not None:  # None: not checked (endpoint_checked false)
                message.endpoint_checked = True
                message.endpoint_problem = pages.text(problem[1])
        mark_mismatches(store, bots, problems)
    if request.name:
        held = store.held_spelling(request.name) if not bots else ""
        return arena_pb2.ListBotsResponse(bots=messages, held_spelling=held if held != request.name else "")
    token = pages.make_token(pages.BOTS, query, [bots[-1].game, bots[-1].bot_id]) if more and bots else ""
    return arena_pb2.ListBotsResponse(bots=messages, next_page_token=token)


def list_tournaments(servicer: ArenaServicer, request: arena_pb2.ListTournamentsRequest,
                     context: grpc.ServicerContext) -> arena_pb2.ListTournamentsResponse:
    """One page of ``ListTournaments``, newest first."""
    if request.game:
        check_game(request.game, context)
    store = servicer.store
    query = (store.arena_id(), request.game)
    size, before = pages.page_request(pages.TOURNAMENTS, query, request, _tournament_position, context)
    infos, more = store.tournaments_page(request.game or None, before, size)
    messages = [tournament_message(t, store) for t in infos]
    keep = pages.fitting(messages)
    if keep < len(messages):
        infos, messages, more = infos[:keep], messages[:keep], True
    token = pages.make_token(pages.TOURNAMENTS, query, list(tournament_position(infos[-1].id))) \
        if more and infos else ""
    return arena_pb2.ListTournamentsResponse(tournaments=messages, next_page_token=token)


def list_matches(servicer: ArenaServicer, request: arena_pb2.ListMatchesRequest,
                 context: grpc.ServicerContext) -> arena_pb2.ListMatchesResponse:
    """One page of ``ListMatches``, newest first: ``page_size`` (else ``limit``) matches after ``page_token`` (else
    after skipping ``offset``)."""
    if request.tournament_id:
        servicer._tournament(request.tournament_id, context)
    if request.bot:
        split_ref(request.bot, context)
    store = servicer.store
    query = (store.arena_id(), request.tournament_id, request.bot)
    size, after = pages.page_request(pages.MATCHES, query, request, _matches_position, context)
    if after is None and request.offset > limits.MATCH_OFFSET:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
              f"ListMatchesRequest.offset is at most {limits.MATCH_OFFSET:,} (got {request.offset:,}): an offset "
              f"reads every match it skips; page deeper with page_token (each answer's next_page_token)")
    if not request.page_size:
        size = pages.MATCHES.size(request.limit)
    rows, more, resume = store.matches_page(tournament_id=request.tournament_id or None, bot=request.bot or None,
                                            after=after, size=size, offset=request.offset if after is None else 0)
    tournaments: dict[str, TournamentInfo | None] = {}
    messages = [match_summary(r, not servicer._withheld(r, tournaments)) for r, _, _ in rows]
    keep = pages.fitting(messages)
    if keep < len(messages):  # a page cut by its size: it goes on after its last row kept
        rows, messages, more = rows[:keep], messages[:keep], True
        resume = dict(after or {})
        for _, game, pos in rows:  # each game's rows come newest first: its last one is where it goes on
            resume[game] = pos
    token = pages.make_token(pages.MATCHES, query, sorted([g, p] for g, p in resume.items())) \
        if more and resume else ""
    return arena_pb2.ListMatchesResponse(matches=messages, next_page_token=token)


def list_workers(servicer: ArenaServicer, request: arena_pb2.ListWorkersRequest,
                 context: grpc.ServicerContext) -> arena_pb2.ListWorkersResponse:
    """One page of ``ListWorkers``, by name."""
    store = servicer.store
    query = (store.arena_id(),)
    size, after = pages.page_request(pages.WORKERS, query, request, pages.string_position, context)
    workers, more = store.workers_page(after, size)
    held = store.jobs_held() if workers else {}
    now = time.time()
    messages = [arena_pb2.WorkerInfo(name=w.name, host=w.host, pid=w.pid, started_at=w.started_at,
                                     last_seen=w.last_seen, alive=w.alive(now), concurrency=w.concurrency,
                                     running=list(w.running), matches_done=w.matches_done,
                                     jobs_held=held.get(w.name, 0)) for w in workers]
    keep = pages.fitting(messages)
    if keep < len(messages):
        workers, messages, more = workers[:keep], messages[:keep], True
    token = pages.make_token(pages.WORKERS, query, workers[-1].name) if more and workers else ""
    return arena_pb2.ListWorkersResponse(workers=messages, next_page_token=token)
