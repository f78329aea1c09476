"""The SPRT controller and its calls on a real redis-server and a real Arena server, with this test playing the
workers' part (claiming jobs, storing results, calling the hooks) so that every step is under its control: each
block counted once even when its two tables settle at the same moment, a lost hook made up by the sweep, a failed
table voids its block and a new block replaces it, the verdict finishes the tournament and drops its queued jobs;
and CreateSprt / GetSprt refusals."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from platform_helpers import rpc_error

from arena.cli import cli
from arena.core.seeds import deal_seed
from arena.server.app import ArenaServer
from arena.store import Job, Store
from arena.tournaments.controllers import after_match, sweep
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

GAME = "take5"


@pytest.fixture
def stub(arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], store: Store) -> Any:
    """An Arena server (no workers, no bot checks) with me@1, me@2 (one NAME) and field bots f0..f3 registered."""
    for name, version in (("me", "1"), ("me", "2"), ("other", "1")) + tuple((f"f{i}", "1") for i in range(4)):
        store.register_bot(GAME, name, "127.0.0.1:1", version=version)
    _, stub = arena_server(verify_bots=False)
    return stub


def _create(stub: Any, **fields: Any) -> arena_pb2.Sprt:
    fields.setdefault("v1", "me@1")
    fields.setdefault("v2", "me@2")
    fields.setdefault("deals", "duplicate")  # the paired plan these tests take apart (both tables on one deal)
    return stub.CreateSprt(arena_pb2.CreateSprtRequest(game=GAME, **fields), timeout=10)


def _play(store: Store, job: Job, v2_wins: bool, *, hook: bool = True, seed: int = 0, void: bool = False) -> None:
    """Store a result of ``job``'s match in which V2 (table 1) or V1 (table 0) finished first or last (dealt from
    ``seed``; ``void``: every seat failed), acknowledge the job and call the hook, as a worker does."""
    spec = job.spec
    assert spec is not None
    version = "me@1" if spec.table == 0 else "me@2"
    first = (spec.table == 1) == v2_wins
    ranks = [(1 if first else 2) if bot == version else (2 if first else 1) for bot in spec.seats]
    store.record_result(GAME, spec.match_id, list(spec.seats), [float(r) for r in ranks], ranks, [0] * len(ranks),
                        {"seed": seed}, tournament_id=spec.tournament,
                        deal={"round": 0, "deal": spec.deal, "table": spec.table, "attempt": 0}, void=void)
    store.ack_job(job)
    if hook:
        after_match(store, spec)


def _claim_block(store: Store) -> list[Job]:
    jobs = store.read_jobs("test-worker", 2, 0)
    assert len(jobs) == 2 and jobs[0].spec and jobs[1].spec and jobs[0].spec.deal == jobs[1].spec.deal
    return sorted(jobs, key=lambda j: j.spec.table if j.spec else 0)


def test_blocks_are_counted_once_replaced_when_void_and_the_verdict_ends_it(stub: Any, store: Store) -> None:
    s = _create(stub, elo0=0.0, elo1=200.0, window=3, max_blocks=50)
    tid = s.tournament.id
    assert s.tournament.matches_total == 6 and s.blocks == 0 and s.blocks_in_flight == 3 and s.verdict == ""
    assert s.seats == 2 and len(s.counts) == 5 and s.tournament.seed_hex == ""
    assert s.tournament.deal_count == 3 and s.tournament.tables_per_deal == 2 and "paired blocks" in s.tournament.formula
    # block 0: its two tables settle at the same moment in two threads
    jobs = _claim_block(store)
    barrier = threading.Barrier(2)

    def settle(job: Job) -> None:
        barrier.wait()
        _play(store, job, v2_wins=True)

    threads = [threading.Thread(target=settle, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    record = store.sprt_record(GAME, tid)
    assert record.counts == {2: 1} and record.settled == 1
    assert store.get_tournament(tid).matches_total == 8  # type: ignore[union-attr]  # block 3 keeps 3 in flight
    for job in jobs:  # hooks called again, and a sweep: nothing changes
        assert job.spec is not None
        after_match(store, job.spec)
    sweep(store)
    assert store.sprt_record(GAME, tid).counts == {2: 1}
    assert store.get_tournament(tid).matches_total == 8  # type: ignore[union-attr]
    # block 1: one table fails for good: void, and replaced by block 4
    t0, t1 = _claim_block(store)
    assert store.drop_job(t0, "failed") == 1
    assert t0.spec is not None
    after_match(store, t0.spec)
    _play(store, t1, v2_wins=True)
    record = store.sprt_record(GAME, tid)
    assert record.void == 1 and record.counts == {2: 1} and record.settled == 2
    assert store.get_tournament(tid).matches_total == 10  # type: ignore[union-attr]
    # block 2: results stored but the hooks lost (a worker killed after acknowledging): the sweep counts it
    for job in _claim_block(store):
        _play(store, job, v2_wins=True, hook=False)
    assert store.sprt_record(GAME, tid).settled == 2
    sweep(store)
    assert store.sprt_record(GAME, tid).counts == {2: 2}
    # V2 keeps winning both tables until the test decides
    played = 3
    while stub.GetSprt(arena_pb2.GetSprtRequest(id=tid)).verdict == "":
        for job in _claim_block(store):
            _play(store, job, v2_wins=True)
        played += 1
        assert played < 30, "no verdict after 30 blocks that V2 won outright"
    s = stub.GetSprt(arena_pb2.GetSprtRequest(id=tid))
    assert s.verdict == "H1" and s.llr >= s.upper > 0 > s.lower and "upper bound" in s.reason
    assert s.blocks == played - 1 and s.blocks_void == 1 and list(s.counts) == [0, 0, 0, 0, s.blocks]
    assert s.elo == float("inf") and s.blocks_in_flight == 0 and s.decided_at > 0
    t = s.tournament
    # finished; the blocks still queued (never delivered) were dropped, not played; every delivered one settled
    assert t.state == "finished" and t.matches_cancelled == t.matches_total - 2 * played > 0
    assert t.matches_done + t.matches_failed == 2 * played and t.seed_hex
    assert store.read_jobs("test-worker", 10, 0) == []


def test_a_block_with_a_void_table_is_void(stub: Any, store: Store) -> None:
    """A table every seat of which failed (stored, void) tells nothing of V1 against V2: its block is void, as one
    whose table failed for good, and a new block replaces it."""
    tid = _create(stub, elo0=0.0, elo1=200.0, window=1, max_blocks=50).tournament.id
    t0, t1 = _claim_block(store)
    _play(store, t0, v2_wins=True)
    _play(store, t1, v2_wins=True, void=True)
    record = store.sprt_record(GAME, tid)
    assert record.void == 1 and record.counts == {} and record.settled == 1
    assert store.get_tournament(tid).matches_total == 4  # type: ignore[union-attr]


def test_max_blocks_ends_inconclusive(stub: Any, store: Store) -> None:
    s = _create(stub, window=2, max_blocks=2)
    for v2_wins in (True, False):
        for job in _claim_block(store):
            _play(store, job, v2_wins)
    s = stub.GetSprt(arena_pb2.GetSprtRequest(id=s.tournament.id))
    assert s.verdict == "inconclusive" and s.blocks == 2 and list(s.counts) == [1, 0, 0, 0, 1]
    assert "2 blocks (the maximum)" in s.reason and s.lower < s.llr < s.upper
    assert s.tournament.state == "finished" and s.tournament.matches_total == 4


def test_a_field_fills_the_other_seats(stub: Any, store: Store) -> None:
    s = _create(stub, field=["f0", "f1", "f2", "f3"], seats=3, window=1)
    assert s.seats == 3 and list(s.field) == ["f0@1", "f1@1", "f2@1", "f3@1"] and len(s.counts) == 9
    t0, t1 = _claim_block(store)
    assert t0.spec is not None and t1.spec is not None
    assert "me@1" in t0.spec.seats and "me@2" in t1.spec.seats
    assert not (set(t0.spec.seats) & set(t1.spec.seats))


@pytest.mark.parametrize("fields, code, words", [
    ({"v2": "me@1"}, grpc.StatusCode.INVALID_ARGUMENT, "are the same bot me@1"),
    ({"v1": "me", "v2": "me@2"}, grpc.StatusCode.INVALID_ARGUMENT, "are the same bot me@2"),
    ({"elo0": 5.0, "elo1": 5.0}, grpc.StatusCode.INVALID_ARGUMENT, "elo0 must be below elo1"),
    ({"elo0": 0.0, "elo1": 1e-300}, grpc.StatusCode.INVALID_ARGUMENT, "elo1 must exceed elo0 by at least 0.1"),
    ({"elo0": 0.0, "elo1": 1e300}, grpc.StatusCode.INVALID_ARGUMENT, "both within +/-1000"),
    ({"alpha": 5e-324}, grpc.StatusCode.INVALID_ARGUMENT, "1e-06 <= alpha < 0.5"),
    ({"alpha": 0.7}, grpc.StatusCode.INVALID_ARGUMENT, "1e-06 <= alpha < 0.5, got 0.7"),
    ({"beta": 0.0}, grpc.StatusCode.INVALID_ARGUMENT, "1e-06 <= beta < 0.5, got 0"),
    ({"v2": "nobody@3"}, grpc.StatusCode.NOT_FOUND, "not registered for take5: nobody@3"),
    ({"field": ["f0", "f1", "f2"], "seats": 3}, grpc.StatusCode.INVALID_ARGUMENT, "the field is too small"),
    ({"field": ["f0", "me@2"]}, grpc.StatusCode.INVALID_ARGUMENT, "cannot hold the versions under test"),
    ({"v2": "other@1"}, grpc.StatusCode.INVALID_ARGUMENT, "have different owners: give a field"),
    ({"seats": 3}, grpc.StatusCode.INVALID_ARGUMENT, "3 seats need a field"),
    ({"window": 65}, grpc.StatusCode.INVALID_ARGUMENT, "window (blocks in flight) must be 1..64"),
    ({"seats": 11, "field": [f"f{i}" for i in range(4)]}, grpc.StatusCode.INVALID_ARGUMENT, "2..10 seats"),
    # the default seats of a one-bot field would be 1: the field's size is what is wrong
    ({"field": ["f0"]}, grpc.StatusCode.INVALID_ARGUMENT, "a field needs at least 2 (k - 1) bots for k seats"),
])
def test_create_refusals(stub: Any, store: Store, fields: dict[str, Any], code: grpc.StatusCode, words: str) -> None:
    got, details = rpc_error(lambda: _create(stub, **fields))
    assert got == code and words in details, details
    assert store.list_tournaments() == []


def test_a_field_bot_of_v1s_or_v2s_owner_is_refused(stub: Any, store: Store) -> None:
    """A field bot of V1's or V2's owner (another version of the NAME, or another NAME of the same owner token)
    would receive cards of the deal V1 or V2 holds at the other table of the block."""
    store.register_bot(GAME, "me", "127.0.0.1:1", version="3")
    for name, version in (("own", "1"), ("own", "2"), ("alias", "1")):
        store.register_bot(GAME, name, "127.0.0.1:1", version=version, owner_hash="h" * 64)
    for fields, named in (({"field": ["me@3", "f0"]}, "me@3"),
                          ({"v1": "f0", "v2": "me@1", "field": ["f1", "f2", "me@3"]}, "me@3"),
                          ({"v1": "own@1", "v2": "own@2", "field": ["f0", "alias", "f1"]}, "alias@1"),
                          ({"v1": "f0", "v2": "own@2", "field": ["f1", "alias@1"]}, "alias@1")):
        code, details = rpc_error(lambda: _create(stub, **fields))  # noqa: B023
        assert code == grpc.StatusCode.INVALID_ARGUMENT, details
        assert f"the field cannot hold a bot of V1's or V2's owner: {named}" in details, details
    assert store.list_tournaments() == []
    assert _create(stub, v1="own@1", v2="own@2", field=["f0", "f1"]).seats == 2  # other owners' bots do


def test_verify_and_status_of_a_head_to_head_sprt(arena_server: Callable[..., tuple[ArenaServer, Any]],
                                                  store: Store) -> None:
    """`arena tournament verify` of a head-to-head SPRT (V1 and V2 see every deal at both tables by design) notes
    it, checks the rest and passes; `arena tournament status` of it after the verdict says why matches were dropped
    and shows the verdict; `arena sprt show` speaks of 1 block, not "1 blocks"."""
    for version in ("1", "2"):
        store.register_bot(GAME, "me", "127.0.0.1:1", version=version)
    server, stub = arena_server(verify_bots=False)
    address = f"127.0.0.1:{server.port}"
    s = _create(stub, elo0=0.0, elo1=200.0, alpha=0.4, beta=0.4, window=3)  # decided by one block V2 wins
    tid = s.tournament.id
    secret = store.get_tournament(tid).seed  # type: ignore[union-attr]
    for job in _claim_block(store):
        assert job.spec is not None
        _play(store, job, v2_wins=True, seed=deal_seed(secret, tid, 0, job.spec.deal))
    s = stub.GetSprt(arena_pb2.GetSprtRequest(id=tid))
    assert s.verdict == "H1" and s.tournament.matches_cancelled == 4 and s.tournament.seed_hex
    assert s.reason.endswith("after 1 block"), s.reason
    runner = CliRunner()
    out = runner.invoke(cli, ["tournament", "verify", tid, "--server", address], prog_name="arena")
    assert out.exit_code == 0, out.output
    assert "FAIL" not in out.stdout and out.stdout.count("note: ") == 1 and "head-to-head SPRT" in out.stdout
    assert f"the seed {s.tournament.seed_hex} matches the commitment {s.tournament.seed_commitment}" in out.stdout
    report = json.loads(runner.invoke(cli, ["tournament", "verify", tid, "--json", "--server", address]).stdout)
    assert report["ok"] and report["twice_by_design"] == ["me@1", "me@2"] and report["matches"] == 2
    status = runner.invoke(cli, ["tournament", "status", tid, "--server", address], prog_name="arena")
    assert status.exit_code == 0, status.output
    assert "4 dropped after the verdict" in status.stdout and "dropped by the cancellation" not in status.stdout
    assert "V2 is better: accept H1" in status.stdout
    shown = runner.invoke(cli, ["sprt", "show", tid, "--server", address], prog_name="arena")
    assert shown.exit_code == 0 and "after 1 block)" in shown.stdout, shown.output
    assert "4 dropped after the verdict" in shown.stdout and "1 blocks" not in shown.stdout
    # a lie still fails: a match whose seed is not its deal's
    store.record_result(GAME, f"{tid}-000099", ["me@1", "me@2"], [1.0, 2.0], [1, 2], [0, 0], {"seed": 5},
                        tournament_id=tid, deal={"round": 0, "deal": 0, "table": 0, "attempt": 0})
    out = runner.invoke(cli, ["tournament", "verify", tid, "--server", address], prog_name="arena")
    assert out.exit_code == 1 and f"FAIL match {tid}-000099: seed 5 is not the deal seed" in out.stdout


def test_get_sprt_of_a_round_robin_is_not_found(stub: Any) -> None:
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(game=GAME, bots=["f0", "f1"], seats_per_match=2))
    code, details = rpc_error(lambda: stub.GetSprt(arena_pb2.GetSprtRequest(id=t.id)))
    assert code == grpc.StatusCode.NOT_FOUND and "not an SPRT" in details
    code, _ = rpc_error(lambda: stub.GetSprt(arena_pb2.GetSprtRequest(id="t999")))
    assert code == grpc.StatusCode.NOT_FOUND


def test_a_cancelled_sprt_stops_without_a_verdict(stub: Any, store: Store) -> None:
    s = _create(stub, window=2)
    for job in _claim_block(store):
        _play(store, job, v2_wins=True)
    stub.CancelTournament(arena_pb2.CancelTournamentRequest(id=s.tournament.id))
    s = stub.GetSprt(arena_pb2.GetSprtRequest(id=s.tournament.id))
    assert s.tournament.state == "cancelled" and s.verdict == "" and s.blocks == 1 and s.blocks_in_flight == 0
    assert s.tournament.matches_cancelled == 4 and s.tournament.seed_hex  # blocks 1 and 2 dropped; it has ended
    sweep(store)  # no controller runs for it any more
    assert store.get_tournament(s.tournament.id).matches_total == 6  # type: ignore[union-attr]


def test_a_block_dropped_with_the_tests_end_is_not_counted_void(stub: Any, store: Store) -> None:
    """An organiser review: a test decided normally said "blocks 349 (+2 void)", a cancelled one "+8 void", though
    "void" is a table that failed for good and a new block replaces it: a controller that read the test as running
    while its end dropped the queued tables counted their blocks void. A dropped table leaves its block uncounted."""
    from arena.tournaments.sprt_controller import SprtParams, _settle_block

    s = _create(stub, elo0=0.0, elo1=200.0, window=2, max_blocks=50)
    info = store.get_tournament(s.tournament.id)  # read while it runs, as the racing controller did
    assert info is not None
    for job in _claim_block(store):  # block 0 played; block 1 stays queued
        _play(store, job, v2_wins=True)
    stub.CancelTournament(arena_pb2.CancelTournamentRequest(id=info.id), timeout=10)  # drops block 1's tables
    assert not _settle_block(store, info, SprtParams.from_dict(info.extra), 1)
    record = store.sprt_record(GAME, info.id)
    assert record.void == 0 and record.counts == {2: 1}
    assert stub.GetSprt(arena_pb2.GetSprtRequest(id=info.id)).blocks_void == 0
