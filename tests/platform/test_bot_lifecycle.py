"""Bot lifecycle (issue 3, item 3) over real gRPC with real bot processes: registration refusals, owner tokens,
versions kept apart on the ladder, update and removal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from platform_helpers import VERSIONED_BOT, rpc_error, wait_until

from arena.store import Store, owner_key, token_hash
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

DENIED = grpc.StatusCode.PERMISSION_DENIED


def _versioned(start_bot: Callable[..., Any], name: str, version: str = "1.0", games: str = "take5") -> str:
    """A versioned test bot whose GetInfo says it is ``name`` (registration checks the name)."""
    return start_bot(VERSIONED_BOT, extra_args=["--bot-version", version, "--games", games,
                                                "--name", name]).endpoint


def _register(stub: arena_pb2_grpc.ArenaStub, name: str, endpoint: str, token: str = "") -> arena_pb2.BotRecord:
    return stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint, game="take5",
                                                         owner_token=token))


def _bots(stub: arena_pb2_grpc.ArenaStub) -> list[tuple[str, str]]:
    return [(b.bot_id, b.endpoint) for b in stub.ListBots(arena_pb2.ListBotsRequest(game="take5")).bots]


def test_registration_refuses_a_down_endpoint_a_wrong_game_and_a_bad_version(
        arena_server: Any, start_bot: Callable[..., Any], dead_endpoint: str, store: Store) -> None:
    _server, stub = arena_server()
    code, details = rpc_error(lambda: _register(stub, "ghost", dead_endpoint))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details.startswith(f"no arena bot answered GetInfo at {dead_endpoint} within ")

    taki = _versioned(start_bot, "taki-bot", games="taki")
    code, details = rpc_error(lambda: _register(stub, "taki-bot", taki))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details == (f"the bot at {taki} plays taki, not take5; start a bot of take5 there (registering a "
                       f"bot of taki? give the game: --game taki)")

    spaced = _versioned(start_bot, "spaced", version="1 beta")
    code, details = rpc_error(lambda: _register(stub, "spaced", spaced))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "reports version '1 beta'" in details and "1..64 characters" in details

    assert _bots(stub) == []
    # a refused first registration does not take the name: the next one gets its token
    assert store.owner_hash("take5", "ghost") is None
    good = _versioned(start_bot, "ghost", version="3.1")
    record = _register(stub, "ghost", good)
    assert (record.bot_id, record.version, record.author) == ("ghost@3.1", "3.1", "arena tests")
    assert record.sdk_version and record.owner_token


def test_owner_tokens_guard_a_name_and_versions_stay_apart_on_the_ladder(
        arena_server: Any, start_bot: Callable[..., Any], store: Store) -> None:
    _server, stub = arena_server(workers=1, concurrency=3)
    v1, v2, v1_again, rival = (_versioned(start_bot, "vb", "1.0"), _versioned(start_bot, "vb", "2.0"),
                               _versioned(start_bot, "vb", "1.0"), _versioned(start_bot, "rival", "0.9"))
    first = _register(stub, "vb", v1)
    token = first.owner_token
    assert first.bot_id == "vb@1.0" and len(token) >= 40
    assert store.owner_hash("take5", "vb") == token_hash(token)
    assert token not in str(store.client.get(owner_key("take5", "vb")))  # only the hash is kept

    # a new version (or the same one again) needs the token
    code, details = rpc_error(lambda: _register(stub, "vb", v2))
    assert code == DENIED and "needs the owner token of bot 'vb'" in details and "none was given" in details
    code, details = rpc_error(lambda: _register(stub, "vb", v2, token="not-the-token"))
    assert code == DENIED and "wrong owner token for bot 'vb'" in details
    code, _ = rpc_error(lambda: _register(stub, "vb", v1, token="x" + token))
    assert code == DENIED
    second = _register(stub, "vb", v2, token=token)
    assert (second.bot_id, second.owner_token) == ("vb@2.0", "")
    other = _register(stub, "rival", rival)
    assert other.owner_token and other.owner_token != token
    code, _ = rpc_error(lambda: _register(stub, "rival", rival, token=token))  # vb's token is not rival's
    assert code == DENIED
    assert _bots(stub) == [("rival@0.9", rival), ("vb@1.0", v1), ("vb@2.0", v2)]

    # update: token needed; the new endpoint must report the same version
    update = arena_pb2.UpdateBotRequest(bot="vb@1.0", game="take5", endpoint=v1_again)
    code, details = rpc_error(lambda: stub.UpdateBot(update))
    assert code == DENIED and "updating vb@1.0 needs the owner token" in details
    code, _ = rpc_error(lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(
        bot="vb@1.0", game="take5", endpoint=v1_again, owner_token=other.owner_token)))
    assert code == DENIED
    code, details = rpc_error(lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(
        bot="vb@1.0", game="take5", endpoint=v2, owner_token=token)))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "reports version '2.0', not '1.0'" in details
    moved = stub.UpdateBot(arena_pb2.UpdateBotRequest(bot="vb@1.0", game="take5", endpoint=v1_again,
                                                      owner_token=token))
    assert (moved.bot_id, moved.endpoint, moved.registered_at) == ("vb@1.0", v1_again, first.registered_at)
    assert moved.updated_at >= first.updated_at
    code, _ = rpc_error(lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(
        bot="vb@7.0", game="take5", endpoint=v1, owner_token=token)))
    assert code == grpc.StatusCode.NOT_FOUND

    # tournaments take NAME (latest version) or NAME@VERSION; both versions of vb play each other
    code, details = rpc_error(lambda: stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["vb", "vb@2.0", "rival"])))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "vb and vb@2.0 name the same bot vb@2.0" in details
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["vb@1.0", "vb", "rival"], seats_per_match=3, rounds=3,
        config=bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=10))))
    assert list(t.bots) == ["vb@1.0", "vb@2.0", "rival@0.9"] and t.matches_total == 3
    wait_until(lambda: stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id)).state == "finished",
               f"tournament {t.id} to finish")
    ladder = {e.bot: e.matches for e in stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries}
    assert ladder == {"vb@1.0": 3, "vb@2.0": 3, "rival@0.9": 3}
    # the ladder and the standings name each bot's owner (one owner for both versions of vb)
    owners = {e.bot: e.owner for e in stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries}
    assert owners == {"vb@1.0": first.owner, "vb@2.0": first.owner, "rival@0.9": other.owner} != {}
    assert first.owner != other.owner and first.owner.startswith("o-")
    standings = stub.GetStandings(arena_pb2.GetStandingsRequest(id=t.id)).entries
    assert {e.bot: e.owner for e in standings} == owners

    # removal: token needed; the ladder history stays; NAME stays its owner's
    code, details = rpc_error(lambda: stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="vb@1.0", game="take5")))
    assert code == DENIED and "removing vb@1.0 needs the owner token" in details
    code, details = rpc_error(lambda: stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="vb@3.0", game="take5",
                                                                              owner_token=token)))
    assert code == grpc.StatusCode.NOT_FOUND
    assert details == "no bot vb@3.0 registered for take5 (registered versions of vb: 1.0, 2.0)"
    removed = stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="vb@1.0", game="take5", owner_token=token))
    assert list(removed.removed) == ["vb@1.0"]
    assert _bots(stub) == [("rival@0.9", rival), ("vb@2.0", v2)]
    removed = stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="vb", game="take5", owner_token=token))
    assert list(removed.removed) == ["vb@2.0"]
    assert _bots(stub) == [("rival@0.9", rival)]
    after = {e.bot: e.matches for e in stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries}
    assert after == ladder
    code, details = rpc_error(lambda: _register(stub, "vb", v2))  # nobody else can take over vb's history
    assert code == DENIED
    assert details == ("the name vb is reserved by its owner (all its versions were removed); pass its owner "
                       "token")
    code, details = rpc_error(lambda: _register(stub, "vb", v2, token=other.owner_token))
    assert code == DENIED and details.endswith("pass its owner token (the token given is not it)")
    again = _register(stub, "vb", v2, token=token)
    assert again.bot_id == "vb@2.0" and again.owner_token == ""
    code, details = rpc_error(lambda: stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="nobody", game="take5")))
    assert code == grpc.StatusCode.NOT_FOUND and details == "no bot named nobody is registered for take5"
    code, details = rpc_error(lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(bot="nobody", game="take5",
                                                                              endpoint=v1)))
    assert code == grpc.StatusCode.NOT_FOUND and details == "no bot named nobody is registered for take5"
    code, details = rpc_error(lambda: stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="vb", game="taki")))
    assert code == grpc.StatusCode.NOT_FOUND  # the CLI's --game defaults to take5: a Taki author meets it reversed
    assert details == "no bot named vb is registered for taki; it is registered for take5: give --game take5"


def test_bad_references_are_invalid_arguments(arena_server: Any) -> None:
    _server, stub = arena_server(verify_bots=False)
    for call in (
        lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(bot="a b", game="take5", endpoint="h:1")),
        lambda: stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="a@", game="take5")),
        lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(bot="a", game="take5", endpoint="nohost")),
        lambda: stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="a", game="chess")),
        lambda: stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=["a@1@2", "b"])),
    ):
        code, details = rpc_error(call)
        assert code == grpc.StatusCode.INVALID_ARGUMENT, details


def test_an_owner_holds_at_most_its_quota_of_versions_over_all_its_names(
        arena_server: Any, start_bot: Callable[..., Any], store: Store, monkeypatch: Any) -> None:
    """An owner may have ``limits.VERSIONS_PER_OWNER`` bot versions per game over all its names (3 here), so that a
    bot reporting a new VERSION in every GetInfo cannot make records without end: one more, under any of its names,
    is RESOURCE_EXHAUSTED saying how to make room; a version it has registers again; a removed one frees its place;
    another owner is not held by it."""
    from arena.core import limits

    monkeypatch.setattr(limits, "VERSIONS_PER_OWNER", 3)
    _server, stub = arena_server()
    token = _register(stub, "flood_a", _versioned(start_bot, "flood_a", "1")).owner_token
    _register(stub, "flood_a", _versioned(start_bot, "flood_a", "2"), token)
    _register(stub, "flood_b", _versioned(start_bot, "flood_b", "1"), token)  # a second NAME of the same owner
    for name, version in (("flood_b", "2"), ("flood_a", "3"), ("flood_c", "1")):
        code, details = rpc_error(lambda: _register(stub, name, _versioned(start_bot, name, version), token))  # noqa: B023
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (name, version, details)
        assert "has 3 bot versions registered for take5 (all its names together)" in details, details
        assert store.get_bot("take5", f"{name}@{version}") is None
    names = stub.GetOwner(arena_pb2.GetOwnerRequest(owner_token=token)).names
    assert sorted(n.name for n in names) == ["flood_a", "flood_b"]  # the refused new NAME is not reserved
    assert store.owner_hash("take5", "flood_c") is None
    assert _register(stub, "flood_a", _versioned(start_bot, "flood_a", "1"), token).bot_id == "flood_a@1"
    other = _register(stub, "someone", _versioned(start_bot, "someone", "1"))  # another owner: its own count
    assert other.owner_token and other.owner_token != token
    stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="flood_a@1", game="take5", owner_token=token))
    assert _register(stub, "flood_b", _versioned(start_bot, "flood_b", "2"), token).bot_id == "flood_b@2"
    code, _ = rpc_error(lambda: _register(stub, "flood_b", _versioned(start_bot, "flood_b", "3"), token))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_name_holds_at_most_its_quota_of_versions_and_lists_them_all_by_name(
        arena_server: Any, start_bot: Callable[..., Any], store: Store, monkeypatch: Any) -> None:
    """A NAME may have ``limits.VERSIONS_PER_NAME`` versions per game (2 here): one more is RESOURCE_EXHAUSTED
    saying how to make room, the same version again still registers, and a removed one frees its place.
    ``ListBots(name=NAME)`` answers every version of NAME, whatever the number of other bots."""
    from arena.core import limits

    monkeypatch.setattr(limits, "VERSIONS_PER_NAME", 2)
    _server, stub = arena_server()
    v1, v2, v3 = (_versioned(start_bot, "capped", v) for v in ("1.0", "2.0", "3.0"))
    token = _register(stub, "capped", v1).owner_token
    _register(stub, "capped", v2, token)
    code, details = rpc_error(lambda: _register(stub, "capped", v3, token))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "capped has 2 versions registered for take5" in details and "arena bot remove capped@VERSION" in details
    assert _register(stub, "capped", v1, token).bot_id == "capped@1.0"  # a version it has: registered again
    for i in range(3):
        store.register_bot("take5", f"other{i}", f"127.0.0.1:{40000 + i}", version="1")
    named = stub.ListBots(arena_pb2.ListBotsRequest(name="capped"))
    assert [b.bot_id for b in named.bots] == ["capped@1.0", "capped@2.0"] and not named.next_page_token
    stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="capped@1.0", game="take5", owner_token=token))
    assert _register(stub, "capped", v3, token).bot_id == "capped@3.0"
    assert [b.bot_id for b in stub.ListBots(arena_pb2.ListBotsRequest(name="capped", game="take5")).bots] == \
        ["capped@2.0", "capped@3.0"]
    for bad in ("not a name", "capped\n"):  # "$" would let a trailing newline through: names end at \Z
        code, _ = rpc_error(lambda: stub.ListBots(arena_pb2.ListBotsRequest(name=bad)))  # noqa: B023
        assert code == grpc.StatusCode.INVALID_ARGUMENT, bad
        code, _ = rpc_error(lambda: _register(stub, bad, v3, token))  # noqa: B023
        assert code == grpc.StatusCode.INVALID_ARGUMENT, bad
