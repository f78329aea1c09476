"""Exactly once (issue 3, item 2) on a real redis-server: every job delivered twice and run by two workers still
counts each match once; the ladder rebuilt from the append-only results log equals the live one (and a tampered
live ladder is caught); the tournament's standings counters, updated in the same atomic step as the result, equal
the standings recomputed from the stored results."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from platform_helpers import wait_until

from arena.core.specs import BotTally
from arena.store import Store, TournamentInfo, ladder_key, results_log_key
from arena.store.redis_server import PrivateRedis
from arena.tournaments.round_robin import round_robin
from arena.tournaments.standings import tally_match
from arena.worker import loop as scheduler
from arena_sdk.games.base import competition_ranks
from arena_sdk.pb import arena_pb2, bot_pb2


def test_every_job_delivered_twice_still_counts_each_match_once(
        store: Store, start_bot: Callable[..., Any], workers: Any, caplog: pytest.LogCaptureFixture) -> None:
    bots = [store.register_bot("take5", name, start_bot("sample:random").endpoint, version="1.0").bot_id
            for name in ("a", "b", "c")]
    tid = store.next_tournament_id()
    config = {"limit": 10}
    specs = round_robin(tid, "take5", bots, 3, 6, seed=8, config=config)
    store.create_tournament(TournamentInfo(
        id=tid, game="take5", bots=tuple(bots), seats_per_match=3, rounds=6, seed=8, config=config,
        deadline_ms=1000, matches_total=len(specs), created_at=time.time()))
    scheduler.enqueue_matches(store, specs)
    scheduler.enqueue_matches(store, specs)  # every match delivered twice (a producer that retried)
    assert store.queued_jobs() == 2 * len(specs) == 12
    caplog.set_level("INFO", logger="arena.worker.loop")
    worker = workers.thread(["w1", "w2"], concurrency=3)
    wait_until(lambda: store.queued_jobs() == 0, "both copies of every job to be settled")
    worker.stop()
    info = store.get_tournament(tid)
    assert info is not None and (info.state, info.matches_done, info.matches_total) == ("finished", 6, 6)
    assert store.client.llen(results_log_key("take5")) == 6
    assert {e.bot: e.matches for e in store.ladder("take5")} == {b: 6 for b in bots}
    assert store.check_ladder("take5").equal
    assert store.pending_jobs() == 0
    stored = sum("stored:" in r.getMessage() and "already" not in r.getMessage() for r in caplog.records)
    again = sum(("already has a stored result" in r.getMessage() or "was already stored" in r.getMessage())
                for r in caplog.records)
    assert (stored, again) == (6, 6)
    tally = store.tournament_tally("take5", tid)
    assert {b: t.matches for b, t in tally.items()} == {b: 6 for b in bots}


def test_rebuild_ladder_equals_the_live_ladder_after_a_tournament(
        arena_server: Any, start_bot: Callable[..., Any], store: Store) -> None:
    _server, stub = arena_server(workers=1, concurrency=4)
    for name, sample in (("rand", "random"), ("heur", "heuristic"), ("rand2", "random")):
        stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name=name, endpoint=start_bot(f"sample:{sample}", extra_args=["--name", name]).endpoint, game="take5"))
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["rand", "heur", "rand2"], seats_per_match=2, rounds=4,
        config=bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=15))))
    wait_until(lambda: stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id)).state == "finished",
               f"tournament {t.id} to finish")
    check = stub.RebuildLadder(arena_pb2.RebuildLadderRequest(game="take5"))
    assert check.equal and check.results == t.matches_total == 12
    assert list(check.rebuilt.entries) == list(check.live.entries)
    assert [e.matches for e in check.live.entries] == [8, 8, 8]
    assert sum(e.rating for e in check.live.entries) == pytest.approx(4500.0, abs=1e-6)
    # a live ladder changed behind the log's back is caught
    store.client.zincrby(ladder_key("take5"), 0.5, "heur@1.0")
    tampered = stub.RebuildLadder(arena_pb2.RebuildLadderRequest(game="take5"))
    assert not tampered.equal and tampered.results == 12
    assert list(tampered.rebuilt.entries) == list(check.rebuilt.entries)
    assert {e.bot: e.rating for e in tampered.live.entries}["heur@1.0"] == pytest.approx(
        {e.bot: e.rating for e in check.live.entries}["heur@1.0"] + 0.5)


_match = st.tuples(
    st.lists(st.sampled_from(["a@1", "b@1", "b@2", "c@1", "d@1"]), min_size=2, max_size=5, unique=True),
    st.lists(st.integers(min_value=0, max_value=4), min_size=5, max_size=5),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(matches=st.lists(_match, min_size=1, max_size=10), repeats=st.lists(st.integers(0, 9), max_size=5))
def test_standings_counters_equal_the_standings_recomputed_from_the_results(
        redis_server: PrivateRedis, matches: list[tuple[list[str], list[int]]], repeats: list[int]) -> None:
    s = Store.from_url(redis_server.url)
    s.client.flushall()
    try:
        s.create_tournament(TournamentInfo(
            id="t1", game="take5", bots=("a@1", "b@1", "b@2", "c@1", "d@1"), seats_per_match=2, rounds=1, seed=1,
            config={}, deadline_ms=1000, matches_total=len(matches), created_at=1.0))
        expected: dict[str, BotTally] = {}
        for i in list(range(len(matches))) + [r for r in repeats if r < len(matches)]:
            seats, raw = matches[i]
            scores = [float(x) for x in raw[:len(seats)]]
            ranks = list(competition_ranks(scores, lower_is_better=True))
            if s.record_result("take5", f"t1-{i:06d}", seats, scores, ranks, [0] * len(seats), {},
                               tournament_id="t1"):
                tally_match(expected, seats, scores, ranks)
        assert s.tournament_tally("take5", "t1") == expected
        info = s.get_tournament("t1")
        assert info is not None and info.matches_done == len(matches) and info.state == "finished"
        listed = s.list_matches(tournament_id="t1", limit=100)
        assert [r["match_id"] for r in listed] == [f"t1-{i:06d}" for i in reversed(range(len(matches)))]
        for bot in ("a@1", "b"):
            mine = [r["match_id"] for r in s.list_matches(bot=bot, limit=100)]
            assert mine == [r["match_id"] for r in listed
                            if any(seat == bot or seat.startswith(bot + "@") for seat in r["seats"])]
    finally:
        s.close()
