"""At phone width (390 x 844) what a reader looks for is on screen: a tournament's ratings chart, narrow enough to be
read whole, shows every bot's name and the leader's dot, also after live.js has put a new live part in place; and the match viewer's tables (its
seats' results, and the scores: seat, cards, chosen, this hand, total) show every column inside the screen, with
long bot names. In headless
Chromium (conftest's ``browser``) on fake readers and a local record file."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_records import play_record
from web_helpers import FAKE_SERVER, PHONE, FakeReader, app_of, mobile_page, screenshot, wait_until

from arena.web.app import WebOptions
from arena.web.serving import WebServer
from arena_sdk.games import take5
from arena_sdk.pb import arena_pb2

# the leader by points has the highest rating, drawn at the chart's right end
BOTS = [("montecarlo-deep@3.1", 1720.0), ("heuristic-tuned@2.0", 1540.0), ("random-baseline@1.0", 1310.0)]


class _RoundRobin(FakeReader):
    """t3: a running round robin of three bots, rated by its batch fit."""

    async def call(self, method: str, request: Any) -> Any:
        t = arena_pb2.Tournament(id="t3", game="take5", format="round_robin", state="running", seats_per_match=3,
                                 bots=[b for b, _ in BOTS], matches_total=30, matches_done=12,
                                 seed_commitment="ab" * 32)
        if method == "GetTournament":
            return t
        if method == "GetStandings":
            return arena_pb2.Standings(tournament_id="t3", fit_matches=12, entries=[
                arena_pb2.StandingsEntry(rank=k + 1, bot=b, points=20.0 - 5 * k, matches=12, rating=r, margin=60.0,
                                         low=r - 60, high=r + 60) for k, (b, r) in enumerate(BOTS)])
        return self.empty_or_not_found(method)


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    with mobile_page(browser, PHONE) as page:
        yield page


def _in_view(page: Any, selector: str) -> tuple[bool, Any]:
    box = page.locator(selector).bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box


def test_a_tournaments_ratings_chart_opens_on_its_leader_at_phone_width(phone: Any) -> None:
    server = WebServer(WebOptions(server=FAKE_SERVER), "127.0.0.1:0", app=app_of(_RoundRobin()))
    server.start()
    try:
        phone.goto(f"{server.url().rstrip('/')}/tournaments/t3")
        box = phone.locator(".chart-box").filter(has=phone.locator("circle.mark"))
        width, room = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
        assert width <= room  # narrow enough to be read whole: its names above their intervals
        ok, dot = _in_view(phone, "circle.mark")
        assert ok, f"the leader's dot is off screen at {PHONE['width']} px: {dot}"
        for bot, _ in BOTS:  # every name whole and on screen (they were cut to "…1.0" by the scroll to the dot)
            ok, label = _in_view(phone, f".chart-box svg text >> text={bot}")
            assert ok, f"{bot} is off screen at {PHONE['width']} px: {label}"
        size = phone.locator(f".chart-box svg text >> text={BOTS[0][0]}").evaluate(
            "t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a")
        assert size >= 10, size  # still readable at that width (px on screen)
        screenshot(phone, "tournament-chart-phone")
        phone.locator("#live").evaluate("live => { live.dataset.updated = ''; }")
        wait_until(lambda: phone.evaluate("document.getElementById('live').dataset.updated !== ''"),
                   "live.js to put a new live part in place", timeout=10)
        ok, dot = _in_view(phone, "circle.mark")  # live.js put a new chart in place: on its leader again
        assert ok, dot
    finally:
        server.stop()


@contextlib.contextmanager
def _record_at_turn_5(phone: Any, dead_endpoint: str, tmp_path: Path, long_names: bool = False) -> Iterator[None]:
    """``phone`` on the viewer of a local 5-seat Take 5 record (``arena web --record``) at step 5, all hands."""
    record, _ = play_record("take5", 5, 21, config=take5.Take5Config(limit=8))
    for s, seat in enumerate(record["seats"] if long_names else []):
        seat["name"] = f"experimental-gapbot-{s}@2.0.1"
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    server = WebServer(WebOptions(server=dead_endpoint, record=path), "127.0.0.1:0")
    server.start()
    try:
        phone.goto(f"{server.url().rstrip('/')}/record?view=all&turn=5")
        phone.wait_for_selector("#viewer[data-ready='1']", timeout=30_000)
        yield
    finally:
        server.stop()


def test_every_column_of_the_viewers_scores_table_is_on_a_phones_screen(phone: Any, dead_endpoint: str,
                                                                        tmp_path: Path) -> None:
    with _record_at_turn_5(phone, dead_endpoint, tmp_path, long_names=True):
        assert phone.locator("#take5-scores tr").nth(0).locator("th").count() == 5  # seat, cards, chosen, hand, total
        for table in ("#seats", "#take5-scores"):  # the result of each seat, and the scores at this turn
            rows = phone.locator(f"{table} tr")
            assert rows.count() == 6
            for r in range(rows.count()):
                cells = rows.nth(r).locator("th, td")
                for c in range(cells.count()):
                    box = cells.nth(c).bounding_box()
                    if box is None:  # the results' seat column gives its room away (rows in seat order)
                        assert (table, c) == ("#seats", 0), (table, r, c)
                        continue
                    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], \
                        (table, r, c, cells.nth(c).inner_text(), box)
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        # a name wraps before its @VERSION, never inside it ("…gapbot-0@2.0." / "1" before)
        versions = phone.locator("#seats .ver, #take5-scores .ver")
        assert versions.count() == 10
        lines = versions.evaluate_all("vs => vs.map(v => [v.textContent, v.getClientRects().length])")
        assert all(n == 1 for _, n in lines), lines
        screenshot(phone, "viewer-scores-phone")


class _TwoVersions(FakeReader):
    """ace@1 and ace@2 on the Take 5 ladder, each with rated matches: the bot page charts two lines."""

    async def call(self, method: str, request: Any) -> Any:
        versions = ("ace@1", "ace@2")
        if method == "ListBots":
            return arena_pb2.ListBotsResponse(bots=[arena_pb2.BotRecord(bot_id=v, name="ace", game="take5")
                                                    for v in versions])
        if method == "ListMatches":
            return arena_pb2.ListMatchesResponse(matches=[
                arena_pb2.MatchSummary(match_id=f"t1-{i:06d}", tournament_id="t1", game="take5",
                                       seats=[versions[i % 2], "kid@1"], scores=[3, 9], ranks=[1, 2], faults=[0, 0],
                                       rating_deltas=[16.0, -16.0], finished_at=1_700_000_000.0 - i)
                for i in range(40)])
        if method == "GetLadder":
            return arena_pb2.Ladder(game=request.game, entries=[
                arena_pb2.LadderEntry(rank=k + 1, bot=v, rating=1800.0 - 50 * k, matches=500)
                for k, v in enumerate(versions)])
        return self.empty_or_not_found(method)


def test_a_chart_of_several_lines_opens_on_its_legend_at_phone_width(phone: Any) -> None:
    """The bot page's chart of two versions opened on its newest end, the legend and the axis off screen, so
    nobody could tell which line was which; one line (a bot of one version) still opens on its newest point."""
    server = WebServer(WebOptions(server=FAKE_SERVER), "127.0.0.1:0", app=app_of(_TwoVersions()))
    server.start()
    try:
        phone.goto(f"{server.url().rstrip('/')}/bots/ace")
        box = phone.locator(".chart-box").first
        width, room, left = box.evaluate("b => [b.scrollWidth, b.clientWidth, b.scrollLeft]")
        assert width > room and left == 0
        ok, legend = _in_view(phone, ".chart-box svg text >> text=ace@2")
        assert ok, legend
        assert "its newest rated matches" in phone.content()  # 500 played, the chart holds the newest 20
    finally:
        server.stop()


def test_the_viewers_controls_stay_on_screen_while_the_board_is_read_at_phone_width(phone: Any, dead_endpoint: str,
                                                                                    tmp_path: Path) -> None:
    """At 390 px the board is below the fold: scrolled to it, the step buttons are still on screen."""
    with _record_at_turn_5(phone, dead_endpoint, tmp_path):
        phone.locator("#v-board").scroll_into_view_if_needed()
        phone.evaluate("window.scrollBy(0, document.getElementById('v-board').getBoundingClientRect().top - 80)")
        button = phone.locator("#v-next").bounding_box()
        assert button is not None and 0 <= button["y"] and button["y"] + button["height"] <= PHONE["height"], button
        phone.click("#v-next")
        assert phone.get_attribute("#viewer", "data-index") == "6"


class _ForfeitMatch(FakeReader):
    """t4-000007: a finished 3-seat Take 5 match of long-named bots, one of which forfeited, with Elo changes."""

    def __init__(self, record: dict[str, Any]) -> None:
        super().__init__()
        self.record = record

    async def call(self, method: str, request: Any) -> Any:
        if method == "GetMatch" and request.match_id == "t4-000007":
            seats = [seat["name"] for seat in self.record["seats"]]
            return arena_pb2.MatchDetail(summary=arena_pb2.MatchSummary(
                match_id="t4-000007", tournament_id="t4", game="take5", seats=seats, scores=[3, 18, 27],
                ranks=[1, 2, 3], faults=[0, 0, 5], rating_deltas=[14.25, -1.5, -12.75], revealed=True),
                record_json=json.dumps(self.record))
        if method == "GetTournament" and request.id == "t4":
            return arena_pb2.Tournament(id="t4", game="take5", format="round_robin", state="finished",
                                        seats_per_match=3, bots=[seat["name"] for seat in self.record["seats"]],
                                        matches_total=9, matches_done=9)
        return self.empty_or_not_found(method)


def test_a_matchs_results_with_a_forfeit_and_elo_changes_fit_a_phones_screen(phone: Any) -> None:
    """The results of a 3-seat match where a seat forfeited (its reason in a column of its own) and the Elo changes:
    every column but the seat number (given away at this width) is on the screen, the Elo change too."""
    record, _ = play_record("take5", 3, 21, config=take5.Take5Config(limit=8))
    for s, seat in enumerate(record["seats"]):
        seat["name"] = f"experimental-gapbot-{s}@2.0.1"
    record["result"]["forfeits"] = [None, None, "faults (5 in a row: deadline exceeded)"]
    server = WebServer(WebOptions(server=FAKE_SERVER), "127.0.0.1:0", app=app_of(_ForfeitMatch(record)))
    server.start()
    try:
        phone.goto(f"{server.url().rstrip('/')}/matches/t4-000007")
        header = phone.locator("#seats thead th")
        assert header.count() == 7  # seat, bot, score, rank, faults, forfeit, Elo change
        rows = phone.locator("#seats tr")
        for r in range(rows.count()):
            cells = rows.nth(r).locator("th, td")
            for c in range(1, cells.count()):
                box = cells.nth(c).bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], \
                    (r, c, cells.nth(c).inner_text(), box)
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        screenshot(phone, "match-forfeit-phone")
    finally:
        server.stop()


class _LongNames(FakeReader):
    """An arena whose Take 5 ladder has bots with long names, ratings with margins and matches in the hundreds."""

    async def call(self, method: str, request: Any) -> Any:
        if method == "GetArenaInfo":
            return arena_pb2.ArenaInfo(arena_id="f00dfeed" * 4, version="9.9.9", games=["take5", "taki"])
        if method == "ListTournaments":
            return arena_pb2.ListTournamentsResponse()
        if method == "GetLadder":
            entries = [arena_pb2.LadderEntry(rank=k + 1, bot=f"demo-montecarlo-{k}@1.0", rating=1788.2 - 40 * k,
                                             margin=105.5, matches=108 + k, group=1) for k in range(5)]
            return arena_pb2.Ladder(game=request.game, entries=entries, groups=1)
        return self.empty_or_not_found(method)


def test_the_home_pages_ladder_heads_show_every_column_on_a_phones_screen(phone: Any) -> None:
    """The home page's head of each ladder (rank, bot, rating ± margin, matches) with long bot names: every cell is
    inside a 390 px screen (the matches column was cut, 108 read as "10")."""
    server = WebServer(WebOptions(server=FAKE_SERVER), "127.0.0.1:0", app=app_of(_LongNames()))
    server.start()
    try:
        phone.goto(server.url())
        cells = phone.locator("#ladder-take5 table.top tr").locator("th, td")
        assert cells.count() == 4 * 6
        for c in range(cells.count()):
            box = cells.nth(c).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], \
                (c, cells.nth(c).inner_text(), box)
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        screenshot(phone, "home-phone")
    finally:
        server.stop()


def test_the_viewer_asks_again_while_the_arena_is_busy_building_frames(phone: Any) -> None:
    """Frames answered 503 (every build slot taken: ``FramesBusy``): the viewer says it is trying again and shows
    the match once a build is possible, without a reload."""
    from arena.web.frames_cache import FramesBuilder, FramesCache

    record, _ = play_record("take5", 3, 21, config=take5.Take5Config(limit=8))
    builder = FramesBuilder(max_waiting=0)  # every build refused
    app = app_of(_ForfeitMatch(record))
    app.state.frames_cache = FramesCache(builder=builder)
    server = WebServer(WebOptions(server=FAKE_SERVER), "127.0.0.1:0", app=app)
    server.start()
    try:
        phone.goto(f"{server.url().rstrip('/')}/matches/t4-000007")
        phone.wait_for_function("document.querySelector('#viewer .status').textContent.includes('trying again')",
                                timeout=15_000)
        assert phone.locator("#viewer").get_attribute("data-ready") != "error"
        builder.max_waiting = 32  # a slot is free again
        phone.wait_for_selector("#viewer[data-ready='1']", timeout=30_000)
    finally:
        server.stop()
        if builder._pool is not None:
            builder._pool.shutdown()
