"""A finished SPRT's page does not read as a contradiction: its verdict comes first, and the standings (V2 first on
points, though the verdict is H0) come below it under a heading that says they count every match, house bots
included, with a note that the verdict compares V1 and V2 block by block on the same deals. Its LLR bar reads as
decided: the marker at the bound it crossed, with the verdict named; while the test runs it stays a bar between
the bounds. In process on a fake reader that answers as the referee does for a paired SPRT with house bots, then
in headless Chromium (conftest's ``browser``) at desktop and phone width."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from web_helpers import FAKE_SERVER, PHONE, FakeReader, app_of, screenshot

from arena.web.app import WebOptions
from arena.web.serving import WebServer
from arena_sdk.pb import arena_pb2

HOUSE = "house:heuristic"
V1, V2 = "gapbot@1.0", "gapbot@2.0"
REASON = "LLR -2.96 <= -2.94 (H0 bound): V2 is not better, nElo -28.3"


LADDER_NOTE = "its matches do not count on the public ladder, as asked at its start"


class _Sprt(FakeReader):
    """t5: a paired SPRT of gapbot@1.0 against gapbot@2.0 with three house bots, on duplicate deals; ``verdict``
    "H0" (finished, LLR -2.96), "H1" (finished, LLR 2.97) or "" (running, LLR 1.0). V2 leads the standings."""

    def __init__(self, verdict: str, state: str = "", elo: float = -28.3, hypotheses: tuple[float, float] = (0.0, 40.0),
                 ) -> None:
        super().__init__()
        self.verdict, self.state, self.elo, self.hypotheses = verdict, state, elo, hypotheses

    async def call(self, method: str, request: Any) -> Any:
        running = not self.verdict
        state = self.state or ("running" if running else "finished")
        t = arena_pb2.Tournament(id="t5", game="take5", format="sprt", state=state,
                                 seats_per_match=4, bots=[V1, V2, HOUSE], matches_total=400, matches_done=48,
                                 deals="duplicate", tables_per_deal=2, seed_commitment="ab" * 32)
        if method == "GetTournament":
            return t
        if method == "GetStandings":
            return arena_pb2.Standings(tournament_id="t5", fit_matches=48, entries=[
                arena_pb2.StandingsEntry(rank=1, bot=V2, points=80, matches=24, rating=1530.0, margin=40.0),
                arena_pb2.StandingsEntry(rank=2, bot=V1, points=70, matches=24, rating=1510.0, margin=40.0),
                arena_pb2.StandingsEntry(rank=3, bot=HOUSE, points=66, matches=48, rating=1480.0, margin=30.0)])
        if method == "GetSprt":
            llr = {"H0": -2.96, "H1": 2.97, "": 1.0}[self.verdict]
            return arena_pb2.Sprt(tournament=t, v1=V1, v2=V2, seats=4, house=[HOUSE] * 3, statistic="score",
                                  elo0=self.hypotheses[0], elo1=self.hypotheses[1], blocks=24, llr=llr, lower=-2.94, upper=2.94, elo=self.elo,
                                  elo_margin=20.0, verdict=self.verdict, reason=REASON if self.verdict else "",
                                  ladder_note=LADDER_NOTE)
        return self.empty_or_not_found(method)


def test_a_cancelled_test_and_an_infinite_estimate_read_as_they_are() -> None:
    with TestClient(app_of(_Sprt("", state="cancelled", elo=float("inf")))) as client:
        status = client.get("/tournaments/t5").text.split('id="sprt-status"')[1].split("</p>")[0]
    assert "<strong>cancelled</strong> before a verdict" in status and "against the bounds" in status
    assert "nElo +inf (every block went V2&#39;s way: no finite estimate yet)" in status, status
    assert "± -" not in status


def test_a_non_regression_tests_verdict_speaks_of_a_regression() -> None:
    """`--elo0 -5 --elo1 0`: H0 is a regression, H1 none of that size (the page said "not 0 Elo better")."""
    labels = {}
    for verdict in ("H0", "H1"):
        with TestClient(app_of(_Sprt(verdict, hypotheses=(-5.0, 0.0)))) as client:
            html = client.get("/tournaments/t5").text
        labels[verdict] = " ".join(html[html.index('id="llr-label"'):].split("</p>")[0].split())
    assert f"{V2} is worse than {V1} (a regression; a smaller loss is not ruled out)" in labels["H0"], labels
    assert f"{V2} is not worse by 5 nElo than {V1} (no regression of that size)" in labels["H1"], labels
    assert "better" not in labels["H0"] + labels["H1"]


def test_the_verdict_comes_before_the_standings_which_say_what_they_count() -> None:
    with TestClient(app_of(_Sprt("H0"))) as client:
        html = client.get("/tournaments/t5").text
    verdict, note = html.index('id="sprt-status"'), html.index('id="sprt-standings-note"')
    heading, table = html.index('id="standings-heading"'), html.index('<table class="standings">')
    assert verdict < note < heading < table  # the verdict first, then what the standings are
    assert "Standings: points over all matches, house bots included</h2>" in html
    text = html[note:].split("</p>")[0]
    assert "not what the test decides on" in text and "against the house bots too" in text
    assert f"compares {V1} and {V2} block by block" in text and "dealt the same cards" in text
    label = html[html.index('id="llr-label"'):].split("</p>")[0]
    assert "Decided: H0" in label and "LLR -2.96 crossed the lower bound -2.94" in label
    assert f"{V2} is not 40 nElo better than {V1} (a smaller gain is not ruled out)" in label  # H0 is about elo1
    assert '<progress id="llr-bar"' not in html
    assert f'<p class="muted" id="sprt-ladder">Ladder: {LADDER_NOTE}.</p>' in html  # as `arena sprt show` says it


@pytest.fixture
def served() -> Iterator[dict[str, str]]:
    servers = {v: WebServer(WebOptions(server=FAKE_SERVER), "127.0.0.1:0", app=app_of(_Sprt(v)))
               for v in ("H0", "H1", "")}
    for server in servers.values():
        server.start()
    try:
        yield {v: server.url().rstrip("/") for v, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()


def test_a_decided_sprts_bar_shows_its_marker_at_the_bound_it_crossed(served: dict[str, str], browser: Any) -> None:
    for viewport in ({"width": 1200, "height": 900}, PHONE):
        context = browser.new_context(viewport=viewport)
        try:
            page = context.new_page()
            for verdict, bound in (("H0", "lower"), ("H1", "upper")):
                page.goto(f"{served[verdict]}/tournaments/t5")
                track = page.locator("#llr-bar .llr-track").bounding_box()
                marker = page.locator("#llr-marker").bounding_box()
                middle = marker["x"] + marker["width"] / 2
                end = track["x"] if verdict == "H0" else track["x"] + track["width"]
                assert abs(middle - end) <= 2, (verdict, middle, track)  # at the crossed end, not "0 % done"
                assert page.locator("#llr-bar .llr-end.crossed").inner_text().startswith(verdict)
                label = page.locator("#llr-label")
                assert label.is_visible() and f"crossed the {bound} bound" in label.inner_text()
                assert page.locator("#sprt-status").bounding_box()["y"] < \
                    page.locator("table.standings").bounding_box()["y"]
                assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
                screenshot(page, f"sprt-{verdict}-{viewport['width']}")
            page.goto(f"{served['']}/tournaments/t5")  # running: a bar between the bounds, no verdict
            assert page.locator("progress#llr-bar").get_attribute("value") == str(round(3.94 / 5.88 * 1000))
            assert page.locator("#llr-label").count() == 0
        finally:
            context.close()
