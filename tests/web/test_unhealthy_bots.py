"""The web pages say which bots are unhealthy (their matches wait for them), as `arena bot list` does: a mark on
/bots and, on the bot's page, since when and why. In process on a fake reader."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena_sdk.pb import arena_pb2

REASON = "forfeited (unreachable) in match t3-000012"


class _Reader(FakeReader):
    async def call(self, method: str, request: Any) -> Any:
        if method == "ListBots":
            return arena_pb2.ListBotsResponse(bots=[b for b in [
                arena_pb2.BotRecord(bot_id="down@1", name="down", game="take5", version="1", health="unhealthy",
                                    unhealthy_since=1_700_000_000.0, health_reason=REASON),
                arena_pb2.BotRecord(bot_id="fine@1", name="fine", game="take5", version="1", health="healthy")]
                if not request.name or b.name == request.name])
        if method == "GetLadder":
            return arena_pb2.Ladder(game=request.game)
        return self.empty_or_not_found(method)


def test_an_unhealthy_bot_is_marked_on_the_list_and_its_page_says_since_when_and_why() -> None:
    with TestClient(app_of(_Reader())) as client:
        listed = client.get("/bots").text
        down, fine = listed.split('href="/bots/down"')[1], listed.split('href="/bots/fine"')[1]
        assert '<span class="warning">unhealthy</span>' in down.split("</td>")[0]
        assert "unhealthy" not in fine.split("</td>")[0]
        page = client.get("/bots/down").text
        assert "down@1 is unhealthy since" in page and REASON in page
        assert "is unhealthy" not in client.get("/bots/fine").text
