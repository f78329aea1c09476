"""The CreateTournament call of the Arena service: the request's common checks, its format from the registry
(``arena.tournaments.formats``: the format checks its options and plans the first matches), the bots resolved and
checked, and the tournament stored with its jobs and format state in one transaction. ``arena.server.servicer``
delegates to ``create_tournament``.

Errors: INVALID_ARGUMENT (a bad field, an option the format refuses, a seed given, two names of one bot),
NOT_FOUND (a bot not registered), FAILED_PRECONDITION (a bot that does not answer GetInfo as registered),
ALREADY_EXISTS (a tournament id taken meanwhile).
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
from collections.abc import Sequence

import grpc

from arena.core.config import DEFAULTS, MAX_DEADLINE_MS, MIN_DEADLINE_MS
from arena.core.errors import TournamentError
from arena.core.seeds import SEED_BITS
from arena.core.specs import split_bot_ref
from arena.server.registration import not_registered
from arena.server.replies import tournament_message
from arena.server.requests import abort, check_game
from arena.server.sprt import ArenaServicer
from arena.store import Store, StoreError, TournamentInfo
from arena.tournaments.deals import ROTATE_WARNING, default_deals
from arena.tournaments.formats import Entry, format_of_request
from arena_sdk.pb import arena_pb2
from arena_sdk.wire import config_from_proto, config_to_dict

log = logging.getLogger(__name__)


def create_tournament(servicer: ArenaServicer, request: arena_pb2.CreateTournamentRequest,
                      context: grpc.ServicerContext) -> arena_pb2.Tournament:
    """CreateTournament: the stored tournament's ``Tournament`` message, or a dry run's (nothing stored)."""
    game = request.game
    check_game(game, context)
    refs = list(request.bots)
    if not refs:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, "a tournament needs the names of at least 2 bots")
    seats = request.seats_per_match or min(len(refs), DEFAULTS.seats_per_match)
    if request.deadline_ms and not MIN_DEADLINE_MS <= request.deadline_ms <= MAX_DEADLINE_MS:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
               f"deadline_ms must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms (the deadline of each Decide "
               f"call; 0 means the default, {DEFAULTS.deadline_ms} ms), got {request.deadline_ms}")
    deadline_ms = request.deadline_ms or DEFAULTS.deadline_ms
    if request.seed:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
               "a tournament seed cannot be given: every tournament's deals come from a secret seed that the "
               "server draws, publishes as a commitment and reveals when the tournament has ended "
               "(`arena play --seed` reproduces a local game)")
    deals = request.deals or default_deals(servicer.store.registration_open())
    seed = secrets.randbits(SEED_BITS)  # the operating system's CSPRNG; the secret's only owner is the store
    try:
        fmt, options = format_of_request(request)
        rounds = request.rounds or fmt.default_rounds(len(refs), seats)
        config = config_from_proto(game, request.config if request.HasField("config") else None)
        config_json = config_to_dict(game, config)
        entry = Entry(game=game, bots=tuple(refs), seats=seats, rounds=rounds, deals=deals, config=config_json,
                      deadline_ms=deadline_ms, options=options, seed=seed)
        fmt.check(entry)
    except (TournamentError, ValueError) as exc:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    bots = resolve_bots(servicer.store, game, refs, context)
    if servicer.verify_bots:
        servicer._check_bots_ready(game, bots, context)
    # bots of one owner never sit at two tables of one deal (arena.tournaments.deal_plan)
    owners = {bid: servicer.store.owner_hash(game, split_bot_ref(bid)[0]) or "" for bid in bots}
    entry = dataclasses.replace(entry, bots=tuple(bots), owners=owners,
                                ratings=servicer.store.ratings(game, sorted(bots)))
    tournament_id = "" if request.dry_run else servicer.store.next_tournament_id()
    try:
        planned = fmt.plan(tournament_id or "dry-run", entry)
    except TournamentError as exc:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    info = TournamentInfo(
        id=tournament_id, game=game, bots=tuple(bots), seats_per_match=seats, rounds=planned.rounds,
        seed=seed, config=config_json, deadline_ms=deadline_ms,
        matches_total=planned.matches_total if request.dry_run else len(planned.specs), created_at=time.time(),
        deals=deals, deal_count=planned.deal_count, kind=fmt.name, grows=fmt.controlled,
        extra={**planned.extra, "formula": planned.formula},  # formula_of shows it for any format
    )
    if request.dry_run:
        message = tournament_message(info)
        message.state, message.seed_commitment, message.created_at = "planned", "", 0.0
        return message
    try:
        servicer.store.create_tournament(info, planned.specs, state=planned.state)  # one transaction
    except StoreError as exc:
        abort(context, grpc.StatusCode.ALREADY_EXISTS, str(exc))
    log.info("tournament %s (%s): %d matches of %s queued (%d bots, %d seats, %d rounds, %s deals: %d), seed "
             "commitment %s", tournament_id, fmt.name, len(planned.specs), game, len(bots), seats,
             planned.rounds, deals, info.deal_count, info.commitment)
    if deals == "rotate":
        log.warning("tournament %s: %s", tournament_id, ROTATE_WARNING)
    return tournament_message(info, servicer.store)


def resolve_bots(store: Store, game: str, refs: Sequence[str], context: grpc.ServicerContext) -> list[str]:
    """The bot ids a new tournament's names stand for: NOT_FOUND for a name not registered, INVALID_ARGUMENT
    for two names of one bot."""
    resolved = {ref: store.resolve_bot(game, ref) for ref in refs}
    unknown = [ref for ref, bid in resolved.items() if bid is None]
    if unknown:
        abort(context, grpc.StatusCode.NOT_FOUND, not_registered(store, unknown, game))
    bots = [resolved[ref] or ref for ref in refs]
    named: dict[str, list[str]] = {}  # linear: a bot id -> the refs naming it
    for ref, bid in zip(refs, bots):
        named.setdefault(bid, []).append(ref)
    same = {bid: rs for bid, rs in named.items() if len(rs) > 1}
    if same:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, "; ".join(
            f"{' and '.join(rs)} name the same bot {bid}" for bid, rs in same.items()))
    return bots
