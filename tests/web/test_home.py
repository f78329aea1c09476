"""The home page shows the head of each game's live Elo ladder (rank, bot, rating with its margin, matches; the first
``HOME_LADDER_LINES`` of each group when a ladder has several groups, so a bot of group 2 is on it too) with a link to the whole ladder, from one
GetLadder per game; while the referee does not answer it still shows the games and their links, says so and
reloads itself (503, as every page). In process, on fake readers that answer as the referee does."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import grpc
from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena.web.client import ArenaDown, ArenaNotFound
from arena.web.pages import HOME_GROUPS, HOME_LADDER_LINES, ladder_top
from arena_sdk.games import game_ids
from arena_sdk.pb import arena_pb2

# take5: seven bots, ranks 1..7; taki: two groups (group 1 of 2 bots, group 2 of 1).
TAKE5 = [arena_pb2.LadderEntry(rank=k, bot=f"b{k}@1", rating=1700.0 - 25 * k, matches=10 + k, group=1,
                               margin=50.0) for k in range(1, 8)]
TAKI = [arena_pb2.LadderEntry(rank=1, bot="solo@1", rating=1520.0, matches=9, group=2, margin=80.0),
        arena_pb2.LadderEntry(rank=1, bot="lead@1", rating=1560.0, matches=3, group=1, too_few_matches=True),
        arena_pb2.LadderEntry(rank=2, bot="tail@1", rating=1440.0, matches=3, group=1, too_few_matches=True)]


class _Reader(FakeReader):
    """An arena with the ladders above and no tournament; counts the calls of each method (``calls``) and the
    games GetLadder was asked for (``ladders``)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()
        self.ladders: list[str] = []

    async def call(self, method: str, request: Any) -> Any:
        self.calls[method] += 1
        if method == "GetArenaInfo":
            return arena_pb2.ArenaInfo(arena_id="f00dfeed" * 4, version="9.9.9", games=game_ids())
        if method == "ListTournaments":
            return arena_pb2.ListTournamentsResponse()
        if method == "GetLadder":
            self.ladders.append(request.game)
            if request.game == "take5":
                return arena_pb2.Ladder(game="take5", entries=TAKE5, groups=1)
            return arena_pb2.Ladder(game=request.game, entries=TAKI if request.game == "taki" else [], groups=2)
        raise ArenaNotFound(method, grpc.StatusCode.NOT_FOUND, "not found")


class _DownReader(FakeReader):
    async def call(self, method: str, request: Any) -> Any:
        raise ArenaDown(method, grpc.StatusCode.UNAVAILABLE, "connection refused")


def _section(html: str, game: str) -> str:
    start = html.index(f'<section class="game home-ladder" id="ladder-{game}">')
    return html[start:html.index("</section>", start)]


def _bots(section: str) -> list[str]:
    return re.findall(r'<td><a href="/bots/[^"]+">([^<]+)</a></td>', section)


def test_the_home_page_shows_the_head_of_each_ladder_from_one_read_per_game() -> None:
    reader = _Reader()
    with TestClient(app_of(reader)) as client:
        answer = client.get("/")
    assert answer.status_code == 200, answer.text
    assert sorted(reader.ladders) == sorted(game_ids())  # one GetLadder per game, no other read of a ladder
    assert reader.calls == Counter({"GetArenaInfo": 1, "ListTournaments": 1, "GetLadder": len(game_ids())})
    take5 = _section(answer.text, "take5")
    assert _bots(take5) == [f"b{k}@1" for k in range(1, HOME_LADDER_LINES + 1)]  # the best five, in rank order
    assert "<td>1675.0 ± 50.0</td><td>11</td>" in take5  # b1's rating, its margin and matches
    assert '<a href="/ladder/take5">Full ladder: all 7 bots</a>' in take5
    taki = _section(answer.text, "taki")
    assert _bots(taki) == ["lead@1", "tail@1", "solo@1"]  # every group's top, each under its own heading
    assert taki.index("Group 1 of 2: 2 bots") < taki.index("lead@1") < taki.index("Group 2 of 2: 1 bot") \
        < taki.index("solo@1") and "ratings are not comparable" in taki
    assert taki.count("1560.0<span") == 1 and "* too few matches" in taki and "1520.0 ± 80.0" in taki
    assert "* too few matches" not in take5  # every rating there has its margin
    assert '<a href="/ladder/taki">Full ladder</a>' in taki  # all 3 are shown
    assert "Newest tournaments" in answer.text and "version 9.9.9" in answer.text


def test_the_home_pages_mirror_has_the_heads_of_the_ladders() -> None:
    with TestClient(app_of(_Reader())) as client:
        ladders = client.get("/api/").json()["ladders"]
    assert [e["bot"] for e in ladders["take5"]["entries"]] == [f"b{k}@1" for k in range(1, 6)]
    assert ladders["taki"]["bots"] == 3 and ladders["taki"]["more_groups"] == 0
    assert [(s["heading"], [e["bot"] for e in s["entries"]]) for s in ladders["taki"]["sections"]] == [
        ("group 1 of 2: 2 bots", ["lead@1", "tail@1"]), ("group 2 of 2: 1 bot", ["solo@1"])]


def test_the_home_page_shows_the_first_groups_and_says_how_many_more_are_on_the_full_ladder() -> None:
    entries = [{"rank": 1, "bot": f"g{g}@1", "rating": 1500.0, "matches": 3, "group": g} for g in range(1, 8)]
    top = ladder_top({"entries": entries, "groups": 7})
    assert [s["heading"] for s in top["sections"]] == [f"group {g} of 7: 1 bot" for g in range(1, HOME_GROUPS + 1)]
    assert top["more_groups"] == 7 - HOME_GROUPS and top["bots"] == 7


def test_the_home_page_keeps_the_ladders_order_and_ranks() -> None:
    """The ladder ranks bots with too few matches after the others (``arena.ratings.ladder.elo_lines``); the home
    page shows its head as it is, ranks and all."""
    entries = [{"rank": r, "bot": bot, "rating": rating, "matches": n, "group": 1, "too_few_matches": n < 5}
               for r, (bot, rating, n) in enumerate([("a@1", 1600.0, 40), ("b@1", 1560.0, 900), ("c@1", 1550.0, 30),
                                                     ("d@1", 1540.0, 30), ("boom@1", 1590.0, 1),
                                                     ("slow@1", 1580.0, 2)], 1)]
    top = ladder_top({"entries": entries, "groups": 1}, most=5)
    assert [(e["bot"], e["rank"]) for e in top["entries"]] == [("a@1", 1), ("b@1", 2), ("c@1", 3), ("d@1", 4),
                                                                ("boom@1", 5)]


def test_the_home_page_says_the_referee_is_down_and_still_links_every_ladder() -> None:
    with TestClient(app_of(_DownReader())) as client:
        answer = client.get("/")
        api = client.get("/api/")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "3"
    assert '<p class="error" id="arena-down">the arena&#39;s referee does not answer (unavailable).</p>' in answer.text
    assert '<meta http-equiv="refresh" content="3">' in answer.text  # it reloads itself, as the 503 page
    for game in game_ids():
        assert f'<a href="/ladder/{game}">Full ladder</a>' in answer.text
    assert "Newest tournaments" not in answer.text
    assert api.status_code == 503 and "does not answer" in api.json()["error"]
