"""Live matches on real parts: a real redis-server and the referee's Arena service over real gRPC (no worker: the
test publishes what a worker would, through ``arena.store.live``). ``GetLiveMatch`` answers the public frames of
what was published, never a hand or a hidden chosen card; withholds them while other tables of a running
tournament play the deal; answers NOT_FOUND once the match is no longer played."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from viewer_records import play_record

from arena.server.app import ArenaServer
from arena.server.live import REBUILD_MIN_S, LiveFrames, LiveFramesCache, build_live_frames
from arena.store import Store, TournamentInfo
from arena.store.keys import live_head_key
from arena.store.live import LiveMatch
from arena_sdk.games import take5, taki
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
            "seats": [s["name"] for s in record["seats"]], "tournament": tournament, "started_at": time.time()}
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
    assert not live.ended
    head = json.loads(store.client.get(live_head_key("m-live")))
    store.client.set(live_head_key("m-live"), json.dumps(dict(head, ended=True)))  # its worker's last publication
    assert stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="m-live")).ended
    store.live_end("m-live")
    with pytest.raises(grpc.RpcError) as gone:
        stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="m-live"))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(("bots", "deals", "shown", "kind"), [
    (4, "duplicate", False, "round_robin"), (3, "duplicate", True, "round_robin"), (4, "unique", True, "round_robin"),
    (2, "duplicate", False, "sprt"), (2, "unique", True, "sprt")])  # an SPRT's block: two tables, one deal or two
def test_a_tournament_match_is_live_only_when_no_other_table_plays_its_deal(arena: tuple[Any, Store], bots: int,
                                                                             deals: str, shown: bool, kind: str) -> None:
    stub, store = arena
    info = TournamentInfo(id="t7", game="take5", bots=tuple(f"b{i}@1" for i in range(bots)), seats_per_match=2,
                          rounds=1, seed=123, config={}, deadline_ms=100, matches_total=6, deals=deals, kind=kind)
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


def _live(record: dict[str, Any], upto: int, started_at: float = 1.0) -> LiveMatch:
    """What a worker has published of ``record`` after ``upto`` decisions (its faults up to there)."""
    head = {"game": record["game"], "config": record["config"], "seed": record["seed"], "deals": [],
            "seats": [s["name"] for s in record["seats"]], "tournament": "", "started_at": started_at}
    faults = [f for f in record["faults"] if f["decision"] is not None and f["decision"] < upto]
    return LiveMatch(head, list(record["decisions"][:upto]), faults, [], upto + len(faults))


@pytest.mark.parametrize(("game", "players", "seed", "policy"), [("taki", 3, 5, 2), ("take5", 3, 11, 0)])
def test_the_frames_before_settled_stay_as_they_are_while_the_match_goes_on(game: str, players: int, seed: int,
                                                                              policy: int) -> None:
    # a viewer keeps the frames before an answer's settled_frames and takes the rest from the next answer: what it
    # then holds must equal the frames built from scratch, at every pair of publication points
    config = taki.TakiConfig(turn_cap=60) if game == "taki" else take5.Take5Config(limit=2)
    record, _ = play_record(game, players, seed, policy_seed=policy, config=config)
    n = len(record["decisions"])
    built = [build_live_frames("m", _live(record, k)) for k in range(n + 1)]
    assert all(not b.withheld for b in built)
    # a Taki +3 whose Breaker question waits for its answer is not shown yet (its frame waits: held), so no frame
    # shown ever changes; the publications that end on such a question show one decision less than they hold
    assert all(b.settled == len(b.frames) for b in built)
    if game == "taki":
        asked = [k for k, d in enumerate(record["decisions"]) if d["kind"] == taki.REACT]
        assert asked and all(built[k].decisions == built[k - 1].decisions for k in asked)
    for a in range(n + 1):
        held = built[a]
        assert held.settled <= len(held.frames)
        for b in range(a + 1, min(n, a + 12) + 1):
            later = built[b]
            assert held.frames[:held.settled] == later.frames[:held.settled], (a, b)
    whole = json.loads(built[n].frames_json(0))
    tail = json.loads(built[n].frames_json(built[n - 5].settled))
    assert whole["frames"][built[n - 5].settled:] == tail["frames"] and whole["result"] is None


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_live_frames_are_built_once_per_publication_however_often_they_are_asked(redis_url: str) -> None:
    store = Store.from_url(redis_url)
    record, _ = play_record("take5", 3, 987_654_321, config=take5.Take5Config(limit=10))
    head = {"game": "take5", "config": record["config"], "seed": record["seed"],
            "seats": [s["name"] for s in record["seats"]], "started_at": 5.0}
    store.live_start("m-cache", head, [{"d": d} for d in record["decisions"][:10]])
    clock = _Clock()
    cache = LiveFramesCache(clock=clock)

    def ask() -> LiveFrames:
        peek = store.live_peek("m-cache")
        assert peek is not None
        frames = cache.get(store, "m-cache", float(peek[0]["started_at"]), peek[1])
        assert frames is not None
        return frames

    first = ask()
    assert [ask() for _ in range(5)] == [first] * 5 and cache.builds == 1  # nothing published since
    store.live_append("m-cache", [{"d": d} for d in record["decisions"][10:20]], head)
    assert ask() is first and cache.builds == 1  # published, but asked again sooner than REBUILD_MIN_S
    clock.now += REBUILD_MIN_S
    second = ask()
    assert cache.builds == 2 and len(second.frames) > len(first.frames)
    store.live_append("m-cache", [{"d": d} for d in record["decisions"][20:24]], head)  # its worker's last write
    peek = store.live_peek("m-cache")
    assert peek is not None and ask() is second  # asked too soon: kept, while it plays
    last = cache.get(store, "m-cache", 5.0, peek[1], final=True)  # ended: its last frames at once, whatever the clock
    assert last is not None and cache.builds == 3 and len(last.frames) > len(second.frames)
    store.live_start("m-cache", dict(head, started_at=999.0))
    again = ask()  # the match was started again: built at once, whatever the clock says
    assert cache.builds == 4 and again.started_at == 999.0 and len(again.frames) == 1
    store.live_end("m-cache")
    assert store.live_peek("m-cache") is None
    assert cache.get(store, "m-cache", 999.0, 0) is again  # kept: asked with what an earlier peek said
    clock.now += REBUILD_MIN_S
    assert cache.get(store, "m-cache", 999.0, 5) is None  # gone from the store when it has to be read again


def test_a_viewer_asks_from_a_frame_and_gets_the_rest(arena: tuple[Any, Store]) -> None:
    stub, store = arena
    record, _ = play_record("take5", 3, 987_654_321, config=take5.Take5Config(limit=10))
    _publish(store, "m-from", record, 30)
    whole = stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="m-from"))
    frames = json.loads(whole.frames_json)["frames"]
    assert whole.first_frame == 0 and whole.frame_count == len(frames) and 0 < whole.settled_frames <= len(frames)
    assert whole.started_at > 0
    part = stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="m-from", from_frame=whole.settled_frames - 2))
    assert part.first_frame == whole.settled_frames - 2 and part.frame_count == whole.frame_count
    assert json.loads(part.frames_json)["frames"] == frames[whole.settled_frames - 2:]
    past = stub.GetLiveMatch(arena_pb2.GetLiveMatchRequest(match_id="m-from", from_frame=10**6))
    assert past.first_frame == whole.frame_count and json.loads(past.frames_json)["frames"] == []
