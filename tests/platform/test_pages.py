"""Paged lists and bots that change their name, on real parts (a real redis-server, a real Arena server over
loopback gRPC, the real CLI through click's CliRunner, a real bot process): a registration flood that would make
one unpaged ListBots answer larger than gRPC's 4 MiB limit leaves `arena bot list` working; the pages of every list
method have no duplicates and no gaps; a bad page token is INVALID_ARGUMENT; a page size over the maximum is
clamped; a bot restarted under another name is refused by CreateTournament, marked, never named, and never played
under its registered name, even in a match forced past the deferral cap."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from platform_helpers import VERSIONED_BOT, rpc_error, wait_until

from arena.cli.app import cli
from arena.core import limits
from arena.core.specs import MatchSpec
from arena.match.record import MatchRecord
from arena.server import pages
from arena.server.app import ArenaServer
from arena.server.replies import bot_message
from arena.store import Store, TournamentInfo, WorkerStatus
from arena.store.health import MISMATCH_PREFIX
from arena.store.keys import GAMES_SET, bot_index_key, bot_key, bots_key, owner_key, versions_key
from arena.worker.health import NAME_CHANGED, check_bots
from arena.worker.loop import enqueue_matches
from arena_sdk.games.base import competition_ranks
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

GRPC_LIMIT = 4 * 1024 * 1024  # gRPC's default max receive size, bytes
FLOOD = 10_000
Server = Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]]


def _flood(store: Store, count: int, game: str = "take5", start: int = 0) -> list[str]:
    """Register ``count`` bots of the longest legal name, version, endpoint, sdk_version and author straight through
    the store's registration script, pipelined; their bot ids."""
    ids = []
    pipe = store.client.pipeline(transaction=False)
    for i in range(start, start + count):
        name = f"{i:08d}".ljust(limits.BOT_NAME, "n")
        version = "v" * limits.VERSION
        bid = f"{name}@{version}"
        endpoint = "h" * (limits.ENDPOINT - 6) + f":{10000 + i % 50000}"
        store._register(keys=[owner_key(game, name), versions_key(game, name), bot_key(game, bid), bots_key(game),
                              bot_index_key(game)],
                        args=["", name, version, bid, game, endpoint, repr(1.7e9 + i), "s" * limits.SDK_VERSION,
                              "a" * limits.AUTHOR, ""], client=pipe)
        ids.append(bid)
    pipe.sadd(GAMES_SET, game)
    pipe.execute()
    return ids


def _pages(call: Callable[[Any], Any], request: Any, field: str) -> tuple[list[Any], int]:
    """Every entry of every page of a list method, and the number of pages."""
    out: list[Any] = []
    count = 0
    while True:
        reply = call(request)
        count += 1
        out.extend(getattr(reply, field))
        if not reply.next_page_token:
            return out, count
        request.page_token = reply.next_page_token


@pytest.fixture
def cli_runner() -> CliRunner:
    return CliRunner()


def test_a_registration_flood_leaves_bot_list_working(arena_server: Server, store: Store,
                                                      cli_runner: CliRunner) -> None:
    server, stub = arena_server(verify_bots=False)
    ids = _flood(store, FLOOD)
    one = bot_message(store.get_bot("take5", ids[0]))  # type: ignore[arg-type]
    one.health = "healthy"
    # each entry costs its size plus a tag byte and a two-byte length in the ListBotsResponse
    unpaged = FLOOD * (one.ByteSize() + 3)
    assert one.ByteSize() > 700 and unpaged > GRPC_LIMIT  # the old single answer could not be received

    result = cli_runner.invoke(cli, ["bot", "list", "--json", "--no-check", "--server", f"127.0.0.1:{server.port}"])
    assert result.exit_code == 0, result.output[-500:]
    listed = json.loads(result.output)
    assert len(listed) == FLOOD and sorted(b["bot_id"] for b in listed) == sorted(ids)

    # a page size over the maximum is clamped to it (not refused), and the page stays far under the limit
    reply = stub.ListBots(arena_pb2.ListBotsRequest(game="take5", page_size=10 ** 9))
    assert len(reply.bots) == pages.BOTS.max_size and reply.next_page_token
    assert reply.ByteSize() < GRPC_LIMIT / 3
    # no page size: the default
    reply = stub.ListBots(arena_pb2.ListBotsRequest())
    assert len(reply.bots) == pages.BOTS.default_size and reply.next_page_token


def _record(store: Store, match_id: str, seats: list[str], tournament: str | None, game: str = "take5") -> None:
    scores = [float(i) for i in range(len(seats))]
    ranks = list(competition_ranks(scores, lower_is_better=True))
    assert store.record_result(game, match_id, seats, scores, ranks, [0] * len(seats), {"match_id": match_id},
                               tournament_id=tournament)


def test_pages_of_every_list_have_no_duplicates_and_no_gaps(arena_server: Server, store: Store,
                                                            cli_runner: CliRunner) -> None:
    server, stub = arena_server(verify_bots=False)
    address = f"127.0.0.1:{server.port}"
    take5 = _flood(store, 23)
    taki = _flood(store, 11, game="taki", start=100)
    bots, count = _pages(stub.ListBots, arena_pb2.ListBotsRequest(page_size=5), "bots")
    assert [(b.game, b.bot_id) for b in bots] == sorted([("take5", b) for b in take5] + [("taki", b) for b in taki])
    assert count == 7  # 34 bots, 5 a page
    bots, _ = _pages(stub.ListBots, arena_pb2.ListBotsRequest(game="taki", page_size=4), "bots")
    assert [b.bot_id for b in bots] == sorted(taki)

    now = time.time()
    for n in range(1, 26):  # more than a default page (20)
        store.create_tournament(TournamentInfo(
            id=f"t{n}", game="take5" if n % 3 else "taki", bots=("a@1", "b@1"), seats_per_match=2, rounds=1, seed=n,
            config={}, deadline_ms=1000, matches_total=5, created_at=now + n))
    tournaments, _ = _pages(stub.ListTournaments, arena_pb2.ListTournamentsRequest(page_size=3), "tournaments")
    assert [t.id for t in tournaments] == [f"t{n}" for n in range(25, 0, -1)]
    result = cli_runner.invoke(cli, ["tournament", "list", "--json", "--server", address])
    assert result.exit_code == 0, result.output
    assert [t["id"] for t in json.loads(result.output)] == [f"t{n}" for n in range(25, 0, -1)]
    tournaments, _ = _pages(stub.ListTournaments, arena_pb2.ListTournamentsRequest(game="taki", page_size=2),
                            "tournaments")
    assert [t.id for t in tournaments] == [f"t{n}" for n in range(24, 0, -3)]

    stored = []
    for i in range(17):  # matches of two games and two tournaments, stored one after the other
        tid = "t1" if i % 2 else "t2"
        _record(store, f"{tid}-{i:06d}", ["a@1", "b@1"] if i % 3 else ["b@1", "c@1"], tid)
        stored.append(f"{tid}-{i:06d}")
    for i in range(5):
        _record(store, f"t3-{i:06d}", ["a@1", "c@1"], "t3", game="taki")
        stored.append(f"t3-{i:06d}")
    one_page = list(stub.ListMatches(arena_pb2.ListMatchesRequest(page_size=1000)).matches)
    matches, _ = _pages(stub.ListMatches, arena_pb2.ListMatchesRequest(page_size=4), "matches")
    assert sorted(m.match_id for m in matches) == sorted(stored) and len(matches) == len(stored)
    assert [m.match_id for m in matches] == [m.match_id for m in one_page]  # newest first, as one page
    assert [m.finished_at for m in matches] == sorted((m.finished_at for m in matches), reverse=True)
    matches, _ = _pages(stub.ListMatches, arena_pb2.ListMatchesRequest(tournament_id="t1", bot="c", page_size=2),
                        "matches")
    assert [m.match_id for m in matches] == [m for m in reversed(stored[:17]) if m.startswith("t1-")
                                             and int(m[3:]) % 3 == 0]
    # the old limit / offset still work, and the answer says where to go on
    old = stub.ListMatches(arena_pb2.ListMatchesRequest(limit=5, offset=3))
    assert [m.match_id for m in old.matches] == [m.match_id for m in one_page][3:8] and old.next_page_token
    deepest = stub.ListMatches(arena_pb2.ListMatchesRequest(limit=5, offset=limits.MATCH_OFFSET))
    assert not deepest.matches and not deepest.next_page_token
    with pytest.raises(grpc.RpcError) as refused:  # an offset reads what it skips: past the limit, page tokens
        stub.ListMatches(arena_pb2.ListMatchesRequest(limit=5, offset=2**32 - 1))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "page_token" in refused.value.details()

    names = [f"w{i:03d}" for i in range(pages.WORKERS.default_size + 5)]  # more than a default page
    for name in names:
        store.heartbeat(WorkerStatus(name=name, host="h", pid=1, started_at=now, last_seen=now,
                                     concurrency=2, running=(), matches_done=0, timeout_s=30.0))
    workers, count = _pages(stub.ListWorkers, arena_pb2.ListWorkersRequest(page_size=60), "workers")
    assert [w.name for w in workers] == names and count == 4
    result = cli_runner.invoke(cli, ["worker", "list", "--json", "--all", "--server", address])
    assert result.exit_code == 0, result.output
    assert sorted(w["name"] for w in json.loads(result.output)) == names


def test_unrated_matches_and_repeated_house_seats_page_without_gaps(arena_server: Server, store: Store) -> None:
    """Matches that do not count on the ladder (a paired SPRT's) each get an index number of their own: paging
    them in small pages lists each exactly once, also between rated ones; a house bot may hold several seats."""
    _server, stub = arena_server(verify_bots=False)
    now = time.time()
    store.create_tournament(TournamentInfo(
        id="t1", game="take5", bots=("v1@1", "v2@1"), seats_per_match=4, rounds=1, seed=1, config={},
        deadline_ms=1000, matches_total=40, created_at=now))
    stored = []
    for i in range(23):
        seats = ["v1@1" if i % 2 == 0 else "v2@1", "house:heuristic", "house:heuristic", "house:random"]
        scores = [float(k) for k in range(4)]
        assert store.record_result("take5", f"t1-{i:06d}", seats, scores, [1, 2, 3, 4], [0] * 4,
                                   {"match_id": f"t1-{i:06d}"}, tournament_id="t1", rated=False)
        stored.append(f"t1-{i:06d}")
        if i == 11:  # a rated match between them
            _record(store, "x-000001", ["a@1", "b@1"], None)
    for size in (1, 2, 5, 7):
        matches, _ = _pages(stub.ListMatches, arena_pb2.ListMatchesRequest(tournament_id="t1", page_size=size),
                            "matches")
        assert [m.match_id for m in matches] == list(reversed(stored)), size
    everything, _ = _pages(stub.ListMatches, arena_pb2.ListMatchesRequest(page_size=3), "matches")
    assert sorted(m.match_id for m in everything) == sorted([*stored, "x-000001"])
    v1, _ = _pages(stub.ListMatches, arena_pb2.ListMatchesRequest(bot="v1@1", page_size=4), "matches")
    assert [m.match_id for m in v1] == [m for m in reversed(stored) if int(m[3:]) % 2 == 0]
    with pytest.raises(ValueError, match="seated twice"):
        store.record_result("take5", "t1-000099", ["v1@1", "v1@1"], [1.0, 2.0], [1, 2], [0, 0], {}, rated=False)


def test_a_bad_page_token_is_invalid_argument(arena_server: Server, store: Store) -> None:
    _server, stub = arena_server(verify_bots=False)
    _flood(store, 3)
    _flood(store, 3, game="taki", start=10)
    token = stub.ListBots(arena_pb2.ListBotsRequest(game="take5", page_size=1)).next_page_token
    assert token
    forged = base64.urlsafe_b64encode(json.dumps([1, "ListBots", "0" * 16, ["take5", "x"]]).encode()).decode()
    raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    bad_position = base64.urlsafe_b64encode(json.dumps(raw[:3] + [[1, 2, 3]]).encode()).decode()
    cases = [
        (stub.ListBots, arena_pb2.ListBotsRequest(game="take5", page_token="not a token!"), "not a page token"),
        (stub.ListBots, arena_pb2.ListBotsRequest(game="take5", page_token="e30"), "not a page token"),  # "{}"
        (stub.ListBots, arena_pb2.ListBotsRequest(game="taki", page_token=token), "other filters"),
        (stub.ListBots, arena_pb2.ListBotsRequest(game="take5", page_token=forged), "other filters"),
        (stub.ListBots, arena_pb2.ListBotsRequest(game="take5", page_token=bad_position), "no valid ListBots"),
        (stub.ListWorkers, arena_pb2.ListWorkersRequest(page_token=token), "made for ListBots, not ListWorkers"),
        (stub.ListTournaments, arena_pb2.ListTournamentsRequest(page_token=token), "not ListTournaments"),
        (stub.ListMatches, arena_pb2.ListMatchesRequest(page_token=token), "not ListMatches"),
        (stub.ListBots, arena_pb2.ListBotsRequest(page_token="x" * (limits.PAGE_TOKEN + 1)), "the limit is 512"),
    ]
    for call, request, words in cases:
        code, details = rpc_error(lambda: call(request))  # noqa: B023 - called at once
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (request, details)
        assert words in details, details
    # the good token still gives the second page
    second = stub.ListBots(arena_pb2.ListBotsRequest(game="take5", page_size=1, page_token=token))
    assert len(second.bots) == 1 and second.next_page_token


def test_a_bot_restarted_under_another_name_is_not_scheduled(arena_server: Server, store: Store,
                                                            start_bot: Callable[..., Any],
                                                            cli_runner: CliRunner) -> None:
    server, stub = arena_server(verify_timeout_s=2.0)
    alice = start_bot(VERSIONED_BOT, extra_args=["--name", "alice"])
    bob = start_bot(VERSIONED_BOT, extra_args=["--name", "bob"])
    for name, bot in (("alice", alice), ("bob", bob)):
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint, game="take5"))
    port = int(alice.endpoint.rsplit(":", 1)[1])
    alice.stop()
    start_bot(VERSIONED_BOT, port=port, extra_args=["--name", "mallory"])  # same port, same version, another name

    code, details = rpc_error(lambda: stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["alice", "bob"], seats_per_match=2)))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details.startswith(f"bots not as registered: alice@1.0 ({alice.endpoint} reports another name in GetInfo")
    assert "bob" not in details and "mallory" not in details
    assert store.queued_jobs() == 0
    health = store.bot_health("take5", ["alice@1.0", "bob@1.0"])
    assert not health["alice@1.0"].healthy and health["bob@1.0"].healthy
    assert store.unhealthy_among("take5", ["alice@1.0", "bob@1.0"]) == ["alice@1.0"]  # the workers defer its matches

    result = cli_runner.invoke(cli, ["bot", "list", "--json", "--server", f"127.0.0.1:{server.port}"])
    assert result.exit_code == 0, result.output
    shown = {b["bot_id"]: b for b in json.loads(result.output)}
    assert shown["alice@1.0"]["health"]["state"] == "unhealthy"
    assert shown["alice@1.0"]["health"]["reason"] == (
        "not as registered: reports another name in GetInfo than it is registered under")
    assert shown["alice@1.0"]["answers"] is False and shown["bob@1.0"]["answers"] is True
    assert "mallory" not in result.output

    # the workers' recovery check keeps it unhealthy while it gives another name ...
    asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=2.0))
    assert not store.bot_health("take5", ["alice@1.0"])["alice@1.0"].healthy
    # ... and its owner moves it to a bot that answers as alice: healthy again, a tournament may start
    again = start_bot(VERSIONED_BOT, extra_args=["--name", "alice"])
    store.update_bot("take5", "alice@1.0", again.endpoint)
    report = asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=2.0))
    assert report.recovered == 1 and store.bot_health("take5", ["alice@1.0"])["alice@1.0"].healthy
    created = stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=["alice", "bob"],
                                                                      seats_per_match=2))
    assert created.state == "running"


def test_a_bot_unhealthy_for_its_failures_is_healthy_again_only_when_it_answers_as_registered(
        store: Store, start_bot: Callable[..., Any]) -> None:
    """Whatever made a bot unhealthy (here: failed matches), the recovery check marks it healthy only when GetInfo
    answers as registered: a process of another name at its address, or one that refuses GetInfo, leaves it
    unhealthy ("not as registered"), so its matches (and its secret) never go there."""
    alice = start_bot(VERSIONED_BOT, extra_args=["--name", "alice"])
    store.register_bot("take5", "alice", alice.endpoint, version="1.0", checked=True)
    for k in range(2):
        store.record_match_health("take5", f"f{k}", {"alice@1.0": "answered no call"}, unhealthy_after=2)
    assert not store.bot_health("take5", ["alice@1.0"])["alice@1.0"].healthy
    port = int(alice.endpoint.rsplit(":", 1)[1])
    alice.stop()
    spy = start_bot(VERSIONED_BOT, port=port, extra_args=["--name", "spy"])
    report = asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=2.0))
    health = store.bot_health("take5", ["alice@1.0"])["alice@1.0"]
    assert report.recovered == 0 and not health.healthy and health.reason == MISMATCH_PREFIX + NAME_CHANGED
    spy.stop()
    start_bot(VERSIONED_BOT, port=port, extra_args=["--name", "alice"])  # the bot itself, back
    report = asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=2.0))
    assert report.recovered == 1 and store.bot_health("take5", ["alice@1.0"])["alice@1.0"].healthy


def test_a_forced_match_never_plays_a_bot_under_a_name_it_no_longer_gives(store: Store, start_bot: Callable[..., Any],
                                                                          workers: Any) -> None:
    """A match deferred past the cap is played forced; a seat whose bot gives another name in GetInfo faults as
    unreachable and forfeits: the process at its endpoint gets no call of the match."""
    live = store.register_bot("take5", "live", start_bot("sample:random").endpoint, version="1").bot_id
    impostor = start_bot(VERSIONED_BOT, extra_args=["--name", "mallory"])  # answers at alice's endpoint
    alice = store.register_bot("take5", "alice", impostor.endpoint, version="1.0", checked=True).bot_id
    store.mark_unhealthy("take5", alice, MISMATCH_PREFIX + NAME_CHANGED)
    enqueue_matches(store, [MatchSpec(match_id="f-1", game="take5", seats=(live, alice), seed=3,
                                      config={"limit": 1})])
    (job,) = store.read_jobs("parker", 1, 100)
    assert store.defer_job("take5", job.entry_id, "f-1", job.fields) == 1
    assert store.release_deferred("take5", "f-1", forced=True)  # as check_bots does after max_deferral_s
    workers.thread("w", concurrency=1, max_deferral_s=600.0, bot_recheck_s=0.3)
    result = wait_until(lambda: store.get_result("take5", "f-1"), "the forced match")
    assert result["ranks"] == [1, 2] and result["faults"][1] > 0 and result["faults"][0] == 0
    record = MatchRecord.from_dict(store.get_match_record("f-1", "take5"))  # type: ignore[arg-type]
    assert record.result.forfeits[1] and not record.result.forfeits[0]
    assert {f.kind for f in record.faults if f.seat == 1} == {"unreachable"}
    assert not any(d.get("source") == "bot" and int(d["seat"]) == 1 for d in record.decisions)
    assert not store.bot_health("take5", [alice])[alice].healthy  # still another name: still unhealthy


def test_a_bots_matches_in_a_large_tournament_are_read_a_bounded_slice_at_a_time(
        arena_server: Server, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """ListMatches of one bot in one tournament read every result of the tournament when the bot played little
    of it (a stranger's unauthenticated call, seconds of the referee per call at 100,000 matches): now at most
    ``FILTERED_SCAN`` results a call, pages short (even empty) while the next page token goes on, and every match
    of the bot listed once, newest first."""
    from arena.store import results

    _server, stub = arena_server(verify_bots=False)
    store.create_tournament(TournamentInfo(id="t1", game="take5", bots=("a@1", "b@1", "c@1"), seats_per_match=2,
                                           rounds=1, seed=1, config={}, deadline_ms=1000, matches_total=40,
                                           created_at=time.time()))
    for i in range(40):
        _record(store, f"t1-{i:06d}", ["a@1", "c@1"] if i % 9 == 0 else ["a@1", "b@1"], "t1")
    monkeypatch.setattr(results, "FILTERED_SCAN", 6)
    read: list[int] = []
    real = results.ResultStore._results

    def counted(self: Any, game: str, match_ids: Any) -> Any:
        read[-1] += len(match_ids)
        return real(self, game, match_ids)

    monkeypatch.setattr(results.ResultStore, "_results", counted)
    request = arena_pb2.ListMatchesRequest(tournament_id="t1", bot="c", page_size=2)
    found: list[str] = []
    while True:
        read.append(0)
        reply = stub.ListMatches(request)
        found += [m.match_id for m in reply.matches]
        if not reply.next_page_token:
            break
        request.page_token = reply.next_page_token
    assert found == [f"t1-{i:06d}" for i in (36, 27, 18, 9, 0)]
    assert max(read) <= 6 + 3 and len(read) > 3  # the slice, and one chunk of page_size + 1 past it
