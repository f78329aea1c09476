"""A bot page's newest matches show the bot's own rank and score in the columns right after the match id, before
every seat's (score, rank), so a phone shows them without scrolling; a bot NAME's page shows the result of each of
its seats when two of its versions sat at one table (an SPRT). A tournament's newest matches have no such columns.
In process, on a fake reader that answers as the referee does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena.web import stats
from arena.web.client import ArenaNotFound
from arena_sdk.pb import arena_pb2

V1, V2 = "ace@1", "ace@2"
# Newest first, as ListMatches answers: (match id, seats, scores, ranks).
MATCHES = [("t1-000002", ["zed@1", V2, V1], [12, 30, 7], [2, 3, 1]),
           ("t1-000001", ["zed@1", "kid@1", V1], [3, 5, 41], [1, 2, 3]),
           ("t1-000000", [V1, "zed@1", "kid@1"], [9, 9, 20], [1, 1, 3])]


class _Reader(FakeReader):
    """ace (versions 1 and 2) and its three Take 5 matches of tournament t1, none revealed; t1 finished."""

    async def call(self, method: str, request: Any) -> Any:
        if method == "ListBots":
            return arena_pb2.ListBotsResponse(bots=[arena_pb2.BotRecord(bot_id=v, name="ace", game="take5")
                                                    for v in (V1, V2)])
        if method == "ListMatches":
            chosen = [m for m in MATCHES if not request.bot or any(s.startswith(request.bot) for s in m[1])]
            return arena_pb2.ListMatchesResponse(matches=[
                arena_pb2.MatchSummary(match_id=i, tournament_id="t1", game="take5", seats=seats, scores=scores,
                                       ranks=ranks, faults=[0] * len(seats), finished_at=1_700_000_000.0)
                for i, seats, scores, ranks in chosen])
        if method == "GetLadder":
            return arena_pb2.Ladder(game=request.game)
        if method == "GetTournament":
            return arena_pb2.Tournament(id="t1", game="take5", format="round_robin", state="finished",
                                        seats_per_match=3, bots=[V1, "kid@1", "zed@1"], matches_total=3,
                                        matches_done=3, seed_commitment="ab" * 32)
        if method == "GetStandings":
            return arena_pb2.Standings(tournament_id="t1")
        raise ArenaNotFound(method, grpc.StatusCode.NOT_FOUND, "not found")


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(app_of(_Reader())) as c:
        yield c


def _rows(html: str) -> tuple[list[str], list[list[str]]]:
    """The column titles and the cells' text (tags and spaces at their ends dropped) of the matches table."""
    table = html[html.index('<table class="matches">'):]
    table = table[:table.index("</table>")]
    head = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", table)
    body = table[table.index("<tbody>"):]
    rows = [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td(?: [^>]*)?>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    return head, rows


def test_a_versions_page_shows_its_rank_and_score_right_after_the_match(client: TestClient) -> None:
    head, rows = _rows(client.get(f"/bots/{V1}").text)
    assert head[:4] == ["match", "rank", "score", "seats (score, rank)"]
    assert [r[:3] for r in rows] == [["t1-000002", "1 of 3", "7"], ["t1-000001", "3 of 3", "41"],
                                     ["t1-000000", "1 of 3", "9"]]


def test_a_names_page_shows_each_of_its_seats_at_a_table_of_two_versions(client: TestClient) -> None:
    _, rows = _rows(client.get("/bots/ace").text)
    assert rows[0][:3] == ["t1-000002", "3 of 3, 1 of 3", "30, 7"]  # ace@2 in seat 1, ace@1 in seat 2
    assert client.get("/api/bots/ace").json()["matches"][0]["own_seats"] == [1, 2]


def test_a_tournaments_matches_have_no_own_columns(client: TestClient) -> None:
    head, rows = _rows(client.get("/tournaments/t1").text)
    assert head == ["match", "seats (score, rank)", "faults", "finished"] and len(rows) == 3


def test_the_seats_of_a_bot_id_and_of_a_name() -> None:
    summary = {"seats": ["zed@1", V2, V1, "aces@1"]}
    assert stats.seats_of(summary, V1) == [2] and stats.seats_of(summary, "ace") == [1, 2]
    assert stats.seats_of(summary, "kid") == [] and stats.seats_of({}, V1) == []
