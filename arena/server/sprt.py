"""The CreateSprt and GetSprt calls of the Arena service (``arena sprt``): request checks, the SPRT tournament's
creation with its first blocks, and the ``Sprt`` message. ``arena.server.servicer`` delegates to these functions.

Errors leave as the service's other calls do: INVALID_ARGUMENT (a bad parameter, V1 = V2, a field that cannot fill
the tables or holds a bot of V1's or V2's owner, V1 against V2 on duplicate deals without a field for bots of two
owners, a deal plan other than "duplicate" or "unique"), NOT_FOUND
(an unknown bot or tournament, or a tournament that is not an SPRT), FAILED_PRECONDITION (a bot that does not answer
GetInfo as registered).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

import grpc

from arena.core import limits
from arena.core.config import DEFAULTS, MAX_DEADLINE_MS, MIN_DEADLINE_MS
from arena.core.errors import TournamentError
from arena.core.seeds import SEED_BITS
from arena.core.specs import HOUSE_PREFIX, TOURNAMENT_ID_RE, is_house_bot, split_bot_ref
from arena.ratings import score_sprt
from arena.ratings.sprt import SprtError, bounds
from arena.server.registration import not_registered
from arena.server.replies import tournament_message
from arena.server.requests import abort
from arena.store import Store, StoreError, TournamentInfo
from arena.tournaments.deals import default_deals, owner_classes
from arena.tournaments.sprt_controller import sprt_status
from arena.tournaments.sprt_plan import (
    DEFAULT_MAX_BLOCKS,
    DEFAULT_WINDOW,
    MAX_BLOCKS,
    MAX_WINDOW,
    POINTS,
    SCORE,
    SPRT_DEAL_PLANS,
    SPRT_KIND,
    STATISTICS,
    SprtParams,
    SprtPlanError,
    block_specs,
    check_field,
)
from arena_sdk.games import GAMES
from arena_sdk.pb import arena_pb2
from arena_sdk.wire import config_from_proto, config_to_dict

if TYPE_CHECKING:
    from arena.store import SprtRecord

log = logging.getLogger(__name__)


class ArenaServicer(Protocol):
    """What the SPRT calls and CreateTournament (``arena.server.tournaments``) need of the Arena servicer
    (``arena.server.servicer.ArenaServicer``)."""

    store: Store
    verify_bots: bool

    def _check_bots_ready(self, game: str, bots: Sequence[str], context: grpc.ServicerContext) -> None: ...

DEFAULT_ELO0 = 0.0
DEFAULT_ELO1 = 5.0
DEFAULT_ALPHA = 0.05
DEFAULT_BETA = 0.05
DEFAULT_FIELD_SEATS = 4  # with a field and no --seats: min(4, 1 + field bots / 2)
MIN_GAP = 0.1  # elo1 - elo0 at least this (Elo or normalized Elo): closer hypotheses need millions of blocks
MAX_ELO = 1000.0  # |elo0|, |elo1| at most this (the logistic scale saturates beyond; score_sprt.MAX_NELO alike)
MIN_ERROR_RATE = 1e-6  # alpha, beta at least this: Wald's bounds stay finite


def _invalid(context: grpc.ServicerContext, message: str) -> NoReturn:
    abort(context, grpc.StatusCode.INVALID_ARGUMENT, message)


def _numbers(request: arena_pb2.CreateSprtRequest, context: grpc.ServicerContext) -> dict[str, Any]:
    """The test's numbers with their defaults, checked: elo0 < elo1 (finite), 0 < alpha, beta < 0.5, window
    1..MAX_WINDOW, max_blocks 1..MAX_BLOCKS, deadline MIN..MAX_DEADLINE_MS."""
    elo0 = request.elo0 if request.HasField("elo0") else DEFAULT_ELO0
    elo1 = request.elo1 if request.HasField("elo1") else DEFAULT_ELO1
    alpha = request.alpha if request.HasField("alpha") else DEFAULT_ALPHA
    beta = request.beta if request.HasField("beta") else DEFAULT_BETA
    if not (math.isfinite(elo0) and math.isfinite(elo1)) or elo0 >= elo1:
        _invalid(context, f"elo0 must be below elo1 (both finite: Elo points of V2 over V1, normalized Elo in a paired "
                          f"test on the relative score), got elo0={elo0:g} elo1={elo1:g}; e.g. elo0 0, elo1 5: is V2 "
                          f"at least 5 better, or not better at all?")
    if elo1 - elo0 < MIN_GAP or max(abs(elo0), abs(elo1)) > MAX_ELO:
        _invalid(context, f"elo1 must exceed elo0 by at least {MIN_GAP:g}, both within +/-{MAX_ELO:g} (a test "
                          f"between closer hypotheses never decides), got elo0={elo0:g} elo1={elo1:g}")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not MIN_ERROR_RATE <= value < 0.5:
            _invalid(context, f"{name} is an error rate: {MIN_ERROR_RATE:g} <= {name} < 0.5, got {value:g} (e.g. "
                              f"0.05)")
    window = request.window or DEFAULT_WINDOW
    if not 1 <= window <= MAX_WINDOW:
        _invalid(context, f"window (blocks in flight) must be 1..{MAX_WINDOW}, got {window}")
    max_blocks = request.max_blocks or DEFAULT_MAX_BLOCKS
    if not 1 <= max_blocks <= MAX_BLOCKS:
        _invalid(context, f"max_blocks must be 1..{MAX_BLOCKS}, got {max_blocks}")
    if request.deadline_ms and not MIN_DEADLINE_MS <= request.deadline_ms <= MAX_DEADLINE_MS:
        _invalid(context, f"deadline_ms must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms (the deadline of each "
                          f"Decide call; 0 means the default, {DEFAULTS.deadline_ms} ms), got {request.deadline_ms}")
    return {"elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta, "window": window, "max_blocks": max_blocks}


def _resolve(servicer: ArenaServicer, game: str, refs: list[str], context: grpc.ServicerContext) -> list[str]:
    """Bot ids of ``refs`` (NAME = its latest version); INVALID_ARGUMENT for a malformed ref, NOT_FOUND naming
    every unknown one."""
    try:
        for ref in refs:
            split_bot_ref(ref)
    except TournamentError as exc:
        _invalid(context, str(exc))
    resolved = [servicer.store.resolve_bot(game, ref) for ref in refs]
    unknown = [ref for ref, bid in zip(refs, resolved) if bid is None]
    if unknown:
        abort(context, grpc.StatusCode.NOT_FOUND, not_registered(servicer.store, unknown, game))
    return [bid for bid in resolved if bid is not None]


def create_sprt(servicer: ArenaServicer, request: arena_pb2.CreateSprtRequest,
                context: grpc.ServicerContext) -> arena_pb2.Sprt:
    """CreateSprt: check the request, store the SPRT tournament (kind "sprt", parameters in its ``extra``) and queue
    its first ``window`` blocks in one transaction; the controller (``arena.tournaments.sprt_controller``) does the
    rest."""
    game = request.game
    if game not in GAMES:
        _invalid(context, f"unknown game {game!r}; known games: {', '.join(sorted(GAMES))}")
    if not request.v1 or not request.v2:
        _invalid(context, "an SPRT needs two versions: v1 (the one to beat) and v2 (the new one)")
    numbers = _numbers(request, context)
    try:
        config = config_to_dict(game, config_from_proto(game, request.config if request.HasField("config") else None))
    except ValueError as exc:
        _invalid(context, str(exc))
    field_refs = list(request.field)
    if len(request.statistic) > 16 or request.statistic not in ("", *STATISTICS):
        _invalid(context, f"unknown SPRT statistic {request.statistic[:16]!r}; choose {' or '.join(STATISTICS)} (or "
                          f"leave it empty: {SCORE} with house bots, {POINTS} otherwise)")
    if request.house:
        return _create_paired(servicer, request, context, game, numbers, config)
    if request.statistic == SCORE:
        _invalid(context, "the relative-score statistic is the paired test's: give house bots for the other seats "
                          "(--house), or leave the statistic to its default (pairwise points)")
    v1, v2, *field = _resolve(servicer, game, [request.v1, request.v2, *field_refs], context)
    if v1 == v2:
        _invalid(context, f"{request.v1} and {request.v2} are the same bot {v1}: an SPRT compares two versions")
    info = GAMES[game].info
    if field and len(field) < 2:
        _invalid(context, f"a field needs at least 2 (k - 1) bots for k seats, so at least 2 (for 2 seats): the two "
                          f"tables of a block get different field bots; got {len(field)} ({', '.join(field)})")
    seats = request.seats or (2 if not field else min(DEFAULT_FIELD_SEATS, 1 + len(field) // 2))
    if not info.min_players <= seats <= info.max_players:
        _invalid(context, f"{info.title} is played by {info.min_players}..{info.max_players} seats, got {seats}")
    owners = {bid: servicer.store.owner_hash(game, split_bot_ref(bid)[0]) or "" for bid in (v1, v2, *field)}
    classes = owner_classes([v1, v2, *field], owners)
    tested = set(classes[:2])
    own = [bid for bid, c in zip(field, classes[2:]) if c in tested and bid not in (v1, v2)]
    if own:
        _invalid(context, f"the field cannot hold a bot of V1's or V2's owner: {', '.join(own)} (it would receive "
                          f"cards of the deal {v1} or {v2} holds at the other table); give a field of other "
                          f"owners' bots")
    deals = request.deals or default_deals(servicer.store.registration_open())
    if deals not in SPRT_DEAL_PLANS:
        _invalid(context, f"unknown SPRT deal plan {deals!r}; choose {' or '.join(SPRT_DEAL_PLANS)} (or leave it "
                          f"empty for the arena's default)")
    if not field and deals == "duplicate" and len(set(owner_classes([v1, v2], owners))) != 1:
        _invalid(context, f"without a field V1 and V2 play each other on every deal twice, which only two versions "
                          f"of one owner's bot may do; {v1} and {v2} have different owners: give a field of other "
                          f"bots (--field)")
    # one owner's versions sharing a deal (one sees the other's cards) do not count on the public ladder; nor does
    # any test whose start asked it not to (off_ladder)
    allowed = deals == "unique" or classes[0] != classes[1]
    params = SprtParams(v1=v1, v2=v2, seats=seats, field=tuple(field), field_owners=owner_classes(field, owners),
                        deals=deals, ladder=allowed and not request.off_ladder,
                        ladder_off=allowed and request.off_ladder, **numbers)
    try:
        check_field(params)
    except SprtPlanError as exc:
        _invalid(context, str(exc))
    if servicer.verify_bots:
        servicer._check_bots_ready(game, [v1, v2, *field], context)
    deadline_ms = request.deadline_ms or DEFAULTS.deadline_ms
    how = ("one deal at 2 tables" if deals == "duplicate" else "2 tables on unique deals (a deal of its own each)")
    formula = (f"paired blocks: each block is {how} ({v1} at one and {v2} at the other, in the same seat), "
               f"{params.window} block{'s' if params.window != 1 else ''} in flight, until the SPRT decides "
               f"(at most {params.max_blocks} block{'s' if params.max_blocks != 1 else ''} counted)")
    params = dataclasses.replace(params, extra={"formula": formula})
    stored, specs = _store_sprt(servicer, game, params, config, deadline_ms, (v1, v2, *field), context)
    tournament_id = stored.id
    log.info("SPRT %s: %s against %s (%s), %d seats, elo0 %g, elo1 %g, alpha %g, beta %g, %s deals (%s); %d "
             "blocks queued; seed commitment %s", tournament_id, v2, v1,
             f"field {', '.join(field)}" if field else "head to head", seats, params.elo0, params.elo1, params.alpha,
             params.beta, deals, "on the ladder" if params.ladder else "off the ladder", len(specs) // 2,
             stored.commitment)
    return get_message(servicer, tournament_id, context)


def _store_sprt(servicer: ArenaServicer, game: str, params: SprtParams, config: dict[str, Any], deadline_ms: int,
                bots: tuple[str, ...], context: grpc.ServicerContext) -> tuple[TournamentInfo, list[Any]]:
    """Store the SPRT tournament of ``params`` (a fresh secret seed) with its first ``window`` blocks queued, in one
    transaction; (the stored tournament, its queued match specs). ALREADY_EXISTS when its id was taken."""
    tournament_id = servicer.store.next_tournament_id()
    specs = [s for b in range(min(params.window, params.max_blocks))
             for s in block_specs(tournament_id, game, params, b, config, deadline_ms)]
    stored = TournamentInfo(
        id=tournament_id, game=game, bots=bots, seats_per_match=params.seats, rounds=1,
        seed=secrets.randbits(SEED_BITS), config=config, deadline_ms=deadline_ms, matches_total=len(specs),
        created_at=time.time(), kind=SPRT_KIND, extra=params.to_dict(), deals=params.deals)
    try:
        servicer.store.create_tournament(stored, specs)
    except StoreError as exc:
        abort(context, grpc.StatusCode.ALREADY_EXISTS, str(exc))
    return stored, specs


def _house_of(game: str, names: Sequence[str], seats: int, context: grpc.ServicerContext) -> tuple[str, ...]:
    """The house bots of a paired test, checked: k - 1 names ``house:<sample name>`` of sample bots that play
    ``game``; INVALID_ARGUMENT naming the bad one and the house bots there are."""
    from arena.match.local_bots import sample_bots_of

    playing = sample_bots_of(game)
    offered = ", ".join(f"{HOUSE_PREFIX}{n}" for n in playing)
    for name in names:
        if len(name) > limits.HOUSE_BOT or not is_house_bot(name) or name[len(HOUSE_PREFIX):] not in playing:
            _invalid(context, f"{name[:80]!r} is not a house bot of {game}; house bots: {offered}")
    if len(names) != seats - 1:
        _invalid(context, f"a paired test of {seats} seats needs {seats - 1} house bots (one per other seat, in "
                          f"order; a name may repeat), got {len(names)}")
    return tuple(names)


def _create_paired(servicer: ArenaServicer, request: arena_pb2.CreateSprtRequest, context: grpc.ServicerContext,
                   game: str, numbers: dict[str, Any], config: dict[str, Any]) -> arena_pb2.Sprt:
    """CreateSprt with house bots: the paired test with common random numbers (``SprtParams.house``). V1 and V2
    are registered bots; the other seats are house bots; duplicate deals; off the public ladder."""
    if request.field:
        _invalid(context, "a paired test seats house bots in the other seats: give house bots or a field, not both")
    if request.deals not in ("", "duplicate"):
        _invalid(context, f"a paired test replays one deal for V1 and V2: its deals are duplicate, got "
                          f"{request.deals[:16]!r}")
    v1, v2 = _resolve(servicer, game, [request.v1, request.v2], context)
    if v1 == v2:
        _invalid(context, f"{request.v1} and {request.v2} are the same bot {v1}: an SPRT compares two versions")
    info = GAMES[game].info
    seats = request.seats or 1 + len(request.house)
    if not info.min_players <= seats <= info.max_players:
        _invalid(context, f"{info.title} is played by {info.min_players}..{info.max_players} seats, got {seats}")
    house = _house_of(game, list(request.house), seats, context)
    owners = {bid: servicer.store.owner_hash(game, split_bot_ref(bid)[0]) or "" for bid in (v1, v2)}
    if len(set(owner_classes([v1, v2], owners))) != 1:
        _invalid(context, f"a paired test gives V1 and V2 the same hand of every deal, which only two versions of "
                          f"one owner's bot may get; {v1} and {v2} have different owners: compare them against a "
                          f"field (--field) instead")
    params = SprtParams(v1=v1, v2=v2, seats=seats, house=house, deals="duplicate", ladder=False,
                        statistic=request.statistic or SCORE, **numbers)
    if params.statistic == SCORE and max(abs(params.elo0), abs(params.elo1)) > score_sprt.MAX_NELO:
        _invalid(context, f"with the relative-score statistic elo0 and elo1 are normalized Elo within "
                          f"+/-{score_sprt.MAX_NELO:g}, got {params.elo0:g} and {params.elo1:g}")
    try:
        check_field(params)
    except SprtPlanError as exc:
        _invalid(context, str(exc))
    if servicer.verify_bots:
        servicer._check_bots_ready(game, [v1, v2], context)
    deadline_ms = request.deadline_ms or DEFAULTS.deadline_ms
    formula = (f"paired blocks with common random numbers: each block is one scenario (a deal, house bots "
               f"{', '.join(house)} in the other seats, every seat's seed) played with {v1} and with {v2} at seat s "
               f"(rotating), {params.window} block{'s' if params.window != 1 else ''} in flight, until the SPRT "
               f"decides (at most {params.max_blocks} counted); not on the public ladder")
    params = dataclasses.replace(params, extra={"formula": formula})
    stored, specs = _store_sprt(servicer, game, params, config, deadline_ms, (v1, v2), context)
    tournament_id = stored.id
    log.info("SPRT %s (paired, house bots %s, on %s): %s against %s, %d seats, elo0 %g, elo1 %g (%s); %d blocks "
             "queued; seed commitment %s", tournament_id, ", ".join(house), params.statistic, v2, v1, seats,
             params.elo0, params.elo1, "normalized Elo" if params.statistic == SCORE else "Elo", len(specs) // 2,
             stored.commitment)
    return get_message(servicer, tournament_id, context)


def get_sprt(servicer: ArenaServicer, request: arena_pb2.GetSprtRequest,
             context: grpc.ServicerContext) -> arena_pb2.Sprt:
    """GetSprt: the SPRT ``request.id`` as it stands (public; the seed only once it has ended)."""
    if not TOURNAMENT_ID_RE.match(request.id or ""):
        _invalid(context, f"bad tournament id {request.id!r}: ids look like t3")
    return get_message(servicer, request.id, context)


def get_message(servicer: ArenaServicer, tournament_id: str, context: grpc.ServicerContext) -> arena_pb2.Sprt:
    info = servicer.store.get_tournament(tournament_id)
    if info is None:
        abort(context, grpc.StatusCode.NOT_FOUND, f"no tournament {tournament_id} in this arena")
    if info.kind != SPRT_KIND:
        abort(context, grpc.StatusCode.NOT_FOUND, f"tournament {tournament_id} is not an SPRT (its kind is "
                                                   f"{info.kind}; `arena tournament status {tournament_id}`)")
    return sprt_message(info, servicer.store.sprt_record(info.game, info.id))


def sprt_message(info: TournamentInfo, record: SprtRecord) -> arena_pb2.Sprt:
    """The ``Sprt`` message of a stored SPRT tournament and its Redis state; after the verdict, the numbers it was
    decided on. Raises ``SprtPlanError`` / ``SprtError`` for a tournament whose parameters are malformed."""
    params = SprtParams.from_dict(info.extra)
    counts = record.final if record.verdict else record.counts
    scores = record.final_scores if record.verdict else record.scores
    st = sprt_status(params, counts, scores)
    lower, upper = bounds(params.alpha, params.beta)
    m = 2 * (params.seats - 1)
    running = info.state == "running" and not record.verdict
    in_flight = max(0, info.matches_total // 2 - record.settled) if running else 0
    return arena_pb2.Sprt(
        tournament=tournament_message(info), v1=params.v1, v2=params.v2, field=list(params.field),
        seats=params.seats, elo0=params.elo0, elo1=params.elo1, alpha=params.alpha, beta=params.beta,
        window=params.window, max_blocks=params.max_blocks, blocks=st.blocks, blocks_void=record.void,
        blocks_in_flight=in_flight, counts=[counts.get(h, 0) for h in range(-m, m + 1)],
        llr=record.llr if record.verdict and record.llr is not None else st.llr, lower=lower, upper=upper,
        elo=st.elo, elo_margin=st.margin, verdict=record.verdict, reason=record.reason,
        decided_at=record.decided_at or 0.0, ladder_counted=params.ladder, ladder_note=params.ladder_note,
        house=list(params.house), statistic=params.statistic,
        score_counts=[arena_pb2.SprtScoreCount(outcome=v, blocks=n) for v, n in sorted(scores.items())],
        mean_outcome=score_sprt.mean_outcome(score_sprt.ScoreState.of(scores)) if params.statistic == SCORE
        else math.nan)


__all__ = ["SprtError", "create_sprt", "get_message", "get_sprt", "sprt_message"]
