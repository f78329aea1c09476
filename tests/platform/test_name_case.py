"""Look-alike bot names, over real gRPC on the session's real Redis: names that differ only in letter case are one
NAME with one owner (``keys.name_owners_field``), so a stranger is refused "Heuristic" when another owner holds
"heuristic" (in that game and in the other), also when two strangers register two spellings at once; the holder keeps
adding versions under its spelling and is refused a second spelling; a released NAME is free in every spelling; and
fields of older data keyed by a spelling with capitals keep their owners."""

from __future__ import annotations

import functools
from typing import Any

import grpc
import pytest
from platform_helpers import race, rpc_error

from arena.server.servicer import ArenaServicer
from arena.store import NameSpellingError, NameTakenError, Registration, Store, token_hash
from arena.store.keys import NAME_OWNERS, name_owners_field, owner_id
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

DENIED = grpc.StatusCode.PERMISSION_DENIED
ENDPOINT = "127.0.0.1:1"  # not called: GetInfo is answered by the patched check below, or not asked


def _register(stub: arena_pb2_grpc.ArenaStub, name: str, token: str = "", game: str = "take5") -> arena_pb2.BotRecord:
    return stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=ENDPOINT, game=game, owner_token=token))


def _names(stub: arena_pb2_grpc.ArenaStub, token: str) -> list[str]:
    return [f"{n.game}/{n.name}" for n in stub.GetOwner(arena_pb2.GetOwnerRequest(owner_token=token)).names]


def test_the_fold_lowercases_ascii_letters_as_redis_lua_does(store: Store) -> None:
    """The owner scripts compare a held "GAME/NAME" with Lua's ``string.lower``: it must agree with
    ``name_owners_field``, also on characters no NAME holds (A-Z a-z 0-9 _ . - only)."""
    assert name_owners_field("Heuristic") == name_owners_field("HEURISTIC") == "heuristic"
    for name in ("My_Bot-2.0", "ZAP.az-09_", "ÉTÉ Ünïcode", "İK"):
        assert store.client.eval("return string.lower(ARGV[1])", 0, name) == name_owners_field(name)
    assert name_owners_field("ÉTÉ") == "ÉtÉ"  # A-Z only


def test_a_stranger_is_refused_another_spelling_and_the_holder_adds_versions(arena_server: Any, store: Store,
                                                                             monkeypatch: Any) -> None:
    """Owner A registers "heuristic" for take5. A stranger (without a token, or with its own owner's token) is
    refused "Heuristic" and "HEURISTIC" for take5 and for taki, with the spelling A holds in the message, and leaves
    nothing behind. A registers versions 2 and 3 of "heuristic" and "heuristic" for taki; A is refused "Heuristic"
    (ALREADY_EXISTS, naming "heuristic")."""
    version = ["1"]

    def bot_info(self: Any, endpoint: str, game: str, name: str, caller: Any, context: Any,
                 secret_of: Any = None) -> bot_pb2.BotInfo:
        return bot_pb2.BotInfo(name=name, version=version[0], games=[game])

    monkeypatch.setattr(ArenaServicer, "bot_info", bot_info)
    _server, stub = arena_server()
    a = _register(stub, "heuristic")
    stranger = _register(stub, "mine")
    owners, total = len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners), store.names_total()
    for game in ("take5", "taki"):
        for spelling in ("Heuristic", "HEURISTIC"):
            for token in ("", stranger.owner_token):
                code, details = rpc_error(lambda: _register(stub, spelling, token, game=game))
                assert code == DENIED, details
                assert (f"bot name {spelling!r} is taken by another owner as 'heuristic' (registered for take5)"
                        in details), details
                assert "differ only in letter case are one NAME" in details and "choose another name" in details
                assert store.owner_hash(game, spelling) is None and store.bot_versions(game, spelling) == []
    assert len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners) == owners and store.names_total() == total
    assert _names(stub, stranger.owner_token) == ["take5/mine"]

    for v in ("2", "3"):
        version[0] = v
        again = _register(stub, "heuristic", a.owner_token)
        assert again.version == v and again.owner == a.owner and again.owner_token == ""
    assert store.bot_versions("take5", "heuristic") == ["1", "2", "3"]
    assert _register(stub, "heuristic", a.owner_token, game="taki").owner == a.owner
    for game in ("take5", "taki"):
        code, details = rpc_error(lambda: _register(stub, "Heuristic", a.owner_token, game=game))
        assert code == grpc.StatusCode.ALREADY_EXISTS, details
        assert "your owner holds the bot name 'heuristic'" in details and "register it as 'heuristic'" in details
    assert _names(stub, a.owner_token) == ["take5/heuristic", "taki/heuristic"]
    assert store.name_owner("HeUrIsTiC") == token_hash(a.owner_token)
    # a bot named in another letter case is not found, and the answer says how it is spelt
    code, details = rpc_error(lambda: stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["Heuristic", "mine"], seats_per_match=2)))
    assert code == grpc.StatusCode.NOT_FOUND and "Heuristic (did you mean heuristic?" in details, details
    # a VERSION the NAME lacks: the answer lists its versions, and names the one it starts, when only one does
    version[0] = "1.0"
    _register(stub, "mine", stranger.owner_token)  # mine: versions 1 and 1.0
    code, details = rpc_error(lambda: stub.CreateSprt(arena_pb2.CreateSprtRequest(
        game="take5", v1="heuristic@3.0", v2="mine@1.")))
    assert code == grpc.StatusCode.NOT_FOUND, details
    assert "heuristic@3.0 (versions of heuristic: 1, 2, 3), mine@1. (did you mean mine@1.0? versions of mine: 1, " \
           "1.0); register them first" in details, details
    code, details = rpc_error(lambda: stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["heuristic@2", "nobody@1", "heuristic@9"], seats_per_match=2)))
    assert code == grpc.StatusCode.NOT_FOUND, details
    assert "not registered for take5: nobody@1, heuristic@9 (versions of heuristic: 1, 2, 3);" in details, details
    # bots of another game, with the CLI's default --game take5: the answer names their game
    shedder = _register(stub, "shedder", game="taki")
    _register(stub, "shedder2", shedder.owner_token, game="taki")
    code, details = rpc_error(lambda: stub.CreateSprt(arena_pb2.CreateSprtRequest(
        game="take5", v1="shedder", v2="shedder2")))
    assert code == grpc.StatusCode.NOT_FOUND and details.endswith("they are registered for taki: give --game taki")
    code, details = rpc_error(lambda: stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["shedder", "nobody"], seats_per_match=2)))
    assert details.endswith("register them first (arena bot register NAME HOST:PORT)"), details  # not all of them
    code, details = rpc_error(lambda: stub.RemoveBot(arena_pb2.RemoveBotRequest(game="take5", bot="HEURISTIC@2")))
    assert code == grpc.StatusCode.NOT_FOUND and "named HEURISTIC (did you mean heuristic?" in details, details
    # ListBots by NAME is exact too, and says the spelling held; the NAME as held, or one nobody holds, says nothing
    for game in ("", "take5"):
        typed = stub.ListBots(arena_pb2.ListBotsRequest(name="HEURISTIC", game=game))
        assert (list(typed.bots), typed.held_spelling) == ([], "heuristic")
    held = stub.ListBots(arena_pb2.ListBotsRequest(name="heuristic", game="take5"))
    assert [b.bot_id for b in held.bots] == ["heuristic@1", "heuristic@2", "heuristic@3"] and not held.held_spelling
    assert not stub.ListBots(arena_pb2.ListBotsRequest(name="nobody")).held_spelling


def test_a_name_is_one_owners_in_every_spelling_until_released(store: Store) -> None:
    """In the store: the reserving scripts refuse another owner every spelling, in every game, and the owner a second
    spelling; the read-only pre-check agrees; a NAME released in every game is free in every spelling."""
    reg = Registration(max_owners_per_address=0)
    a, b = token_hash("case-owner-a-token-0123456789"), token_hash("case-owner-b-token-0123456789")
    store.create_owner(a, first=("take5", "heuristic"))
    store.create_owner(b)
    for game in ("take5", "taki"):
        with pytest.raises(NameTakenError) as taken:
            store.add_owner_name(b, game, "Heuristic")
        assert taken.value.held == "heuristic" and "as 'heuristic'" in str(taken.value)
        with pytest.raises(NameTakenError):
            store.check_new_name(b, game, "HEURISTIC", "", reg)
        with pytest.raises(NameTakenError):
            store.create_owner(token_hash("case-new-owner-token-0123456789"), first=(game, "HEURISTIC"))
        with pytest.raises(NameSpellingError) as spelled:
            store.add_owner_name(a, game, "Heuristic")
        assert spelled.value.held == "heuristic"
        with pytest.raises(NameSpellingError):
            store.check_new_name(a, game, "Heuristic", "", reg)
    assert store.get_owner(token_hash("case-new-owner-token-0123456789")) is None
    assert store.get_owner(b).names == () and store.names_total() == 1  # type: ignore[union-attr]

    store.check_new_name(a, "taki", "heuristic", "", reg)  # its own spelling, in the other game
    assert store.add_owner_name(a, "taki", "heuristic")
    store.release_owner_name(a, "taki", "heuristic")
    assert store.name_owner("Heuristic") == a  # still held in take5
    with pytest.raises(NameTakenError):
        store.add_owner_name(b, "taki", "Heuristic")
    store.release_owner_name(b, "take5", "Heuristic")  # a release by one that does not hold it changes nothing
    assert store.name_owner("heuristic") == a
    store.release_owner_name(a, "take5", "heuristic")
    assert store.name_owner("heuristic") is None and store.name_owner("Heuristic") is None
    assert store.add_owner_name(b, "taki", "Heuristic") and store.name_owner("heuristic") == b
    assert store.client.hgetall(NAME_OWNERS) == {"heuristic": b}  # one field, lowercased
    with pytest.raises(NameTakenError) as taken:
        store.add_owner_name(a, "take5", "heuristic")
    assert taken.value.held == "Heuristic"


def test_two_strangers_registering_two_spellings_at_once_give_one_owner(arena_server: Any, store: Store) -> None:
    """Two strangers register two spellings of one new NAME at the same moment ("RaceN" and "raceN"; in one game or
    in two; without tokens, two new owners, or with the tokens of two owners): each time exactly one gets it, the
    other is PERMISSION_DENIED, and the loser leaves no owner and no name behind."""
    _server, stub = arena_server(verify_bots=False)
    stub.SetRegistration(arena_pb2.SetRegistrationRequest(max_owners_per_address=0))
    p, q = _register(stub, "p-own").owner_token, _register(stub, "q-own").owner_token
    rounds = 16
    for i in range(rounds):
        spellings = (f"Race{i}", f"race{i}")
        tokens = ("", "") if i % 2 == 0 else (p, q)
        games = ("take5", "take5") if i % 4 < 2 else ("take5", "taki")
        answers = race(*(functools.partial(_register, stub, spellings[side], tokens[side], game=games[side])
                         for side in (0, 1)))
        won = [a for a in answers if isinstance(a, arena_pb2.BotRecord)]
        lost = [a for a in answers if isinstance(a, grpc.RpcError)]
        assert len(won) == 1 and len(lost) == 1, answers
        assert lost[0].code() == DENIED and "taken by another owner" in (lost[0].details() or "")
        holders = {store.owner_hash(g, s) for g in ("take5", "taki") for s in spellings} - {None}
        assert len(holders) == 1 and store.name_owner(spellings[0]) == store.name_owner(spellings[1]) in holders
        assert owner_id(store.name_owner(spellings[0]) or "") == won[0].owner
    owners = stub.ListOwners(arena_pb2.ListOwnersRequest()).owners
    assert len(owners) == 2 + rounds // 2  # p, q and one new owner per round without tokens: the losers made none
    assert store.names_total() == 2 + rounds
    assert sum(len(o.names) for o in owners) == 2 + rounds


def test_older_fields_keyed_by_a_spelling_with_capitals_keep_their_owners(arena_server: Any, store: Store) -> None:
    """Data from before NAMEs were lowercased in the name-owners hash: a field keyed "Veteran" is found by the
    scripts (and moved to "veteran"); the start of the server moves every such field, so a stranger is refused
    every spelling of it; a NAME held in two spellings by two owners ("Twin" and "twin") stays registered for each,
    and a new game is the lowercase field's owner's."""
    a_token, b_token, c_token = ("older-case-a-token-0123456789", "older-case-b-token-0123456789",
                                 "older-case-c-token-0123456789")
    a, b, c = token_hash(a_token), token_hash(b_token), token_hash(c_token)
    store.register_bot("take5", "Veteran", ENDPOINT, owner_hash=a)
    store.register_bot("take5", "Elder", ENDPOINT, owner_hash=a)
    store.register_bot("take5", "Twin", ENDPOINT, owner_hash=b)
    store.register_bot("taki", "twin", ENDPOINT, owner_hash=c)
    store.client.delete(NAME_OWNERS)
    store.client.hset(NAME_OWNERS, mapping={"Veteran": a, "Elder": a, "Twin": b, "twin": c})  # as written before
    stranger = token_hash("older-case-stranger-token-0123456789")
    store.create_owner(stranger)
    with pytest.raises(NameTakenError):  # a script finds the older field by the same spelling ...
        store.add_owner_name(stranger, "taki", "Veteran")
    assert store.client.hget(NAME_OWNERS, "veteran") == a and not store.client.hexists(NAME_OWNERS, "Veteran")
    assert store.name_owner("Elder") == a  # ... and so do reads

    _server, stub = arena_server(verify_bots=False)  # the migration at start moves every older field
    assert store.client.hgetall(NAME_OWNERS) == {"veteran": a, "elder": a, "twin": c}
    for name, game in (("ELDER", "taki"), ("elder", "take5"), ("TWIN", "take5"), ("Twin", "taki")):
        code, details = rpc_error(lambda: _register(stub, name, game=game))
        assert code == DENIED and "taken by another owner" in details, (name, details)
    assert _register(stub, "Elder", a_token, game="taki").owner == owner_id(a)  # its owner, in its spelling
    assert _register(stub, "Twin", b_token).owner == owner_id(b)  # each keeps what it had registered
    assert _register(stub, "twin", c_token, game="taki").owner == owner_id(c)
    code, details = rpc_error(lambda: _register(stub, "Twin", b_token, game="taki"))
    assert code == DENIED and "as 'twin'" in details  # the lowercase field's owner holds NAME in the other games
    assert _names(stub, b_token) == ["take5/Twin"] and _names(stub, c_token) == ["taki/twin"]


def test_names_that_read_as_another_owners_are_refused_and_the_owner_may_have_them(arena_server: Any, store: Store,
                                                                                   monkeypatch: Any) -> None:
    """A stranger is refused "heuristic." and "heur1stic" when another owner holds "heuristic", and "rnontecarlo"
    next to "montecarlo" (``arena.core.specs.name_skeleton``), naming the name it reads as, leaving nothing behind;
    the holder may register its own look-alikes, and names that merely share letters stay free."""
    from arena.core.specs import name_skeleton

    def bot_info(self: Any, endpoint: str, game: str, name: str, caller: Any, context: Any,
                 secret_of: Any = None) -> bot_pb2.BotInfo:
        return bot_pb2.BotInfo(name=name, version="1", games=[game])

    monkeypatch.setattr(ArenaServicer, "bot_info", bot_info)
    _server, stub = arena_server()
    a = _register(stub, "heuristic")
    _register(stub, "montecarlo", a.owner_token)
    _register(stub, "random", a.owner_token)
    owners = len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners)
    for name, held in (("heuristic.", "heuristic"), ("heur1stic", "heuristic"), ("Heur_istic", "heuristic"),
                       ("heuri5tic", "heuristic"), ("rnontecarlo", "montecarlo"), ("m0ntecarl0", "montecarlo"), ("ranclom", "random")):
        assert name_skeleton(name) == name_skeleton(held)
        for game in ("take5", "taki"):
            code, details = rpc_error(lambda: _register(stub, name, game=game))
            assert code == DENIED and f"bot name {name!r} reads as {held!r}, another owner's" in details, details
            assert store.owner_hash(game, name) is None
    assert len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners) == owners
    assert _register(stub, "heuristic-2", a.owner_token).owner == a.owner  # the holder's own
    assert _register(stub, "heuristic.", a.owner_token).owner == a.owner
    assert _register(stub, "heuristics").owner != a.owner  # reads otherwise: free for anyone
