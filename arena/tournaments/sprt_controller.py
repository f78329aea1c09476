"""The controller of SPRT tournaments (kind "sprt", ``arena sprt``): counts each completed block once, keeps
``window`` blocks in flight, and finishes the tournament when the test has decided.

Called by the worker after every settled match of the tournament and by the periodic sweep
(``arena.tournaments.controllers``), from any worker, any number of times; every step is idempotent:

1. A verdict already stored (a crash between storing it and finishing): finish the tournament, dropping its queued
   jobs (``Store.finish_dropping_queued``), and stop.
2. Count the blocks whose two tables are settled: the block of the settled match (after a match), or every block
   not counted yet (a sweep, which makes up for a hook lost to a crash). Both results stored: the block's outcome,
   ``arena.ratings.sprt.block_outcome`` of V1's ranks at table 0 and V2's at table 1, seat s of the plan
   (``arena.tournaments.sprt_plan``). A table that failed for good (given up after ``max_deliveries``) or was
   dropped: the block is *void*, not counted. Each block is counted once whatever the number of callers
   (``Store.sprt_count_block``, one script).
3. Decide: the LLR of the counts crosses a Wald bound (verdict "H1" or "H0"), or ``max_blocks`` blocks are
   counted, or ``max_blocks`` blocks were void (every table failing: the arena cannot run this test; verdict
   "inconclusive"). The verdict is stored once (the first stays) with the counts it was taken on, then the
   tournament is finished: queued jobs are dropped, never played; matches a worker already holds are played and
   count on the ladder (when the test's matches do, ``SprtParams.ladder``), not in the test.
4. Otherwise queue blocks until ``window`` are in flight (queued, not yet counted or void), never more than
   ``max_blocks`` counted plus in flight: the next block numbers are ``matches_total / 2`` on, queued with a
   compare-and-set on ``matches_total`` (``Store.extend_tournament(expect_total=...)``), so two callers never queue
   one block twice. A void block is thereby replaced by a new block (a new deal), so the test can still end.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from arena.core.specs import MatchSpec, is_house_bot, match_id
from arena.core.text import plural
from arena.ratings import score_sprt
from arena.ratings.sprt import SprtError, SprtState, SprtStatus, block_outcome, status
from arena.tournaments.formats import Format
from arena.tournaments.sprt_plan import SCORE, SPRT_KIND, SprtParams, block_of, block_specs, plan_block
from arena.tournaments.standings import StandingsLine
from arena_sdk.games import GAMES

if TYPE_CHECKING:
    from arena.store import SprtRecord, Store
    from arena.store.tournaments import TournamentInfo
    from arena_sdk.pb import arena_pb2

log = logging.getLogger(__name__)

INCONCLUSIVE = "inconclusive"
CAS_ATTEMPTS = 5  # queueing races lost in a row before a caller leaves the top-up to the winner


def sprt_state(params: SprtParams, counts: Mapping[int, int]) -> SprtState:
    """The ``SprtState`` of stored counts (outcome in half points -> blocks). Raises ``SprtError`` for an outcome
    outside -2(k-1)..2(k-1)."""
    state = SprtState.new(params.seats)
    m = state.max_half_points
    values = [0] * (2 * m + 1)
    for outcome, n in counts.items():
        if not -m <= outcome <= m:
            raise SprtError(f"a {params.seats}-seat block outcome is in -{m}..{m}, got {outcome}")
        values[outcome + m] = int(n)
    return SprtState(params.seats, tuple(values))


def sprt_status(params: SprtParams, counts: Mapping[int, int],
                scores: Mapping[float, int] | None = None) -> SprtStatus:
    """Verdict (by the bounds only), LLR, bounds and Elo estimate of the counts under the test's parameters (the
    head-to-head model without a field: ``arena.ratings.sprt``); a test on the relative score (``params.statistic``
    "score") reads ``scores`` (outcome -> blocks) instead, its Elo in normalized Elo (``arena.ratings.score_sprt``)."""
    if params.statistic == SCORE:
        return score_sprt.status(score_sprt.ScoreState.of(scores or {}), params.elo0, params.elo1, params.alpha,
                                 params.beta)
    return status(sprt_state(params, counts), params.elo0, params.elo1, params.alpha, params.beta,
                  head_to_head=params.head_to_head)


def counted_blocks(record: SprtRecord) -> int:
    """Blocks counted so far (either statistic)."""
    return sum(record.counts.values()) + sum(record.scores.values())


def _settle_block(store: Store, info: TournamentInfo, params: SprtParams, block: int) -> bool:
    """Count block ``block`` when both its tables are settled (void when one failed or is void: every seat failed);
    True when it was counted now. A block with a table dropped (its test decided or cancelled meanwhile: a queued
    match is dropped only then) is neither counted nor void: it was not played, and no block replaces it."""
    ids = [match_id(info.id, 2 * block + t) for t in (0, 1)]
    tables = store.table_outcomes(info.game, info.id, ids)
    if any(t.state in ("failed", "void") for t in tables):
        counted = store.sprt_count_block(info.game, info.id, block, None)
        if counted:
            log.warning("SPRT %s: block %d is void (a table %s); a new block replaces it", info.id, block,
                        "/".join(t.state for t in tables))
        return counted
    if any(t.state != "stored" for t in tables):  # pending, or dropped with the test's end
        return False
    seat = plan_block(params, block).seat
    if params.statistic == SCORE:
        lower = GAMES[info.game].info.lower_score_is_better
        score = score_sprt.block_score_outcome(tables[0].scores, tables[1].scores, seat, lower, tables[0].ranks,
                                               tables[1].ranks)
        return store.sprt_count_block(info.game, info.id, block, None, score=score)
    outcome = block_outcome(tables[0].ranks, tables[1].ranks, seat)
    return store.sprt_count_block(info.game, info.id, block, outcome)


def _decision(params: SprtParams, record: SprtRecord) -> tuple[str, str, SprtStatus] | None:
    """(verdict, reason, status) when the test is over, else None."""
    st = sprt_status(params, record.counts, record.scores)
    if st.verdict is not None:
        which, bound = ("upper", st.upper) if st.verdict == "H1" else ("lower", st.lower)
        blocks = plural(st.blocks, "block")
        return st.verdict, f"LLR {st.llr:.3f} reached the {which} bound {bound:.3f} after {blocks}", st
    if st.blocks >= params.max_blocks:
        return INCONCLUSIVE, (f"{plural(st.blocks, 'block')} (the maximum) without the LLR ({st.llr:.3f}) leaving "
                              f"[{st.lower:.3f}, {st.upper:.3f}]"), st
    if record.void >= params.max_blocks:
        were = "was" if record.void == 1 else "were"
        void = plural(record.void, "block")
        return INCONCLUSIVE, (f"{void} {were} void (a table failed for good each time), as many as the maximum of "
                              f"blocks; the arena cannot run this test"), st
    return None


def _finish(store: Store, info: TournamentInfo) -> None:
    finished, dropped = store.finish_dropping_queued(info.game, info.id)
    if finished:
        log.info("SPRT %s finished: %d queued matches dropped", info.id, dropped)


def control(store: Store, info: TournamentInfo, spec: MatchSpec | None) -> None:
    """The controller of a running SPRT tournament ``info`` after the settled match ``spec`` (None: a sweep);
    idempotent (module docstring)."""
    params = SprtParams.from_dict(info.extra)
    game, tid = info.game, info.id
    record = store.sprt_record(game, tid)
    if record.verdict:
        _finish(store, info)
        return
    if spec is not None:
        candidates = [block_of(spec)]
    else:
        settled = store.sprt_settled_blocks(game, tid)
        candidates = [b for b in range(info.matches_total // 2) if b not in settled]
    if any([_settle_block(store, info, params, b) for b in candidates]):
        record = store.sprt_record(game, tid)
    decided = _decision(params, record)
    if decided is not None:
        verdict, reason, st = decided
        if store.sprt_decide(game, tid, verdict, reason, record.counts, st.llr, scores=record.scores):
            log.info("SPRT %s (%s vs %s): %s, %s; %s %+.1f +/- %.1f", tid, params.v1, params.v2, verdict, reason,
                     "nElo" if params.statistic == SCORE else "Elo",
                     st.elo, st.margin)
        _finish(store, info)
        return
    _top_up(store, info, params, record)


def _top_up(store: Store, info: TournamentInfo, params: SprtParams, record: SprtRecord) -> None:
    """Queue blocks until ``window`` are in flight (module docstring, step 4)."""
    counted = counted_blocks(record)
    for _ in range(CAS_ATTEMPTS):
        queued = info.matches_total // 2
        in_flight = queued - record.settled
        room = min(params.window - in_flight, params.max_blocks - counted - in_flight,
                   2 * params.max_blocks - queued)
        if room <= 0:
            return
        specs = [s for b in range(queued, queued + room)
                 for s in block_specs(info.id, info.game, params, b, info.config, info.deadline_ms)]
        if store.extend_tournament(info.game, info.id, specs, expect_total=2 * queued):
            log.info("SPRT %s: blocks %d..%d queued", info.id, queued, queued + room - 1)
            return
        fresh = store.get_tournament(info.id)
        if fresh is None or fresh.state != "running":
            return
        info = fresh
        record = store.sprt_record(info.game, info.id)


class Sprt(Format):
    """The head-to-head SPRT (``arena sprt``): created by CreateSprt, not CreateTournament (no ``option_field``);
    this module's ``control`` runs it. Its deals are its blocks, each played at 2 tables ("duplicate"), or its
    tables ("unique")."""

    name = SPRT_KIND
    title = "SPRT"
    controlled = True

    def control(self, store: Store, info: TournamentInfo, spec: MatchSpec | None) -> None:
        control(store, info, spec)

    def standings(self, store: Store, info: TournamentInfo,
                  lines: Sequence[StandingsLine]) -> tuple[list[StandingsLine], str] | None:
        """A paired test's house bots after the versions under test: a house bot holds every seat but V1's or
        V2's, so its points add up over those seats and would top the standings. The versions keep their points
        order and ranks; the house bots follow, ranked after them."""
        tested = [x for x in lines if not is_house_bot(x.bot)]
        house = [x for x in lines if is_house_bot(x.bot)]
        if not house:
            return None
        below = len(tested)
        house = [replace(x, rank=below + 1 + sum(1 for y in house if y.points > x.points)) for x in house]
        tested = [replace(x, rank=1 + sum(1 for y in tested if y.points > x.points)) for x in tested]
        return tested + house, ("points, the versions under test first: the house bots follow, each holding "
                                "several seats of every table, its points added up over them")

    def describe(self, message: arena_pb2.Tournament, info: TournamentInfo,
                 store: Store | None) -> arena_pb2.Tournament:
        if info.deals == "unique":
            message.deal_count, message.tables_per_deal = info.matches_total, 1
        else:
            message.deal_count, message.tables_per_deal = info.matches_total // 2, 2
        return message


FORMAT = Sprt()
