"""Reply builders of the Arena service: the ``Tournament`` and ``MatchSummary`` messages of stored
tournaments and results, with what is still secret left out (pure: no Redis, no gRPC context)."""

from __future__ import annotations

import logging
from typing import Any

from arena.store import BotEntry, Store, TournamentInfo
from arena.tournaments.deals import tables_per_deal
from arena.tournaments.formats import formats
from arena.tournaments.round_robin import formula_of
from arena_sdk.pb import arena_pb2
from arena_sdk.wire import config_from_dict, config_to_proto

log = logging.getLogger(__name__)


def tournament_message(info: TournamentInfo, store: Store | None = None) -> arena_pb2.Tournament:
    """The ``Tournament`` message of a stored tournament: the commitment to its secret seed always, the seed itself
    only once the tournament has ended (``TournamentInfo.ended``); then its format's fields (``Format.describe``,
    ``arena.tournaments.formats``; ``store`` None for a dry run's plan)."""
    message = arena_pb2.Tournament(
        id=info.id, game=info.game, bots=list(info.bots), seats_per_match=info.seats_per_match,
        rounds=info.rounds, matches_total=info.matches_total, matches_done=info.matches_done,
        faults=info.faults, state=info.state, created_at=info.created_at,
        config=config_to_proto(info.game, config_from_dict(info.game, info.config)), deadline_ms=info.deadline_ms,
        formula=formula_of(info), matches_cancelled=info.matches_cancelled, matches_failed=info.matches_failed,
        deals=info.deals, deal_count=info.deal_count,
        tables_per_deal=tables_per_deal(len(info.bots), info.seats_per_match, info.deals),
        seed_commitment=info.commitment, seed_hex=info.revealed_seed(),
    )
    message.format = info.kind
    fmt = formats().get(info.kind)
    return fmt.describe(message, info, store) if fmt is not None else message


def match_summary(result: dict[str, Any], revealed: bool = True) -> arena_pb2.MatchSummary:
    """The ``MatchSummary`` of a stored result (``Store.get_result``); its deal (seed, round, deal, table,
    attempt) only when ``revealed``."""
    summary = arena_pb2.MatchSummary(
        match_id=result["match_id"], tournament_id=result.get("tournament") or "", game=result["game"],
        seats=list(result["seats"]), scores=[float(x) for x in result["scores"]],
        ranks=[int(x) for x in result["ranks"]], faults=[int(x) for x in result["faults"]],
        rating_deltas=[float(x) for x in result.get("deltas", [])], finished_at=float(result.get("stored_at", 0.0)),
        revealed=revealed,
    )
    if revealed:
        deal = result.get("deal") or {}
        summary.seed = int(result.get("seed") or 0)
        summary.round, summary.deal, summary.table, summary.attempt = (
            int(deal.get(key, 0)) for key in ("round", "deal", "table", "attempt"))
    return summary


def bot_message(bot: BotEntry, owner: str = "") -> arena_pb2.BotRecord:
    """The ``BotRecord`` of a registered bot version; ``owner`` is its NAME's public owner id ("" for none)."""
    return arena_pb2.BotRecord(name=bot.name, endpoint=bot.endpoint, game=bot.game,
                               registered_at=bot.registered_at, version=bot.version, bot_id=bot.bot_id,
                               sdk_version=bot.sdk_version, author=bot.author, updated_at=bot.updated_at,
                               has_bot_secret=bool(bot.secret), owner=owner)


def withheld_reason(tournament_id: str, info: TournamentInfo | None) -> str:
    """Why the deals and records of ``tournament_id``'s matches are not shown yet ("" when they may be: the
    tournament has ended). A bot of a tournament that has not ended could still receive cards of those deals."""
    if info is None:
        return f"tournament {tournament_id} is not stored; its matches' deals and records are not shown"
    if info.ended:
        return ""
    unsettled = info.matches_total - info.matches_done - info.matches_cancelled - info.matches_failed
    if info.state == "running":
        why = f"tournament {tournament_id} is still running"
    else:
        why = (f"tournament {tournament_id} is {info.state}, but {unsettled} of its "
               f"match{'es are' if unsettled != 1 else ' is'} still with a worker")
    return (f"{why}: the deals and records of its matches are shown once it has ended (a bot of it could still "
            f"receive those cards)")


def ladder_message(game: str, entries: Any) -> arena_pb2.Ladder:
    return arena_pb2.Ladder(game=game, entries=[
        arena_pb2.LadderEntry(rank=e.rank, bot=e.bot, rating=e.rating, matches=e.matches, wins=e.wins,
                              mean_score=e.mean_score)
        for e in entries
    ])
