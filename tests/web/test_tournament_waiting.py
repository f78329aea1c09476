"""A running tournament's page names the unhealthy bots it waits for (``Tournament.waiting_for``), since when and
why, where it showed only "running: 26 of 30 matches played"; a tournament that waits for nobody says nothing of
it. In process, on a fake reader that answers as the referee does."""

from __future__ import annotations

import time
from typing import Any

import pytest
from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena_sdk.pb import arena_pb2


class _Reader(FakeReader):
    def __init__(self, waiting: list[arena_pb2.WaitingBot]) -> None:
        super().__init__()
        self.waiting = waiting

    async def call(self, method: str, request: Any) -> Any:
        if method == "GetTournament":
            return arena_pb2.Tournament(id="t12", game="take5", format="round_robin", state="running",
                                        seats_per_match=2, bots=["hale@1", "victim@1"], matches_total=30,
                                        matches_done=26, seed_commitment="ab" * 32, waiting_for=self.waiting,
                                        matches_deferred=3 if self.waiting else 0)
        if method == "GetStandings":
            return arena_pb2.Standings(tournament_id="t12")
        return self.empty_or_not_found(method)


@pytest.mark.parametrize("path", ["/tournaments/t12", "/tournaments/t12/live"])
def test_the_page_says_which_bot_the_tournament_waits_for(path: str) -> None:
    soon = time.time() + 600  # its deferred matches are forced then
    victim = arena_pb2.WaitingBot(bot="victim@1", unhealthy_since=1_700_000_000.0,
                                  reason="answered no call in match t12-000025", forced_at=soon)
    with TestClient(app_of(_Reader([victim]))) as client:
        html = client.get(path).text
    assert "26</span> of <span id=\"total\">30</span> matches played" in html
    waiting = html[html.index('id="waiting"'):].split("</p>", 1)[0]
    assert "victim@1" in waiting and "(answered no call in match t12-000025)" in waiting
    assert "unhealthy since 2023-11-14" in waiting and "played anyway from about" in waiting
    assert "its 3 matches wait until it answers again, or until then, when it forfeits them" in waiting
    with TestClient(app_of(_Reader([]))) as client:
        assert 'id="waiting"' not in client.get(path).text


def test_a_bot_whose_matches_are_forced_already_is_not_said_to_hold_them() -> None:
    """Past its forced_at (the cap ran out, or it relapsed soon after recovering) a bot's matches are played: the
    page says so, and no longer that they wait for it, where it said they wait until a time gone by."""
    gone = arena_pb2.WaitingBot(bot="victim@1", unhealthy_since=1_700_000_000.0, reason="answered no call",
                                forced_at=1_700_000_600.0)
    with TestClient(app_of(_Reader([gone]))) as client:
        html = client.get("/tournaments/t12").text
    waiting = html[html.index('id="waiting"'):].split("</p>", 1)[0]
    assert "victim@1" in waiting and "its matches played anyway now" in waiting
    assert "wait until" not in waiting and "played anyway from about" not in waiting


class _NoWorkers(_Reader):
    def __init__(self, alive: bool) -> None:
        super().__init__([])
        self.alive = alive

    async def call(self, method: str, request: Any) -> Any:
        if method == "ListWorkers":
            return arena_pb2.ListWorkersResponse(workers=[arena_pb2.WorkerInfo(name="w1", alive=self.alive)])
        return await super().call(method, request)


@pytest.mark.parametrize("path", ["/tournaments/t12", "/tournaments/t12/live"])
def test_the_page_says_when_no_worker_is_alive(path: str) -> None:
    """An operator review: with every worker dead, the page said only "running: 4 of 24 matches", where `arena
    tournament status` says no worker is alive and its matches wait for one."""
    with TestClient(app_of(_NoWorkers(alive=False))) as client:
        html = client.get(path).text
        api = client.get("/api/tournaments/t12").json()
    note = html[html.index('id="no-worker"'):].split("</p>", 1)[0]
    assert "No worker is alive: its matches wait until one runs" in note and api["no_worker"] is True
    with TestClient(app_of(_NoWorkers(alive=True))) as client:
        assert 'id="no-worker"' not in client.get(path).text
