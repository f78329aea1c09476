"""``GetLiveMatch``: a match a worker is playing now, as the public may follow it (the match viewer's frames in the
public perspective, ``arena.render.frames``), cut here on the referee from what the worker published
(``arena.store.live``): no hand, no seed, no action still hidden (a card chosen for a simultaneous reveal), no hidden
question.

While its tournament runs, a match's cards are shown live only when no other table plays its deal (one table per
deal: unique deals, or duplicate deals with too few bots for two tables): the cards played at one table of a
duplicate deal are the hands of the same seats at its other tables, which may still be playing.

Cost: the frames of a match are rebuilt from its start (``build_frames``), about 0.1 s of CPU at the end of a match
of 1,800 decisions. ``LiveFrames`` keeps each asked match's frames, as JSON, and builds them again only when its
worker has published since, and not sooner than ``REBUILD_COST_FACTOR`` times the last build's time after it: any
number of viewers cost one build per publication, and a long match at most a tenth of a core however often it is
asked. A viewer that holds frames asks from ``settled_frames`` on (``GetLiveMatchRequest.from_frame``), so each poll
carries what changed, not the whole match.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc

from arena.match.record import Fault, Forfeit, Limits, MatchRecord, MatchResult, SeatSpec
from arena.render.base import RenderError
from arena.render.frames import PUBLIC, build_frames
from arena.server.replies import tournament_message
from arena.server.requests import abort
from arena.store import Store
from arena_sdk.pb import arena_pb2

MAX_MATCH_ID = 64
LIVE_CACHE_MATCHES = 64  # live matches whose frames are kept (the least recently asked is dropped); ~1.3 MB each
REBUILD_MIN_S = 0.25  # a match's frames are built again at most this often (its worker publishes every 0.5 s)
REBUILD_COST_FACTOR = 10  # ... and no sooner than this many times the last build's time after it


def live_withheld(store: Store, tournament_id: str) -> str:
    """Why a live match of ``tournament_id`` ("" outside tournaments) is not shown ("" when it may be)."""
    if not tournament_id:
        return ""
    info = store.get_tournament(tournament_id)
    if info is None:
        return f"tournament {tournament_id} is not stored"
    if tournament_message(info).tables_per_deal > 1:  # as its format counts them (an SPRT's block: one deal, 2 tables)
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


@dataclass(frozen=True)
class LiveFrames:
    """The public frames of one play of a live match, built from the first ``entries`` of its log: each frame as
    JSON (``frames``), the rest of ``MatchFrames.to_dict`` around them (``prefix`` + frames joined by "," +
    ``SUFFIX``), the decisions the public saw (``decisions``) and ``settled`` (``MatchFrames.settled``); or why they
    cannot be shown (``withheld``)."""

    started_at: float
    entries: int
    frames: tuple[str, ...] = ()
    prefix: str = ""
    decisions: int = 0
    settled: int = 0
    withheld: str = ""

    SUFFIX = "]}"

    def frames_json(self, first: int) -> str:
        """The frames from index ``first`` on, in ``MatchFrames.to_dict``'s JSON (its ``result`` null)."""
        return self.prefix + ",".join(self.frames[first:]) + self.SUFFIX


def build_live_frames(match_id: str, live: Any) -> LiveFrames:
    """The ``LiveFrames`` of a published match (``LiveStore.live_match``)."""
    started_at = float(live.head.get("started_at", 0.0))
    try:
        shown = build_frames(_partial_record(match_id, live), PUBLIC)
    except (RenderError, KeyError, TypeError, ValueError) as exc:
        return LiveFrames(started_at, live.entries, withheld=f"the published part of this match cannot be shown: {exc}")
    outline = shown.to_dict()
    frames = tuple(json.dumps(f) for f in outline.pop("frames"))
    outline["result"] = None
    prefix = json.dumps(outline)[:-1] + ', "frames": ['
    return LiveFrames(started_at, live.entries, frames, prefix, shown.seen, shown.settled)


class LiveFramesCache:
    """The ``LiveFrames`` of the live matches asked for, at most ``size`` (the least recently asked dropped), each
    built again when its log has grown, at most once every ``max(REBUILD_MIN_S, REBUILD_COST_FACTOR * last build
    time)`` seconds; a play started again (another ``started_at``) is built at once. Concurrent askers of one match
    wait for one build. Thread-safe (the gRPC server's threads)."""

    def __init__(self, size: int = LIVE_CACHE_MATCHES, clock: Callable[[], float] = time.monotonic) -> None:
        self.size, self.clock = size, clock
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, tuple[LiveFrames, float]] = OrderedDict()  # match id -> (frames, next build)
        self._building: dict[str, threading.Lock] = {}
        self.builds = 0  # frames built so far (for tests and metrics)

    def _fresh(self, match_id: str, started_at: float, entries: int, final: bool) -> LiveFrames | None:
        kept = self._kept.get(match_id)
        if kept is None:
            return None
        frames, next_build = kept
        if frames.started_at != started_at or (frames.entries != entries and (final or self.clock() >= next_build)):
            return None
        self._kept.move_to_end(match_id)
        return frames

    def get(self, store: Store, match_id: str, started_at: float, entries: int,
            final: bool = False) -> LiveFrames | None:
        """The frames of ``match_id`` whose head says ``started_at`` and whose log holds ``entries`` (``live_peek``):
        kept ones when fresh enough, else built from the log read now. ``final``: the head says the match ended,
        so kept frames of another log length are never fresh (an ended answer carries the last frames). None when
        the match is no longer live."""
        with self._lock:
            frames = self._fresh(match_id, started_at, entries, final)
            if frames is not None:
                return frames
            building = self._building.setdefault(match_id, threading.Lock())
        with building:
            with self._lock:  # built by another asker while this one waited
                frames = self._fresh(match_id, started_at, entries, final)
            if frames is not None:
                return frames
            try:
                live = store.live_match(match_id)
                if live is None:
                    return None
                t0 = self.clock()
                frames = build_live_frames(match_id, live)
                cost = self.clock() - t0
            finally:
                with self._lock:
                    if self._building.get(match_id) is building:
                        del self._building[match_id]
            with self._lock:
                self.builds += 1
                self._kept[match_id] = (frames, self.clock() + max(REBUILD_MIN_S, REBUILD_COST_FACTOR * cost))
                self._kept.move_to_end(match_id)
                while len(self._kept) > self.size:
                    self._kept.popitem(last=False)
            return frames


def _not_live(context: grpc.ServicerContext, match_id: str) -> NoReturn:
    abort(context, grpc.StatusCode.NOT_FOUND,
          f"no match {match_id} is being played now (a finished match is read with GetMatch)")


def get_live_match(store: Store, request: arena_pb2.GetLiveMatchRequest, context: grpc.ServicerContext,
                   cache: LiveFramesCache) -> arena_pb2.LiveMatch:
    """The answer of ``GetLiveMatch`` (see the proto): NOT_FOUND when no worker is playing ``match_id``. The frames
    come from ``cache``."""
    match_id = request.match_id
    if not match_id or len(match_id) > MAX_MATCH_ID:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"match_id is required, at most {MAX_MATCH_ID} characters")
    peek = store.live_peek(match_id)
    if peek is None:
        _not_live(context, match_id)
    head, entries = peek
    ended = head.get("ended") is True
    tournament_id = str(head.get("tournament") or "")
    withheld = live_withheld(store, tournament_id)
    frames = None
    if not withheld:
        frames = cache.get(store, match_id, float(head.get("started_at", 0.0)), entries, final=ended)
        if frames is None:  # it ended between the two reads
            _not_live(context, match_id)
        withheld = frames.withheld
    reply = arena_pb2.LiveMatch(match_id=match_id, game=str(head.get("game", "")),
                                seats=[str(s) for s in head.get("seats") or []], tournament_id=tournament_id,
                                updated_at=float(head.get("updated_at", 0.0)),
                                started_at=float(head.get("started_at", 0.0)), withheld=withheld,
                                ended=ended)
    if frames is not None and not withheld:
        first = min(request.from_frame, len(frames.frames))
        reply.decisions = frames.decisions  # the decisions the public sees: a hidden question is not counted
        reply.frames_json = frames.frames_json(first)
        reply.first_frame, reply.frame_count, reply.settled_frames = first, len(frames.frames), frames.settled
    return reply
