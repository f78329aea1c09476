"""``GetLiveMatch``: a match a worker is playing now, as the public may follow it (the match viewer's frames in the
public perspective, ``arena.render.frames``), cut here on the referee from what the worker published
(``arena.store.live``): no hand, no seed, no action still hidden (a card chosen for a simultaneous reveal), no hidden
question.

While its tournament runs, a match's cards are shown live only when no other table plays its deal (one table per
deal: unique deals, or duplicate deals with too few bots for two tables): the cards played at one table of a
duplicate deal are the hands of the same seats at its other tables, which may still be playing.
"""

from __future__ import annotations

import json
from typing import Any

import grpc

from arena.match.record import Fault, Forfeit, Limits, MatchRecord, MatchResult, SeatSpec
from arena.render.base import RenderError
from arena.render.frames import PUBLIC, build_frames
from arena.server.requests import abort
from arena.store import Store
from arena.tournaments.deals import tables_per_deal
from arena_sdk.pb import arena_pb2

MAX_MATCH_ID = 64


def live_withheld(store: Store, tournament_id: str) -> str:
    """Why a live match of ``tournament_id`` ("" outside tournaments) is not shown ("" when it may be)."""
    if not tournament_id:
        return ""
    info = store.get_tournament(tournament_id)
    if info is None:
        return f"tournament {tournament_id} is not stored"
    if info.kind == "sprt" or tables_per_deal(len(info.bots), info.seats_per_match, info.deals) > 1:
        return (f"the deal of this match is played at other tables of tournament {tournament_id} too: its cards are "
                "shown once the tournament has ended")
    return ""


def _partial_record(match_id: str, live: Any) -> MatchRecord:
    """The published part of a running match as a ``MatchRecord`` (no result yet), for ``build_frames``."""
    head = live.head
    return MatchRecord(
        match_id=match_id, game=str(head.get("game", "")), config=dict(head.get("config") or {}),
        seed=head.get("seed"), deals=list(head.get("deals") or []),
        seats=tuple(SeatSpec(str(name), "") for name in head.get("seats") or []), deadline_ms=0,
        decisions=tuple(live.decisions),
        faults=tuple(Fault(f["kind"], f["seat"], f["hand"], f["turn"], f.get("detail", ""), f.get("decision"))
                     for f in live.faults),
        result=MatchResult((), (), ()), started_at=float(head.get("started_at", 0.0)), duration_s=0.0,
        forfeits=tuple(Forfeit(x["seat"], x["reason"], x["hand"], x["turn"], x.get("detail", ""), x.get("fault"))
                       for x in live.forfeits),
        limits=Limits(), time_limit_at=None)


def get_live_match(store: Store, request: arena_pb2.GetLiveMatchRequest,
                   context: grpc.ServicerContext) -> arena_pb2.LiveMatch:
    """The answer of ``GetLiveMatch`` (see the proto): NOT_FOUND when no worker is playing ``match_id``."""
    match_id = request.match_id
    if not match_id or len(match_id) > MAX_MATCH_ID:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"match_id is required, at most {MAX_MATCH_ID} characters")
    live = store.live_match(match_id)
    if live is None:
        abort(context, grpc.StatusCode.NOT_FOUND,
              f"no match {match_id} is being played now (a finished match is read with GetMatch)")
    head = live.head
    tournament_id = str(head.get("tournament") or "")
    reply = arena_pb2.LiveMatch(match_id=match_id, game=str(head.get("game", "")),
                                seats=[str(s) for s in head.get("seats") or []], tournament_id=tournament_id,
                                updated_at=float(head.get("updated_at", 0.0)))
    reply.withheld = live_withheld(store, tournament_id)
    if not reply.withheld:
        try:
            shown = build_frames(_partial_record(match_id, live), PUBLIC)
        except (RenderError, KeyError, TypeError, ValueError) as exc:
            reply.withheld = f"the published part of this match cannot be shown: {exc}"
        else:
            reply.decisions = shown.seen  # the decisions the public sees: a hidden question is not counted
            frames = shown.to_dict()
            frames["result"] = None
            reply.frames_json = json.dumps(frames)
    return reply
