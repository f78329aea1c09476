"""Owners are accounts, over real gRPC on the session's real Redis: a person's two names are one owner in the deal
plan; a name registered with an owner's token joins that owner; a NAME belongs to one owner in every game (another
owner is refused it in any game, also when two register it at once); quotas and closed registration refuse with the
right codes; an unknown token is refused; per-name owners of older data become accounts."""

from __future__ import annotations

import functools
import json
import threading
from collections import defaultdict
from typing import Any

import grpc
import pytest
from platform_helpers import race, rpc_error

from arena.server.auth import admin_metadata
from arena.store import NameTakenError, Registration, Store, token_hash
from arena.store.keys import NAME_OWNERS, jobs_key, owner_id
from arena.tournaments.deals import deal_plan
from arena_sdk.pb import arena_pb2, arena_pb2_grpc
from arena_sdk.peers import peer_address

DENIED = grpc.StatusCode.PERMISSION_DENIED
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
ENDPOINT = "127.0.0.1:1"  # not called: these servers run with verify_bots=False unless a test says otherwise


def _register(stub: arena_pb2_grpc.ArenaStub, name: str, token: str = "",
              endpoint: str = ENDPOINT, game: str = "take5", metadata: Any = None) -> arena_pb2.BotRecord:
    return stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint, game=game,
                                                         owner_token=token), metadata=metadata)


def _owner(stub: arena_pb2_grpc.ArenaStub, token: str) -> arena_pb2.Owner:
    return stub.GetOwner(arena_pb2.GetOwnerRequest(owner_token=token))


def _names(owner: arena_pb2.Owner) -> list[str]:
    return [f"{n.game}/{n.name}" for n in owner.names]


def _partner_shares_a_deal(tables: list[tuple[int, int, int, tuple[str, ...]]], a: str, b: str) -> tuple[int, int]:
    """(matches of ``a`` in which ``b`` sits at another table of the same deal, matches of ``a``); tables are
    (round, deal, table, seats)."""
    by_deal: dict[tuple[int, int], list[tuple[str, ...]]] = defaultdict(list)
    for r, d, _t, seats in tables:
        by_deal[(r, d)].append(seats)
    played = leaked = 0
    for deal in by_deal.values():
        for seats in deal:
            if a in seats:
                played += 1
                leaked += any(b in other for other in deal if other is not seats)
    return leaked, played


def test_two_names_of_one_owner_are_one_owner_in_the_deal_plan(arena_server: Any, store: Store) -> None:
    """The attack: one person, two names, 8 bots at 4 seats (2 tables a deal). Per-name owners put the partner at
    the other table of the same deal in a large share of matches; one owner account puts it there in none."""
    _server, stub = arena_server(verify_bots=False)
    first = _register(stub, "p1")
    second = _register(stub, "p2", first.owner_token)
    assert first.owner_token and second.owner_token == ""  # no new token: p2 joined p1's owner
    assert first.owner == second.owner == owner_id(token_hash(first.owner_token))
    others = [_register(stub, f"x{i}") for i in range(6)]
    assert len({o.owner for o in others} | {first.owner}) == 7  # every stranger is an owner of its own

    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(  # duplicate deals: the organiser's choice
        game="take5", bots=["p1", "p2", *(o.name for o in others)], seats_per_match=4, rounds=1, deals="duplicate"))
    assert t.matches_total == 70 and t.tables_per_deal == 2
    queued = []
    for _entry_id, fields in store.client.xrange(jobs_key("take5")):
        spec = json.loads(fields["spec"])
        queued.append((spec["round"], spec["deal"], spec["table"], tuple(spec["seats"])))
    assert len(queued) == 70
    after = _partner_shares_a_deal(queued, "p1@0", "p2@0")

    # the same tournament planned as when every name was an owner of its own (two tokens for one person)
    bots = sorted(["p1@0", "p2@0", *(f"{o.name}@0" for o in others)])
    per_name = deal_plan(bots, 4, 1, owners={b: b for b in bots})
    before = _partner_shares_a_deal([(m.round, m.deal, m.table, m.seats) for m in per_name], "p1@0", "p2@0")
    print(f"p2 at the other table of p1's deal: per-name owners {before[0]} of {before[1]} matches, one owner "
          f"{after[0]} of {after[1]}")
    assert before[1] == after[1] == 35  # C(7, 3): p1's matches
    assert before[0] > 10
    assert after[0] == 0


def test_a_second_name_joins_its_owner_and_unknown_tokens_are_refused(arena_server: Any, store: Store) -> None:
    server, stub = arena_server(verify_bots=False)
    first = _register(stub, "alpha")
    token = first.owner_token
    assert _register(stub, "beta", token).owner_token == ""
    mine = _owner(stub, token)
    assert _names(mine) == ["take5/alpha", "take5/beta"] and mine.names_held == 2
    assert mine.id == first.owner and mine.created_by == "registration" and mine.owner_token == ""
    assert mine.max_names == 20  # the default quota per owner
    listed = {b.name: b.owner for b in stub.ListBots(arena_pb2.ListBotsRequest(game="take5")).bots}
    assert listed == {"alpha": mine.id, "beta": mine.id}
    # the stored value of each name is the owner's key, so deal plans and SPRT fields group them
    assert store.owner_hash("take5", "alpha") == store.owner_hash("take5", "beta") == token_hash(token)

    forged = "f" * 43
    code, details = rpc_error(lambda: _register(stub, "gamma", forged))
    assert code == DENIED and "no owner of this arena" in details
    code, _ = rpc_error(lambda: _owner(stub, forged))
    assert code == DENIED
    code, _ = rpc_error(lambda: stub.GetOwner(arena_pb2.GetOwnerRequest()))
    assert code == DENIED
    stranger = _register(stub, "delta")
    code, details = rpc_error(lambda: stub.GetOwner(arena_pb2.GetOwnerRequest(owner_token=stranger.owner_token,
                                                                              id=mine.id)))
    assert code == DENIED and "needs the admin token" in details
    # the organiser reads any owner by id (the fixture's stub sends the admin token only with ADMIN_METHODS)
    as_admin = admin_metadata(server.admin_token)
    assert _names(stub.GetOwner(arena_pb2.GetOwnerRequest(id=stranger.owner), metadata=as_admin)) == ["take5/delta"]
    code, _ = rpc_error(lambda: stub.GetOwner(arena_pb2.GetOwnerRequest(id="o-0000000000000000"), metadata=as_admin))
    assert code == grpc.StatusCode.NOT_FOUND
    assert "gamma" not in {b.name for b in stub.ListBots(arena_pb2.ListBotsRequest()).bots}
    assert store.names_total() == 3


def test_quotas_refuse_with_resource_exhausted(arena_server: Any, store: Store, dead_endpoint: str) -> None:
    server, stub = arena_server(verify_bots=False)
    code, _ = rpc_error(lambda: arena_pb2_grpc.ArenaStub(grpc.insecure_channel(f"127.0.0.1:{server.port}"))
                        .SetRegistration(arena_pb2.SetRegistrationRequest(mode="closed")))
    assert code == grpc.StatusCode.UNAUTHENTICATED  # an organiser call
    reg = stub.SetRegistration(arena_pb2.SetRegistrationRequest(max_names_per_owner=2, max_owners_per_address=3))
    assert (reg.mode, reg.max_names_per_owner, reg.max_owners_per_address, reg.max_names_total) == ("open", 2, 3,
                                                                                                    10_000)
    info = stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest()).registration
    assert (info.max_names_per_owner, info.address_window_s) == (2, 3600)

    token = _register(stub, "a1").owner_token
    _register(stub, "a2", token)
    code, details = rpc_error(lambda: _register(stub, "a3", token))
    assert code == EXHAUSTED and "max_names_per_owner = 2" in details and "organiser can raise it" in details
    assert _register(stub, "a2", token).bot_id == "a2@0"  # a name it holds may still be registered again

    _register(stub, "b1")
    _register(stub, "c1")  # a1, b1, c1: three owners from 127.0.0.1 this hour
    code, details = rpc_error(lambda: _register(stub, "d1"))
    assert code == EXHAUSTED and "max_owners_per_address = 3" in details and "loopback addresses" in details

    stub.SetRegistration(arena_pb2.SetRegistrationRequest(max_owners_per_address=0, max_names_total=5))
    _register(stub, "d1")
    code, details = rpc_error(lambda: _register(stub, "e1"))
    assert code == EXHAUSTED and "max_names_total = 5" in details and "arena registration set --max-names-total N" in details
    assert store.names_total() == 5
    owners = stub.ListOwners(arena_pb2.ListOwnersRequest()).owners
    assert sorted(len(o.names) for o in owners) == [1, 1, 1, 2]  # refused registrations left no owner behind

    # a registration refused at the bot check reserves no name, makes no owner and is not counted for its address
    checked, checked_stub = arena_server()
    checked_stub.SetRegistration(arena_pb2.SetRegistrationRequest(max_names_total=0, max_names_per_owner=0,
                                                                  max_owners_per_address=4))  # 3 used: a1, b1, c1
    for _ in range(3):
        code, _ = rpc_error(lambda: _register(checked_stub, "ghost", endpoint=dead_endpoint))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert store.names_total() == 5 and len(checked_stub.ListOwners(arena_pb2.ListOwnersRequest()).owners) == 4
    _register(stub, "f1")  # the fourth owner from this address this hour ...
    code, _ = rpc_error(lambda: _register(stub, "g1"))
    assert code == EXHAUSTED  # ... and the fifth is one too many
    code, _ = rpc_error(lambda: _register(checked_stub, "ghost", token, endpoint=dead_endpoint))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and _names(_owner(stub, token)) == ["take5/a1", "take5/a2"]
    assert store.names_total() == 6


def test_closed_registration_refuses_strangers_and_accepts_organiser_owners(arena_server: Any) -> None:
    server, stub = arena_server(verify_bots=False)
    early = _register(stub, "early")
    stub.SetRegistration(arena_pb2.SetRegistrationRequest(mode="closed"))
    assert stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest()).registration.mode == "closed"
    code, details = rpc_error(lambda: _register(stub, "stranger"))
    assert code == DENIED and "registration of new owners is closed" in details and "organiser" in details
    assert _register(stub, "early2", early.owner_token).owner == early.owner  # existing owners may add names

    public = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(f"127.0.0.1:{server.port}"))
    code, _ = rpc_error(lambda: public.CreateOwner(arena_pb2.CreateOwnerRequest(label="team a")))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    code, _ = rpc_error(lambda: public.ListOwners(arena_pb2.ListOwnersRequest()))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    team = stub.CreateOwner(arena_pb2.CreateOwnerRequest(label="team a"))
    assert team.owner_token and team.label == "team a" and team.created_by == "organiser" and not team.names
    record = _register(stub, "team-bot", team.owner_token)
    assert record.owner == team.id and record.owner_token == ""
    assert _names(_owner(stub, team.owner_token)) == ["take5/team-bot"]
    assert _owner(stub, team.owner_token).owner_token == ""  # the token is shown once, by CreateOwner

    for i in range(3):
        stub.CreateOwner(arena_pb2.CreateOwnerRequest(label=f"team {i}"))
    seen, page = [], ""
    while True:
        answer = stub.ListOwners(arena_pb2.ListOwnersRequest(page_size=2, page_token=page))
        assert len(answer.owners) <= 2
        seen += [o.id for o in answer.owners]
        page = answer.next_page_token
        if not page:
            break
    assert len(seen) == len(set(seen)) == 5 and seen == sorted(seen)
    code, _ = rpc_error(lambda: stub.ListOwners(arena_pb2.ListOwnersRequest(page_token="not-an-id")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_per_name_owners_of_older_data_become_accounts(arena_server: Any, store: Store) -> None:
    old_token = "an-old-per-name-owner-token-0123456789"
    store.register_bot("take5", "veteran", ENDPOINT, owner_hash=token_hash(old_token))
    store.register_bot("taki", "veteran", ENDPOINT, owner_hash=token_hash(old_token))
    store.register_bot("take5", "loner", ENDPOINT, owner_hash=token_hash("another-old-token-abcdefgh"))
    assert not store.owner_exists(token_hash(old_token))
    _server, stub = arena_server(verify_bots=False)  # the migration runs at start
    veteran = _owner(stub, old_token)
    assert _names(veteran) == ["take5/veteran", "taki/veteran"] and veteran.created_by == "migration"
    assert _register(stub, "rookie", old_token).owner_token == ""
    assert _names(_owner(stub, old_token)) == ["take5/rookie", "take5/veteran", "taki/veteran"]
    assert store.migrate_owners() == 0  # idempotent
    assert len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners) == 2


def test_a_racing_registration_releases_only_its_own_reservation(store: Store) -> None:
    """Two registrations of one new NAME: the first reserves it, in every game, and the second's reservation is
    refused; an undo releases only its own reservation, and NAME stays its owner's while it holds NAME in another
    game."""
    winner, loser = token_hash("winner-token-0123456789"), token_hash("loser-token-0123456789")
    store.create_owner(winner, first=("take5", "x"))
    store.create_owner(loser)
    for game in ("take5", "taki"):
        with pytest.raises(NameTakenError):
            store.add_owner_name(loser, game, "x")  # the loser's reservation, in either game
    store.register_bot("take5", "x", ENDPOINT, owner_hash=winner)
    store.release_owner_name(loser, "take5", "x")  # an undo of a reservation it never got changes nothing
    assert store.names_total() == 1 and store.name_owner("x") == winner
    assert [o.names for o in (store.get_owner(winner), store.get_owner(loser))] == [(("take5", "x"),), ()]
    store.drop_owner(loser)
    assert store.names_total() == 1 and store.get_owner(loser) is None and store.owner_key_of_id(owner_id(loser)) is None
    assert store.name_owner("x") == winner

    # the winner reserves y in both games; undoing one keeps y its own, undoing both frees y
    assert store.add_owner_name(winner, "take5", "y") and store.add_owner_name(winner, "taki", "y")
    store.release_owner_name(winner, "taki", "y")
    assert store.name_owner("y") == winner
    with pytest.raises(NameTakenError):
        store.create_owner(loser, first=("taki", "y"))
    assert store.get_owner(loser) is None  # refused whole: no owner made
    store.release_owner_name(winner, "take5", "y")
    assert store.name_owner("y") is None
    assert store.create_owner(loser, first=("taki", "y")) and store.name_owner("y") == loser


def test_the_name_check_is_in_the_reserving_step_not_only_before_it(store: Store) -> None:
    """A registration's read-only pre-check passes for a NAME nobody holds yet; another owner reserves NAME in the
    other game meanwhile; the reservation itself (one Redis script with the quotas) then refuses it."""
    reg = Registration(max_owners_per_address=0)
    first, second = token_hash("first-owner-token-0123456789"), token_hash("second-owner-token-0123456789")
    store.create_owner(second)
    store.check_new_name(None, "taki", "n", "", reg)  # a new owner's pre-check ...
    store.check_new_name(second, "taki", "n", "", reg)  # ... and an existing owner's: both pass
    store.create_owner(first, first=("take5", "n"), registration=reg)  # meanwhile, in the other game
    with pytest.raises(NameTakenError):
        store.create_owner(token_hash("a-new-owner-token-0123456789"), first=("taki", "n"), registration=reg)
    with pytest.raises(NameTakenError):
        store.add_owner_name(second, "taki", "n", reg)
    with pytest.raises(NameTakenError):
        store.check_new_name(second, "taki", "n", "", reg)
    assert store.get_owner(token_hash("a-new-owner-token-0123456789")) is None
    assert store.get_owner(second).names == () and store.names_total() == 1  # type: ignore[union-attr]
    assert store.add_owner_name(first, "taki", "n", reg)  # its owner may
    store.check_new_name(first, "taki", "n", "", reg)

    # many owners reserving one new NAME at once, in two games: exactly one gets it
    keys = [token_hash(f"racer-{i}-token-0123456789") for i in range(16)]
    for key in keys[1::2]:
        store.create_owner(key)
    barrier = threading.Barrier(len(keys))
    won: list[str] = []

    def reserve(i: int, key: str) -> None:
        game = ("take5", "taki")[i % 2]
        barrier.wait()
        try:
            if i % 2:  # an existing owner adding the name, or a new owner made with it
                store.add_owner_name(key, game, "contested")
            else:
                store.create_owner(key, first=(game, "contested"))
        except NameTakenError:
            return
        won.append(key)

    threads = [threading.Thread(target=reserve, args=(i, k)) for i, k in enumerate(keys)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and store.name_owner("contested") == won[0]
    holders = [k for k in keys if any(n == "contested" for _g, n in getattr(store.get_owner(k), "names", ()))]
    assert holders == won and store.names_total() == 3  # n in two games, contested in one: nothing else is held


def test_a_name_belongs_to_one_owner_in_every_game(arena_server: Any, store: Store) -> None:
    """The security review's case: owner A registered dual for take5; a stranger registering dual for taki is
    refused (without a token, with its own owner's token, with the admin token alone) and leaves nothing behind;
    A registers dual for taki with its token, and joins it to its owner."""
    server, stub = arena_server(verify_bots=False)
    a = _register(stub, "dual")
    stranger = _register(stub, "mine")  # a stranger with an owner of its own
    owners = len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners)
    total = store.names_total()
    for token, metadata in (("", None), (stranger.owner_token, None), ("", admin_metadata(server.admin_token))):
        code, details = rpc_error(lambda: _register(stub, "dual", token, game="taki", metadata=metadata))
        assert code == DENIED, details
        assert "bot name 'dual' is taken by another owner (registered for take5)" in details
        assert "belongs to one owner in every game" in details and "choose another name" in details
        assert ("the owner token given is another owner's" in details) == bool(token)
    assert store.owner_hash("taki", "dual") is None and store.bot_versions("taki", "dual") == []
    assert len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners) == owners and store.names_total() == total
    assert _names(_owner(stub, stranger.owner_token)) == ["take5/mine"]

    again = _register(stub, "dual", a.owner_token, game="taki")
    assert again.owner == a.owner and again.owner_token == "" and again.game == "taki"
    assert _names(_owner(stub, a.owner_token)) == ["take5/dual", "taki/dual"]
    assert store.owner_hash("taki", "dual") == store.owner_hash("take5", "dual") == token_hash(a.owner_token)
    # the other way round: a name first registered for taki is refused to another owner for take5
    _register(stub, "tonly", game="taki")
    code, details = rpc_error(lambda: _register(stub, "tonly", stranger.owner_token))
    assert code == DENIED and "'tonly' is taken by another owner (registered for taki)" in details
    # the name is held for its owner in every game even where it has no bot yet: reserved, not registered
    code, details = rpc_error(lambda: _register(stub, "mine", a.owner_token, game="taki"))
    assert code == DENIED and "taken by another owner" in details


def test_two_first_registrations_of_a_name_in_two_games_at_once_give_one_owner(arena_server: Any,
                                                                                store: Store) -> None:
    """Two strangers register one new NAME at the same moment, one for take5 and one for taki (without tokens: two
    new owners; or with the tokens of two owners): each time exactly one gets it, the other is PERMISSION_DENIED,
    and the loser leaves no owner and no name behind."""
    _server, stub = arena_server(verify_bots=False)
    stub.SetRegistration(arena_pb2.SetRegistrationRequest(max_owners_per_address=0))
    p, q = _register(stub, "p-own").owner_token, _register(stub, "q-own").owner_token
    rounds = 16
    for i in range(rounds):
        name = f"race{i}"
        tokens = ("", "") if i % 2 == 0 else (p, q)
        answers = race(*(functools.partial(_register, stub, name, tokens[side], game=("take5", "taki")[side])
                         for side in (0, 1)))
        won = [a for a in answers if isinstance(a, arena_pb2.BotRecord)]
        lost = [a for a in answers if isinstance(a, grpc.RpcError)]
        assert len(won) == 1 and len(lost) == 1, answers
        assert lost[0].code() == DENIED and "taken by another owner" in (lost[0].details() or "")
        holders = {store.owner_hash(g, name) for g in ("take5", "taki")} - {None}
        assert len(holders) == 1 and store.name_owner(name) in holders
        assert owner_id(store.name_owner(name) or "") == won[0].owner
    owners = stub.ListOwners(arena_pb2.ListOwnersRequest()).owners
    assert len(owners) == 2 + rounds // 2  # p, q and one new owner per round without tokens: the losers made none
    assert store.names_total() == 2 + rounds
    assert sum(len(o.names) for o in owners) == 2 + rounds


def test_names_of_older_data_keep_their_owners(arena_server: Any, store: Store) -> None:
    """Data from before a NAME was one owner's in every game: a NAME held by two owners in two games stays theirs
    (each registers it again in its own game); the start of the server files every NAME's owner, so a stranger is
    refused an older NAME in the other game, and its owner is not."""
    a_token, b_token = "older-owner-a-token-0123456789", "older-owner-b-token-0123456789"
    store.register_bot("take5", "split", ENDPOINT, owner_hash=token_hash(a_token))
    store.register_bot("taki", "split", ENDPOINT, owner_hash=token_hash(b_token))
    store.register_bot("take5", "old", ENDPOINT, owner_hash=token_hash(a_token))
    store.client.delete(NAME_OWNERS)  # as written before the name-owners hash existed
    _server, stub = arena_server(verify_bots=False)  # the migration at start files each NAME's owner
    assert store.name_owner("old") == token_hash(a_token)
    assert store.name_owner("split") in {token_hash(a_token), token_hash(b_token)}
    code, details = rpc_error(lambda: _register(stub, "old", game="taki"))
    assert code == DENIED and "'old' is taken by another owner (registered for take5)" in details
    assert _register(stub, "split", a_token).owner == owner_id(token_hash(a_token))
    assert _register(stub, "split", b_token, game="taki").owner == owner_id(token_hash(b_token))
    assert _names(_owner(stub, a_token)) == ["take5/old", "take5/split"]
    assert _names(_owner(stub, b_token)) == ["taki/split"]
    assert _register(stub, "old", a_token, game="taki").owner_token == ""
    assert store.owner_hash("taki", "split") == token_hash(b_token)  # nothing moved


def test_the_address_quota_counts_ipv4_hosts_and_ipv6_networks() -> None:
    assert peer_address("ipv4:203.0.113.7:50123") == "203.0.113.7"
    assert peer_address("ipv6:[2001:db8:1:2:3:4:5:6]:443") == "2001:db8:1:2::/64"
    assert peer_address("ipv6:[2001:db8:1:2:ffff::9]:1") == "2001:db8:1:2::/64"  # one site, one count
    assert peer_address("ipv4:127.0.0.1:1") == peer_address("ipv4:127.3.2.1:1") == "loopback"  # one machine
    assert peer_address("unix:/tmp/arena.sock") == "unix"


def test_a_page_of_owners_ends_early_past_its_byte_budget(arena_server: Any, monkeypatch: Any) -> None:
    _server, stub = arena_server(verify_bots=False)
    for i in range(3):
        stub.CreateOwner(arena_pb2.CreateOwnerRequest(label=f"owner {i}"))
    monkeypatch.setattr("arena.server.owners.MAX_PAGE_BYTES", 1)  # every owner is over it: one a page
    pages = []
    page = ""
    while True:
        answer = stub.ListOwners(arena_pb2.ListOwnersRequest(page_size=10, page_token=page))
        pages.append([o.label for o in answer.owners])
        page = answer.next_page_token
        if not page:
            break
    assert [len(p) for p in pages] == [1, 1, 1] and sorted(sum(pages, [])) == ["owner 0", "owner 1", "owner 2"]


def test_the_organiser_removes_a_squatter_and_gets_its_names_back(arena_server: Any, store: Store) -> None:
    """A stranger took the arena's last names: RemoveOwner removes its bots, ends its token and frees its names,
    but a NAME with stored matches stays held by nobody (no token registers it, in any game or spelling, and no
    restart's migration makes an account of it again); the CLI says what it did."""
    from click.testing import CliRunner

    from arena.cli.app import cli

    server, stub = arena_server(verify_bots=False)
    stub.SetRegistration(arena_pb2.SetRegistrationRequest(max_names_total=3))
    squatter = _register(stub, "s1")
    token = squatter.owner_token
    _register(stub, "s2", token)
    _register(stub, "s1", token, game="taki")
    assert store.record_result("take5", "m-1", ["s2@0", "other@1"], [1.0, 2.0], [1, 2], [0, 0], {"match_id": "m-1"})
    code, _ = rpc_error(lambda: _register(stub, "legit"))
    assert code == EXHAUSTED

    code, _ = rpc_error(lambda: stub.RemoveOwner(arena_pb2.RemoveOwnerRequest(id="o-bad")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    address = f"127.0.0.1:{server.port}"
    result = CliRunner(env={"ARENA_ADMIN_TOKEN": server.admin_token}).invoke(
        cli, ["owner", "remove", squatter.owner, "--server", address, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "owner": squatter.owner, "removed_bots": ["take5/s1@0", "take5/s2@0", "taki/s1@0"],
        "released_names": ["take5/s1", "taki/s1"], "kept_names": ["take5/s2"]}
    assert not list(stub.ListBots(arena_pb2.ListBotsRequest()).bots)
    assert store.names_total() == 1  # take5/s2 only

    code, _ = rpc_error(lambda: _owner(stub, token))
    assert code == DENIED  # its token is no owner's any more
    signed = CliRunner(env={"ARENA_TOKEN": token}).invoke(cli, ["owner", "show", "--server", address])
    assert signed.exit_code == 1 and "organiser removed the owner of this token" in signed.output
    code, _ = rpc_error(lambda: _register(stub, "s9", token))
    assert code == DENIED
    newcomer = _register(stub, "s1")  # a freed name: anyone's
    assert newcomer.owner != squatter.owner and _register(stub, "legit", newcomer.owner_token).bot_id == "legit@0"
    store.migrate_owners()  # as at every start of arena serve
    assert store.get_owner(token_hash(token)) is None
    for name, game in (("s2", "take5"), ("S2", "take5"), ("s2", "taki")):  # its history is nobody's to take over
        code, _ = rpc_error(lambda name=name, game=game: _register(stub, name, game=game))
        assert code == DENIED, (name, game)
    code, _ = rpc_error(lambda: stub.RemoveOwner(arena_pb2.RemoveOwnerRequest(id=squatter.owner)))
    assert code == grpc.StatusCode.NOT_FOUND


def test_the_organiser_removes_a_bot_whose_owner_token_was_lost(arena_server: Any, tmp_path: Any) -> None:
    """A registration whose answer was lost (Ctrl-C, a dropped link) leaves a bot whose owner token nobody has:
    `arena bot remove --as-organiser` signs with the admin token instead."""
    from click.testing import CliRunner

    from arena.cli.app import cli

    server, stub = arena_server(verify_bots=False)
    lost = _register(stub, "lost")  # its answer, with the owner token, never reached anyone
    runner = CliRunner(env={"ARENA_TOKEN": None, "ARENA_ADMIN_TOKEN": None})
    address = ["--server", f"127.0.0.1:{server.port}", "--data-dir", str(tmp_path)]
    refused = runner.invoke(cli, ["bot", "remove", "lost", *address])
    assert refused.exit_code == 1 and "owner token" in refused.stderr
    admin = CliRunner(env={"ARENA_TOKEN": None, "ARENA_ADMIN_TOKEN": server.admin_token})
    refused = admin.invoke(cli, ["bot", "remove", "lost", *address])  # never the admin token unasked
    assert refused.exit_code == 1 and "owner token" in refused.stderr
    result = admin.invoke(cli, ["bot", "remove", "lost", "--as-organiser", *address])
    assert result.exit_code == 0, result.output
    assert "removed take5 bot lost@0" in result.output
    assert not list(stub.ListBots(arena_pb2.ListBotsRequest()).bots) and lost.owner


def test_a_removed_owners_token_registers_nothing_again_and_its_running_seats_stay_its_names(
        arena_server: Any, store: Store) -> None:
    """An owner that registered during its own removal kept bots and got its token back (the account was re-made
    from a leftover name; a restart's migration did the same); a stranger registering a freed NAME took the removed
    bot's seats of a running tournament. Now the registering step itself refuses a removed owner's key, the
    migration never re-makes it, and a NAME seated in a running tournament stays held."""
    from arena.store import OwnershipError, TournamentInfo

    server, stub = arena_server(verify_bots=False)
    gone = _register(stub, "q1")
    token, key = gone.owner_token, token_hash(gone.owner_token)
    _register(stub, "q2", token)
    store.create_tournament(TournamentInfo(id="t5", game="take5", bots=("q1@0", "kid@1"), seats_per_match=2,
                                           rounds=1, seed=1, config={}, deadline_ms=1000, matches_total=1,
                                           created_at=0.0))
    done = stub.RemoveOwner(arena_pb2.RemoveOwnerRequest(id=gone.owner))
    assert [(n.game, n.name) for n in done.kept_names] == [("take5", "q1")]  # seated in running t5
    assert [(n.game, n.name) for n in done.released_names] == [("take5", "q2")]
    for name in ("q1", "q2", "q3"):  # its token, sent plainly, is nobody's: for its names and for new ones
        code, details = rpc_error(lambda name=name: _register(stub, name, token))
        assert code == DENIED, (name, details)
    assert "organiser removed the owner of this token" in details
    with pytest.raises(OwnershipError):  # a registration that passed the token check before the removal
        store.register_bot("take5", "q2", ENDPOINT, version="9", owner_hash=key)
    code, details = rpc_error(lambda: _register(stub, "q1"))  # a stranger: not the removed bot's seats in t5
    assert code == DENIED and "organiser removed; its stored matches keep it out of use" in details
    store.migrate_owners()  # as at every start of arena serve
    store.index_owners()
    assert store.get_owner(key) is None and store.owner_removed(key)
    assert _register(stub, "q2").owner != gone.owner  # a freed name is anyone's
