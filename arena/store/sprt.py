"""SPRT tournaments (``arena sprt``): the test's counts per block outcome, which blocks were counted, the verdict,
and the settlement of a block's two matches; every key under the tournament's game hash tag (``keys``)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.store.keys import (
    JOBS_GROUP,
    cancelled_key,
    failed_key,
    jobs_key,
    result_key,
    sprt_blocks_key,
    sprt_key,
    tournament_key,
)
from arena.store.scripts import SPRT_COUNT_BLOCK, SPRT_DECIDE
from arena.store.tournaments import TournamentStore


@dataclass(frozen=True)
class SprtRecord:
    """What Redis holds of one SPRT.

    Attributes: counts (block outcome in half points -> blocks counted with it); scores (a paired test on the
    relative score: block outcome, game score units -> blocks; ``arena.ratings.score_sprt``); void (blocks not
    counted: a table failed for good); settled (blocks counted or void); verdict ("H0" | "H1" | "inconclusive", ""
    while running); reason (one sentence, "" while running); decided_at (s since epoch, None while running); final
    and final_scores (the counts and scores the verdict was taken on; empty while running); llr (the LLR at the
    verdict, None before).
    """

    counts: dict[int, int] = field(default_factory=dict)
    void: int = 0
    settled: int = 0
    verdict: str = ""
    reason: str = ""
    decided_at: float | None = None
    final: dict[int, int] = field(default_factory=dict)
    llr: float | None = None
    scores: dict[float, int] = field(default_factory=dict)
    final_scores: dict[float, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TableOutcome:
    """How one match of a block was settled: state "stored" (``ranks``: competition ranks in seat order, 1 = best;
    ``scores``: game scores in seat order), "void" (stored, but every seat failed), "failed" (given up after too many
    deliveries), "cancelled" (dropped) or "pending" (not settled yet)."""

    state: str
    ranks: tuple[int, ...] = ()
    scores: tuple[float, ...] = ()


class SprtStore(TournamentStore):
    """The Redis state of SPRT tournaments (``arena.tournaments.sprt_controller`` keeps it)."""

    def sprt_count_block(self, game: str, tournament_id: str, block: int, outcome: int | None,
                         score: float | None = None) -> bool:
        """Count block ``block`` with ``outcome`` (half points, ``arena.ratings.sprt.block_outcome``; None: void,
        a table failed), or with ``score`` (a relative-score difference, ``arena.ratings.score_sprt``; then
        ``outcome`` is ignored), unless it was counted before, in one script (``scripts.SPRT_COUNT_BLOCK``), so two
        workers settling the two tables of one block at once count it exactly once. Returns True when counted now."""
        script = self.client.register_script(SPRT_COUNT_BLOCK)
        if score is not None:
            args = [str(int(block)), repr(float(score)), "d:"]
        else:
            args = [str(int(block)), "void" if outcome is None else str(int(outcome))]
        return bool(int(script(keys=[sprt_blocks_key(game, tournament_id), sprt_key(game, tournament_id)],
                               args=args)))

    def sprt_record(self, game: str, tournament_id: str) -> SprtRecord:
        """The SPRT's counts, void and settled blocks and verdict, read in one transaction (a snapshot)."""
        pipe = self.client.pipeline(transaction=True)
        pipe.hgetall(sprt_key(game, tournament_id))
        pipe.hlen(sprt_blocks_key(game, tournament_id))
        raw, settled = pipe.execute()
        counts = {int(k[2:]): int(v) for k, v in raw.items() if k.startswith("h:")}
        scores = {float(k[2:]): int(v) for k, v in raw.items() if k.startswith("d:")}
        stored = json.loads(raw["final"]) if raw.get("final") else {}
        final = {int(k): int(v) for k, v in stored.items() if not k.startswith("d:")}
        final_scores = {float(k[2:]): int(v) for k, v in stored.items() if k.startswith("d:")}
        return SprtRecord(counts=counts, void=int(raw.get("void") or 0), settled=int(settled),
                          verdict=raw.get("verdict", ""), reason=raw.get("reason", ""),
                          decided_at=float(raw["decided_at"]) if raw.get("decided_at") else None, final=final,
                          llr=float(raw["llr"]) if raw.get("llr") else None, scores=scores,
                          final_scores=final_scores)

    def sprt_settled_blocks(self, game: str, tournament_id: str) -> set[int]:
        """Block numbers counted or void so far."""
        return {int(b) for b in self.client.hkeys(sprt_blocks_key(game, tournament_id))}

    def sprt_decide(self, game: str, tournament_id: str, verdict: str, reason: str, counts: dict[int, int],
                    llr: float, *, now: float | None = None, scores: dict[float, int] | None = None) -> bool:
        """Store the verdict (with its reason, time, the counts and relative-score outcomes it was taken on and
        the LLR) unless one was stored before (``scripts.SPRT_DECIDE``: the first verdict stays). Returns True when
        stored now."""
        script = self.client.register_script(SPRT_DECIDE)
        final = {str(k): v for k, v in sorted(counts.items())}
        final.update({f"d:{float(k)!r}": v for k, v in sorted((scores or {}).items())})
        args: list[Any] = ["verdict", verdict, "reason", reason,
                           "decided_at", repr(time.time() if now is None else float(now)),
                           "final", json.dumps(final), "llr", repr(llr)]
        return bool(int(script(keys=[sprt_key(game, tournament_id)], args=args)))

    def finish_dropping_queued(self, game: str, tournament_id: str, *, now: float | None = None) -> tuple[bool, int]:
        """Finish a running controlled tournament and drop its jobs that no worker has received yet, as
        ``cancel_tournament`` drops them (``scripts.CANCEL_TOURNAMENT`` ending in "finished": the dropped matches count
        in matches_cancelled and are never played; jobs already with a worker are played and count). Returns
        (finished now, jobs dropped now); (False, 0) when it was not running."""
        status, dropped = self._cancel(
            keys=[tournament_key(game, tournament_id), jobs_key(game), cancelled_key(game, tournament_id)],
            args=[JOBS_GROUP, tournament_id, repr(time.time() if now is None else float(now)), "finished"])
        return int(status) == 1, int(dropped)

    def table_outcomes(self, game: str, tournament_id: str, match_ids: Sequence[str]) -> list[TableOutcome]:
        """How each of ``match_ids`` (matches of the tournament) stands, read in one pipelined round trip: its stored
        ranks, or void (stored, every seat failed), failed, cancelled, pending (``TableOutcome``)."""
        pipe = self.client.pipeline(transaction=False)
        for mid in match_ids:
            pipe.get(result_key(game, mid))
            pipe.sismember(failed_key(game, tournament_id), mid)
            pipe.sismember(cancelled_key(game, tournament_id), mid)
        replies = pipe.execute()
        out = []
        for i in range(len(match_ids)):
            raw, failed, cancelled = replies[3 * i:3 * i + 3]
            if raw:
                result = json.loads(raw)
                if result.get("void"):  # every seat failed: its ranks tell nothing
                    out.append(TableOutcome("void"))
                    continue
                out.append(TableOutcome("stored", tuple(int(r) for r in result["ranks"]),
                                        tuple(float(s) for s in result.get("scores", ()))))
            elif failed:
                out.append(TableOutcome("failed"))
            elif cancelled:
                out.append(TableOutcome("cancelled"))
            else:
                out.append(TableOutcome("pending"))
        return out
