"""Who may change the arena (issue 8, item 3): organiser calls need the admin token in the call metadata
(UNAUTHENTICATED without it, PERMISSION_DENIED with a wrong one), a bot's own changes its owner token (or the admin
token, for a removal), and every read is public."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from platform_helpers import rpc_error

from arena.server import auth
from arena.server.app import ArenaServer
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

ORGANISER_CALLS = {
    "CreateTournament": arena_pb2.CreateTournamentRequest(game="take5", bots=["a", "b"], seats_per_match=2),
    "CreateSprt": arena_pb2.CreateSprtRequest(game="take5", v1="a@1", v2="a@2"),
    "CancelTournament": arena_pb2.CancelTournamentRequest(id="t1"),
    "RebuildLadder": arena_pb2.RebuildLadderRequest(game="take5"),
    "CreateOwner": arena_pb2.CreateOwnerRequest(label="team"),
    "ListOwners": arena_pb2.ListOwnersRequest(),
    "SetRegistration": arena_pb2.SetRegistrationRequest(max_names_total=100),
    "RemoveOwner": arena_pb2.RemoveOwnerRequest(id="o-0123456789abcdef"),
}
READS = {
    "ListBots": arena_pb2.ListBotsRequest(),
    "ListTournaments": arena_pb2.ListTournamentsRequest(),
    "GetLadder": arena_pb2.GetLadderRequest(game="take5"),
    "ListMatches": arena_pb2.ListMatchesRequest(),
    "ListWorkers": arena_pb2.ListWorkersRequest(),
    "GetArenaInfo": arena_pb2.GetArenaInfoRequest(),
}


@pytest.fixture
def plain(arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]]) -> Any:
    """(server, a stub that sends no token, the token-sending stub of the fixture)."""
    server, admin_stub = arena_server(verify_bots=False)
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        yield server, arena_pb2_grpc.ArenaStub(channel), admin_stub
    finally:
        channel.close()


def test_the_calls_that_need_the_admin_token_are_the_organiser_calls() -> None:
    assert set(ORGANISER_CALLS) == auth.ADMIN_METHODS


@pytest.mark.parametrize("method", sorted(ORGANISER_CALLS))
def test_organiser_calls_need_the_admin_token(plain: Any, method: str) -> None:
    server, stub, _ = plain
    request = ORGANISER_CALLS[method]
    code, details = rpc_error(lambda: getattr(stub, method)(request, timeout=10))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert details.startswith(f"{method} is an organiser call: it needs the arena's admin token")
    assert "ARENA_ADMIN_TOKEN" in details and "admin-token.json" in details
    wrong = auth.admin_metadata("x" * 43)
    code, details = rpc_error(lambda: getattr(stub, method)(request, timeout=10, metadata=wrong))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert details.startswith(f"{method}: wrong admin token") and "x" * 43 not in details
    for bad in (("authorization", server.admin_token), ("authorization", "Bearer"), ("x-token", server.admin_token)):
        code, _ = rpc_error(lambda: getattr(stub, method)(request, timeout=10, metadata=(bad,)))  # noqa: B023
        assert code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
    # with the token the call is served (whatever the answer: a tournament of unknown bots is NOT_FOUND, ...)
    try:
        getattr(stub, method)(request, timeout=10, metadata=auth.admin_metadata(server.admin_token))
    except grpc.RpcError as exc:
        assert exc.code() not in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


def test_reads_are_public_and_bots_need_no_admin(plain: Any) -> None:
    server, stub, _ = plain
    for method, request in READS.items():
        getattr(stub, method)(request, timeout=10)
    record = stub.RegisterBot(arena_pb2.RegisterBotRequest(name="pub", endpoint="127.0.0.1:5001", game="take5"))
    assert record.owner_token  # anyone registers a new NAME and owns it
    code, _ = rpc_error(lambda: stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="pub", game="take5")))
    assert code == grpc.StatusCode.PERMISSION_DENIED  # a stranger cannot remove it
    # the organiser can, with the admin token instead of the owner token
    removed = stub.RemoveBot(arena_pb2.RemoveBotRequest(bot="pub", game="take5"),
                             metadata=auth.admin_metadata(server.admin_token))
    assert list(removed.removed) == ["pub@0"]


def test_the_admin_token_given_to_the_server_must_be_long_enough(redis_url: str) -> None:
    with pytest.raises(ValueError, match="admin token must be 16..256 visible ASCII characters"):
        ArenaServer("127.0.0.1:0", redis_url, admin_token="short")
    with pytest.raises(ValueError, match="visible ASCII"):
        ArenaServer("127.0.0.1:0", redis_url, admin_token="with spaces in the token")
    assert ArenaServer("127.0.0.1:0", redis_url).admin_token != ArenaServer("127.0.0.1:0", redis_url).admin_token
