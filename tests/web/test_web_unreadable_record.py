"""A match whose stored record is damaged (bytes that are no record, written under its key in the real Redis), in
process (Starlette's test client) against a real Arena server on loopback gRPC: the match page and its /api/
mirrors answer 422 saying that match's record cannot be read; the bot page and its mirror still answer, the
damaged record left out of the faults and latency statistics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from arena.match.record import SeatSpec
from arena.match.referee import run_match_sync
from arena.server.app import ArenaServer
from arena.store import Store
from arena.store.keys import match_key
from arena.web import create_app

GOOD, BAD = "m-web-good", "m-web-bad"
BOT = "b0@1.0"


@pytest.fixture
def arena(redis_url: str, start_bot: Any) -> Iterator[tuple[Store, TestClient]]:
    """Two real take5 matches recorded in the store (b0@1.0 against b1@1.0), an Arena server reading it, and the
    web app reading that server."""
    store = Store.from_url(redis_url)
    bots = [start_bot("sample:random"), start_bot("sample:heuristic")]
    seats = [SeatSpec(f"b{i}@1.0", b.endpoint) for i, b in enumerate(bots)]
    for seed, match_id in enumerate((GOOD, BAD)):
        record = run_match_sync(match_id, "take5", seats, seed=100 + seed).to_dict()
        assert store.record_result("take5", match_id, [s.name for s in seats], record["result"]["scores"],
                                   record["result"]["ranks"], record["result"]["faults"], record)
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0)
    port = server.start()
    try:
        with TestClient(create_app(f"127.0.0.1:{port}")) as client:
            yield store, client
    finally:
        server.stop()
        store.close()


def _bot_records(client: TestClient) -> dict[str, Any]:
    answer = client.get(f"/api/bots/{BOT}")
    assert answer.status_code == 200, answer.text
    assert {m["match_id"] for m in answer.json()["matches"]} == {GOOD, BAD}
    return answer.json()["games"]["take5"]["records"]


def test_a_damaged_record_is_a_422_match_page_and_the_bot_page_skips_it(arena: tuple[Store, TestClient]) -> None:
    store, client = arena
    assert client.get(f"/matches/{BAD}").status_code == 200
    assert _bot_records(client)["matches"] == 2
    store.client.set(match_key("take5", BAD), b"\x00\xffgarbage")

    page = client.get(f"/matches/{BAD}")
    assert page.status_code == 422
    assert f"the stored record of match {BAD} cannot be read" in page.text and "garbage" not in page.text
    for path in (f"/api/matches/{BAD}", f"/api/matches/{BAD}/frames", f"/api/matches/{BAD}/record"):
        answer = client.get(path)
        assert answer.status_code == 422, path
        assert answer.json()["status"] == 422 and f"match {BAD} cannot be read" in answer.json()["error"], path
    assert client.get(f"/matches/{GOOD}").status_code == 200  # the other match is unharmed

    assert client.get(f"/bots/{BOT}").status_code == 200
    assert client.get("/bots/b0").status_code == 200
    assert _bot_records(client)["matches"] == 1  # the readable record only


def test_a_record_of_the_wrong_shape_leaves_the_bot_page_standing(arena: tuple[Store, TestClient]) -> None:
    store, client = arena
    # JSON the store decodes (a plain JSON record, as stored before packing), but no match record inside
    store.client.set(match_key("take5", BAD), b'{"faults": 5, "decisions": ["x", 1]}')
    assert client.get(f"/bots/{BOT}").status_code == 200
    assert _bot_records(client)["matches"] == 1
    assert client.get(f"/api/matches/{BAD}/frames").status_code == 422
