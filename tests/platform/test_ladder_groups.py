"""A ladder of bots that never met, end to end: two groups of bots in two separate tournaments (real redis-server,
a real ArenaServer with an embedded worker, real bot processes over gRPC). Both ladders find the two connected
groups, list and rank them apart, fit each on its own, say that their ratings are not comparable, and give every
bot a finite margin or "too few matches" (never infinity)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

from click.testing import CliRunner
from platform_helpers import WAIT_S

from arena.cli import cli
from arena.ratings.design import RatedMatch
from arena.ratings.ladder import fit_for_ladder
from arena.store import Store
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

SHORT_GAME = bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=30))
DEMO = ["demo-heuristic", "demo-random", "demo-random-2"]  # 6 matches each: margins
NEW = ["new-x", "new-y", "new-z"]  # 3 matches each among themselves: too few matches


def _finish(stub: arena_pb2_grpc.ArenaStub, names: list[str], rounds: int) -> Any:
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=names, seats_per_match=3,
                                                                rounds=rounds, config=SHORT_GAME))
    deadline = time.monotonic() + WAIT_S
    while (t := stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))).state == "running":
        assert time.monotonic() < deadline, f"tournament {t.id} did not finish: {t}"
        time.sleep(0.05)
    assert (t.state, t.matches_done, t.faults) == ("finished", rounds, 0)
    return t


def _check_groups(ladder: Any) -> None:
    entries = list(ladder.entries)
    assert ladder.groups == 2
    assert [(e.bot, e.group) for e in entries[:3]] == [(e.bot, 1) for e in entries[:3]]
    assert sorted(e.bot for e in entries[:3]) == sorted(f"{n}@1" for n in DEMO)  # equal sizes: smallest id first
    assert sorted(e.bot for e in entries[3:]) == sorted(f"{n}@1" for n in NEW) and {e.group for e in entries[3:]} == {2}
    for part in (entries[:3], entries[3:]):  # ranked within each group (ties share a rank)
        assert min(e.rank for e in part) == 1 and max(e.rank for e in part) <= 3
    assert not entries[2].HasField("los_next") and not entries[5].HasField("los_next")  # never across groups
    for e in entries[:3]:
        assert e.matches == 6 and not e.too_few_matches and e.HasField("margin")
        assert math.isfinite(e.margin) and 0 < e.margin and e.low < e.rating < e.high
    for e in entries[3:]:
        assert e.matches == 3 and e.too_few_matches and not e.HasField("margin") and not e.HasField("low")


def test_two_groups_in_separate_tournaments_are_rated_apart(arena_server: Callable[..., Any],
                                                            start_bot: Callable[..., Any], store: Store,
                                                            tmp_path: Any) -> None:
    server, stub = arena_server(workers=1, concurrency=3, verify_bots=False)
    endpoints = [start_bot("sample:heuristic").endpoint, start_bot("sample:random").endpoint]
    for k, name in enumerate(DEMO + NEW):
        store.register_bot("take5", name, endpoints[k % 2], version="1")
    _finish(stub, DEMO, 6)
    _finish(stub, NEW, 3)

    elo = stub.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="elo"))
    assert elo.results_counted == elo.results_stored == 9
    _check_groups(elo)
    fit = stub.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="fit"))
    assert fit.results_counted == 9
    _check_groups(fit)
    for part in (fit.entries[:3], fit.entries[3:]):  # each group fitted on its own: mean 1500 in each
        assert abs(sum(e.rating for e in part) / 3 - 1500.0) < 1e-6

    # the same stored results fitted as one set: the gap between the groups is unidentified and every margin
    # takes it in; the fit per group does not
    stored = [RatedMatch.from_stored(store.get_result("take5", m.match_id))
              for m in stub.ListMatches(arena_pb2.ListMatchesRequest(limit=100)).matches]
    joint = fit_for_ladder(stored, replicates=50)
    for e in fit.entries[:3]:
        assert joint.margin[e.bot] > e.margin

    env = {"ARENA_DATA_DIR": str(tmp_path)}
    for method in ("elo", "fit"):
        table = CliRunner(env=env).invoke(cli, ["ladder", "--method", method, "--server",
                                                f"127.0.0.1:{server.port}"])
        assert table.exit_code == 0, table.output
        out = table.output
        assert "group 1 of 2" in out and "group 2 of 2" in out and "not comparable" in out, out
        assert "too few matches" in out and "inf" not in out, out
        assert out.index("demo-heuristic") < out.index("group 2 of 2") < out.index("new-x"), out
    data = json.loads(CliRunner(env=env).invoke(
        cli, ["ladder", "--method", "fit", "--json", "--server", f"127.0.0.1:{server.port}"]).output)
    assert data["groups"] == 2 and [e["group"] for e in data["entries"]] == [1, 1, 1, 2, 2, 2]
    assert [e["too_few_matches"] for e in data["entries"]] == [False] * 3 + [True] * 3
    assert all(e["margin"] is None for e in data["entries"][3:])
    assert not any(e["removed"] for e in data["entries"])
    assert "a tournament with bots of two groups joins them" in " ".join(table.output.split())

    # the demo's bots removed (as `make demo` does when it ends): still on the ladder, marked, and the note no
    # longer tells a reader to join a group no tournament can seat (a newcomer review: "not registered for take5")
    for name in DEMO:
        assert store.remove_bot("take5", name) == [f"{name}@1"]
    reply = stub.GetLadder(arena_pb2.GetLadderRequest(game="take5", method="elo"))
    assert [(e.bot, e.removed) for e in reply.entries][:3] == [(e.bot, True) for e in reply.entries[:3]]
    assert not any(e.removed for e in reply.entries[3:])
    table = CliRunner(env=env).invoke(cli, ["ladder", "--server", f"127.0.0.1:{server.port}"])
    out = " ".join(table.output.split())
    assert table.exit_code == 0 and "demo-heuristic@1 (removed)" in out and "new-x@1 (removed)" not in out, out
    assert "group 1 holds only removed bots" in out and "joins them" not in out, out
