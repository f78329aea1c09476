"""`arena tournament verify --records` on a finished tournament some of whose stored records are damaged (real
redis-server, real bot processes, a real worker, the Arena server on loopback gRPC): each damaged record is listed
with why it cannot be checked, every other match is still checked, and the exit code is 1."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner
from platform_helpers import wait_until

from arena.cli import cli
from arena.store import Store
from arena.store.codec import pack_record
from arena.store.keys import match_key
from arena_sdk.pb import arena_pb2, bot_pb2

ONE_HAND = bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=1))  # a 2-seat match ends after one hand
BOTS = ("vd-a", "vd-b", "vd-c", "vd-d")


@pytest.fixture
def finished(arena_server: Any, store: Store, start_bot: Callable[..., Any],
             workers: Any) -> tuple[str, str, dict[str, int]]:
    """(the server's address, the id of a finished round robin of 4 bots at 2 seats, its 6 matches' deal seeds by
    match id)."""
    server, stub = arena_server()
    for name in BOTS:
        bot = start_bot("sample:random", extra_args=["--name", name])
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint, game="take5"))
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=list(BOTS), seats_per_match=2,
                                                                config=ONE_HAND))
    worker = workers.thread("vd-worker", concurrency=2)
    wait_until(lambda: stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id)).state == "finished",
               "the tournament to finish")
    worker.stop()
    seeds = {m.match_id: m.seed for m in stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=t.id)).matches}
    assert len(seeds) == 6
    return f"127.0.0.1:{server.port}", t.id, seeds


def _verify(address: str, tid: str, *extra: str) -> Any:
    return CliRunner().invoke(cli, ["tournament", "verify", tid, "--records", *extra, "--server", address])


def test_damaged_records_are_listed_and_the_other_matches_still_checked(
        finished: tuple[str, str, dict[str, int]], store: Store) -> None:
    address, tid, seeds = finished
    ids = sorted(seeds)
    clean = _verify(address, tid)
    assert clean.exit_code == 0 and "6 matches" in clean.stdout and "FAIL" not in clean.stdout, clean.output

    unreadable, misshapen, no_seed, reseeded = ids[1], ids[2], ids[3], ids[4]
    store.client.set(match_key("take5", unreadable), b"\x00\xffgarbage")  # the referee answers DATA_LOSS
    store.client.set(match_key("take5", misshapen), b'{"decisions": 5, "seed": "x"}')  # JSON, no match record
    for match_id, change in ((no_seed, {"seed": None}), (reseeded, {"seed": 12345})):
        record = store.get_match_record(match_id, "take5")
        assert record is not None
        store.client.set(match_key("take5", match_id), pack_record(dict(record, **change)))

    out = _verify(address, tid)
    assert out.exit_code == 1, out.output
    fails = [line for line in out.stdout.splitlines() if line.startswith("FAIL ")]
    damaged = "damaged record, its seeds not checked"
    # the reseeded record is still checked (its problem comes first, the damaged records after it, in listing order)
    assert fails[0] == f"FAIL match {reseeded}: its record was played with seed 12345, not {seeds[reseeded]}"
    assert sorted(fails[1:]) == [
        f"FAIL match {unreadable}: {damaged}: the stored record of match {unreadable} cannot be read: it is damaged "
        "in the arena's store (the referee's log has the details)",
        f"FAIL match {misshapen}: {damaged}: its record is no match record (record.game is missing)",
        f"FAIL match {no_seed}: {damaged}: its record has no deal seed",
    ]
    error = out.stderr.strip()
    assert error.startswith(f"Error: tournament {tid} does not verify: 4 problems (3 damaged records: "), error
    assert sorted(error.rsplit("records: ", 1)[1].rstrip(")").split(", ")) == [unreadable, misshapen, no_seed]
    assert "Traceback" not in out.output

    report = _verify(address, tid, "--json")
    assert report.exit_code == 1, report.output
    data = json.loads(report.stdout)
    assert data["ok"] is False and data["matches"] == 6 and data["records_checked"] is True
    assert sorted(d["match_id"] for d in data["damaged_records"]) == [unreadable, misshapen, no_seed]
    assert all(d["reason"] for d in data["damaged_records"])
    assert len(data["problems"]) == 4
