"""What `arena sprt` prints of a test: its JSON form, the live progress line, the report and the expected length of
a paired test (``arena.cli.sprt`` starts, follows and cancels tests)."""

from __future__ import annotations

import math
from typing import Any

import click

from arena.cli.tournament_views import tournament_dict
from arena.core.text import plural
from arena.ratings.score_sprt import expected_blocks
from arena.ratings.sprt import H1, estimate_text, verdict_text
from arena.ratings.sprt import expected_blocks as points_blocks
from arena.tournaments.sprt_plan import POINTS, SCORE


def sprt_dict(s: Any) -> dict[str, Any]:
    """JSON form of a ``Sprt`` message: NaN becomes null and an infinite estimate "inf" / "-inf" (JSON has
    neither); a test on the relative score has its blocks in ``score_counts`` and ``better``/``alike``/``worse``
    (V2 against V1), and ``counts`` (the points test's) null."""
    def num(x: float) -> float | str | None:
        if math.isnan(x):
            return None
        return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")

    return {
        "id": s.tournament.id, "v1": s.v1, "v2": s.v2, "field": list(s.field), "house": list(s.house),
        "seats": s.seats,
        "elo0": s.elo0, "elo1": s.elo1, "alpha": s.alpha, "beta": s.beta, "window": s.window,
        "max_blocks": s.max_blocks, "blocks": s.blocks, "blocks_void": s.blocks_void,
        "blocks_in_flight": s.blocks_in_flight,
        "counts": None if s.statistic == SCORE else list(s.counts),  # a score test counts in score_counts
        "llr": num(s.llr), "lower": s.lower,
        "upper": s.upper, "elo": num(s.elo), "elo_margin": num(s.elo_margin), "verdict": s.verdict or None,
        "reason": s.reason, "decided_at": s.decided_at or None, "state": s.tournament.state,
        "deals": s.tournament.deals, "ladder_counted": s.ladder_counted, "ladder_note": s.ladder_note,
        "statistic": s.statistic or POINTS,
        "score_counts": [{"outcome": c.outcome, "blocks": c.blocks} for c in s.score_counts],
        **({"better": sum(c.blocks for c in s.score_counts if c.outcome > 0),  # blocks V2 ended better than V1
            "alike": sum(c.blocks for c in s.score_counts if c.outcome == 0),
            "worse": sum(c.blocks for c in s.score_counts if c.outcome < 0)} if s.statistic == SCORE else {}),
        "mean_outcome": num(s.mean_outcome) if s.statistic == SCORE else None,
        "tournament": tournament_dict(s.tournament),
    }


def unit(s: Any) -> str:
    """"nElo" (normalized Elo) for a test on the relative score, else "Elo"."""
    return "nElo" if s.statistic == SCORE else "Elo"


def elo_text(s: Any, short: bool = False) -> str:
    """The estimate of the ``Sprt`` message ``s`` (``arena.ratings.sprt.estimate_text``)."""
    return estimate_text(s.elo, s.elo_margin, s.statistic == SCORE, short)


ALIKE_BLOCKS = 50  # a paired test whose versions ended alike in this many blocks, every one, says so


def all_alike(s: Any) -> bool:
    """True when a paired test (relative score) has played ``ALIKE_BLOCKS`` blocks or more and V2 ended exactly as
    V1 in every one: the two versions likely decide alike everywhere, and no number of blocks will separate them."""
    return bool(s.statistic == SCORE and s.blocks >= ALIKE_BLOCKS
                and all(c.outcome == 0 for c in s.score_counts if c.blocks))


def expected(s: Any) -> tuple[int, str, str]:
    """(blocks, unit, "about" or "up to about"): what the test will take on average if V2 is ELO1 or ELO0 better (a
    paired test on the relative score: ``score_sprt.expected_blocks``; on points: ``sprt.expected_blocks``, an upper
    estimate of the average)."""
    if s.statistic == SCORE:
        return round(expected_blocks(s.elo0, s.elo1, s.alpha, s.beta)), "nElo", "about"
    return round(points_blocks(s.elo0, s.elo1, s.seats, s.alpha, s.beta, head_to_head=not s.field and
                               not s.house)), "Elo", "up to about"


FEW_BLOCKS = 10  # a test expected to decide in fewer blocks than this is told its hypotheses are too far apart


def expected_text(s: Any) -> str:
    """What the test will take (``expected``), and what to do when that is near its --max-blocks. An average: one
    test often takes more (an equal-strength pair expected at 801 blocks decided after 1,245)."""
    blocks, unit, about = expected(s)
    text = (f"expect {about} {blocks:,} block{'' if blocks == 1 else 's'} ({2 * blocks:,} matches) if V2 is "
            f"{s.elo1:g} or {s.elo0:g} {unit} better, on average (one test may take twice that); more between the "
            f"two, fewer for a clearly larger or smaller gap")
    if blocks < FEW_BLOCKS:
        text += (f". So wide a gap ({s.elo1 - s.elo0:g} {unit}) decides in a block or two whatever V2 is, and the "
                 f"verdict says little: set --elo1 to the smallest gain you care about")
    elif blocks > s.max_blocks / 2:
        where = "past" if blocks > s.max_blocks else "close to"
        text += (f". That is {where} --max-blocks {s.max_blocks:,}, where the test stops undecided: set --elo1 to "
                 f"the smallest gain you care about (twice the gap, a quarter of the blocks)")
    return text


def progress_line(s: Any) -> str:
    """The live line: blocks (of at most --max-blocks: "120/5,000 blocks"), LLR and bounds, the estimate; past the
    expected length with the estimate between ELO0 and ELO1 (where a test takes longest), what would decide
    sooner."""
    slow = not s.verdict and s.elo0 < s.elo < s.elo1 and s.blocks > expected(s)[0]  # (NaN compares False)
    return ((f"{s.blocks:,}/{s.max_blocks:,} blocks" if s.max_blocks else plural(s.blocks, 'block'))
            + f" ({s.blocks_in_flight} in flight"
            + (f", {s.blocks_void} void" if s.blocks_void else "")
            + f") · LLR {s.llr:+.2f} in [{s.lower:.2f}, {s.upper:.2f}] · {elo_text(s, short=True)}"
            + (" · every block alike so far: V1 and V2 may be the same bot" if all_alike(s) else "")
            + (f" · past the expected length: V2 looks between {s.elo0:g} and {s.elo1:g} {unit(s)} better, where a "
               f"test takes longest; to decide sooner, cancel it and test a gain you care about (a wider --elo1)"
               if slow else ""))


def print_sprt(s: Any) -> None:
    t = s.tournament
    words = (verdict_text(s.verdict, s.elo0, s.elo1, unit(s)) if s.verdict
             else "running" if t.state == "running" else f"{t.state}, no verdict")
    click.echo(f"SPRT {t.id} ({t.game}): {s.v2} (V2) against {s.v1} (V1), {s.seats} seats"
               + (f", field {', '.join(s.field)}" if s.field else "")
               + (f", house bots {', '.join(s.house)} (paired, common random numbers)" if s.house else ""))
    click.echo(f"hypotheses: H0 {unit(s)} {s.elo0:g}, H1 {unit(s)} {s.elo1:g}; alpha {s.alpha:g}, beta {s.beta:g}"
               + ("; statistic: relative score (normalized Elo)" if s.statistic == SCORE else ""))
    click.echo(f"deals: {t.deals or 'duplicate'}; ladder: {s.ladder_note}")
    click.echo(f"verdict: {words}" + (f" ({s.reason})" if s.reason else ""))
    click.echo(f"LLR {s.llr:+.3f} in [{s.lower:.3f}, {s.upper:.3f}]")
    click.echo(f"blocks {s.blocks}" + (f" (+{s.blocks_void} void)" if s.blocks_void else "")
               + (f", {s.blocks_in_flight} in flight" if s.blocks_in_flight else "")
               + f"; matches {t.matches_done}/{t.matches_total}"
               + (f" ({2 * s.blocks} of them in the counted blocks, 2 tables each)"
                  if t.matches_done != 2 * s.blocks else "")
               + (f", {t.matches_cancelled} dropped {'after the verdict' if s.verdict else 'by the cancellation'}"
                  if t.matches_cancelled else ""))
    click.echo(elo_text(s) + ("" if math.isinf(s.elo) else " (V2 over V1, 95 % margin)")
               + ("; a test that stops early at H1 is likely to overestimate the gain: the verdict says V2 is better, "
                  "not by how much" if s.verdict == H1 and not math.isinf(s.elo) else ""))
    if s.statistic == SCORE and not math.isnan(s.mean_outcome):
        better = sum(c.blocks for c in s.score_counts if c.outcome > 0)
        worse = sum(c.blocks for c in s.score_counts if c.outcome < 0)
        click.echo(f"in the same scenario V2 ended better than V1 in {plural(better, 'block')}, worse in "
                   f"{plural(worse, 'block')}, alike in {plural(s.blocks - better - worse, 'block')} (the test's "
                   f"statistic); mean block outcome {s.mean_outcome:+.3f} (positive: V2 better; V2's relative "
                   f"score minus V1's, game score units; not the test's statistic: a few blocks of large gaps can "
                   f"give it another sign than the count of blocks)")
        if all_alike(s):
            click.echo("note: V2 ended exactly as V1 in every block: the two versions seem to decide alike in every "
                       "scenario (the same code under two versions?), and no number of blocks can separate them"
                       + (f"; `arena sprt cancel {t.id}` stops the test" if t.state == "running" else ""))
    left = 0 if t.seed_hex else unsettled(s)
    still = (f"; {plural(left, 'match')} still being played, `arena sprt show {t.id}` shows it once they end"
             if s.verdict and left else "")
    click.echo(f"seed: {t.seed_hex or 'secret until the test has ended'}{still} (commitment {t.seed_commitment})")


def unsettled(s: Any) -> int:
    """Matches of the test's tournament that are neither stored, dropped nor given up: being played now."""
    t = s.tournament
    return max(0, int(t.matches_total - t.matches_done - t.matches_cancelled - t.matches_failed))
