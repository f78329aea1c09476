"""``/bots`` and ``/api/bots`` with ``?game=``: only that game's bot versions (ListBots of that game), its next
page link keeps the game, and an unknown game is a 404 as on ``/api/tournaments``. In process, on a fake reader."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena.web.client import ArenaNotFound
from arena_sdk.pb import arena_pb2

BOTS = {"take5": ["heuristic@1.0", "random@1.0"], "taki": ["shedder@1.0"]}


class _Reader(FakeReader):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def call(self, method: str, request: Any) -> Any:
        if method == "ListBots":
            self.asked.append(request.game)
            games = [request.game] if request.game else sorted(BOTS)
            return arena_pb2.ListBotsResponse(
                bots=[arena_pb2.BotRecord(name=b.split("@")[0], version=b.split("@")[1], bot_id=b, game=g,
                                          endpoint="127.0.0.1:1") for g in games for b in BOTS[g]],
                next_page_token="p2" if request.game == "take5" and not request.page_token else "")
        raise ArenaNotFound(method, grpc.StatusCode.NOT_FOUND, "not found")


@pytest.fixture
def reader() -> _Reader:
    return _Reader()


@pytest.fixture
def client(reader: _Reader) -> Iterator[TestClient]:
    with TestClient(app_of(reader)) as c:
        yield c


def test_bots_of_one_game(client: TestClient, reader: _Reader) -> None:
    every = client.get("/api/bots").json()
    assert {b["game"] for b in every["bots"]} == {"take5", "taki"} and reader.asked == [""]
    taki = client.get("/api/bots?game=taki").json()
    assert [b["bot_id"] for b in taki["bots"]] == ["shedder@1.0"] and taki["game"] == "taki"
    page = client.get("/bots?game=take5")
    assert page.status_code == 200 and 'href="/bots?page=p2&amp;game=take5"' in page.text, page.text
    assert reader.asked == ["", "taki", "take5"]
    for path in ("/api/bots?game=bogus", "/bots?game=chess"):
        answer = client.get(path)
        assert answer.status_code == 404 and "no game named" in answer.text, path
    assert reader.asked == ["", "taki", "take5"]  # an unknown game asks the referee nothing
