"""House bots on the pages: the arena's own sample bots (``house:<sample name>``) that a paired SPRT seats without
registering them have no bot page, so no page links to ``/bots/house:...``: their name is plain text with a tooltip
(``filters.bot_link``), and ``/bots/house:NAME`` is a 404 that says it is a house bot. In process, on a fake reader
that answers as the referee does for a running paired SPRT (``arena sprt gapbot@1.0 gapbot@2.0 --house
heuristic,heuristic,heuristic``): the tournament page and its live part (standings, newest matches), a finished
match's page and a running match's page. Then the same pages in headless Chromium at phone (390 px) and desktop
width: nothing scrolls the page sideways, and a match's results table (its long column title "cards held; stairs:
1000 x stage + cards") fits the phone's screen."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from starlette.testclient import TestClient
from web_helpers import FAKE_SERVER, PHONE, FakeReader, app_of, screenshot

from arena.web import filters
from arena.web.app import WebOptions
from arena.web.client import ArenaNotFound
from arena.web.serving import WebServer
from arena_sdk.pb import arena_pb2

TID = "t4"
HOUSE = "house:heuristic"
V1, V2 = "gapbot@1.0", "gapbot@2.0"
FINISHED, RUNNING = f"{TID}-000001", f"{TID}-000002"
HOUSE_HREF = re.compile(r"href=\"[^\"]*/bots/house", re.IGNORECASE)


def _summary(match_id: str, bot: str) -> arena_pb2.MatchSummary:
    return arena_pb2.MatchSummary(match_id=match_id, tournament_id=TID, game="taki", seats=[bot, HOUSE, HOUSE, HOUSE],
                                  scores=[7007, 8007, 8012, 9003], ranks=[1, 2, 3, 4], faults=[0, 1, 0, 2],
                                  finished_at=1_700_000_000.0)


class _SprtReader(FakeReader):
    """The referee's answers about a running paired SPRT of gapbot@1.0 against gapbot@2.0 at Taki tables with three
    house:heuristic: matches t4-000000 and t4-000001 finished (their records withheld while it runs), t4-000002
    being played."""

    async def call(self, method: str, request: Any) -> Any:
        tournament = arena_pb2.Tournament(id=TID, game="taki", format="sprt", state="running", seats_per_match=4,
                                          bots=[V1, V2, HOUSE], matches_total=400, matches_done=2, deals="duplicate",
                                          tables_per_deal=2, seed_commitment="ab" * 32)
        if method == "GetTournament":
            return tournament
        if method == "GetStandings":
            return arena_pb2.Standings(tournament_id=TID, entries=[
                arena_pb2.StandingsEntry(rank=1, bot=V2, points=3, matches=1, rating=1510.0, margin=200.0),
                arena_pb2.StandingsEntry(rank=2, bot=HOUSE, points=2, matches=2, rating=1500.0, margin=150.0),
                arena_pb2.StandingsEntry(rank=3, bot=V1, points=1, matches=1, rating=1490.0, margin=200.0)])
        if method == "GetSprt":
            return arena_pb2.Sprt(tournament=tournament, v1=V1, v2=V2, seats=4, house=[HOUSE] * 3, statistic="score",
                                  elo0=0.0, elo1=40.0, blocks=1, llr=0.2, lower=-2.94, upper=2.94)
        if method == "ListMatches":
            return arena_pb2.ListMatchesResponse(matches=[_summary(FINISHED, V2), _summary(f"{TID}-000000", V1)])
        if method == "ListWorkers":
            return arena_pb2.ListWorkersResponse(workers=[arena_pb2.WorkerInfo(name="w1", alive=True,
                                                                                running=[RUNNING])])
        if method == "GetMatch" and request.match_id != RUNNING:
            return arena_pb2.MatchDetail(summary=_summary(request.match_id, V1 if request.match_id.endswith("0")
                                                          else V2),
                                         withheld=f"tournament {TID} is still running: its records and deals are "
                                                  "shown when it has ended")
        if method == "GetLiveMatch" and request.match_id == RUNNING:
            return arena_pb2.LiveMatch(match_id=RUNNING, game="taki", tournament_id=TID, seats=[V1, HOUSE, HOUSE, HOUSE],
                                       withheld=f"tournament {TID} runs on duplicate deals: its cards stay hidden")
        raise ArenaNotFound(method, grpc.StatusCode.NOT_FOUND, "not found")


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(app_of(_SprtReader())) as c:
        yield c


def test_a_house_bot_is_plain_text_with_a_tooltip_and_a_registered_bot_a_link() -> None:
    house = filters.bot_link(HOUSE)
    assert "href" not in house and f">{HOUSE}</span>" in house and filters.HOUSE_BOT_TITLE in house
    assert filters.bot_link(V2) == f'<a href="/bots/{V2}">{V2}</a>'
    assert filters.bot_link(V2, "2.0") == f'<a href="/bots/{V2}">2.0</a>'
    assert filters.bot_link('x"><b>') == '<a href="/bots/x%22%3E%3Cb%3E">x&#34;&gt;&lt;b&gt;</a>'
    assert "href" in filters.bot_link("house") and "href" in filters.bot_link("houses:x")  # a NAME like any other


@pytest.mark.parametrize("path", [f"/tournaments/{TID}", f"/tournaments/{TID}/live", f"/matches/{FINISHED}",
                                  f"/matches/{RUNNING}"])
def test_no_page_links_to_a_house_bot(client: TestClient, path: str) -> None:
    answer = client.get(path)
    html = answer.text
    assert answer.status_code == 200, html
    assert not HOUSE_HREF.search(html), path
    assert f'title="{filters.HOUSE_BOT_TITLE}">{HOUSE}</span>' in html, path
    assert f'href="/bots/{V1}"' in html or f'href="/bots/{V2}"' in html, path  # registered bots keep their link


@pytest.mark.parametrize("path", [f"/bots/{HOUSE}", f"/api/bots/{HOUSE}"])
def test_a_house_bots_page_is_a_404_that_says_it_is_a_house_bot(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 404
    assert "is a house bot: played by the arena itself, not registered" in answer.text
    assert "a bot name is 1..64 characters" not in answer.text


@pytest.fixture
def served() -> Iterator[str]:
    server = WebServer(WebOptions(server=FAKE_SERVER), "127.0.0.1:0", app=app_of(_SprtReader()))
    server.start()
    try:
        yield server.url().rstrip("/")
    finally:
        server.stop()


def test_a_matchs_results_table_fits_a_phone_and_no_page_scrolls_sideways(served: str, browser: Any) -> None:
    for viewport, mobile in ((PHONE, True), ({"width": 1366, "height": 900}, False)):
        context = browser.new_context(viewport=viewport, device_scale_factor=2, is_mobile=mobile)
        try:
            page = context.new_page()
            for path in (f"/tournaments/{TID}", f"/matches/{FINISHED}"):
                page.goto(f"{served}{path}")
                width = viewport["width"]
                assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (path, width)
            box = page.evaluate("(b => [b.scrollWidth, b.clientWidth])(document.querySelector('#seats').parentElement)")
            assert box[0] <= box[1], f"the results table is clipped at {width} px: {box[0]} px in a {box[1]} px box"
            assert "1000 x stage" in page.inner_text("#seats")
            if mobile:
                screenshot(page, "match-sprt-house-phone")
        finally:
            context.close()


def test_an_sprt_shows_its_llr_between_its_bounds_not_a_fixed_total(client: TestClient) -> None:
    from arena.web.tournament_pages import llr_position

    html = client.get(f"/tournaments/{TID}").text
    bar = html[html.index('<progress id="llr-bar"'):].split(">", 1)[0]
    assert 'max="1000"' in bar and 'value="534"' in bar  # LLR 0.2 in [-2.94, 2.94]: just past the middle
    assert "An SPRT has no fixed length" in html and 'max="400"' not in html  # no bar of 2 of 400 matches
    assert [llr_position({"llr": x, "lower": -2.94, "upper": 2.94}) for x in (-5.0, 0.0, 3.1)] == [0, 500, 1000]
    assert llr_position(None) is None and llr_position({"llr": 0, "lower": 1, "upper": 1}) is None
