"""The pure parts of the pages: what they derive from read replies (``arena.web.stats``), the SVG charts
(``arena.web.charts``), the number formats (``arena.web.filters``) and the reply-to-JSON walk
(``arena.web.responses.message_dict``). Hand-computed values and properties."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.web import charts, filters, stats
from arena.web.responses import message_dict
from arena_sdk.pb import arena_pb2


def _summary(seats: list[str], deltas: list[float], faults: list[int]) -> dict:
    return {"seats": seats, "rating_deltas": deltas, "faults": faults}


def test_rating_history_walks_back_from_the_current_rating() -> None:
    newest_first = [_summary(["a@1", "b@1"], [10.0, -10.0], [0, 1]),
                    _summary(["c@1", "a@1"], [4.0, -4.0], [2, 0]),
                    _summary(["b@1", "c@1"], [1.0, -1.0], [0, 0])]  # a did not play
    assert stats.rating_history(1506.0, newest_first, "a@1") == [(0.0, 1500.0), (1.0, 1496.0), (2.0, 1506.0)]
    assert stats.rating_history(1500.0, [], "a@1") == [(0.0, 1500.0)]
    off_ladder = [_summary(["a@1", "a@2", "house:heuristic"], [0.0, 0.0, 0.0], [0, 0, 0])]  # an SPRT's match
    assert stats.rating_history(1506.0, off_ladder * 3 + newest_first, "a@1") == [
        (0.0, 1500.0), (1.0, 1496.0), (2.0, 1506.0)]  # no flat points for matches that moved no rating
    assert stats.faults_per_match(newest_first, "b@1") == 0.5
    assert stats.faults_per_match(newest_first, "nobody") is None
    assert stats.seat_of(newest_first[1], "a") == 1  # a NAME finds any of its versions


@given(st.floats(1000, 2000), st.lists(st.floats(-40, 40), max_size=30))
def test_rating_history_ends_at_the_current_rating_and_steps_by_the_deltas(current: float,
                                                                           deltas: list[float]) -> None:
    summaries = [_summary(["x@1", "y@1"], [d, -d], [0, 0]) for d in deltas]
    history = stats.rating_history(current, summaries, "x@1")
    moved = [d for d in deltas if d]  # a match that moved no rating is no point
    assert len(history) == len(moved) + 1 and history[-1][1] == current
    steps = [b - a for (_, a), (_, b) in zip(history, history[1:])]
    assert all(math.isclose(s, d, abs_tol=1e-6) for s, d in zip(steps, reversed(moved)))


def test_seat_stats_count_faults_by_kind_and_latency_of_one_seat() -> None:
    record = {"faults": [{"seat": 1, "kind": "timeout"}, {"seat": 0, "kind": "illegal"},
                         {"seat": 1, "kind": "timeout"}],
              "decisions": [{"seat": 1, "latency_ms": v} for v in (5, 1, 3, 2, 4)]
              + [{"seat": 0, "latency_ms": 100}, {"seat": 1, "latency_ms": None}]}
    got = stats.combined_stats([stats.seat_stats(record, 1)])
    assert got == {"matches": 1, "decisions": 5, "faults": {"timeout": 2},
                   "latency_ms": {"p50": 3.0, "p95": 5.0, "max": 5.0}}
    assert stats.combined_stats([])["latency_ms"] == {"p50": None, "p95": None, "max": None}
    damaged = [{"faults": 5}, {"decisions": ["x"]}, {"faults": [1]}, "not an object", None]
    assert stats.combined_stats(stats.seat_stats(r, 1) for r in [*damaged, record]) == got  # skipped, not counted


@given(st.lists(st.floats(0, 1e4), min_size=1, max_size=50), st.floats(0, 1))
def test_a_percentile_is_one_of_the_values_and_grows_with_q(values: list[float], q: float) -> None:
    p = stats.percentile(values, q)
    assert p in values and p <= stats.percentile(values, 1.0) == max(values)
    assert stats.percentile(values, 0.0) == min(values)


def test_charts_escape_labels_and_draw_every_series() -> None:
    svg = charts.line_chart([charts.Series("<script>x</script>", [(0, 1500), (1, 1510)]),
                             charts.Series("b", [(0, 1490), (1, float("inf"))])],
                            levels=[charts.Level(1505, "bound")], title="t & u")
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "t &amp; u" in svg
    assert svg.count("<polyline") == 1 and svg.count("<circle") == 1  # b's infinite point is left out
    assert 'stroke-dasharray="5 4"' in svg and "style=" not in svg
    # the y axis is labelled on both sides (a chart scrolled to its right end at phone width still reads it)
    ticks = re.findall(r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="(end|start)" font-size="11" fill="#667085">'
                       r'(\d+)</text>', svg)
    left = [(y, v) for x, y, a, v in ticks if a == "end"]
    right = [(y, v) for x, y, a, v in ticks if a == "start"]
    assert len(left) == 5 and left == right
    assert min(float(x) for x, _, a, _ in ticks if a == "start") > max(float(x) for x, _, a, _ in ticks if a == "end")
    assert "no data yet" in charts.line_chart([charts.Series("a", [])])
    assert charts.sparkline([1500.0]) == ""
    spark = charts.sparkline([1500.0, 1490.0, 1520.0])
    points = re.search(r'points="([^"]+)"', spark).group(1).split()
    assert len(points) == 3 and float(points[2].split(",")[1]) < float(points[1].split(",")[1])  # higher is up
    rows = charts.intervals_chart([("a@1", 1400, 1500, 1600), ("b@1", float("-inf"), 1450, float("inf"))])
    assert rows.count("<line") == 1 and rows.count("<circle") == 2


def test_filters_print_reply_numbers() -> None:
    assert filters.points(1523.456) == "1523.5" and filters.points("Infinity") == "∞" and filters.points(None) == "-"
    assert filters.points(-8.88e-16) == "0.0" and filters.points(-0.04) == "0.0" and filters.points(-0.06) == "-0.1"
    assert filters.percent(0.713) == "71.3 %" and filters.percent(None) == "-"
    assert filters.number(12.0) == "12" and filters.number(0) == "0" and filters.number(12.25) == "12.25"
    assert filters.ms(1.26) == "1.3 ms" and filters.ms(None) == "-"
    assert filters.ago(0) == "-"


@pytest.mark.parametrize(("fraction", "digits", "shown"), [
    (0.958, 1, "95.8 %"), (0.996, 1, "99.6 %"), (0.9996, 1, "> 99.9 %"), (1.0, 1, "100.0 %"), (0.0004, 1, "< 0.1 %"),
    (0.0, 1, "0.0 %"), (0.0006, 1, "0.1 %"), (0.996, 0, "> 99 %"), (0.004, 0, "< 1 %"), (0.5, 0, "50 %")])
def test_a_percentage_is_never_100_or_0_unless_it_is(fraction: float, digits: int, shown: str) -> None:
    assert filters.percent(fraction, digits) == shown


@given(st.floats(min_value=0, max_value=1, exclude_min=True, exclude_max=True), st.integers(0, 3))
def test_a_fraction_strictly_between_0_and_1_never_prints_as_0_or_100_percent(fraction: float, digits: int) -> None:
    shown = filters.percent(fraction, digits)
    assert float(shown.strip("<> %")) not in (0, 100), shown


def test_message_dict_has_every_field_nulls_for_unset_optionals_and_is_json() -> None:
    entry = arena_pb2.LadderEntry(bot="a@1", rating=1500.0, margin=float("inf"), los_next=0.0)
    data = message_dict(arena_pb2.Ladder(game="take5", entries=[entry], results_counted=2**40))
    assert data["results_counted"] == 2**40 and data["refreshing"] is False
    line = data["entries"][0]
    assert line["margin"] == "Infinity" and line["low"] is None and line["los_next"] == 0.0 and line["wins"] == 0
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert message_dict(arena_pb2.Tournament(id="t1"))["config"] is None


def test_a_match_summarys_deal_is_null_until_revealed() -> None:
    deal = {"seed": 7, "round": 2, "deal": 3, "table": 1, "attempt": 0}
    secret = message_dict(arena_pb2.MatchSummary(match_id="t1-000003", revealed=False))
    assert {k: secret[k] for k in deal} == dict.fromkeys(deal) and secret["match_id"] == "t1-000003"
    shown = message_dict(arena_pb2.MatchSummary(match_id="t1-000003", revealed=True, **deal))
    assert {k: shown[k] for k in deal} == deal


def _render_live(tournament: arena_pb2.Tournament, standings: arena_pb2.Standings,
                 sprt: arena_pb2.Sprt | None) -> str:
    from starlette.templating import Jinja2Templates

    from arena.web import tournament_pages
    from arena.web.app import TEMPLATES_DIR

    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    filters.install(templates.env)
    data = {"tournament": message_dict(tournament), "standings": message_dict(standings),
            "sprt": message_dict(sprt) if sprt is not None else None, "matches": [], "verify": None,
            "pairings": [], "running": True, "live_poll_s": 2}
    return templates.env.get_template("tournament_live.html").render(**data, **tournament_pages._format_charts(data))


def test_an_sprt_page_draws_its_llr_between_the_bounds() -> None:
    sprt = arena_pb2.Sprt(v1="a@1", v2="a@2", blocks=12, llr=1.5, lower=-2.94, upper=2.94, elo=float("nan"),
                          elo_margin=float("inf"))
    html = _render_live(arena_pb2.Tournament(id="t9", format="sprt", state="running", matches_total=24),
                        arena_pb2.Standings(), sprt)
    assert "is a@2 better than a@1?" in html and "LLR 1.50 between -2.94 and 2.94" in html
    assert "H1 (upper bound)" in html and "H0 (lower bound)" in html
    assert "<circle" in html  # no match listed: the history is its start, one point


def test_an_until_separated_page_draws_the_intervals() -> None:
    entries = [arena_pb2.StandingsEntry(rank=1, bot="a@1", rating=1550, margin=30, low=1520, high=1580),
               arena_pb2.StandingsEntry(rank=2, bot="b@1", rating=1450, margin=30, low=1420, high=1480)]
    html = _render_live(arena_pb2.Tournament(id="t8", until_separated=True, state="running", rounds=3,
                                             max_matches=60, last_check="not separated yet"),
                        arena_pb2.Standings(entries=entries, fit_matches=6), None)
    assert "Until separated" in html and "not separated yet" in html
    assert html.count("<circle") == 2 and "1550.0 ± 30.0" in html
    assert ">rating (Elo)</text>" in html  # the rating axis says its unit
    reason = "cap reached, not separated after 20 rounds"  # stopped: the check's sentence is the reason, said once
    stopped = _render_live(arena_pb2.Tournament(id="t8", until_separated=True, state="finished", rounds=20,
                                                max_matches=60, last_check=reason, stop_reason=reason),
                           arena_pb2.Standings(entries=entries, fit_matches=6), None)
    assert stopped.count(reason) == 1 and f"Stopped: {reason}." in stopped


def test_the_intervals_axis_says_elo_and_keeps_its_end_numbers_inside_the_chart() -> None:
    svg = charts.intervals_chart([("a@1", 1400, 1500, 1600), ("b@1", 600, 700, 800)])
    width = float(re.search(r'viewBox="0 0 (\S+) ', svg).group(1))
    ticks = re.findall(r'<text x="([^"]+)" y="[^"]+" text-anchor="(\w+)" font-size="11" fill="#667085">(\d+)</text>',
                       svg)
    assert [int(t[2]) for t in ticks] == [540, 1100, 1660]  # the span padded by 6 % each side, and its middle
    assert ticks[-1][1] == "end" and float(ticks[-1][0]) <= width  # the highest is drawn leftwards of the edge
    assert ">Elo</text>" in svg
    assert ">Elo</text>" not in charts.intervals_chart([("a@1", 1400, 1500, 1600)], x_label="")


def test_the_sprt_history_compares_the_two_tables_of_each_block() -> None:
    from arena.ratings.sprt import SprtState, llr, update

    sprt = {"v1": "a@1", "v2": "a@2", "seats": 2, "field": [], "elo0": 0.0, "elo1": 5.0}
    # block 0: V1 at seat 0 loses, V2 at seat 0 wins (+2 half points); block 1: V1 at seat 1 wins, V2 at seat 1
    # loses (-2); block 2 has only its first table so far.
    matches = [{"match_id": "t5-000000", "seats": ["a@1", "a@2"], "ranks": [2, 1]},
               {"match_id": "t5-000001", "seats": ["a@2", "a@1"], "ranks": [1, 2]},
               {"match_id": "t5-000002", "seats": ["a@2", "a@1"], "ranks": [2, 1]},
               {"match_id": "t5-000003", "seats": ["a@1", "a@2"], "ranks": [1, 2]},
               {"match_id": "t5-000004", "seats": ["a@1", "a@2"], "ranks": [1, 2]}]
    history = stats.sprt_llr_history(sprt, reversed(matches))  # newest first, as ListMatches answers
    one = update(SprtState.new(2), 2)
    two = update(one, -2)
    assert [x for x, _ in history] == [0.0, 1.0, 2.0]
    assert history[1][1] == llr(one, 0.0, 5.0, True) > 0 and history[2][1] == llr(two, 0.0, 5.0, True)
    assert stats.sprt_llr_history(sprt, []) == [(0.0, 0.0)]
    # decided on its first block: the blocks a worker had started then finish, but are not the test's
    decided = dict(sprt, verdict="H1", blocks=1)
    assert stats.sprt_llr_history(decided, reversed(matches)) == history[:2]


def test_the_sprt_history_of_a_paired_test_on_the_relative_score() -> None:
    from arena.ratings import score_sprt

    sprt = {"v1": "a@1", "v2": "a@2", "seats": 3, "field": [], "house": ["house:heuristic", "house:random"],
            "elo0": 0.0, "elo1": 40.0, "statistic": "score", "tournament": {"game": "take5"}}
    # block 0: V at seat 0 takes 3 bullheads at V1's table, 1 at V2's (others unchanged): V2 ended better by 2;
    # block 1: identical games (alike); block 2: V2 took 4 more at seat 1 (worse)
    house = ["house:heuristic", "house:random"]
    matches = [{"match_id": "t5-000000", "seats": ["a@1", *house], "scores": [3, 5, 7], "ranks": [1, 2, 3]},
               {"match_id": "t5-000001", "seats": ["a@2", *house], "scores": [1, 5, 7], "ranks": [1, 2, 3]},
               {"match_id": "t5-000002", "seats": [house[0], "a@1", house[1]], "scores": [4, 6, 2], "ranks": [2, 3, 1]},
               {"match_id": "t5-000003", "seats": [house[0], "a@2", house[1]], "scores": [4, 6, 2], "ranks": [2, 3, 1]},
               {"match_id": "t5-000004", "seats": [house[0], house[1], "a@1"], "scores": [4, 6, 2], "ranks": [2, 3, 1]},
               {"match_id": "t5-000005", "seats": [house[0], house[1], "a@2"], "scores": [4, 6, 6], "ranks": [1, 2, 2]}]
    history = stats.sprt_llr_history(sprt, reversed(matches))
    states = [score_sprt.ScoreState.of({2.0: 1}), score_sprt.ScoreState.of({2.0: 1, 0.0: 1}),
              score_sprt.ScoreState.of({2.0: 1, 0.0: 1, -4.0: 1})]
    assert [x for x, _ in history] == [0.0, 1.0, 2.0, 3.0]
    assert [v for _, v in history[1:]] == [score_sprt.llr(st, 0.0, 40.0) for st in states]
    assert history[1][1] > 0 and history[3][1] < history[2][1]  # better: evidence for H1; worse: against
    ranked = dict(sprt, statistic="points")  # the same tables by pairwise points: the ranks did not change in block 0
    by_points = stats.sprt_llr_history(ranked, reversed(matches))
    assert len(by_points) == 4 and by_points[1][1] <= 0 < history[1][1]  # (a paired test is not head to head)


def test_host_names_and_the_default_allowed_hosts() -> None:
    from arena.web.app import default_allowed_hosts, host_name

    assert host_name("[::1]:8080") == "::1" and host_name("Example.ORG:80") == "example.org"
    assert host_name("localhost") == "localhost" and host_name("[::1") == "" and host_name("a:b") == ""
    assert host_name("[::1]x") == "" and host_name("") == ""
    assert set(default_allowed_hosts("127.0.0.1:8080")) == {"localhost", "127.0.0.1", "::1"}
    assert "127.0.0.5" in default_allowed_hosts("127.0.0.5:0", ["Proxy.example:443"])
    assert "proxy.example" in default_allowed_hosts("[::1]:8080", ["Proxy.example:443"])
    assert default_allowed_hosts("0.0.0.0:8080") is None and default_allowed_hosts("10.1.2.3:80") is None
    assert default_allowed_hosts("0.0.0.0:8080", ["arena.example"]) == ("arena.example",)
    assert default_allowed_hosts("10.1.2.3:80", ["arena.example"]) == ("10.1.2.3", "arena.example")


def _render_ladder(reply: arena_pb2.Ladder) -> str:
    from starlette.templating import Jinja2Templates

    from arena.web import pages
    from arena.web.app import TEMPLATES_DIR

    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    filters.install(templates.env)
    templates.env.globals["url_for"] = lambda name, path: f"/{name}/{path}"
    data = message_dict(reply)
    for entry in data["entries"]:
        entry.update(history=[], faults_per_match=0.0)
    return templates.env.get_template("ladder.html").render(**pages.ladder_context("take5", "elo", data))


def _ladder_entry(bot: str, rank: int, group: int) -> arena_pb2.LadderEntry:
    return arena_pb2.LadderEntry(bot=bot, rank=rank, rating=1500.0 - rank, matches=6, group=group)


def test_a_ladder_of_two_groups_is_two_tables_with_a_note_and_one_group_is_one_table() -> None:
    two = arena_pb2.Ladder(game="take5", groups=2, entries=[
        _ladder_entry("a@1", 1, 1), _ladder_entry("b@1", 2, 1), _ladder_entry("c@1", 3, 1),
        _ladder_entry("x@1", 1, 2), _ladder_entry("y@1", 2, 2)])
    html = _render_ladder(two)
    assert html.count('<table class="ladder">') == 2
    first, second = html.index("Group 1 of 2: 3 bots"), html.index("Group 2 of 2: 2 bots")
    assert first < html.index("/bots/c@1") < second < html.index("/bots/x@1")
    assert "not comparable" in html
    one = arena_pb2.Ladder(game="take5", groups=1, entries=[_ladder_entry("a@1", 1, 1), _ladder_entry("b@1", 2, 1)])
    html = _render_ladder(one)
    assert html.count('<table class="ladder">') == 1 and "Group 1" not in html and "not comparable" not in html


def test_a_trailing_slash_redirect_is_a_path_whatever_the_host_header_says() -> None:
    from starlette.testclient import TestClient
    from web_helpers import FakeReader, app_of

    from arena.web.app import relative_location

    with TestClient(app_of(FakeReader()), base_url="http://evil.example") as client:
        answer = client.get("/tournaments/", follow_redirects=False)
    assert answer.status_code in (307, 308) and answer.headers["location"] == "/tournaments"
    assert relative_location(b"http://evil.example//other.example/x?a=1") == b"/other.example/x?a=1"
    assert relative_location(b"/bots/x") == b"/bots/x"


def test_a_chart_of_one_point_has_no_axis_below_its_first_x() -> None:
    svg = charts.line_chart([charts.Series("a", [(0, 1500.0)])], x_label="rated matches")
    xs = re.findall(r'text-anchor="middle" font-size="11" fill="#667085">(-?\d+)</text>', svg)
    assert xs == ["0", "1"] and svg.count("<circle") == 1


def test_a_charts_y_axis_never_reads_minus_zero() -> None:
    """An LLR chart from -1 to 0.998 (ticks at 2 decimals, the middle one at -0.001): 0.00, never -0.00."""
    svg = charts.line_chart([charts.Series("LLR", [(0, -1.0), (1, 0.998)])])
    ticks = re.findall(r'font-size="11" fill="#667085">([^<]+)</text>', svg)
    assert "0.00" in ticks and not any(t in ("-0.00", "-0") for t in ticks), ticks
