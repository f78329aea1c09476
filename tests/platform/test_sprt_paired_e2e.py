"""The paired SPRT with house bots and common random numbers (``arena sprt V1 V2 --house ...``) end to end: a real
redis-server, a real Arena server with workers, real bot processes over gRPC (V1 and V2 registered, the house bots
started by the worker). Each block replays one scenario: the same deal, the same house bots in the same seats and
the same seat seeds at both tables, V1 at seat s of one and V2 at seat s of the other."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner
from platform_helpers import HERE, wait_until

from arena.cli import cli
from arena.core.seeds import parse_seed_hex, seat_seed
from arena.ratings.score_sprt import block_score_outcome
from arena.ratings.sprt import block_outcome
from arena.server.app import ArenaServer
from arena.store import Store
from arena.tournaments.verify import verify_deals
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

SPRT_BOT = str(HERE / "bots" / "sprt_bot.py")


@pytest.mark.parametrize(("house", "statistic"), [(["heuristic", "random"], ""),
                                                 (["heuristic", "heuristic"], "points")])
def test_paired_sprt_with_house_bots_decides_and_replays_each_scenario(
        arena_server: Callable[..., tuple[ArenaServer, Any]], start_bot: Callable[..., Any], house: list[str],
        statistic: str, store: Store) -> None:
    weak = start_bot(SPRT_BOT, extra_args=["--bot-version", "1", "--play", "random"])
    strong = start_bot(SPRT_BOT, extra_args=["--bot-version", "2", "--play", "heuristic"])
    server, stub = arena_server(workers=1, concurrency=4)
    stub_: arena_pb2_grpc.ArenaStub = stub
    first = stub_.RegisterBot(arena_pb2.RegisterBotRequest(name="sprtbot", endpoint=weak.endpoint, game="take5"))
    stub_.RegisterBot(arena_pb2.RegisterBotRequest(name="sprtbot", endpoint=strong.endpoint, game="take5",
                                                   owner_token=first.owner_token))
    address = f"127.0.0.1:{server.port}"
    bad = CliRunner().invoke(cli, ["--admin-token", server.admin_token, "sprt", "sprtbot@1", "sprtbot@2",
                                   "--house", "grandmaster", "--server", address], prog_name="arena")
    assert bad.exit_code != 0 and "not a house bot of take5" in bad.output and "house:heuristic" in bad.output
    store.register_bot("take5", "otherbot", strong.endpoint, version="1")  # another owner's bot
    other = CliRunner().invoke(cli, ["--admin-token", server.admin_token, "sprt", "sprtbot@1", "otherbot@1",
                                     "--house", "heuristic", "--server", address], prog_name="arena")
    assert other.exit_code != 0 and "different owners" in other.output  # it would get sprtbot's very hands
    result = CliRunner().invoke(cli, [
        "--admin-token", server.admin_token, "sprt", "sprtbot@1", "sprtbot@2", "--house", ",".join(house),
        "--elo0", "0", "--elo1", "100", "--max-blocks", "80", "--window", "4", "--deadline-ms", "3000",
        "--server", address, "--json", *(["--statistic", statistic] if statistic else [])], prog_name="arena")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["statistic"] == (statistic or "score")  # the relative score is the paired test's default
    seated = [f"house:{name}" for name in house]
    assert out["verdict"] == "H1" and out["house"] == seated and out["seats"] == 3
    assert out["ladder_counted"] is False and "do not count on the public ladder" in out["ladder_note"]
    tid = out["id"]
    s = wait_until(lambda: (x := stub_.GetSprt(arena_pb2.GetSprtRequest(id=tid))).tournament.seed_hex and x,
                   "the paired SPRT to end")
    secret = parse_seed_hex(s.tournament.seed_hex)
    matches = list(stub_.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, limit=1000)).matches)
    by_block: dict[int, dict[int, Any]] = {}
    for m in matches:
        index = int(m.match_id.rsplit("-", 1)[1])
        by_block.setdefault(index // 2, {})[index % 2] = m
    pairs = [t for t in by_block.values() if len(t) == 2 and t[0].attempt == t[1].attempt]
    assert pairs
    for tables in pairs:
        t0, t1 = tables[0], tables[1]
        seat = list(t0.seats).index("sprtbot@1")
        assert list(t1.seats)[seat] == "sprtbot@2" and t0.seed == t1.seed  # same deal
        assert [n for i, n in enumerate(t0.seats) if i != seat] == seated
        assert [n for i, n in enumerate(t1.seats) if i != seat] == seated
        records = [json.loads(stub_.GetMatch(arena_pb2.GetMatchRequest(match_id=t.match_id)).record_json)
                   for t in (t0, t1)]
        want = [seat_seed(secret, tid, 0, t0.deal, t0.attempt, k) for k in range(3)]
        assert records[0]["seat_seeds"] == records[1]["seat_seeds"] == want  # common random numbers
    # V1's seats rotate over the blocks; the ladder does not show the test's bots or the house bots
    assert len({list(t[0].seats).index("sprtbot@1") for t in by_block.values() if 0 in t}) > 1
    ladder = {e.bot for e in stub_.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries}
    assert not any(b.startswith("house:") for b in ladder)
    entries = [{"match_id": m.match_id, "seed": m.seed, "round": m.round, "deal": m.deal, "table": m.table,
                "attempt": m.attempt, "seats": list(m.seats),
                "record_seat_seeds": json.loads(stub_.GetMatch(arena_pb2.GetMatchRequest(
                    match_id=m.match_id)).record_json)["seat_seeds"]} for m in matches]
    assert verify_deals(tid, s.tournament.seed_hex, s.tournament.seed_commitment, entries) == []
    entries[0]["record_seat_seeds"] = [x + 1 for x in entries[0]["record_seat_seeds"]]  # a doctored seat seed
    problems = verify_deals(tid, s.tournament.seed_hex, s.tournament.seed_commitment, entries)
    assert len(problems) == 3 and all("seat seed" in p for p in problems)
    verified = CliRunner().invoke(cli, ["tournament", "verify", tid, "--records", "--json", "--server", address],
                                  prog_name="arena")
    report = json.loads(verified.stdout)
    assert verified.exit_code == 0 and report["ok"] and report["twice_by_design"] == [], verified.output
    assert report["note"].startswith(f"note: {tid} is a paired SPRT: sprtbot@1 (V1) and sprtbot@2 (V2)")
    shown = CliRunner().invoke(cli, ["sprt", "show", tid, "--server", address], prog_name="arena")
    assert shown.exit_code == 0 and f"house bots {', '.join(seated)} (paired" in shown.stdout
    # the counted outcomes are those of the stored tables: the relative-score difference at V's seat, or its points
    recomputed = Counter(
        block_score_outcome(list(t[0].scores), list(t[1].scores), list(t[0].seats).index("sprtbot@1"), True)
        if out["statistic"] == "score" else
        block_outcome(list(t[0].ranks), list(t[1].ranks), list(t[0].seats).index("sprtbot@1")) for t in pairs)
    if out["statistic"] == "score":
        counted = Counter({c.outcome: c.blocks for c in s.score_counts})
        assert sum(counted.values()) == s.blocks and not any(s.counts)
        assert "nElo" in shown.stdout and "mean block outcome" in shown.stdout
        assert s.mean_outcome == pytest.approx(sum(v * n for v, n in counted.items()) / s.blocks)
    else:
        m = 2 * (s.seats - 1)
        counted = Counter({h - m: n for h, n in enumerate(s.counts) if n})
        assert sum(counted.values()) == s.blocks and not s.score_counts and "nElo" not in shown.stdout
    assert not counted - recomputed, (counted, recomputed)  # every counted outcome is one a block's tables show
    standings = stub_.GetStandings(arena_pb2.GetStandingsRequest(id=tid))
    assert {e.bot for e in standings.entries} >= {"sprtbot@1", "sprtbot@2"}
    # the versions under test first, ranked among themselves; the house bots (points over several seats) after
    order = [e.bot for e in standings.entries]
    assert set(order[:2]) == {"sprtbot@1", "sprtbot@2"} and all(b.startswith("house:") for b in order[2:])
    assert {e.rank for e in standings.entries[:2]} <= {1, 2} and all(e.rank >= 3 for e in standings.entries[2:])
    assert "the versions under test first" in standings.order
    if not statistic:  # the other way round, V2 the random version: not better (H0), whatever the first blocks
        worse = CliRunner().invoke(cli, [
            "--admin-token", server.admin_token, "sprt", "sprtbot@2", "sprtbot@1", "--house", ",".join(house),
            "--elo0", "0", "--elo1", "100", "--max-blocks", "80", "--window", "4", "--deadline-ms", "3000",
            "--server", address, "--json"], prog_name="arena")
        assert worse.exit_code == 0, worse.output
        assert json.loads(worse.stdout)["verdict"] == "H0", worse.stdout
        # without --elo1 a paired test on the relative score looks for 20 nElo and says what that will take
        started = CliRunner().invoke(cli, [
            "--admin-token", server.admin_token, "sprt", "sprtbot@1", "sprtbot@2", "--house", ",".join(house),
            "--max-blocks", "1000", "--no-wait", "--server", address], prog_name="arena")
        assert started.exit_code == 0, started.output
        assert "H1 nElo 20," in started.stdout and "expect about 800 blocks (1,600 matches)" in started.stdout
        assert "close to --max-blocks 1,000" in started.stdout, started.stdout  # 800 > 1,000 / 2
        default_id = started.stdout.split(":", 1)[0].removeprefix("SPRT ")
        assert stub_.CancelTournament(arena_pb2.CancelTournamentRequest(id=default_id)).state == "cancelled"
