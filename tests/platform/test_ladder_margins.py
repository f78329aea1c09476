"""The honest ladder (issue 10 item 2) on real parts: results stored in the session's redis-server with
``Store.record_result`` (the workers' own call), read over real gRPC from real ``ArenaServer``s and through the CLI:
margins and LOS for both methods, the cached fit shared by every server, its refresh after new results, a stale
answer that says so, the refresh lock, and the per-tournament standings columns."""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from platform_helpers import wait_until

from arena.cli import cli
from arena.ladder.cache import RatingsCache
from arena.ladder.fits import matches_count
from arena.ratings.margins import MIN_MATCHES
from arena.store import Store, TournamentInfo
from arena.store.keys import ratings_fit_key, ratings_lock_key, ratings_matches_key
from arena_sdk.pb import arena_pb2

BOTS = ("ace@1", "bravo@1", "charlie@1", "delta@1")  # ace finishes first in every match
STRENGTH = {"ace@1": 9.0, "bravo@1": 1.0, "charlie@1": 0.5, "delta@1": 0.0}


def store_matches(store: Store, n: int, *, first: int = 0, tournament: str | None = None, seed: int = 1,
                  bots: Sequence[str] = BOTS) -> None:
    """Store ``n`` 3-seat Take 5 results among ``bots`` (ace first every time; the others by strength plus
    noise), two tables per deal with the hands rotated, as a duplicate plan plays them."""
    rnd = random.Random(seed)
    for k in range(first, first + n):
        deal = k // 2
        seated = list(rnd.sample(list(bots), 3))
        if k % 2:
            seated = seated[1:] + seated[:1]
        noise = {b: STRENGTH[b] + rnd.gauss(0, 1.0) for b in seated}
        order = sorted(seated, key=lambda b: -noise[b])
        ranks = [order.index(b) + 1 for b in seated]
        prefix = tournament or "m"
        store.record_result("take5", f"{prefix}-{k:06d}", seated, [float(r * 10) for r in ranks], ranks, [0, 0, 0],
                            {}, tournament_id=tournament, seed=1000 + deal)


def by_bot(ladder: Any) -> dict[str, Any]:
    return {e.bot: e for e in ladder.entries}


def test_elo_ladder_has_pairwise_margins_and_los(arena_server: Any, store: Store) -> None:
    store_matches(store, 60)
    _server, stub = arena_server()
    ladder = stub.GetLadder(arena_pb2.GetLadderRequest(game="take5"))  # method "" = elo
    assert ladder.method == "elo" and ladder.results_counted == ladder.results_stored == 60
    assert [e.bot for e in ladder.entries][0] == "ace@1"
    entries = list(ladder.entries)
    ace = entries[0]
    assert ace.HasField("margin") and 0 < ace.margin < 1000  # won every pair: finite (two virtual draws)
    assert ladder.groups == 1 and all(e.group == 1 and not e.too_few_matches for e in ladder.entries)
    assert ace.los_next > 0.999  # it finished ahead of the next bot every time they met
    for e in entries:
        assert e.HasField("margin") and 0 < e.margin < 1000 and e.low < e.rating < e.high
        assert math.isclose(e.high - e.low, 2 * e.margin)
    assert all(e.HasField("los_next") and 0.0 <= e.los_next <= 1.0 for e in entries[:-1])
    assert not entries[-1].HasField("los_next")
    # the live ratings are the ladder's own, unchanged by the columns
    assert [(e.bot, e.rating) for e in entries] == [(x.bot, x.rating) for x in store.ladder("take5")]
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="glicko"))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "choose elo or fit" in (refused.value.details() or "")


def test_fit_ladder_intervals_los_and_json(arena_server: Any, store: Store, tmp_path: Any) -> None:
    store_matches(store, 60)
    server, stub = arena_server()
    ladder = stub.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="fit"))  # small: fitted in the call
    assert ladder.method == "fit" and ladder.results_counted == ladder.results_stored == 60
    assert ladder.replicates == 200 and ladder.computed_at > time.time() - 60
    entries = list(ladder.entries)
    assert entries[0].bot == "ace@1" and [e.rank for e in entries] == [1, 2, 3, 4]
    assert abs(sum(e.rating for e in entries) / 4 - 1500.0) < 1e-6  # anchored: mean 1500
    for e in entries:
        assert 0 < e.margin < 2000 and e.low < e.rating < e.high
        assert math.isclose(e.high - e.low, 2 * e.margin, rel_tol=1e-9)
    assert entries[0].los_next > 0.95  # ace over the next one down
    assert entries[0].rating - entries[1].rating > 100
    assert not entries[-1].HasField("los_next")
    assert {e.bot: e.matches for e in entries} == {x.bot: x.matches for x in store.ladder("take5")}

    result = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path)}).invoke(
        cli, ["ladder", "--method", "fit", "--json", "--server", f"127.0.0.1:{server.port}"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["method"], data["results_counted"], data["results_stored"], data["stale"]) == ("fit", 60, 60, False)
    assert data["computed_at"] == ladder.computed_at and data["replicates"] == 200
    first = data["entries"][0]
    assert set(first) >= {"rank", "bot", "rating", "margin", "low", "high", "los_next", "matches", "wins",
                          "mean_score"}
    assert first["bot"] == "ace@1" and first["low"] < first["rating"] < first["high"] and first["los_next"] > 0.95
    assert data["entries"][-1]["los_next"] is None

    table = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path)}).invoke(
        cli, ["ladder", "--server", f"127.0.0.1:{server.port}"])
    assert table.exit_code == 0, table.output
    assert "order-dependent" in table.output and "± inf" not in table.output and "LOS" in table.output
    assert "group" not in table.output  # one group: nothing to say about groups


def test_the_cached_fit_is_shared_refreshed_and_a_stale_answer_says_so(arena_server: Any, store: Store) -> None:
    store_matches(store, 40)
    _a, stub_a = arena_server()
    first = stub_a.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="fit"))
    assert first.results_counted == 40
    _b, stub_b = arena_server()  # another arena process answers from the same cache, without fitting again
    shared = stub_b.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="fit"))
    assert (shared.computed_at, shared.results_counted) == (first.computed_at, 40)
    assert store.client.exists(ratings_fit_key("take5"))

    store_matches(store, 12, first=40, seed=2)
    stale = stub_b.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="fit"))
    assert (stale.results_counted, stale.results_stored) == (40, 52)  # the cached fit, at once, saying so
    assert stale.refreshing and stale.computed_at == first.computed_at
    # its matches, wins and mean scores are those stored now, alike (the web page showed more wins than matches)
    assert sum(e.matches for e in stale.entries) == 52 * 3 and all(e.wins <= e.matches for e in stale.entries)
    fresh = wait_until(
        lambda: (r := stub_a.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="fit"))).results_counted
        == 52 and r, "the background refresh to count the new results", timeout=60)
    assert fresh.computed_at > first.computed_at
    blob = store.client.execute_command("GET", ratings_matches_key("take5"), NEVER_DECODE=[])
    assert matches_count(blob) == 52  # the compact copy grew by the 12 new results
    assert sum(e.matches for e in fresh.entries) == 52 * 3


def test_one_refresh_at_a_time_and_a_refresh_that_lost_its_lock_writes_nothing(store: Store) -> None:
    store_matches(store, 30)
    cache = RatingsCache(store)
    store.client.set(ratings_lock_key("take5"), "someone-else", px=5000)
    assert cache.refresh_ladder("take5") is False  # another process is refreshing
    assert not store.client.exists(ratings_fit_key("take5"))
    store.client.delete(ratings_lock_key("take5"))
    assert cache.refresh_ladder("take5") is True
    assert not store.client.exists(ratings_lock_key("take5"))  # released
    assert json.loads(store.client.get(ratings_fit_key("take5")))["results"] == 30
    with cache._lock(ratings_lock_key("take5")) as token:
        assert token is not None
        store.client.delete(ratings_lock_key("take5"))  # lost (expired, or Redis emptied)
        cache._set_locked(ratings_lock_key("take5"), token, ratings_fit_key("take5"), "overwritten")
    assert store.client.get(ratings_fit_key("take5")) != "overwritten"


def test_standings_carry_the_tournament_fit(arena_server: Any, store: Store, tmp_path: Any) -> None:
    tid = store.next_tournament_id()
    store.create_tournament(TournamentInfo(
        id=tid, game="take5", bots=BOTS, seats_per_match=3, rounds=10, seed=5, config={}, deadline_ms=1000,
        matches_total=48, created_at=time.time()))
    store_matches(store, 30, tournament=tid)
    store_matches(store, 20, seed=9)  # outside the tournament: not in its fit
    server, stub = arena_server()
    st = stub.GetStandings(arena_pb2.GetStandingsRequest(id=tid))
    assert st.fit_matches == 30 and st.fit_computed_at > 0
    entries = list(st.entries)
    assert entries[0].bot == "ace@1"
    for e in entries:
        assert e.HasField("rating") and e.low < e.rating < e.high and e.margin > 0
    assert entries[0].los_next > 0.9 and not entries[-1].HasField("los_next")
    assert all(e.HasField("los_next") for e in entries[:-1])
    assert sum(e.matches for e in entries) == 90

    store_matches(store, 18, first=30, tournament=tid, seed=3)  # the tournament finishes (48 of 48)
    info = store.get_tournament(tid)
    assert info is not None and info.state == "finished"
    final = stub.GetStandings(arena_pb2.GetStandingsRequest(id=tid))  # its final fit, computed in the call
    assert final.fit_matches == 48 and final.fit_computed_at > st.fit_computed_at

    result = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path)}).invoke(
        cli, ["tournament", "standings", tid, "--json", "--server", f"127.0.0.1:{server.port}"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["fit_matches"] == 48
    top = data["entries"][0]
    assert top["low"] < top["rating"] < top["high"] and top["los_next"] > 0.9
    table = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path)}).invoke(
        cli, ["tournament", "standings", tid, "--server", f"127.0.0.1:{server.port}"])
    assert table.exit_code == 0 and "±" in table.output and "LOS" in table.output, table.output

    # a tournament too short for margins: the fit's ratings say so, as the ladder's do
    short = store.next_tournament_id()
    store.create_tournament(TournamentInfo(
        id=short, game="take5", bots=BOTS, seats_per_match=3, rounds=1, seed=6, config={}, deadline_ms=1000,
        matches_total=4, created_at=time.time()))
    store_matches(store, 4, first=100, tournament=short, seed=4)
    few = stub.GetStandings(arena_pb2.GetStandingsRequest(id=short))
    assert few.fit_matches == 4 and few.entries
    for e in few.entries:
        assert e.HasField("rating") and e.too_few_matches == (e.matches < MIN_MATCHES) and \
            e.HasField("margin") == (not e.too_few_matches)
    assert any(e.too_few_matches for e in few.entries)
    table = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path), "COLUMNS": "200"}).invoke(
        cli, ["tournament", "standings", short, "--server", f"127.0.0.1:{server.port}"])
    assert table.exit_code == 0 and "(too few matches)" in table.output, table.output


def test_the_live_ladder_counts_a_small_backlog_itself_and_leaves_a_large_one_to_the_background(
        store: Store) -> None:
    store_matches(store, 30)
    cache = RatingsCache(store, sync_pairs_backlog=10)
    first = cache.ladder_pairs("take5")
    assert (first.counts.results, first.stored, first.refreshing) == (0, 30, True)  # answered at once
    caught_up = wait_until(lambda: (a := cache.ladder_pairs("take5")).counts.results == 30 and a,
                           "the background refresh to count the backlog", timeout=60)
    ace_matches = {e.bot: e.matches for e in store.ladder("take5")}["ace@1"]
    assert caught_up.computed_at > 0 and caught_up.counts.against_field()["ace@1"] == (2 * ace_matches, 0, 0)
    store_matches(store, 5, first=30, seed=4)
    small = cache.ladder_pairs("take5")  # 5 new results: counted in the call
    assert (small.counts.results, small.stored) == (35, 35)
    assert RatingsCache(store).ladder_pairs("take5").counts.results == 35  # and stored for every process


def test_the_live_ladder_is_read_while_redis_refuses_writes(tmp_path: Path) -> None:
    """Its disk full, Redis refuses every write (MISCONF; here NOREPLICAS): the live ladder still answers, counting
    the results itself without storing the counts (a cache)."""
    from arena.store.redis_server import PrivateRedis

    with PrivateRedis(tmp_path / "data") as server:
        s = Store.from_url(server.url)
        try:
            store_matches(s, 8)
            s.client.config_set("min-replicas-to-write", 1)
            answer = RatingsCache(s).ladder_pairs("take5")
            assert (answer.counts.results, answer.stored) == (8, 8)
        finally:
            s.client.config_set("min-replicas-to-write", 0)
            s.close()


def test_a_tournaments_fit_is_read_while_redis_refuses_writes(tmp_path: Path) -> None:
    """The standings of a finished tournament whose fit was never cached, asked while Redis refuses writes (its disk
    full): the fit is not computed now (its lock and cache are writes), and the read answers without it, where
    GetStandings and `arena tournament status` failed with UNAVAILABLE (a review)."""
    from arena.store.redis_server import PrivateRedis

    with PrivateRedis(tmp_path / "data") as server:
        s = Store.from_url(server.url)
        try:
            store_matches(s, 8, tournament="t1")
            s.client.config_set("min-replicas-to-write", 1)
            answer = RatingsCache(s).tournament_fit("take5", "t1", 8, running=False)  # raised NOREPLICAS before
            assert answer.fit is None and answer.stored == 8
        finally:
            s.client.config_set("min-replicas-to-write", 0)
            s.close()


def test_the_seal_key_is_read_while_redis_refuses_writes(tmp_path: Path) -> None:
    """GetArenaInfo (and the web's home page behind it) answered UNAVAILABLE while Redis refused writes: asking the
    seal key wrote it every time (SET NX). Once made, it is only read."""
    from arena.store.redis_server import PrivateRedis

    with PrivateRedis(tmp_path / "data") as server:
        s = Store.from_url(server.url)
        try:
            made = s.seal_key()
            s.client.config_set("min-replicas-to-write", 1)
            assert s.seal_key() == made  # raised NOREPLICAS before
        finally:
            s.client.config_set("min-replicas-to-write", 0)
            s.close()
