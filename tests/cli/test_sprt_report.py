"""The report `arena sprt` prints (``arena.cli.sprt``): a paired test whose versions ended alike in every block
says so, since no number of blocks can separate them; the seed line says when matches are still being played."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from arena.cli import sprt_report
from arena.cli.app import PlainLines
from arena_sdk.pb import arena_pb2


def _sprt(blocks: int, outcomes: dict[float, int], *, state: str = "finished", verdict: str = "inconclusive",
          left: int = 0) -> arena_pb2.Sprt:
    t = arena_pb2.Tournament(id="t6", game="take5", state=state, matches_total=2 * blocks + left,
                             matches_done=2 * blocks, seed_commitment="ab" * 32,
                             seed_hex="" if state == "running" else "cd" * 16)
    return arena_pb2.Sprt(tournament=t, v1="mine@1.0", v2="mine@2.0", seats=4, house=["heuristic"] * 3,
                          elo0=0, elo1=40, alpha=0.05, beta=0.05, blocks=blocks, verdict=verdict, statistic="score",
                          mean_outcome=0.0, llr=0.0, lower=-2.94, upper=2.94,
                          score_counts=[arena_pb2.SprtScoreCount(outcome=o, blocks=n) for o, n in outcomes.items()])


@pytest.mark.parametrize(("blocks", "outcomes", "alike"), [
    (sprt_report.ALIKE_BLOCKS, {0.0: sprt_report.ALIKE_BLOCKS}, True),
    (5000, {0.0: 5000}, True),
    (sprt_report.ALIKE_BLOCKS - 1, {0.0: sprt_report.ALIKE_BLOCKS - 1}, False),  # too few to say
    (200, {0.0: 199, 0.5: 1}, False),  # one block differed
    (200, {0.0: 199, -3.0: 1}, False),
])
def test_a_paired_test_whose_versions_end_alike_in_every_block_says_so(
        blocks: int, outcomes: dict[float, int], alike: bool, capsys: Any) -> None:
    s = _sprt(blocks, outcomes)
    assert sprt_report.all_alike(s) is alike
    assert ("V1 and V2 may be the same bot" in sprt_report.progress_line(s)) is alike
    sprt_report.print_sprt(s)
    assert ("note: V2 ended exactly as V1 in every block" in capsys.readouterr().out) is alike


def test_a_test_past_its_expected_length_between_its_hypotheses_says_what_decides_sooner() -> None:
    """A newcomer's first improvement (a few nElo) under the default --elo1 40: the test runs long, its estimate
    between H0 and H1; the live line says so, and what to do, once it is past the expected length."""
    expected = sprt_report.expected(_sprt(1, {0.0: 1}))[0]
    for blocks, elo, said in ((expected + 1, 8.8, True), (expected - 1, 8.8, False), (expected + 1, 55.0, False),
                              (expected + 1, -3.0, False)):
        s = _sprt(blocks, {0.0: blocks}, state="running", verdict="")
        s.elo, s.max_blocks = elo, 5000
        line = sprt_report.progress_line(s)
        assert line.startswith(f"{blocks:,}/5,000 blocks (")
        assert ("past the expected length: V2 looks between 0 and 40 nElo better" in line) is said, line
        assert ("a wider --elo1" in line) is said


def test_the_seed_line_says_the_matches_still_being_played_after_a_verdict(capsys: Any) -> None:
    sprt_report.print_sprt(_sprt(80, {0.0: 40, 1.0: 40}, state="running", verdict="H1", left=3))
    seed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("seed: "))
    assert "secret until the test has ended; 3 matches still being played, `arena sprt show t6` shows it" in seed
    sprt_report.print_sprt(_sprt(80, {0.0: 40, 1.0: 40}))
    seed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("seed: "))
    assert seed.startswith("seed: " + "cd" * 16) and "still being played" not in seed


def test_a_paired_test_says_how_many_blocks_it_will_take_and_warns_near_its_limit() -> None:
    s = _sprt(0, {}, state="running", verdict="")
    s.max_blocks = 5000
    text = sprt_report.expected_text(s)  # elo1 40: about 200 blocks
    assert text.startswith("expect about 200 blocks (400 matches) if V2 is 40 or 0 nElo better") and "close" not in text
    s.elo1 = 5  # about 12,800 blocks: over the limit
    text = sprt_report.expected_text(s)
    assert "expect about 12,795 blocks" in text and "That is past --max-blocks 5,000" in text and "--elo1" in text
    s.max_blocks = 20000  # 12,795 of 20,000: past half of it
    assert "That is close to --max-blocks 20,000" in sprt_report.expected_text(s)


@pytest.mark.parametrize("terminal", [False, True])
def test_plain_progress_lines_where_no_live_line_shows(terminal: bool) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=100)
    lines = PlainLines(console, every_s=3600)
    lines.say("tournament t1: 3/10 matches")
    lines.say("tournament t1: 4/10 matches")  # within the interval: not written
    written = out.getvalue().splitlines()
    assert written == ([] if terminal else [written[0]]) and (terminal or written[0].endswith(" t1: 3/10 matches"))
    PlainLines(console, quiet=True, every_s=0).say("x")
    assert out.getvalue().splitlines() == written


def test_an_h0_verdict_says_v2_is_not_elo1_better_not_that_it_is_no_better(capsys: Any) -> None:
    sprt_report.print_sprt(_sprt(80, {0.0: 40, -1.0: 40}, verdict="H0"))
    verdict = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("verdict: "))
    assert verdict.startswith("verdict: V2 is not 40 nElo better: accept H0 (the blocks favour +0 over +40 nElo; a "
                              "smaller gain is not ruled out)")
    sprt_report.print_sprt(_sprt(80, {0.0: 40, 1.0: 40}, verdict="H1"))
    verdict = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("verdict: "))
    assert verdict.startswith("verdict: V2 is better: accept H1 (the blocks favour +40 over +0 nElo)")


@pytest.mark.parametrize("verdict", ["H1", "H0"])
def test_an_h1_verdict_warns_that_its_estimate_runs_high_and_the_matches_counted_are_told(verdict: str,
                                                                                         capsys: Any) -> None:
    """A newcomer's cheap test stopped at H1 after few blocks with a large estimate: the report says the estimate of
    a test stopped early at H1 is likely too high (not at H0); and matches finished after the verdict (played but
    in no counted block) are told apart from the 2 tables of each counted block."""
    s = _sprt(125, {1.0: 80, -1.0: 45}, verdict=verdict)
    s.elo, s.elo_margin = 59.0, 43.7
    s.tournament.matches_done, s.tournament.matches_total = 263, 264
    sprt_report.print_sprt(s)
    out = capsys.readouterr().out
    assert ("likely to overestimate the gain" in out) is (verdict == "H1")
    assert "matches 263/264 (250 of them in the counted blocks, 2 tables each)" in out


def test_the_json_of_a_score_test_counts_its_blocks_better_alike_and_worse() -> None:
    """An organiser review: a paired test's --json had ``counts`` of 13 zeros (the points test's), which a script
    reads as no block at all."""
    s = arena_pb2.Sprt(statistic="score", blocks=6, counts=[0] * 13, score_counts=[
        arena_pb2.SprtScoreCount(outcome=-0.5, blocks=1), arena_pb2.SprtScoreCount(outcome=0.0, blocks=3),
        arena_pb2.SprtScoreCount(outcome=0.25, blocks=2)])
    data = sprt_report.sprt_dict(s)
    assert data["counts"] is None and (data["better"], data["alike"], data["worse"]) == (2, 3, 1)
    points = sprt_report.sprt_dict(arena_pb2.Sprt(statistic="points", blocks=1, counts=[0, 1, 0]))
    assert points["counts"] == [0, 1, 0] and "better" not in points


def test_a_test_whose_hypotheses_are_too_far_apart_is_told_it_says_little() -> None:
    """An organiser review: `--elo0 -1000 --elo1 1000` decided H1 from one block, "expect about 1 blocks", no word."""
    s = _sprt(0, {}, state="running", verdict="")
    s.max_blocks, s.elo0, s.elo1 = 5000, -1000.0, 1000.0
    text = sprt_report.expected_text(s)
    assert "So wide a gap (2000 nElo) decides in a block or two whatever V2 is" in text, text
    s.elo0, s.elo1 = 0.0, 40.0
    assert "So wide a gap" not in sprt_report.expected_text(s)


def test_ladder_with_house_bots_is_said_to_change_nothing(dead_endpoint: str) -> None:
    """An organiser review: `--ladder` with `--house` was accepted in silence (the matches of a paired test never
    count on the public ladder). Said before the arena is asked (here nobody answers at --server)."""
    from click.testing import CliRunner

    from arena.cli import cli

    args = ["sprt", "me@1", "me@2", "--house", "heuristic,heuristic,heuristic", "--server", dead_endpoint]
    said = CliRunner().invoke(cli, [*args, "--ladder"])
    assert said.exit_code != 0 and "note: --ladder does not apply to a paired test with house bots" in said.stderr
    assert "--ladder does not apply" not in CliRunner().invoke(cli, args).stderr
