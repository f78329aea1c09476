"""The ladder page and the home page mark a bot version that is no longer registered ("(removed)"), and the ladder's
groups note offers a join only between groups that can still meet: after `make demo` removed its bots the page
told a newcomer to join a group of them (a newcomer review). In process, on a fake reader that answers as the
referee does."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena_sdk.games import game_ids
from arena_sdk.pb import arena_pb2

DEMO = [arena_pb2.LadderEntry(rank=k, bot=f"demo-{k}@1.0", rating=1600.0 - 50 * k, matches=12, group=1,
                              margin=60.0, removed=True) for k in (1, 2)]
MINE = [arena_pb2.LadderEntry(rank=1, bot="lowrisk@1.0", rating=1510.0, matches=9, group=2, margin=90.0),
        arena_pb2.LadderEntry(rank=2, bot="heuristic@1.0", rating=1490.0, matches=9, group=2, margin=90.0)]


class _Reader(FakeReader):
    def __init__(self, entries: list[arena_pb2.LadderEntry]) -> None:
        super().__init__()
        self.entries = entries

    async def call(self, method: str, request: Any) -> Any:
        if method == "GetLadder":
            return arena_pb2.Ladder(game=request.game, entries=self.entries if request.game == "take5" else [],
                                    groups=2 if request.game == "take5" else 0, method=request.method)
        if method == "GetArenaInfo":
            return arena_pb2.ArenaInfo(arena_id="f00dfeed" * 4, version="9.9.9", games=game_ids())
        if method == "ListTournaments":
            return arena_pb2.ListTournamentsResponse()
        return self.empty_or_not_found(method)


def test_removed_bots_are_marked_and_their_group_is_not_offered_for_a_join() -> None:
    with TestClient(app_of(_Reader(DEMO + MINE))) as client:
        page = client.get("/ladder/take5").text
        home = client.get("/").text
    text = " ".join(page.split())
    assert text.count(">(removed)</span>") == 2 and "lowrisk@1.0</a> <span" not in text
    assert "group 1 holds only removed bots" in text and "joins them" not in text
    assert home.count(">(removed)</span>") == 2
    registered = []  # the same bots registered: the flags make the marks, not the names
    for e in DEMO:
        kept = arena_pb2.LadderEntry()
        kept.CopyFrom(e)
        kept.removed = False
        registered.append(kept)
    with TestClient(app_of(_Reader(registered + MINE))) as client:
        text = " ".join(client.get("/ladder/take5").text.split())
    assert "(removed)" not in text and "a tournament with bots of two groups joins them" in text
