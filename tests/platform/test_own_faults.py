"""While a tournament runs its match records are withheld, but a bot's owner sees why their bot faulted: GetMatch
signed with the owner token of a seat's NAME carries that seat's faults (``MatchDetail.own_faults``), and nobody
else's; `arena match show ID` prints them with --token or the token saved for the NAME. Real parts: redis-server,
bot processes over gRPC, a worker, the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from platform_helpers import SLOW_BOT, wait_until

from arena.cli import cli
from arena.cli.tokens import ARENA_KEY_PREFIX, ArenaRef, TokenStore
from arena_sdk.pb import arena_pb2, bot_pb2

HERE = Path(__file__).parent
ILLEGAL_BOT = str(HERE.parent / "bots" / "illegal_bot.py")
ONE_HAND = bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=1))


def _show(server: str, match_id: str, *args: str) -> dict[str, Any]:
    out = CliRunner().invoke(cli, ["match", "show", match_id, "--server", server, "--json", *args])
    assert out.exit_code == 0, out.output
    return dict(json.loads(out.stdout))


def test_an_owner_sees_their_bots_faults_in_a_withheld_match_and_nobody_elses(
        arena_server: Any, start_bot: Callable[..., Any], workers: Any, tmp_path: Path) -> None:
    server, stub = arena_server()
    address = f"127.0.0.1:{server.port}"
    tokens = {}
    for name, script, args in (("sneaky", ILLEGAL_BOT, ["--at", "0"]), ("sly", ILLEGAL_BOT, ["--at", "0"]),
                               ("calm-b", SLOW_BOT, ["--sleep", "0.03"]), ("calm-c", SLOW_BOT, ["--sleep", "0.03"])):
        bot = start_bot(script, extra_args=[*args, "--name", name])
        tokens[name] = stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint,
                                                                     game="take5")).owner_token
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=list(tokens), seats_per_match=2, rounds=3, config=ONE_HAND, deals="duplicate"))

    def both_illegal() -> Any:  # the match of sneaky against sly: both seats faulted
        return next((m for m in stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=t.id)).matches
                     if {b.split("@")[0] for b in m.seats} == {"sneaky", "sly"}), None)

    worker = workers.thread("faults-worker", concurrency=1)
    match = wait_until(both_illegal, "the match of the two illegal bots to be played")
    worker.stop()  # the rest stays queued: the tournament keeps running, its records withheld
    assert stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id)).state == "running"
    seat = next(i for i, bot in enumerate(match.seats) if bot.startswith("sneaky@"))
    other = "sly"
    assert match.faults[seat] >= 1

    empty_dir = ["--data-dir", str(tmp_path / "nobody")]
    anyone = _show(address, match.match_id, *empty_dir)
    assert anyone["record"] is None and "still running" in anyone["withheld"] and anyone["own_faults"] == []
    owner = _show(address, match.match_id, "--token", tokens["sneaky"], *empty_dir)
    assert owner["record"] is None and len(owner["own_faults"]) == match.faults[seat]
    fault = owner["own_faults"][0]
    assert (fault["seat"], fault["bot"], fault["kind"]) == (seat, match.seats[seat], "illegal")
    assert "legal cards: " in fault["detail"]  # the seat's own cards, for its owner only
    assert _show(address, match.match_id, "--token", tokens["calm-b"], *empty_dir)["own_faults"] == []  # no seat
    forged = CliRunner().invoke(cli, ["match", "show", match.match_id, "--server", address, "--token", "x" * 43])
    assert forged.exit_code == 1 and "wrong owner token" in forged.output and "illegal" not in forged.output

    theirs = _show(address, match.match_id, "--token", tokens[other], *empty_dir)["own_faults"]
    assert theirs and {f["seat"] for f in theirs} == {1 - seat}  # the other owner: its own seat only

    # the tokens saved when the NAMEs were registered from this machine are found without --token: each owner's
    arena = ArenaRef(ARENA_KEY_PREFIX + stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest()).arena_id, address)
    TokenStore(tmp_path / "mine").put(arena, "take5", "sneaky", tokens["sneaky"])
    saved = _show(address, match.match_id, "--data-dir", str(tmp_path / "mine"))
    assert saved["own_faults"] == owner["own_faults"]
    TokenStore(tmp_path / "mine").put(arena, "take5", other, tokens[other])
    both = _show(address, match.match_id, "--data-dir", str(tmp_path / "mine"))["own_faults"]
    assert sorted(map(str, both)) == sorted(map(str, owner["own_faults"] + theirs))
    text = CliRunner().invoke(cli, ["match", "show", match.match_id, "--server", address, "--data-dir",
                                    str(tmp_path / "mine")]).stdout
    assert f"fault of your bot {match.seats[seat]} (seat {seat}), hand 1 turn 1: illegal (" in text
