"""A running tournament's page counts from one moment: its progress ("N of M matches played"), its standings'
matches per bot and the matches playing now agree, although a match may finish between two reads; a match shown
as finished (stored, under Newest matches) is never listed as playing now, though its worker still lists it as
running until it is settled; and the batch fit that lags behind says over how many of the matches played it is.
In process, on a fake reader whose tournament moves as the referee's does: a result stored bumps matches_done and
the standings' counters at once."""

from __future__ import annotations

import re
from typing import Any

import grpc
from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena.web.client import ArenaNotFound
from arena_sdk.pb import arena_pb2

BOTS = ["a@1", "b@1", "c@1"]  # 3 bots, 3 seats a match: every bot sits in every match


class _Moving(FakeReader):
    """t7, a round robin of 30 matches on 3 seats, 10 done; a match (t7-000011) finishes while GetStandings is
    read; the worker still lists t7-000011 among its running matches (not settled yet), with 8 others."""

    def __init__(self, finish_during: str = "GetStandings") -> None:
        super().__init__()
        self.done = 10
        self.finish_during = finish_during

    async def call(self, method: str, request: Any) -> Any:
        if method == self.finish_during and self.done == 10:
            self.done = 11  # stored: matches_done and the standings' counters move together
        if method == "GetTournament":
            return arena_pb2.Tournament(id="t7", game="take5", format="round_robin", state="running",
                                        seats_per_match=3, bots=BOTS, matches_total=30, matches_done=self.done,
                                        seed_commitment="ab" * 32)
        if method == "GetStandings":
            return arena_pb2.Standings(tournament_id="t7", fit_matches=8, fit_refreshing=True, order="points", entries=[
                arena_pb2.StandingsEntry(rank=k + 1, bot=b, points=float(2 * self.done - k), matches=self.done,
                                         rating=1500.0) for k, b in enumerate(BOTS)])
        if method == "ListMatches":
            return arena_pb2.ListMatchesResponse(matches=[
                arena_pb2.MatchSummary(match_id=f"t7-{k:06d}", game="take5", seats=BOTS, ranks=[1, 2, 3],
                                       scores=[1.0, 2.0, 3.0]) for k in range(self.done, 0, -1)])
        if method == "ListWorkers":
            return arena_pb2.ListWorkersResponse(workers=[arena_pb2.WorkerInfo(
                name="w1", alive=True, concurrency=8, running=[f"t7-{k:06d}" for k in range(11, 20)])])
        raise ArenaNotFound(method, grpc.StatusCode.NOT_FOUND, "not found")


def _counts(html: str) -> tuple[int, list[int], list[str], list[str]]:
    """(matches played, matches of each standings line, the ids playing now, the ids under Newest matches)."""
    done = int(re.search(r'<span id="done">(\d+)</span>', html).group(1))  # type: ignore[union-attr]
    standings = html[html.index('<table class="standings">'):html.index("</table>", html.index("standings"))]
    rows = standings.split("<tbody>")[1].split("<tr>")[1:]
    per_bot = [int(re.findall(r"<td>(.*?)</td>", row, re.S)[3]) for row in rows]  # #, bot, points, matches
    playing = re.findall(r'<li><a href="/matches/([^"]+)">', html[html.index('id="playing"'):].split("</ul>")[0])
    newest = html[html.index("<h2>Newest matches</h2>"):]
    return done, per_bot, playing, sorted(set(re.findall(r'href="/matches/(t7-\d+)"', newest)))


def test_progress_standings_and_playing_now_count_the_same_matches() -> None:
    for path in ("/tournaments/t7", "/tournaments/t7/live"):
        with TestClient(app_of(_Moving())) as client:
            html = client.get(path).text
        done, per_bot, playing, newest = _counts(html)
        assert done == 11 and per_bot == [11, 11, 11], (done, per_bot)  # one moment: not 10 played and 11 each
        assert "t7-000011" in newest and "t7-000011" not in playing  # finished: not playing now
        assert playing == [f"t7-{k:06d}" for k in range(12, 20)]  # 8: the worker's concurrency
        assert 'id="moving"' not in html
        note = html[html.index('id="standings-note"'):].split("</p>")[0]
        assert "batch fit over 8 of the 11 matches played" in note and "being computed" in note
        assert "(3 bots a match): at most the 11 played" in note


def test_a_tournament_that_never_holds_still_says_its_counts_may_differ() -> None:
    class _Racing(_Moving):
        async def call(self, method: str, request: Any) -> Any:
            if method == "GetTournament":
                self.done += 1  # a result stored between every two reads
            return await super().call(method, request)

    with TestClient(app_of(_Racing(finish_during=""))) as client:
        html = client.get("/tournaments/t7").text
    assert 'id="moving"' in html and "may differ by a match or two" in html
