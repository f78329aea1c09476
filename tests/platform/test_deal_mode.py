"""The organiser's deal choice through a real Arena server on a real redis-server: unique deals by default while
registration is open, duplicate deals once the organiser has closed it (the REGISTRATION hash's mode), the CLI's
--deals for tournaments and SPRTs, and the SPRT ladder rule with real bot processes and a real worker: one owner's
versions on duplicate deals are stored and shown but stay off the public ladder, on unique deals they count.

The attack of open registration is measured on the jobs the arena queues: 8 bots at 4 seats, each name its own
owner (one person who made a second owner holds bot0 and bot1): how often bot1 sits at another table of a deal
bot0 is playing."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from click.testing import CliRunner
from platform_helpers import HERE, wait_until

from arena.cli import cli
from arena.core.specs import MatchSpec
from arena.server.app import ArenaServer
from arena.store import Store
from arena.store.keys import REGISTRATION
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

SPRT_BOT = str(HERE / "bots" / "sprt_bot.py")
ONE_HAND = bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=1))  # a 2-seat match ends after one hand
BOTS = [f"p{i}" for i in range(8)]


def _queued(store: Store, tournament_id: str) -> list[MatchSpec]:
    specs = [j.spec for j in store.read_jobs("deal-mode-test", 1000, 0) if j.spec is not None]
    return [s for s in specs if s.tournament == tournament_id]


def _partner_leaks(specs: list[MatchSpec], bot: str, partner: str) -> tuple[int, int]:
    """(matches of ``bot`` whose deal is played at another table holding ``partner``, matches of ``bot``)."""
    tables: dict[tuple[int, int], list[MatchSpec]] = defaultdict(list)
    for s in specs:
        tables[(s.round, s.deal)].append(s)
    mine = [s for s in specs if bot in s.seats]
    leaks = sum(1 for s in mine if any(partner in t.seats for t in tables[(s.round, s.deal)] if t is not s))
    return leaks, len(mine)


def test_open_registration_deals_unique_by_default_and_closed_registration_duplicate(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], store: Store) -> None:
    _, stub = arena_server(verify_bots=False)
    for name in BOTS:  # every name registered without a token: 8 owners
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint="127.0.0.1:1", game="take5"))
    request = arena_pb2.CreateTournamentRequest(game="take5", bots=BOTS, seats_per_match=4)
    t = stub.CreateTournament(request)
    assert (t.deals, t.matches_total, t.deal_count, t.tables_per_deal) == ("unique", 70, 70, 1)
    assert t.formula == "C(8,4) subsets x 1 round = 70, on 70 unique deals (every table its own deal)"
    unique = _partner_leaks(_queued(store, t.id), "p0@0", "p1@0")
    assert unique == (0, 35)
    # the organiser closes registration: owners are its accounts, and duplicate deals become the default
    store.client.hset(REGISTRATION, "mode", "closed")
    closed = stub.CreateTournament(request)
    assert (closed.deals, closed.matches_total, closed.deal_count, closed.tables_per_deal) == ("duplicate", 70, 35, 2)
    duplicate = _partner_leaks(_queued(store, closed.id), "p0@0", "p1@0")
    assert duplicate == (20, 35)
    print(f"attack, 8 bots at 4 seats, partner at another table of the same deal: duplicate {duplicate[0]}/"
          f"{duplicate[1]} = {duplicate[0] / duplicate[1]:.0%} of bot0's matches, unique {unique[0]}/{unique[1]}")
    # an explicit choice wins in either mode
    chosen = stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=BOTS, seats_per_match=4,
                                                                     deals="unique", dry_run=True))
    assert (chosen.deals, chosen.deal_count) == ("unique", 70)
    sprt = stub.CreateSprt(arena_pb2.CreateSprtRequest(game="take5", v1="p0", v2="p1", field=BOTS[2:], seats=4))
    assert sprt.tournament.deals == "duplicate" and sprt.tournament.tables_per_deal == 2
    assert sprt.ladder_counted  # V1 and V2 of two owners: no owner at both tables of a deal
    store.client.hdel(REGISTRATION, "mode")
    opened = stub.CreateSprt(arena_pb2.CreateSprtRequest(game="take5", v1="p0", v2="p1", field=BOTS[2:], seats=4))
    assert opened.tournament.deals == "unique" and opened.tournament.tables_per_deal == 1 and opened.ladder_counted
    assert "unique deals" in opened.tournament.formula


def test_the_cli_chooses_the_deals_of_a_tournament_and_an_sprt(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], store: Store) -> None:
    server, stub = arena_server(verify_bots=False)
    for name in BOTS[:4]:
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint="127.0.0.1:1", game="take5"))
    for version in ("1", "2"):
        store.register_bot("take5", "me", "127.0.0.1:1", version=version)
    base = ["--admin-token", server.admin_token]
    address = ["--server", f"127.0.0.1:{server.port}"]
    runner = CliRunner()

    def create(*extra: str) -> str:
        out = runner.invoke(cli, [*base, "tournament", "create", "--bots", ",".join(BOTS[:4]), "--seats", "2",
                                  "--dry-run", *extra, *address], prog_name="arena")
        assert out.exit_code == 0, out.output
        return out.stdout

    assert "dry run: 6 matches on 6 deals (4 bots, 2 seats, 1 round, unique deals)" in create()
    duplicate = create("--deals", "duplicate")
    assert "dry run: 6 matches on 3 deals (4 bots, 2 seats, 1 round, duplicate deals)" in duplicate
    assert "on 3 deals of at most T = max(1, min(k, B // k)) = 2 tables" in duplicate
    assert "6 unique deals (every table its own deal)" in create("--deals", "unique")
    bad = runner.invoke(cli, [*base, "tournament", "create", "--bots", "p0,p1", "--deals", "shuffle", *address])
    assert bad.exit_code == 2 and "'shuffle' is not one of 'duplicate', 'unique', 'rotate'" in bad.output
    helped = " ".join(runner.invoke(cli, ["tournament", "create", "--help"]).output.split())
    assert "0-11 % more matches" in helped and "closed registration" in helped
    # an SPRT of one owner's two versions: duplicate deals keep it off the ladder, and it says so
    started = runner.invoke(cli, [*base, "sprt", "me@1", "me@2", "--deals", "duplicate", "--no-wait", *address],
                            prog_name="arena")
    assert started.exit_code == 0, started.output
    text = " ".join(started.stdout.split())
    assert "duplicate deals" in text and "ladder: its matches do not count on the public ladder" in text
    tid = text.split("SPRT ", 1)[1].split(":", 1)[0]
    shown = json.loads(runner.invoke(cli, ["sprt", "show", tid, "--json", *address]).stdout)
    assert (shown["deals"], shown["ladder_counted"]) == ("duplicate", False)
    status = " ".join(runner.invoke(cli, ["tournament", "status", tid, *address]).stdout.split())
    assert "do not count on the public ladder" in status
    unique = json.loads(runner.invoke(cli, [*base, "sprt", "me@1", "me@2", "--no-wait", "--json", *address]).stdout)
    assert (unique["deals"], unique["ladder_counted"]) == ("unique", False)  # the open default, off the ladder
    assert "as asked at its start" in unique["ladder_note"] and "--ladder" in unique["ladder_note"]
    counted = json.loads(runner.invoke(cli, [*base, "sprt", "me@1", "me@2", "--ladder", "--no-wait", "--json",
                                             *address]).stdout)
    assert (counted["deals"], counted["ladder_counted"]) == ("unique", True)
    assert "unique deals" in counted["ladder_note"]
    refused = runner.invoke(cli, [*base, "sprt", "me@1", "me@2", "--deals", "rotate", *address])
    assert refused.exit_code == 2 and "'rotate' is not one of 'duplicate', 'unique'" in refused.output


def test_an_sprt_of_one_owners_versions_counts_on_the_ladder_only_on_unique_deals(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], store: Store,
        start_bot: Callable[..., Any]) -> None:
    server, stub = arena_server(workers=1, concurrency=2)
    weak = start_bot(SPRT_BOT, extra_args=["--bot-version", "1", "--play", "random"])
    strong = start_bot(SPRT_BOT, extra_args=["--bot-version", "2", "--play", "heuristic"])
    first = stub.RegisterBot(arena_pb2.RegisterBotRequest(name="sprtbot", endpoint=weak.endpoint, game="take5"))
    stub.RegisterBot(arena_pb2.RegisterBotRequest(name="sprtbot", endpoint=strong.endpoint, game="take5",
                                                  owner_token=first.owner_token))  # one owner, two versions

    def run(deals: str, off_ladder: bool = False) -> arena_pb2.Sprt:
        s = stub.CreateSprt(arena_pb2.CreateSprtRequest(game="take5", v1="sprtbot@1", v2="sprtbot@2", max_blocks=1,
                                                        window=1, config=ONE_HAND, deals=deals, off_ladder=off_ladder))
        return wait_until(lambda: (x := stub.GetSprt(arena_pb2.GetSprtRequest(id=s.tournament.id)))
                          .tournament.seed_hex and x, f"SPRT {s.tournament.id} to end")

    def ladder() -> dict[str, int]:
        return {e.bot: e.matches for e in stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries}

    off = run("duplicate")
    assert (off.blocks, off.tournament.matches_done, off.ladder_counted) == (1, 2, False)
    assert "do not count on the public ladder" in off.ladder_note
    matches = stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=off.tournament.id)).matches
    assert len(matches) == 2 and all(list(m.rating_deltas) == [0.0, 0.0] for m in matches)  # stored, shown
    standings = stub.GetStandings(arena_pb2.GetStandingsRequest(id=off.tournament.id))
    assert {e.bot: e.matches for e in standings.entries} == {"sprtbot@1": 2, "sprtbot@2": 2}
    assert ladder() == {}  # not on the public ladder
    assert store.check_ladder("take5").equal and store.check_ladder("take5").results == 0
    shown = CliRunner().invoke(cli, ["sprt", "show", off.tournament.id, "--server", f"127.0.0.1:{server.port}"],
                               prog_name="arena")
    assert "ladder: its matches do not count on the public ladder" in " ".join(shown.stdout.split())

    asked = run("unique", off_ladder=True)  # unique deals could count; its start asked them not to
    assert (asked.blocks, asked.tournament.matches_done, asked.ladder_counted) == (1, 2, False)
    assert "as asked at its start" in asked.ladder_note and ladder() == {}
    on = run("unique")
    assert (on.blocks, on.tournament.matches_done, on.ladder_counted) == (1, 2, True)
    assert ladder() == {"sprtbot@1": 2, "sprtbot@2": 2}  # only the unique-deal SPRT's matches
    check = store.check_ladder("take5")
    assert check.equal and check.results == 2
    # verify: the unique one holds no deal twice, not even by design; the duplicate one notes its pairs
    for t, note in ((on, False), (off, True)):
        verified = CliRunner().invoke(cli, ["tournament", "verify", t.tournament.id, "--server",
                                            f"127.0.0.1:{server.port}"], prog_name="arena")
        assert verified.exit_code == 0 and "FAIL" not in verified.stdout, verified.output
        assert ("head-to-head SPRT" in verified.stdout) == note, verified.stdout


def test_all_takes_the_newest_version_of_each_name(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], store: Store) -> None:
    server, _stub = arena_server(verify_bots=False)
    for version, at in (("1", 100.0), ("3", 300.0), ("2", 200.0)):  # "3" is the newest, registered second
        store.register_bot("take5", "me", "127.0.0.1:1", version=version, now=at)
    store.register_bot("take5", "you", "127.0.0.1:1", version="9", now=50.0)
    store.register_bot("taki", "other", "127.0.0.1:1", version="1", now=50.0)  # another game: not taken
    out = CliRunner().invoke(cli, ["--admin-token", server.admin_token, "tournament", "create", "--all", "--seats",
                                   "2", "--dry-run", "--json", "--server", f"127.0.0.1:{server.port}"],
                             prog_name="arena")
    assert out.exit_code == 0, out.output
    assert sorted(json.loads(out.stdout)["bots"]) == ["me@3", "you@9"]
