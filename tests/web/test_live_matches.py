"""Live matches on real parts: a real redis-server and the referee's Arena service over real gRPC (no worker: the
test publishes what a worker would, through ``arena.store.live``). ``GetLiveMatch`` answers the public frames of
what was published, never a hand or a hidden chosen card; withholds them while other tables of a running
tournament play the deal; answers NOT_FOUND once the match is no longer played."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from viewer_records import play_record

from arena.server.app import ArenaServer
from arena.store import Store, TournamentInfo
from arena_sdk.games import take5
from arena_sdk.pb import arena_pb2, arena_pb2_grpc


@pytest.fixture
def arena(redis_url: str) -> Iterator[tuple[Any, Store]]:
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0)
    port = server.start()
    store = Store.from_url(redis_url)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield arena_pb2_grpc.ArenaStub(channel), store
    finally:
        channel.close()
        server.stop(grace=0)


def _publish(store: Store, match_id: str, record: dict[str, Any], upto: int, tournament: str = "") -> None:
    head = {"game": record["game"], "config": record["config"], "seed": record["seed"], "deals": [],
            "seats": [s["name"] for s in record["seats"]], "tournament": tournament}
    store.live_start(match_id, head)
    entries = [{"d": d} for d in record["decisions"][:upto]]
    entries += [{"f": f} for f in record["faults"] if f["decision"] is not None and f["decision"] < upto]
    store.live_append(match_id, entries, head)


def test_a_live_match_answers_its_public_frames_so_far(arena: tuple[Any, Store]) -> None:
    stub, store = arena
    record, _ = play_record("take5", 3, 987_654_321, config=take5.Take5Config(limit=10))
    upto = 4  # in the middle of the first turn: a card chosen, not yet revealed
    _publish(store, "m-live", record, upto)
    live = stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="m-live"))
    assert live.withheld == "" and live.decisions == upto and list(live.seats) == ["bot0@1", "bot1@1", "bot2@1"]
    frames = json.loads(live.frames_json)
    assert frames["perspective"] == "public" and frames["result"] is None
    assert frames["frames"][-1]["decision"] == upto - 1
    for frame in frames["frames"]:
        assert frame["board"]["hands"] == {}
        if frame["kind"] == take5.CHOOSE_CARD:
            assert frame["action"] is None
    text = live.frames_json
    assert '"seed"' not in text and str(record["seed"]) not in text
    store.live_end("m-live")
    with pytest.raises(grpc.RpcError) as gone:
        stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="m-live"))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(("bots", "deals", "shown"), [(4, "duplicate", False), (3, "duplicate", True),
                                                      (4, "unique", True)])
def test_a_tournament_match_is_live_only_when_no_other_table_plays_its_deal(arena: tuple[Any, Store], bots: int,
                                                                             deals: str, shown: bool) -> None:
    stub, store = arena
    info = TournamentInfo(id="t7", game="take5", bots=tuple(f"b{i}@1" for i in range(bots)), seats_per_match=2,
                          rounds=1, seed=123, config={}, deadline_ms=100, matches_total=6, deals=deals)
    store.create_tournament(info)
    record, _ = play_record("take5", 2, 3, config=take5.Take5Config(limit=10))
    _publish(store, "t7-000001", record, 6, tournament="t7")
    live = stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="t7-000001"))
    assert bool(live.frames_json) is shown
    assert ("played at other tables of tournament t7" in live.withheld) is not shown


def test_a_bad_match_id_is_invalid(arena: tuple[Any, Store]) -> None:
    stub, _ = arena
    with pytest.raises(grpc.RpcError) as bad:
        stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="x" * 65))
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
