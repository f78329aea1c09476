"""`arena tournament create --until-separated` end to end: a real redis-server, a real ArenaServer with an embedded
worker, real bot processes over gRPC. Bots of clearly different strength are separated after the rounds the
controller adds; equal bots are stopped by the cap. Either way the seed stays secret until the end, every added
round brings new deals, and no bot receives cards of one deal twice."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from click.testing import CliRunner
from platform_helpers import WAIT_S, rpc_error

from arena.cli import cli
from arena.tournaments.round_robin import MAX_MATCHES
from arena.tournaments.verify import verify_deals
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

WORST_BOT = str(Path(__file__).resolve().parent.parent / "bots" / "worst_bot.py")


def _follow(stub: arena_pb2_grpc.ArenaStub, tid: str, wait_s: float = WAIT_S) -> tuple[Any, list[Any]]:
    """Poll GetTournament until the tournament is no longer running (at most ``wait_s``); returns the last answer
    and every answer seen while it ran. While it runs its seed and its matches' deals are never shown."""
    seen = []
    deadline = time.monotonic() + wait_s
    while (t := stub.GetTournament(arena_pb2.GetTournamentRequest(id=tid))).state == "running":
        assert t.seed_hex == "", "the seed was shown while the tournament runs"
        seen.append(t)
        matches = stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, limit=1000)).matches
        if stub.GetTournament(arena_pb2.GetTournamentRequest(id=tid)).state == "running":  # read while running
            assert not any(m.revealed or m.seed for m in matches)
        assert time.monotonic() < deadline, f"tournament {tid} did not stop: {t}"
        time.sleep(0.02)
    return t, seen


def _played(stub: arena_pb2_grpc.ArenaStub, tid: str) -> list[Any]:
    return list(stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, limit=1000)).matches)


def _check_deals(t: Any, matches: list[Any], rounds: int, deals_per_round: int) -> None:
    """Every round 0..rounds-1 was played on its own deals; no bot received cards of one deal twice; the revealed
    seed checks against the commitment and every match's deal seed."""
    assert t.seed_hex != "" and verify_deals(t.id, t.seed_hex, t.seed_commitment, [
        {"match_id": m.match_id, "seats": list(m.seats), "seed": m.seed, "round": m.round, "deal": m.deal,
         "table": m.table, "attempt": m.attempt} for m in matches]) == []
    assert {(m.round, m.deal) for m in matches} == {(r, d) for r in range(rounds) for d in range(deals_per_round)}
    seen: dict[str, list[int]] = {}
    for m in matches:
        for bot in m.seats:
            seen.setdefault(bot, []).append(m.seed)
    assert all(len(seeds) == len(set(seeds)) for seeds in seen.values()), seen
    assert len({m.seed for m in matches}) == rounds * deals_per_round  # a new deal for every (round, deal)


def test_bots_of_clearly_different_strength_are_separated_after_added_rounds(
        arena_server: Callable[..., Any], start_bot: Callable[..., Any]) -> None:
    server, stub = arena_server(workers=1, concurrency=2)
    for name, spec, args in (("strong", "sample:heuristic", []), ("middle", "sample:random", ["--seed", "3"]),
                             ("weak", WORST_BOT, [])):
        bot = start_bot(spec, extra_args=[*args, "--name", name])
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint, game="take5"))
    # 3 bots at 2 seats: 3 matches a round, each on a deal of its own; 200 bullheads make a long game, which the
    # stronger bot wins (1 upset in several hundred games). A perfect record says little about how far apart the
    # bots are (the fit's intervals are floored by the information sd, arena.ratings.fit), so the order is
    # resolved only after some 40..50 wins per pair (it took 4 when a collapsed bootstrap gave +/- 10 Elo)
    long_game = bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=200))
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["strong", "middle", "weak"], seats_per_match=2, rounds=1, config=long_game,
        until_separated=True, max_matches=300))
    assert (t.until_separated, t.max_matches, t.rounds, t.matches_total, t.seed_hex) == (True, 300, 1, 3, "")
    assert t.formula == ("C(3,2) subsets x 1 round = 3, on 3 unique deals (every table its own deal); "
                         "rounds are added until the bots are separated, at most 300 matches")
    t, seen = _follow(stub, t.id, 4 * WAIT_S)  # some 150 long games
    # rounds were added one at a time (never all at once), each once its predecessor was settled
    assert {s.rounds for s in seen} >= {2, 3} and all(s.matches_total == 3 * s.rounds for s in seen)
    assert any(s.last_check.startswith("not separated after 1 round, 3 matches: ") for s in seen)
    assert (t.state, t.stopped_by) == ("finished", "separated")
    # each round 3 more matches; at least 4 rounds (10 deals) in any case
    assert 4 <= t.rounds <= 100 and t.matches_total == t.matches_done == 3 * t.rounds
    assert t.stop_reason == (f"separated after {t.rounds} rounds, {t.matches_total} matches: strong@1.0 > "
                             f"middle@1.0 > weak@1.0")
    assert t.last_check == t.stop_reason and t.deal_count == 3 * t.rounds
    _check_deals(t, _played(stub, t.id), t.rounds, 3)

    status = CliRunner().invoke(cli, ["tournament", "status", t.id, "--server", f"127.0.0.1:{server.port}"])
    assert status.exit_code == 0, status.output
    text = " ".join(status.output.split())
    assert f"stopped │ separated after {t.rounds} rounds, {t.matches_total} matches: strong@1.0 > middle@1.0" in text
    assert f"rounds │ {t.rounds} │" in text and "at most 300 matches" in text and "last check" not in text
    as_json = CliRunner().invoke(cli, ["tournament", "status", t.id, "--json", "--server",
                                       f"127.0.0.1:{server.port}"])
    data = json.loads(as_json.stdout)
    assert (data["stopped_by"], data["rounds"], data["max_matches"]) == ("separated", t.rounds, 300)


def test_equal_random_bots_are_stopped_by_the_cap(arena_server: Callable[..., Any],
                                                  start_bot: Callable[..., Any]) -> None:
    server, stub = arena_server(workers=1, concurrency=2)
    names = ["eq-a", "eq-b", "eq-c", "eq-d"]
    for i, name in enumerate(names):
        bot = start_bot("sample:random", extra_args=["--seed", str(i), "--name", name])
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint, game="take5"))
    request = arena_pb2.CreateTournamentRequest(game="take5", bots=names, seats_per_match=2, max_matches=9)
    code, details = rpc_error(lambda: stub.CreateTournament(request))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and details == (
        "max_matches (9) caps a tournament run until its bots are separated; set until_separated too, or leave "
        "max_matches out")
    request.until_separated, request.max_matches = True, MAX_MATCHES + 1
    assert rpc_error(lambda: stub.CreateTournament(request)) == (
        grpc.StatusCode.INVALID_ARGUMENT, f"max_matches must be at most {MAX_MATCHES}, got {MAX_MATCHES + 1}")
    # through the CLI: 4 bots at 2 seats make 6 tables a round, 2 tables (disjoint pairs) per deal, 3 deals
    arena = ["--admin-token", server.admin_token, "tournament", "create", "--bots", ",".join(names), "--seats", "2",
             "--rounds", "2", "--limit", "20", "--until-separated", "--deals", "duplicate",
             "--server", f"127.0.0.1:{server.port}"]
    low = CliRunner().invoke(cli, [*arena, "--max-matches", "5"])
    assert low.exit_code == 1 and ("max_matches 5 is below the 12 matches of the first 2 rounds (6 a round): raise it "
                                   "to at least 12, or start with fewer rounds") in " ".join(low.output.split())
    alone = CliRunner().invoke(cli, [a for a in arena if a != "--until-separated"] + ["--max-matches", "28"])
    assert alone.exit_code == 2 and "--max-matches caps a tournament run --until-separated" in alone.output
    dry = CliRunner().invoke(cli, [*arena, "--max-matches", "28", "--dry-run"])
    assert dry.exit_code == 0 and ("until separated: the first 12 matches, then a round at a time up to 28 matches"
                                   in dry.output), dry.output
    planned = json.loads(CliRunner().invoke(cli, [*arena, "--max-matches", "28", "--dry-run", "--json"]).stdout)
    assert (planned["until_separated"], planned["max_matches"], planned["rounds"], planned["matches_total"],
            planned["deal_count"], planned["tables_per_deal"]) == (True, 28, 2, 12, 6, 2)
    by_format = [a for a in arena if a != "--until-separated"] + ["--format", "until-separated", "--max-matches", "28",
                                                                   "--dry-run", "--json"]
    assert json.loads(CliRunner().invoke(cli, by_format).stdout) == planned  # --format names it too (was a round robin)
    # --wait follows it through the rounds it adds until it stops: 4 rounds fit under the cap, a 5th would not
    made = CliRunner().invoke(cli, [*arena, "--max-matches", "28", "--wait"])
    assert made.exit_code == 0, made.output
    tid = made.output.split()[1].rstrip(":")
    t = stub.GetTournament(arena_pb2.GetTournamentRequest(id=tid))
    assert f"tournament {tid} finished: 24/24 matches, 0 faults" in made.output
    assert f"stopped: {t.stop_reason}" in " ".join(made.output.split())
    assert (t.state, t.stopped_by, t.rounds, t.matches_total, t.matches_done) == ("finished", "cap", 4, 24, 24)
    assert t.stop_reason.startswith("cap reached, not separated after 4 rounds, 24 matches (another round would "
                                    "make 30 > 28 matches): bots ")
    assert " overlap (LOS " in t.stop_reason
    _check_deals(t, _played(stub, t.id), 4, 3)
    out = CliRunner().invoke(cli, ["tournament", "verify", t.id, "--server", f"127.0.0.1:{server.port}"])
    assert out.exit_code == 0 and "no bot received a deal twice" in out.output, out.output
