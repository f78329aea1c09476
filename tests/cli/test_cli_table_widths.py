"""The tables of `arena tournament standings`, `arena ladder` and `arena bot list`, and the live line of `arena sprt`,
fitted to the terminal (``arena.cli.tables.fit``): at 80 and 120 columns (COLUMNS) every number is whole, a bot id
is never folded while columns can be left out, and one line under the table names the columns left out, only when
one was."""

from __future__ import annotations

import io
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from arena.cli import sprt as sprt_cli
from arena.cli import sprt_report
from arena.cli.app import AppContext, cli
from arena.cli.tables import Col, fit
from arena_sdk.pb import arena_pb2


class _Arena:
    """An Arena client that answers each method with a canned reply."""

    server = "fake:1"

    def __init__(self, replies: dict[str, Any]) -> None:
        self.replies = replies

    def call(self, method: str, request: Any, **kwargs: Any) -> Any:
        return self.replies[method]


def _run(monkeypatch: pytest.MonkeyPatch, width: int, replies: dict[str, Any], *args: str) -> str:
    monkeypatch.setattr(AppContext, "arena", lambda self, server: _Arena(replies))
    result = CliRunner(env={"COLUMNS": str(width)}).invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    table = [line for line in result.output.splitlines() if line[:1] in ("┏", "┃", "┡", "│", "└")]
    assert table and max(map(len, table)) <= width, result.output
    return result.output


def _standings(swiss: bool) -> arena_pb2.Standings:
    def entry(rank: int, bot: str, points: float, rating: float, margin: float | None, los: float | None,
              tiebreak: float) -> arena_pb2.StandingsEntry:
        e = arena_pb2.StandingsEntry(rank=rank, bot=bot, points=points, matches=12, mean_score=24.25,
                                     performance=2104.3, score_rate=0.625, rating=rating,
                                     too_few_matches=margin is None, byes=1 if swiss else 0)
        if margin is not None:
            e.margin = margin
        if los is not None:
            e.los_next = los
        if swiss:
            e.tiebreak = tiebreak
        return e

    return arena_pb2.Standings(tournament_id="t12", fit_matches=30, entries=[
        entry(1, "demo-montecarlo@1.0", 24.5, 2104.31, 30.0, 0.973, 11.25),
        entry(2, "demo-heuristic@1.0", 21.0, 1623.4, 41.2, 0.5, 10.5),  # its LOS is over a bot with too few
        entry(3, "demo-random@1.0", 2.5, 1012.0, None, None, 3.0)])


@pytest.mark.parametrize(("width", "swiss", "left_out"), [
    (80, True, "matches, mean bullheads, score rate, performance (Elo), byes, LOS next"),
    (120, True, "score rate, performance (Elo)"),
    (80, False, "mean bullheads, score rate, performance (Elo)"),
    (120, False, None),
])
def test_standings_show_whole_numbers_and_say_which_columns_they_leave_out(
        monkeypatch: pytest.MonkeyPatch, width: int, swiss: bool, left_out: str | None) -> None:
    replies = {"GetStandings": _standings(swiss), "GetTournament": arena_pb2.Tournament(id="t12", game="take5")}
    out = _run(monkeypatch, width, replies, "tournament", "standings", "t12")
    lines = out.splitlines()
    assert all(any(f" {bot} " in line for line in lines)
               for bot in ("demo-montecarlo@1.0", "demo-heuristic@1.0", "demo-random@1.0"))  # never folded
    first = next(line for line in lines if "demo-montecarlo@1.0" in line)
    for number in ("24.5", "2104.3 ± 30.0", *(["11.25"] if swiss else [])):
        assert number in first
    assert "1623.4 ± 41.2" in out and "1012.0 (too few matches)" in out
    assert "50.0 %" not in out  # no LOS over a bot with too few matches: a dash
    assert ("97.3 %" in first) is (left_out is None or "LOS next" not in left_out)
    assert (" 2104 " in first) is (left_out is None or "performance" not in left_out)  # the performance, Elo
    said = " ".join(out.split())  # the note may wrap at the terminal's edge
    if left_out is None:
        assert "not shown" not in said
    else:
        assert f"not shown at {width} columns: {left_out} (widen the terminal, or use --json)" in said


def test_the_ladder_leaves_out_its_mean_score_first(monkeypatch: pytest.MonkeyPatch) -> None:
    ladder = arena_pb2.Ladder(game="take5", method="elo", results_counted=5, results_stored=5, entries=[
        arena_pb2.LadderEntry(rank=1, bot="demo-montecarlo@1.0", rating=2104.31, margin=41.2, los_next=0.973,
                              matches=120, wins=80, mean_score=12.25),
        arena_pb2.LadderEntry(rank=2, bot="demo-heuristic@1.0", rating=1700.0, margin=50.0, los_next=0.6,
                              matches=60, wins=30, mean_score=16.5),
        arena_pb2.LadderEntry(rank=3, bot="demo-random@1.0", rating=1500.0, too_few_matches=True, matches=3,
                              wins=1, mean_score=20.5)])
    narrow = _run(monkeypatch, 80, {"GetLadder": ladder}, "ladder")
    wide = _run(monkeypatch, 120, {"GetLadder": ladder}, "ladder")
    for out in (narrow, wide):
        first = next(line for line in out.splitlines() if "demo-montecarlo@1.0" in line)
        assert "2104.3 ± 41.2" in first and "97.3 %" in first and " 120 " in first and " 80 " in first
        assert "1500.0 (too few matches)" in out
        assert "60.0 %" not in out  # the LOS of rank 2 over a bot with too few matches: a dash
    assert "not shown at 80 columns: mean bullheads (widen the terminal, or use --json)" in " ".join(
        narrow.split())
    assert "12.25" not in narrow
    assert "12.25" in wide and "mean bullheads" in wide and "not shown" not in wide


def test_bot_list_keeps_bot_ids_and_endpoints_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    bots = arena_pb2.ListBotsResponse(bots=[
        arena_pb2.BotRecord(bot_id="demo-montecarlo@1.0", name="demo-montecarlo", version="1.0", game="take5",
                            endpoint="127.0.0.1:50051", author="someone", registered_at=1.7e9,
                            endpoint_checked=True),
        arena_pb2.BotRecord(bot_id="gone@2.0", name="gone", version="2.0", game="take5", endpoint="10.0.0.8:50061",
                            registered_at=1.7e9, endpoint_checked=True, endpoint_problem="connection refused")])
    narrow = _run(monkeypatch, 80, {"ListBots": bots}, "bot", "list")
    wide = _run(monkeypatch, 120, {"ListBots": bots}, "bot", "list")
    for out in (narrow, wide):
        assert any("demo-montecarlo@1.0" in line and "127.0.0.1:50051" in line for line in out.splitlines())
        assert any("gone@2.0" in line and "10.0.0.8:50061" in line for line in out.splitlines())
    assert "not shown at 80 columns: version, author, updated" in " ".join(narrow.split())
    assert "someone" not in narrow
    assert "someone" in wide and "not shown" not in wide


def test_fit_folds_bot_ids_only_when_leaving_out_every_column_it_may_is_not_enough() -> None:
    columns = [Col("bot", cells="name", justify="left"), Col("rating"), Col("wins", drop=1)]
    rows = [["a-rather-long-bot-name@1.0", "1523.4", "12"]]  # bot 26 + 3, rating 6 + 3, wins 4 + 3, table 1
    assert (fit(columns, rows, 46).left_out, fit(columns, rows, 46).fold_names) == ((), False)
    assert (fit(columns, rows, 45).left_out, fit(columns, rows, 45).fold_names) == (("wins",), False)
    assert (fit(columns, rows, 39).left_out, fit(columns, rows, 39).fold_names) == (("wins",), False)
    assert (fit(columns, rows, 38).left_out, fit(columns, rows, 38).fold_names) == (("wins",), True)
    assert fit(columns, rows, 46).note() == ""
    assert fit(columns, rows, 45).note() == "not shown at 45 columns: wins (widen the terminal, or use --json)"


def _live(width: int, s: arena_pb2.Sprt) -> list[str]:
    out = io.StringIO()
    console = Console(width=width, file=out)
    progress = sprt_cli.LiveLine(console=console)
    progress.add_task("t6", total=s.upper - s.lower, completed=3, line=sprt_report.progress_line(s))
    console.print(progress.get_renderable())
    return out.getvalue().splitlines()


@pytest.mark.parametrize(("width", "rows"), [(80, 2), (120, 1), (200, 1)])
def test_the_sprt_live_line_keeps_its_numbers_whole(width: int, rows: int) -> None:
    t = arena_pb2.Tournament(id="t6", game="take5", state="running", matches_total=240, matches_done=240)
    s = arena_pb2.Sprt(tournament=t, v1="mine@1.0", v2="mine@2.0", seats=2, elo0=0, elo1=5, blocks=120,
                       blocks_in_flight=4, llr=0.53, lower=-2.94, upper=2.94, elo=1.9, elo_margin=45.6,
                       alpha=0.05, beta=0.05, max_blocks=5000)
    lines = _live(width, s)
    assert len(lines) == rows and all(len(line) <= width for line in lines)
    assert "…" not in "".join(lines)
    assert "120/5,000 blocks (4 in flight) · LLR +0.53 in [-2.94, 2.94] · Elo +1.9 ± 45.6" in lines[-1]
    assert lines[0].startswith("⠋ SPRT t6 H0 ") and ("H1 · 120/5,000 blocks" in lines[0]) is (rows == 1)


def test_the_tournament_list_keeps_id_format_state_and_progress_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    bots = [f"contender-{i}@1.0" for i in range(6)]
    listed = arena_pb2.ListTournamentsResponse(tournaments=[
        arena_pb2.Tournament(id="t12", format="sprt", state="running", game="take5", matches_done=883,
                             matches_total=888, seats_per_match=2, rounds=1, created_at=1_700_000_000.0, bots=bots),
        arena_pb2.Tournament(id="t11", format="swiss", state="cancelled", game="taki", matches_done=6,
                             matches_total=10, seats_per_match=2, rounds=5, created_at=1_700_000_000.0, bots=bots)])
    narrow = _run(monkeypatch, 80, {"ListTournaments": listed}, "tournament", "list")
    wide = _run(monkeypatch, 200, {"ListTournaments": listed}, "tournament", "list")
    for out in (narrow, wide):
        row = next(line for line in out.splitlines() if " t12 " in line)
        assert all(f" {cell} " in row for cell in ("sprt", "running", "883/888")), row
        assert " swiss " in out and " cancelled " in out
    assert "not shown at 80 columns:" in " ".join(narrow.split()) and "not shown" not in wide
    assert "contender-5@1.0" in wide


def test_cells_are_plain_text_neither_markup_nor_control_characters() -> None:
    """A bot's author or GetInfo error status is text from outside: "[/]" would raise rich's MarkupError (every
    `arena bot list` failing for everyone), "[link=...]" would restyle the table; both are shown as they are."""
    columns = [Col("bot", cells="name", justify="left"), Col("author", cells="words", justify="left")]
    rows = [["evil@1.0", "[/]"], ["liar@1.0", "[link=http://evil.example][green]healthy\x1b]0;t\x07"]]
    shown = fit(columns, rows, 120)
    out = io.StringIO()
    Console(file=out, width=120, force_terminal=True).print(shown.table("Registered bots", rows))
    text = out.getvalue()
    assert "[/]" in text and "[link=http://evil.example][green]healthy]0;t" in text
    assert "\x1b]8;" not in text and "\x07" not in text  # no hyperlink escape, no title set


def test_a_cell_of_several_lines_keeps_its_line_breaks() -> None:
    """`arena match list` puts one seat per line in its seats cell: the lines stay apart, each plain text."""
    columns = [Col("match", cells="name", justify="left"), Col("seats", cells="words", justify="left")]
    rows = [["m1", "a@1, 5 (1) +5.0\nb@1\x1b[2J, 9 (2) -5.0"]]
    out = io.StringIO()
    Console(file=out, width=120, force_terminal=False).print(fit(columns, rows, 120).table("Matches", rows))
    lines = out.getvalue().splitlines()
    assert any("a@1, 5 (1) +5.0" in line and "b@1" not in line for line in lines)
    assert any("b@1[2J, 9 (2) -5.0" in line for line in lines) and "\x1b" not in out.getvalue()
