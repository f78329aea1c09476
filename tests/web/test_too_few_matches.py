"""A rating without a margin says why on the pages, as the CLI does: a bot with too few matches for a margin shows
"(too few matches)" beside its rating, in a tournament's standings (its batch fit, ``StandingsEntry.too_few_matches``)
and on the ladder (``LadderEntry.too_few_matches``), and no likelihood of superiority (LOS) over or under it. In
process, on a fake reader that answers as the referee does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena.web import filters
from arena_sdk.pb import arena_pb2

TID = "t5"
FEW = '(too few matches)</span>'


class _Reader(FakeReader):
    """A finished 4-bot round robin t5 of 4 matches of ``game``, where "rare@1" played 1 match (second of four in
    the standings); a ladder of four where the third, "rare@1", has 2 matches. Every line but the last has a LOS."""

    def __init__(self, game: str = "take5") -> None:
        super().__init__()
        self.game = game

    async def call(self, method: str, request: Any) -> Any:
        if method == "GetTournament":
            return arena_pb2.Tournament(id=TID, game=self.game, format="round_robin", state="finished",
                                        seats_per_match=3, bots=["ace@1", "low@1", "mid@1", "rare@1"],
                                        matches_total=4,
                                        matches_done=4, seed_commitment="ab" * 32)
        if method == "GetStandings":
            return arena_pb2.Standings(tournament_id=TID, fit_matches=4, entries=[
                arena_pb2.StandingsEntry(rank=1, bot="ace@1", points=6, matches=4, rating=1620.0, margin=90.0,
                                         los_next=0.958),
                arena_pb2.StandingsEntry(rank=2, bot="rare@1", points=2, matches=1, rating=1530.0,
                                         too_few_matches=True, los_next=0.81),
                arena_pb2.StandingsEntry(rank=3, bot="mid@1", points=1, matches=4, rating=1350.0, margin=95.0,
                                         los_next=0.9996),
                arena_pb2.StandingsEntry(rank=4, bot="low@1", points=0, matches=3, rating=1100.0, margin=99.0)])
        if method == "GetLadder":
            return arena_pb2.Ladder(game=request.game or "take5", entries=[
                arena_pb2.LadderEntry(rank=1, bot="ace@1", rating=1620.0, margin=60.0, matches=40, los_next=0.9996),
                arena_pb2.LadderEntry(rank=2, bot="solid@1", rating=1580.0, margin=70.0, matches=30, los_next=0.958),
                arena_pb2.LadderEntry(rank=3, bot="rare@1", rating=1530.0, matches=2, too_few_matches=True,
                                      los_next=0.7),
                arena_pb2.LadderEntry(rank=4, bot="last@1", rating=1400.0, margin=80.0, matches=20)])
        return self.empty_or_not_found(method)


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(app_of(_Reader())) as c:
        yield c


def test_standings_say_which_rating_has_too_few_matches_for_a_margin(client: TestClient) -> None:
    answer = client.get(f"/tournaments/{TID}")
    assert answer.status_code == 200, answer.text
    html = answer.text
    assert html.count(FEW) == 1, html
    rare = html[html.index("rare@1"):]
    assert rare.index(FEW) < rare.index("mid@1")  # on rare's line, not another's
    assert "± 90" in html and "± 95" in html


def test_the_ladder_says_which_rating_has_too_few_matches_for_a_margin(client: TestClient) -> None:
    answer = client.get("/ladder/take5")
    assert answer.status_code == 200, answer.text
    assert answer.text.count(FEW) == 1 and "± 60" in answer.text, answer.text


HIDDEN = f'<span class="muted los-hidden" title="{filters.LOS_HIDDEN_TITLE}">-</span>'


def _column(html: str, table: str, column: int) -> list[str]:
    """The cells (inner HTML) of 0-based ``column`` of each body row of the first ``<table class="TABLE">``."""
    body = html[html.index(f'<table class="{table}">'):]
    body = body[body.index("<tbody>"):body.index("</tbody>")]
    return [re.findall(r"<td>(.*?)</td>", row, re.S)[column] for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_no_los_beside_a_bot_with_too_few_matches(client: TestClient) -> None:
    """LOS compares a line with the next one down: left out when either has too few matches; never 100 % for
    0.9996."""
    assert _column(client.get("/ladder/take5").text, "ladder", 3) == ["&gt; 99.9 %", HIDDEN, HIDDEN, "-"]
    assert _column(client.get(f"/tournaments/{TID}").text, "standings", 7) == [HIDDEN, HIDDEN, "&gt; 99.9 %", "-"]


@pytest.mark.parametrize(("game", "unit", "label"), [
    ("take5", "bullheads", "bullheads"),
    ("taki", "cards held", "cards held; stairs: 1000 x stage + cards")])
def test_columns_say_their_units_in_short_and_in_full_in_their_tooltip(game: str, unit: str, label: str) -> None:
    heading = f'<th title="the game\'s score per match, lower is better: {label}">mean {unit}</th>'
    with TestClient(app_of(_Reader(game))) as c:
        standings = c.get(f"/tournaments/{TID}").text
        assert heading in standings and "performance (Elo)</th>" in standings, standings
        assert heading in c.get(f"/ladder/{game}").text


def test_a_score_unit_is_the_score_label_up_to_its_explanation() -> None:
    assert filters.score_unit("taki") == "cards held"
    assert filters.score_unit("take5") == "bullheads"
    assert filters.score_unit("chess") == "score"  # no renderer: the generic word


@pytest.mark.parametrize("built", [False, True])
def test_the_docs_link_shows_only_with_a_built_site(tmp_path: Any, built: bool) -> None:
    if built:
        (tmp_path / "index.html").write_text("<html></html>")
    with TestClient(app_of(_Reader(), docs=tmp_path)) as c:
        page = c.get("/ladder/take5").text
        assert ('<a href="/docs/">Docs</a>' in page) is built
        (tmp_path / "index.html").write_text("<html></html>")  # `make docs` while the pages are served
        assert '<a href="/docs/">Docs</a>' in c.get("/ladder/take5").text
