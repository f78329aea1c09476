"""A match whose stored record is damaged (written under its key in the real Redis), in process (Starlette's test
client) against a real Arena server on loopback gRPC.

- Bytes that are no record: GetMatch answers DATA_LOSS; the match page and its /api/ mirrors answer 422 saying that
  match's record cannot be read.
- A record that decodes (plain JSON or packed) but has not the shape of a match record: GetMatch gives it as stored
  (the bots' notes still withheld); the match page answers, its frames 422 "cannot be shown".

Either way the bot page and its mirror still answer, the damaged record left out of the faults and latency
statistics."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from starlette.testclient import TestClient

from arena.match.record import SeatSpec
from arena.match.referee import run_match_sync
from arena.server.app import ArenaServer
from arena.store import Store
from arena.store.codec import pack_record
from arena.store.keys import match_key
from arena.web import create_app
from arena.web.shared_reads import SharedReads
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

GOOD, BAD = "m-web-good", "m-web-bad"
BOT = "b0@1.0"


@pytest.fixture
def arena(redis_url: str, start_bot: Any) -> Iterator[tuple[Store, TestClient, str]]:
    """Two real take5 matches recorded in the store (b0@1.0 against b1@1.0), an Arena server reading it (its
    endpoint), and the web app reading that server."""
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
            yield store, client, f"127.0.0.1:{port}"
    finally:
        server.stop()
        store.close()


def _bot_records(client: TestClient) -> dict[str, Any]:
    answer = client.get(f"/api/bots/{BOT}")
    assert answer.status_code == 200, answer.text
    assert {m["match_id"] for m in answer.json()["matches"]} == {GOOD, BAD}
    return answer.json()["games"]["take5"]["records"]


def test_a_damaged_record_is_a_422_match_page_and_the_bot_page_skips_it(
        arena: tuple[Store, TestClient, str]) -> None:
    store, client, _ = arena
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

    assert _bot_records(client)["matches"] == 2  # what the web read of a record before it was damaged is kept
    client.app.state.shared_reads = SharedReads()  # as in a web process started after the damage
    assert client.get(f"/bots/{BOT}").status_code == 200
    assert client.get("/bots/b0").status_code == 200
    assert _bot_records(client)["matches"] == 1  # the readable record only


def test_a_record_of_the_wrong_shape_leaves_the_bot_page_standing(arena: tuple[Store, TestClient, str]) -> None:
    store, client, _ = arena
    # JSON the store decodes (a plain JSON record, as stored before packing), but no match record inside
    store.client.set(match_key("take5", BAD), b'{"faults": 5, "decisions": ["x", 1]}')
    assert client.get(f"/bots/{BOT}").status_code == 200
    _bot_records(client)  # answers, listing both matches
    assert client.get(f"/api/matches/{BAD}/frames").status_code == 422


def _misshapen(good: dict[str, Any]) -> dict[str, tuple[bytes, dict[str, Any]]]:
    """Records that decode but are no match record: name -> (the stored bytes, what GetMatch gives: the record as
    stored, without the notes)."""
    seat_list = json.loads(json.dumps(good))
    seat_list["decisions"][0].update(seat=[0], note="secret plan")  # a seat no seat number, with a bot's note
    answered = json.loads(json.dumps(seat_list))
    del answered["decisions"][0]["note"]
    return {
        "json, decisions a number": (b'{"decisions": 5, "seats": "b0"}', {"decisions": 5, "seats": "b0"}),
        "json, decisions of lists": (b'{"decisions": [[0, 1], {"seat": {}, "note": "x"}]}',
                                     {"decisions": [[0, 1], {"seat": {}}]}),
        "packed, decisions a string": (pack_record({"game": "take5", "decisions": "abc"}),
                                       {"game": "take5", "decisions": "abc"}),
        "packed, a seat that is a list": (pack_record(seat_list), answered),
        "packed, result and config of the wrong types": (
            pack_record(dict(good, result=[1, 2], config="many", seats={"b0": 1})),
            dict(good, result=[1, 2], config="many", seats={"b0": 1})),
    }


MISSHAPEN = ["json, decisions a number", "json, decisions of lists", "packed, decisions a string",
             "packed, a seat that is a list", "packed, result and config of the wrong types"]


@pytest.mark.parametrize("shape", MISSHAPEN)
def test_a_misshapen_record_is_given_as_stored_and_cannot_be_shown(
        arena: tuple[Store, TestClient, str], shape: str) -> None:
    store, client, endpoint = arena
    good = store.get_match_record(GOOD, "take5")
    assert good is not None
    stored, expected = _misshapen(good)[shape]
    store.client.set(match_key("take5", BAD), stored)

    with grpc.insecure_channel(endpoint) as channel:  # the referee answers (no UNKNOWN), the record as stored
        detail = arena_pb2_grpc.ArenaStub(channel).GetMatch(arena_pb2.GetMatchRequest(match_id=BAD), timeout=10)
    assert json.loads(detail.record_json) == expected
    assert "secret plan" not in detail.record_json

    page = client.get(f"/matches/{BAD}")  # the page (summary, seats); its viewer says why it cannot show the match
    assert page.status_code == 200 and "b0@1.0" in page.text and "/api/matches/m-web-bad/frames" in page.text
    assert client.get(f"/api/matches/{BAD}").status_code == 200
    frames = client.get(f"/api/matches/{BAD}/frames")
    assert frames.status_code == 422, frames.text
    assert frames.json()["error"].startswith(f"the record of match {BAD} cannot be shown: ")
    assert client.get(f"/api/matches/{BAD}/record").json() == expected
    assert client.get(f"/bots/{BOT}").status_code == 200
    _bot_records(client)  # answers, listing both matches


def test_the_bot_pages_read_each_record_once_for_every_client(arena: tuple[Store, TestClient, str]) -> None:
    """A bot page's faults and latencies come from its newest revealed records (up to 300 KB each): read once, kept
    for every later view, not read again per view."""
    _, client, _ = arena
    reader = client.app.state.arena
    asked: list[str] = []
    call = reader.call

    async def counting(method: str, request: Any) -> Any:
        if method == "GetMatch":
            asked.append(request.match_id)
        return await call(method, request)

    reader.call = counting
    first = _bot_records(client)
    assert sorted(asked) == [BAD, GOOD]
    for _ in range(3):
        assert _bot_records(client) == first
        assert client.get(f"/bots/{BOT}").status_code == 200
    assert sorted(asked) == [BAD, GOOD] and first["matches"] == 2
