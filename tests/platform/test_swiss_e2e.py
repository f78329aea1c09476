"""A Swiss tournament end to end: a real redis-server, a real ArenaServer with an embedded worker, real bot
processes over gRPC, the matches through the real queue. Rounds are paired one at a time, each once the previous
one is settled; byes are spread and recorded; every deal is new to every bot (and to every owner's other bots);
the standings count byes and say their tiebreak; every progress shown (GetTournament, ListTournaments, the CLI, the
web pages) is out of every round's matches from the start."""

from __future__ import annotations

import itertools
import json
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import grpc
from click.testing import CliRunner
from platform_helpers import WAIT_S, rpc_error

from arena.cli import cli
from arena.store import Store, token_hash
from arena.tournaments.standings import standings
from arena.tournaments.swiss import Swiss
from arena.tournaments.verify import verify_deals
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

SHORT_GAME = bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=30))


def _register(store: Store, endpoints: list[str], names: list[str], owners: dict[str, str] | None = None) -> None:
    for name, endpoint in zip(names, itertools.cycle(endpoints)):
        owner = (owners or {}).get(name)
        store.register_bot("take5", name, endpoint, version="1", owner_hash=token_hash(owner) if owner else None)


def _follow(stub: arena_pb2_grpc.ArenaStub, tid: str, per_round: int) -> tuple[Any, list[tuple[int, int, int]]]:
    """Poll GetTournament until it is no longer running; returns the last answer and every (rounds_paired,
    matches_total, matches settled) seen. While it runs the seed stays secret."""
    seen = []
    deadline = time.monotonic() + 2 * WAIT_S
    while (t := stub.GetTournament(arena_pb2.GetTournamentRequest(id=tid))).state == "running":
        assert t.seed_hex == "" and t.format == "swiss"
        seen.append((t.rounds_paired, t.matches_total, t.matches_done + t.matches_failed + t.matches_cancelled))
        assert time.monotonic() < deadline, f"Swiss {tid} did not finish: {t}"
        time.sleep(0.02)
    return t, seen


def _matches(stub: arena_pb2_grpc.ArenaStub, tid: str) -> list[Any]:
    return list(stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, limit=1000)).matches)


def test_swiss_of_20_bots_at_4_seats_runs_round_by_round(arena_server: Callable[..., Any],
                                                         start_bot: Callable[..., Any], store: Store) -> None:
    server, stub = arena_server(workers=1, concurrency=4, verify_bots=False)
    endpoints = [start_bot(spec).endpoint for spec in ("sample:heuristic", "sample:random", "sample:heuristic",
                                                       "sample:random")]
    names = [f"b{i:02d}" for i in range(20)]
    # b00 and b01 have one owner: they never sit at two tables of one deal
    _register(store, endpoints, names, {"b00": "same-person", "b01": "same-person"})
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=names, seats_per_match=4, rounds=4, config=SHORT_GAME,
        swiss=arena_pb2.SwissOptions(first_round="random")))
    assert (t.format, t.rounds, t.rounds_paired, t.matches_total, t.first_round) == ("swiss", 4, 1, 20, "random")
    assert t.formula.startswith("Swiss: 4 rounds x 5 tables of 4 (0 byes a round) = 20 matches")
    t, seen = _follow(stub, t.id, 5)
    assert (t.state, t.rounds_paired, t.matches_total, t.matches_done) == ("finished", 4, 20, 20), (
        f"failed {t.matches_failed}, cancelled {t.matches_cancelled}; workers: {list(stub.ListWorkers(arena_pb2.ListWorkersRequest()).workers)}")
    # a round was queued only once every match of the rounds before it was settled; the total is every round's
    for paired, total, settled in seen:
        assert total == 20 and 5 * (paired - 1) <= settled <= 5 * paired, (paired, total, settled)
    assert {p for p, _, _ in seen} >= {1, 4} or len(seen) < 4
    matches = _matches(stub, t.id)
    assert len(matches) == 20 and all(m.revealed for m in matches)
    by_round: dict[int, list[Any]] = {}
    for m in matches:
        by_round.setdefault(m.round, []).append(m)
    assert sorted(by_round) == [0, 1, 2, 3]
    for tables in by_round.values():  # every bot plays exactly once a round
        assert sorted(b for m in tables for b in m.seats) == sorted(f"{n}@1" for n in names)
    # no bot, and not b00 and b01 together, receive cards of one deal twice; the seed checks out
    assert verify_deals(t.id, t.seed_hex, t.seed_commitment, [
        {"match_id": m.match_id, "seats": list(m.seats), "seed": m.seed, "round": m.round, "deal": m.deal,
         "table": m.table, "attempt": m.attempt} for m in matches]) == []
    for m1, m2 in itertools.combinations(matches, 2):
        if (m1.round, m1.deal) == (m2.round, m2.deal):
            assert not ({"b00@1", "b01@1"} & set(m1.seats) and {"b00@1", "b01@1"} & set(m2.seats)
                        and set(m1.seats) != set(m2.seats))
    # the first two rounds seat no pair twice
    met = Counter(pair for m in by_round[0] + by_round[1] for pair in itertools.combinations(sorted(m.seats), 2))
    assert max(met.values()) == 1
    standings = stub.GetStandings(arena_pb2.GetStandingsRequest(id=t.id))
    assert standings.order.startswith("points, then opponents' mean points")
    entries = list(standings.entries)
    assert len(entries) == 20 and all(e.matches == 4 and e.HasField("tiebreak") and e.byes == 0 for e in entries)
    assert sum(e.points for e in entries) == 20 * 6  # 6 pairwise points a 4-seat table
    assert [(e.points, e.tiebreak) for e in entries] == sorted(((e.points, e.tiebreak) for e in entries),
                                                                reverse=True)
    _standings_are_read_once_per_stored_result(store, t.id, [(e.bot, e.points) for e in entries])


def _standings_are_read_once_per_stored_result(store: Store, tid: str, shown: list[tuple[str, float]]) -> None:
    """A Swiss's standings read its results once per count of stored results (GetStandings is public), and not
    when a result was stored after the tournament was read."""
    reads = []

    class Counting:
        def __getattr__(self, name: str) -> Any:
            return getattr(store, name)

        def list_matches(self, **kwargs: Any) -> list[dict[str, Any]]:
            reads.append(kwargs)
            return store.list_matches(**kwargs)

    fmt, info = Swiss(), store.get_tournament(tid)
    assert info is not None
    lines = standings(store.tournament_tally(info.game, tid), {}, 1500.0)
    first = fmt.standings(Counting(), info, lines)  # type: ignore[arg-type]
    assert first is not None and [(x.bot, x.points) for x in first[0]] == shown
    assert fmt.standings(Counting(), info, lines) == first and len(reads) == 1  # type: ignore[arg-type]
    behind = replace(info, matches_done=info.matches_done - 1)  # a result stored since it was read
    for _ in range(2):
        assert fmt.standings(Counting(), behind, lines) == first  # type: ignore[arg-type]
    assert len(reads) == 3


def test_swiss_byes_are_spread_and_counted(arena_server: Callable[..., Any], start_bot: Callable[..., Any],
                                           store: Store) -> None:
    server, stub = arena_server(workers=1, concurrency=2, verify_bots=False)
    names = [f"s{i}" for i in range(6)]
    _register(store, [start_bot("sample:random").endpoint], names)
    # 6 bots at 4 seats: 1 table and 2 byes a round; over 3 rounds each bot sits out once
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=names, seats_per_match=4, rounds=3, config=SHORT_GAME, swiss=arena_pb2.SwissOptions()))
    assert (t.first_round, len(t.byes), t.matches_total) == ("rating", 2, 3)
    t, _ = _follow(stub, t.id, 1)
    assert t.state == "finished" and t.matches_done == 3
    assert sorted(b.bot for b in t.byes) == sorted(f"{n}@1" for n in names)
    assert sorted(b.round for b in t.byes) == [0, 0, 1, 1, 2, 2]
    for m in _matches(stub, t.id):  # a bot with a bye in a round is not at that round's table
        assert not {b.bot for b in t.byes if b.round == m.round} & set(m.seats)
    entries = list(stub.GetStandings(arena_pb2.GetStandingsRequest(id=t.id)).entries)
    assert all(e.byes == 1 and e.matches == 2 for e in entries)
    assert sum(e.points for e in entries) == 3 * 6 + 6 * 1.5  # 3 tables of 6 points, 6 byes of (k-1)/2


def test_swiss_requests_that_cannot_work_are_refused(arena_server: Callable[..., Any], start_bot: Callable[..., Any],
                                                     store: Store) -> None:
    server, stub = arena_server(workers=0, verify_bots=False)
    names = [f"r{i}" for i in range(5)]
    _register(store, [start_bot("sample:random").endpoint], names)

    def create(**fields: Any) -> Any:
        return stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=names, **fields))

    for fields, words in (
            ({"deals": "rotate", "swiss": arena_pb2.SwissOptions()}, "not rotate"),
            ({"swiss": arena_pb2.SwissOptions(first_round="elo")}, "unknown first_round"),
            ({"until_separated": True, "swiss": arena_pb2.SwissOptions()}, "older form of the request"),
            ({"max_matches": 5}, "set until_separated too")):
        code, details = rpc_error(lambda: create(**fields))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and words in details, (fields, details)
    dry = create(swiss=arena_pb2.SwissOptions(), seats_per_match=2, dry_run=True)  # 0 rounds: ceil(log2 5) + 2
    assert (dry.id, dry.state, dry.format, dry.rounds, dry.matches_total) == ("", "planned", "swiss", 5, 10)
    assert store.list_tournaments() == []


def test_swiss_through_the_cli(arena_server: Callable[..., Any], start_bot: Callable[..., Any],
                               store: Store) -> None:
    server, _ = arena_server(workers=1, concurrency=2, verify_bots=False)
    names = [f"c{i}" for i in range(5)]
    _register(store, [start_bot("sample:random").endpoint], names)
    address = ["--server", f"127.0.0.1:{server.port}"]
    arena = ["--admin-token", server.admin_token, "tournament", "create", "--bots", ",".join(names), "--seats", "2",
             "--limit", "20", *address]
    dry = CliRunner().invoke(cli, [*arena, "--format", "swiss", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "Swiss: 5 rounds x 2 tables of 2 (1 bye a round) = 10 matches" in " ".join(dry.output.split())
    assert dry.output.startswith("dry run: 10 matches in 5 rounds, round 1 on 2 deals (5 bots, 2 seats"), dry.output
    wrong = CliRunner().invoke(cli, [*arena, "--first-round", "random"])
    assert wrong.exit_code == 2 and "--first-round orders round 1 of a Swiss" in wrong.output
    made = CliRunner().invoke(cli, [*arena, "--format", "swiss", "--rounds", "3", "--first-round", "random",
                                    "--wait", "--json"])
    assert made.exit_code == 0, made.output
    data = json.loads(made.stdout)
    assert (data["format"], data["state"], data["rounds_paired"], data["matches_done"]) == ("swiss", "finished", 3, 6)
    assert len(data["byes"]) == 3 and len({b["bot"] for b in data["byes"]}) == 3  # 3 byes, 3 different bots
    status = CliRunner().invoke(cli, ["tournament", "status", data["id"], *address])
    text = " ".join(status.output.split())
    assert status.exit_code == 0 and "round 3 of 3 paired (round 1 ordered by random)" in text, text
    assert "tiebreak" in text and "order: points, then opponents' mean points" in text
    queued = CliRunner().invoke(cli, [*arena, "--format", "swiss", "--no-wait"])  # the default: 5 rounds at 5 bots
    line = " ".join(queued.output.split())
    assert queued.exit_code == 0 and "= 10 matches, on 2 unique deals so far; round 1 of 5 paired" in line, line
    assert "; each later round is paired and queued once the previous one is settled;" in line, line
    running = CliRunner().invoke(cli, ["tournament", "status", line.split(":")[0].split()[1], *address])
    text = " ".join(running.output.split())  # its workers may have paired a later round meanwhile, or finished
    assert re.search(r"\b\d+/10 matches, round [1-4] of 5 paired so far", text) or "finished" in text, text
    CliRunner().invoke(cli, ["--admin-token", server.admin_token, "tournament", "cancel", line.split(":")[0].split()[1],
                             *address])


def test_a_swiss_shows_its_progress_out_of_every_rounds_matches(arena_server: Callable[..., Any],
                                                                start_bot: Callable[..., Any], store: Store) -> None:
    """5 bots at 2 seats, 5 rounds: 2 tables a round, 10 matches in all. With no worker only round 1 (2 matches) is
    queued, and every view counts out of 10 (not 2) while saying that round 1 of 5 is paired; once cancelled, the
    total is the 2 matches it had queued. The stored total stays the matches queued (the controller's counter)."""
    from starlette.testclient import TestClient

    from arena.web.app import WebOptions, create_app

    server, stub = arena_server(workers=0, verify_bots=False)
    names = [f"p{i}" for i in range(5)]
    _register(store, [start_bot("sample:random").endpoint], names)
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=names, seats_per_match=2, rounds=5, config=SHORT_GAME, swiss=arena_pb2.SwissOptions()))
    assert (t.state, t.rounds_paired, t.matches_total, t.matches_done) == ("running", 1, 10, 0)
    got = stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))
    listed = stub.ListTournaments(arena_pb2.ListTournamentsRequest()).tournaments
    assert (got.matches_total, [x.matches_total for x in listed if x.id == t.id]) == (10, [10])
    stored = store.get_tournament(t.id)
    assert stored is not None and stored.matches_total == 2  # round 1's matches, all that is queued
    address = ["--server", f"127.0.0.1:{server.port}"]
    table = CliRunner().invoke(cli, ["tournament", "list", *address], terminal_width=200)
    assert table.exit_code == 0 and re.search(rf"{t.id}\s.*\s0/10\s", table.output), table.output
    status = CliRunner().invoke(cli, ["tournament", "status", t.id, *address], terminal_width=200)
    text = " ".join(status.output.split())
    assert status.exit_code == 0 and "0/10 matches, round 1 of 5 paired so far" in text, text
    with TestClient(create_app(WebOptions(server=f"127.0.0.1:{server.port}", docs=None))) as web:
        row = web.get("/tournaments").text.split(f">{t.id}<", 1)[1].split("</tr>", 1)[0]
        assert "<td>0/10</td>" in row, row
        page = web.get(f"/tournaments/{t.id}").text
    assert '<span id="done">0</span> of <span id="total">10</span> matches played' in page
    assert '<progress max="10" value="0">' in page and "1 of 5 rounds paired" in page
    cancelled = stub.CancelTournament(arena_pb2.CancelTournamentRequest(id=t.id))
    assert (cancelled.state, cancelled.matches_total, cancelled.matches_cancelled) == ("cancelled", 2, 2)
