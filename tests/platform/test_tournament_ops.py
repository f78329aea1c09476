"""Tournaments and matches through the Arena service (issue 3, items 4 and 5): dry run, reruns with the same seed,
listing, cancelling, standings on a hand-checked case, ListMatches and GetMatch. Real redis-server, real gRPC,
real bot processes where matches are played."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from platform_helpers import SLOW_BOT, rpc_error, wait_until

from arena.core.seeds import deal_seed
from arena.store import Store, TournamentInfo
from arena.tournaments.round_robin import round_robin
from arena.worker import loop as scheduler
from arena_sdk.games import take5
from arena_sdk.games.base import competition_ranks
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

ONE_HAND = bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=1))  # a 2-seat match ends after one hand

AUTH_KEYS = ("arena:challenge-key", "arena:nonce:", "arena:id")  # what a signed call leaves: no tournament state


def _create(stub: arena_pb2_grpc.ArenaStub, bots: list[str], **kwargs: Any) -> arena_pb2.Tournament:
    return stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=bots, **kwargs))


def _get(stub: arena_pb2_grpc.ArenaStub, tid: str) -> arena_pb2.Tournament:
    return stub.GetTournament(arena_pb2.GetTournamentRequest(id=tid))


def test_a_dry_run_counts_and_explains_and_stores_nothing(arena_server: Any, store: Store) -> None:
    _server, stub = arena_server(verify_bots=False)
    for name in ("a", "b", "c", "d"):
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint="127.0.0.1:5001", game="take5"))
    keys_before = sorted(k for k in store.client.keys("*") if not k.startswith(AUTH_KEYS))
    plan = _create(stub, ["a", "b", "c", "d"], seats_per_match=3, rounds=2, dry_run=True, deals="duplicate")
    assert (plan.id, plan.state, plan.matches_total, plan.deals, plan.deal_count) == ("", "planned", 8, "duplicate", 8)
    assert plan.formula == "C(4,3) subsets x 2 rounds = 8, on 8 deals of at most T = max(1, min(k, B // k)) = 1 table"
    assert list(plan.bots) == ["a@0", "b@0", "c@0", "d@0"] and plan.matches_done == 0
    assert plan.seed_commitment == plan.seed_hex == ""  # no seed is drawn for a dry run
    rotate = _create(stub, ["a", "b"], deals="rotate", dry_run=True)
    assert rotate.formula == "C(2,2) subset x 2 seat rotations x 1 round = 2, on 1 deal of at most T = k = 2 tables"
    assert sorted(k for k in store.client.keys("*") if not k.startswith(AUTH_KEYS)) == keys_before  # nothing stored, nothing queued, no id used
    assert list(stub.ListTournaments(arena_pb2.ListTournamentsRequest()).tournaments) == []
    # a dry run validates like the real thing
    code, details = rpc_error(lambda: _create(stub, ["a", "zed"], dry_run=True))
    assert code == grpc.StatusCode.NOT_FOUND and "zed" in details
    code, _ = rpc_error(lambda: _create(stub, ["a", "b"], seats_per_match=3, dry_run=True))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, details = rpc_error(lambda: _create(stub, ["a", "b"], deals="shuffle", dry_run=True))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "unknown deal plan 'shuffle'" in details
    # a client never chooses the seed
    code, details = rpc_error(lambda: _create(stub, ["a", "b"], seed=5))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "a tournament seed cannot be given" in details
    assert _create(stub, ["a", "b"]).id == "t1"


def test_deals_come_from_the_secret_seed_and_a_new_tournament_deals_anew(
        arena_server: Any, start_bot: Callable[..., Any]) -> None:
    _server, stub = arena_server(workers=1, concurrency=4)
    for name in ("r1", "r2", "r3"):
        stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name=name, endpoint=start_bot("sample:random", extra_args=["--name", name]).endpoint, game="take5"))
    runs = [_create(stub, ["r1", "r2", "r3"], seats_per_match=2, rounds=2, config=ONE_HAND) for _ in range(2)]
    assert runs[0].seed_commitment != runs[1].seed_commitment and not runs[0].seed_hex
    deals = []
    for t in runs:
        wait_until(lambda t=t: _get(stub, t.id).state == "finished", f"tournament {t.id} to finish")
        ended = _get(stub, t.id)
        seed = int(ended.seed_hex, 16)
        assert hashlib.sha256(bytes.fromhex(ended.seed_hex)).hexdigest() == ended.seed_commitment == t.seed_commitment
        assert seed.bit_length() > 200  # 256 random bits (this fails once in 2**56 runs)
        summaries = stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=t.id)).matches
        assert len(summaries) == t.matches_total == 6 and all(m.revealed for m in summaries)
        played = {}
        for m in summaries:
            r = json.loads(stub.GetMatch(arena_pb2.GetMatchRequest(match_id=m.match_id)).record_json)
            assert r["seed"] == m.seed == deal_seed(seed, t.id, m.round, m.deal, m.attempt) and m.attempt == 0
            deal = take5.deal_hand(r["seed"], 0, 2, take5.Take5Config(limit=1))
            cards = [(d["seat"], d["action"]["card"]) for d in r["decisions"] if d["kind"] == take5.CHOOSE_CARD]
            assert len(cards) == 20  # one hand of 10 turns, 2 seats
            # the cards each seat played came from the hand the recorded seed dealt it
            assert all(card in deal.hands[seat] for seat, card in cards)
            played[m.match_id[-6:]] = m.seed
        assert len(set(played.values())) == 6  # 3 bots at 2 seats: one table per deal, a deal of its own each
        deals.append(played)
    assert not set(deals[0].values()) & set(deals[1].values())  # the same request again: other deals


def test_list_and_cancel_tournaments(arena_server: Any, start_bot: Callable[..., Any], store: Store,
                                     workers: Any) -> None:
    _server, stub = arena_server()
    for name in ("s1", "s2", "s3"):  # slow: a match of t1 takes ~3 s
        stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name=name, endpoint=start_bot(SLOW_BOT, extra_args=["--sleep", "0.3", "--name", name]).endpoint,
            game="take5"))
    for name in ("r1", "r2"):
        stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name=name, endpoint=start_bot("sample:random", extra_args=["--name", name]).endpoint, game="take5"))
    t1 = _create(stub, ["s1", "s2", "s3"], seats_per_match=2, rounds=2, config=ONE_HAND)
    t2 = _create(stub, ["r1", "r2"], seats_per_match=2, rounds=2, config=ONE_HAND)
    listed = stub.ListTournaments(arena_pb2.ListTournamentsRequest(game="take5")).tournaments
    assert [t.id for t in listed] == ["t2", "t1"] and [t.formula for t in listed] == [t2.formula, t1.formula]
    # a worker that died holding t1's second match, then a live worker running its first
    (held,) = store.read_jobs("dead-worker", 1, 10)
    assert held.spec is not None and held.spec.match_id == "t1-000000"
    worker = workers.thread("live", concurrency=1, visibility_timeout_s=2.0, heartbeat_s=0.3)
    running = wait_until(lambda: next((w.running for w in store.list_workers() if w.name == "live"), ()),
                         "the live worker to start a match")
    assert running == ("t1-000001",)
    # while it plays, the live worker claims the next job ahead (prefetch): t1-000002
    wait_until(lambda: [p["consumer"] for p in store.pending_details("take5")].count("live") == 2,
               "the live worker to claim a job ahead")
    cancelled = stub.CancelTournament(arena_pb2.CancelTournamentRequest(id="t1"))
    # queued and never delivered: t1-000003 .. t1-000005 dropped at once; t2 untouched
    assert (cancelled.state, cancelled.matches_cancelled, cancelled.matches_done) == ("cancelled", 3, 0)
    assert cancelled.seed_hex == "" and cancelled.seed_commitment == t1.seed_commitment  # 2 matches still dealt
    again = stub.CancelTournament(arena_pb2.CancelTournamentRequest(id="t1"))  # idempotent
    assert (again.state, again.matches_cancelled, again.created_at) == ("cancelled", 3, cancelled.created_at)
    # the running match finishes and counts; the job claimed ahead is dropped when its turn comes, the dead
    # worker's when reclaimed; t2 runs
    t = wait_until(lambda: (t := _get(stub, "t1")).matches_done + t.matches_cancelled == 6 and t,
                   "t1's last two matches to be settled")
    assert (t.state, t.matches_done, t.matches_cancelled) == ("cancelled", 1, 5)
    assert hashlib.sha256(bytes.fromhex(t.seed_hex)).hexdigest() == t1.seed_commitment  # now nothing is dealt
    assert store.has_result("take5", "t1-000001") and not store.has_result("take5", "t1-000000")
    wait_until(lambda: _get(stub, "t2").state == "finished", "t2 to finish")
    worker.stop()
    assert store.pending_jobs() == 0 and store.queued_jobs() == 0
    code, details = rpc_error(lambda: stub.CancelTournament(arena_pb2.CancelTournamentRequest(id="t2")))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "t2 is finished" in details
    code, _ = rpc_error(lambda: stub.CancelTournament(arena_pb2.CancelTournamentRequest(id="t7")))
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = rpc_error(lambda: stub.ListTournaments(arena_pb2.ListTournamentsRequest(game="chess")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def _record(store: Store, match_id: str, seats: list[str], scores: list[float], tournament: str) -> None:
    ranks = list(competition_ranks(scores, lower_is_better=True))
    assert store.record_result("take5", match_id, seats, scores, ranks, [0] * len(seats),
                               {"match_id": match_id, "seed": 7, "hand": "recorded"}, tournament_id=tournament)


def test_standings_matches_and_match_details_on_a_hand_checked_case(arena_server: Any, store: Store) -> None:
    _server, stub = arena_server(verify_bots=False)
    for tid in ("t1", "t2"):
        store.create_tournament(TournamentInfo(
            id=tid, game="take5", bots=("a@1", "b@1", "c@1"), seats_per_match=3, rounds=1, seed=5, config={},
            deadline_ms=1000, matches_total=3, created_at=time.time()))
    _record(store, "t1-000000", ["a@1", "b@1", "c@1"], [5, 10, 10], "t1")   # a first; b and c tie second
    _record(store, "t2-000000", ["a@1", "b@1"], [0, 30], "t2")              # another tournament
    _record(store, "t1-000001", ["b@1", "c@1", "a@1"], [3, 20, 8], "t1")    # b first, a second, c third

    # pairwise points: a 2 + 1 = 3 (wins 3, losses 1); b 1/2 + 2 = 2.5 (wins 2, losses 1, a tie);
    # c 1/2 + 0 = 0.5 (wins 0, losses 3, a tie); 4 pairs each
    ratings = {e.bot: e.rating for e in stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries}
    standings = stub.GetStandings(arena_pb2.GetStandingsRequest(id="t1"))
    assert standings.tournament_id == "t1"
    rows = [(e.rank, e.bot, e.points, e.matches, e.mean_score, e.score_rate) for e in standings.entries]
    assert rows == [(1, "a@1", 3.0, 2, 6.5, 0.75), (2, "b@1", 2.5, 2, 6.5, 0.625), (3, "c@1", 0.5, 2, 15.0, 0.125)]
    performance = {e.bot: e.performance for e in standings.entries}
    # mean opponent rating over the 4 pairs (2 per opponent) + 400 * (wins - losses) / 4
    assert performance["a@1"] == pytest.approx((ratings["b@1"] + ratings["c@1"]) / 2 + 400 * (3 - 1) / 4)
    assert performance["b@1"] == pytest.approx((ratings["a@1"] + ratings["c@1"]) / 2 + 400 * (2 - 1) / 4)
    assert performance["c@1"] == pytest.approx((ratings["a@1"] + ratings["b@1"]) / 2 + 400 * (0 - 3) / 4)
    assert list(stub.GetStandings(arena_pb2.GetStandingsRequest(id="t2")).entries)[0].points == 1.0
    code, _ = rpc_error(lambda: stub.GetStandings(arena_pb2.GetStandingsRequest(id="t9")))
    assert code == grpc.StatusCode.NOT_FOUND

    def ids(**kwargs: Any) -> list[str]:
        return [m.match_id for m in stub.ListMatches(arena_pb2.ListMatchesRequest(**kwargs)).matches]

    assert ids() == ["t1-000001", "t2-000000", "t1-000000"]  # newest first
    assert ids(tournament_id="t1") == ["t1-000001", "t1-000000"]
    assert ids(bot="c") == ["t1-000001", "t1-000000"] == ids(bot="c@1")
    assert ids(bot="c@2") == [] and ids(bot="a", tournament_id="t2") == ["t2-000000"]
    assert ids(limit=1) == ["t1-000001"] and ids(tournament_id="t1", bot="b", limit=1) == ["t1-000001"]
    code, _ = rpc_error(lambda: ids(tournament_id="t9"))
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = rpc_error(lambda: ids(bot="not a bot"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT

    # t1 is still running (2 of 3 matches): the summary only, no seed, no record
    detail = stub.GetMatch(arena_pb2.GetMatchRequest(match_id="t1-000001"))
    s = detail.summary
    assert (s.match_id, s.tournament_id, s.game, list(s.seats)) == ("t1-000001", "t1", "take5",
                                                                    ["b@1", "c@1", "a@1"])
    assert (list(s.scores), list(s.ranks), list(s.faults), s.seed, s.revealed) == (
        [3, 20, 8], [1, 3, 2], [0, 0, 0], 0, False)
    assert detail.record_json == "" and "tournament t1 is still running" in detail.withheld
    assert all(not m.revealed and m.seed == 0
               for m in stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id="t1")).matches)
    _record(store, "t1-000002", ["c@1", "a@1", "b@1"], [1, 2, 3], "t1")  # t1 finishes: everything is shown
    detail = stub.GetMatch(arena_pb2.GetMatchRequest(match_id="t1-000001"))
    result = store.get_result("take5", "t1-000001")
    assert result is not None
    s = detail.summary
    assert (list(s.scores), list(s.ranks), list(s.faults), s.seed, s.revealed) == (
        [3, 20, 8], [1, 3, 2], [0, 0, 0], 7, True)
    assert list(s.rating_deltas) == pytest.approx(result["deltas"]) and abs(sum(s.rating_deltas)) < 1e-9
    assert s.rating_deltas[0] > 0 > s.rating_deltas[1] and s.finished_at == result["stored_at"]
    assert json.loads(detail.record_json) == {"match_id": "t1-000001", "seed": 7, "hand": "recorded"}
    assert detail.withheld == ""
    code, details = rpc_error(lambda: stub.GetMatch(arena_pb2.GetMatchRequest(match_id="t1-000003")))
    assert code == grpc.StatusCode.NOT_FOUND and "no finished match t1-000003" in details


def test_get_tournament_reports_failed_matches_and_finishes_with_them(arena_server: Any, store: Store) -> None:
    """Matches given up after too many deliveries show in Tournament.matches_failed (GetTournament and
    ListTournaments), and the tournament is "finished" once done + cancelled + failed = total."""
    _server, stub = arena_server(verify_bots=False)
    specs = round_robin("t1", "take5", ["a@1", "b@1", "c@1"], 3, 3, seed=8, config={}, deadline_ms=1000)
    store.create_tournament(TournamentInfo(
        id="t1", game="take5", bots=("a@1", "b@1", "c@1"), seats_per_match=3, rounds=3, seed=8, config={},
        deadline_ms=1000, matches_total=len(specs), created_at=time.time()))
    scheduler.enqueue_matches(store, specs)
    jobs = store.read_jobs("w", 3, 10)
    assert store.drop_job(jobs[0], "failed") == 1  # what a worker does with a poison job
    t = _get(stub, "t1")
    assert (t.state, t.matches_done, t.matches_failed, t.matches_cancelled, t.matches_total) == (
        "running", 0, 1, 0, 3)
    _record(store, specs[1].match_id, list(specs[1].seats), [4, 9, 2], "t1")
    store.ack_job(jobs[1])
    assert store.drop_job(jobs[2], "failed") == 1
    t = _get(stub, "t1")
    assert (t.state, t.matches_done, t.matches_failed, t.matches_cancelled) == ("finished", 1, 2, 0)
    assert t.matches_done + t.matches_cancelled + t.matches_failed == t.matches_total
    (listed,) = stub.ListTournaments(arena_pb2.ListTournamentsRequest()).tournaments
    assert listed == t
