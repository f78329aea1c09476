"""The same code on a real Redis Cluster (3 masters on loopback, the ``redis-server`` the project already uses):
an Arena server and two worker processes pointed at it with a ``redis+cluster://`` URL run a round robin to the
ladder, and the ladder rebuilt from the results log equals the live one. Every script and transaction of the
store touches keys of one hash tag, so none of them is refused with CROSSSLOT."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from platform_helpers import ProcessWorker, wait_until

from arena.core.specs import MatchSpec
from arena.server.app import ArenaServer
from arena.store import NameSpellingError, NameTakenError, Store, TournamentInfo, jobs_key, token_hash
from arena.store.keys import NAME_OWNERS, OWNED_NAMES, OWNER_INDEX, account_key, attempts_key, owner_names_key
from arena.store.redis_cluster import PrivateRedisCluster
from arena.tournaments.round_robin import round_robin
from arena_sdk.pb import arena_pb2, arena_pb2_grpc


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedisCluster]:
    c = PrivateRedisCluster(tmp_path_factory.mktemp("cluster"), masters=3)
    c.start()
    try:
        yield c
    finally:
        c.stop()


def test_a_round_robin_on_a_redis_cluster_reaches_the_ladder(cluster: PrivateRedisCluster, tmp_path: Path,
                                                             start_bot: Callable[..., Any]) -> None:
    store = Store.from_url(cluster.url)
    server = ArenaServer("127.0.0.1:0", cluster.url, workers=0)
    port = server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = arena_pb2_grpc.ArenaStub(channel)
    bots = {"c-rand": start_bot("sample:random"), "c-heur": start_bot("sample:heuristic"),
            "c-rand2": start_bot("sample:random")}
    for name, bot in bots.items():
        store.register_bot("take5", name, bot.endpoint)
    tid = store.next_tournament_id()
    config = {"limit": 15}
    specs = round_robin(tid, "take5", sorted(bots), 2, 1, 5, config, deadline_ms=2000)
    store.create_tournament(TournamentInfo(
        id=tid, game="take5", bots=tuple(sorted(bots)), seats_per_match=2, rounds=1, seed=5, config=config,
        deadline_ms=2000, matches_total=len(specs), created_at=time.time()), specs)
    workers = [ProcessWorker(cluster.url, f"cw{i}", tmp_path / f"cw{i}.log") for i in range(2)]
    try:
        info = wait_until(lambda: (t := store.get_tournament(tid)) is not None and t.state == "finished" and t,
                          "the tournament on the cluster to finish")
    finally:
        for w in workers:
            w.stop()
    assert (info.matches_done, info.matches_total) == (len(specs), len(specs))
    # every job was settled (acknowledged) by the worker that played it: none was left pending after its match by a
    # write the cluster refuses, and every match was started once
    assert store.pending_jobs() == 0 and store.queued_jobs() == 0
    assert store.client.hgetall(attempts_key("take5", tid)) == {spec.match_id: "1" for spec in specs}
    ladder = store.ladder("take5")
    played = {name: sum(name in spec.seats for spec in specs) for name in bots}
    assert {e.bot: e.matches for e in ladder} == played
    assert store.rebuild_ladder("take5") == ladder
    assert store.get_match_record(specs[0].match_id) is not None
    # The referee's Arena service reads the same cluster.
    try:
        served = stub.GetLadder(arena_pb2.GetLadderRequest(game="take5"), timeout=10)
        assert {e.bot: e.matches for e in served.entries} == played
        assert stub.GetTournament(arena_pb2.GetTournamentRequest(id=tid), timeout=10).matches_done == len(specs)
    finally:
        channel.close()
        server.stop()
        store.close()


def test_one_script_settles_a_match_on_a_redis_cluster(cluster: PrivateRedisCluster) -> None:
    store = Store.from_url(cluster.url)
    try:
        store.enqueue([MatchSpec(match_id="cl-1", game="taki", seats=("x@1", "y@1"), seed=1)])
        [job] = store.read_jobs("cw", 1, 100)
        stored, changes = store.settle_match(job, "taki", "cl-1", ["x@1", "y@1"], [0, 5], [1, 2], [0, 1], {},
                                             outcomes={"x@1": None, "y@1": "answered no call"}, unhealthy_after=1)
        assert stored and changes == {"x@1": 0, "y@1": 1}
        assert store.client.xlen(jobs_key("taki")) == 0 and list(store.unhealthy_bots("taki")) == ["y@1"]
        assert store.ratings("taki", ["x@1", "y@1"]) == {"x@1": 1516.0, "y@1": 1484.0}
    finally:
        store.close()


def test_the_owner_scripts_keep_look_alike_names_one_owners_on_a_redis_cluster(cluster: PrivateRedisCluster) -> None:
    """The name-owners scripts (one hash tag, ``{owners}``) on the cluster: a NAME is one owner's in every letter
    case, and the migration moves a field of older data keyed by a spelling with capitals."""
    store = Store.from_url(cluster.url)
    a, b = token_hash("cluster-case-a-token-0123456789"), token_hash("cluster-case-b-token-0123456789")
    try:
        store.create_owner(a, first=("take5", "Heuristic"))
        store.create_owner(b)
        with pytest.raises(NameTakenError):
            store.add_owner_name(b, "taki", "heuristic")
        with pytest.raises(NameSpellingError):
            store.add_owner_name(a, "taki", "HEURISTIC")
        store.release_owner_name(a, "take5", "Heuristic")
        assert store.add_owner_name(b, "taki", "heuristic") and store.name_owner("HEURISTIC") == b
        store.client.hset(NAME_OWNERS, "Older", a)  # as written before NAMEs were lowercased there
        store.migrate_owners()
        assert store.client.hget(NAME_OWNERS, "older") == a and not store.client.hexists(NAME_OWNERS, "Older")
        store.drop_owner(b)  # the undo of a failed registration: its deletes are one key a command on a cluster
        assert store.name_owner("heuristic") is None and not store.client.exists(account_key(b))
    finally:  # one key a call: a cluster pipeline deletes no two keys in one command
        for k in (account_key(a), owner_names_key(a), account_key(b), owner_names_key(b), OWNED_NAMES, OWNER_INDEX,
                  NAME_OWNERS):
            store.client.delete(k)
        store.close()
