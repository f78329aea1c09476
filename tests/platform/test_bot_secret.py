"""The per-bot secret (issue 8, item 3), on real bot processes over real gRPC: a bot started with a secret refuses
StartMatch, Decide and EndMatch calls that do not carry it (a stranger can no longer end a bot's match or ask it
decisions), GetInfo stays open; the owner hands the secret over at registration, the store keeps it, no reply
shows it, and the referee (through the workers' SeatSpecs) sends it, so tournaments play without a fault."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent import futures
from typing import Any

import grpc
import pytest
from platform_helpers import rpc_error, wait_until

from arena.match.options import RefereeOptions
from arena.match.record import SeatSpec
from arena.match.referee import run_match
from arena.store import Store
from arena_sdk.guard import BOT_SECRET_METADATA
from arena_sdk.pb import arena_pb2, bot_pb2, bot_pb2_grpc

SECRET = "s3cret-of-the-owner-0123456789"
OTHER = "s3cret-of-a-stranger-987654321"


def _requests() -> dict[str, Any]:
    """One well-formed request per match method (a 2-seat Take 5 match of a bot that plays seat 0)."""
    return {
        "StartMatch": bot_pb2.StartMatchRequest(match_id="m-secret", game="take5", seat=0, num_players=2),
        "EndMatch": bot_pb2.EndMatchRequest(match_id="m-secret", seat=0),
        "Decide": bot_pb2.DecideRequest(match_id="m-secret", seat=0),
    }


def test_a_bot_started_with_a_secret_answers_match_calls_only_with_it(start_bot: Callable[..., Any]) -> None:
    by_flag = start_bot("sample:random", extra_args=["--secret", SECRET])
    by_env = start_bot("sample:heuristic", secret=SECRET)  # the other way to give it: ARENA_BOT_SECRET
    for bot in (by_flag, by_env):
        with grpc.insecure_channel(bot.endpoint) as channel:
            stub = bot_pb2_grpc.BotStub(channel)
            assert stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=5).games  # open: registration uses it
            for method, request in _requests().items():
                call = getattr(stub, method)
                code, details = rpc_error(lambda: call(request, timeout=5))  # noqa: B023 - called at once
                assert code == grpc.StatusCode.UNAUTHENTICATED, (method, details)
                assert f"no {BOT_SECRET_METADATA} metadata" in details
                code, details = rpc_error(
                    lambda: call(request, timeout=5, metadata=((BOT_SECRET_METADATA, OTHER),)))  # noqa: B023
                assert code == grpc.StatusCode.PERMISSION_DENIED, (method, details)
                assert SECRET not in details and OTHER not in details
            # with the secret the calls reach the bot (a Decide without a view is refused by the bot itself)
            meta = ((BOT_SECRET_METADATA, SECRET),)
            stub.StartMatch(_requests()["StartMatch"], timeout=5, metadata=meta)
            code, _ = rpc_error(lambda: stub.Decide(_requests()["Decide"], timeout=5, metadata=meta))  # noqa: B023
            assert code == grpc.StatusCode.INVALID_ARGUMENT
            stub.EndMatch(_requests()["EndMatch"], timeout=5, metadata=meta)
        assert "Traceback" not in bot.stderr_tail()


def test_the_referee_sends_the_secret_of_each_seat(start_bot: Callable[..., Any]) -> None:
    guarded = start_bot("sample:random", extra_args=["--secret", SECRET])
    plain = start_bot("sample:random")
    seats = [SeatSpec("guarded", guarded.endpoint, secret=SECRET), SeatSpec("plain", plain.endpoint)]
    assert SECRET not in repr(seats[0])
    record = asyncio.run(run_match("m-ok", "take5", seats, None, seed=3, options=RefereeOptions(deadline_ms=2000)))
    assert not record.faults
    assert SECRET not in str(record.to_dict())
    # the same bot seated without its secret: every call to it is refused, and recorded as that seat's faults
    stranger = [SeatSpec("guarded", guarded.endpoint), SeatSpec("plain", plain.endpoint)]
    record = asyncio.run(run_match("m-stranger", "take5", stranger, None, seed=3,
                                   options=RefereeOptions(deadline_ms=2000, max_faults=0, max_consecutive_timeouts=0)))
    assert record.faults and {f.seat for f in record.faults} == {0}
    assert all("UNAUTHENTICATED" in f.detail for f in record.faults)


def test_registration_hands_the_secret_to_the_workers_and_no_reply_shows_it(
        arena_server: Callable[..., Any], start_bot: Callable[..., Any], store: Store,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server, stub = arena_server(workers=1, concurrency=2)
    a = start_bot("sample:random", extra_args=["--secret", SECRET, "--name", "sec-a"])
    b = start_bot("sample:heuristic", extra_args=["--secret", OTHER, "--name", "sec-b"])
    replies: list[Any] = []
    for name, bot, secret in (("sec-a", a, SECRET), ("sec-b", b, OTHER)):
        record = stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint, game="take5",
                                                               bot_secret=secret))
        assert record.has_bot_secret
        replies.append(record)
    assert store.get_bot("take5", "sec-a").secret == SECRET  # kept with the bot record, for the workers
    # a secret that is too short is refused, and the message does not echo it
    code, details = rpc_error(lambda: stub.RegisterBot(arena_pb2.RegisterBotRequest(
        name="sec-a", endpoint=a.endpoint, game="take5", bot_secret="short")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "bot_secret" in details and "short" not in details
    # re-registering without a secret keeps it (the bot still needs it)
    stub.RegisterBot(arena_pb2.RegisterBotRequest(name="sec-a", endpoint=a.endpoint, game="take5",
                                                  owner_token=replies[0].owner_token))
    assert store.get_bot("take5", "sec-a").secret == SECRET
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=["sec-a", "sec-b"],
                                                                seats_per_match=2, rounds=1))
    wait_until(lambda: stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id)).state == "finished",
               "the tournament of two bots with secrets to finish")
    done = stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))
    assert done.matches_done == done.matches_total > 0 and done.faults == 0
    matches = stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=t.id)).matches
    replies += [stub.ListBots(arena_pb2.ListBotsRequest(check_endpoints=True)), done, *matches,
                stub.GetMatch(arena_pb2.GetMatchRequest(match_id=matches[0].match_id)),
                stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest())]
    for reply in replies:
        raw = reply.SerializeToString()
        for secret in (SECRET, OTHER, server.admin_token):
            assert secret.encode() not in raw, type(reply).__name__
    for secret in (SECRET, OTHER, server.admin_token):
        assert secret not in caplog.text
    for bot in (a, b):
        assert "Traceback" not in bot.stderr_tail()


def test_a_bot_with_a_secret_is_registered_only_with_its_secret(arena_server: Callable[..., Any],
                                                               start_bot: Callable[..., Any], store: Store) -> None:
    """GetInfo is open, so a matching name proves nothing: registration also asks the bot (one EndMatch without a
    match id) whether it takes the secret given. A stranger who knows the address of a bot started with a secret
    cannot claim its NAME first, and an owner who forgets the secret is told at registration, not by the faults of
    a first match. Nothing is stored for a refused registration, and no refusal shows a secret."""
    _server, stub = arena_server()
    bot = start_bot("sample:random", extra_args=["--secret", SECRET, "--name", "guarded"])
    open_bot = start_bot("sample:heuristic", extra_args=["--name", "open"])
    owners = len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners)
    for given, says in (("", "answers match calls only with its bot secret (UNAUTHENTICATED)"),
                        (OTHER, "refuses the bot secret given (PERMISSION_DENIED)")):
        code, details = rpc_error(lambda: stub.RegisterBot(arena_pb2.RegisterBotRequest(  # noqa: B023
            name="guarded", endpoint=bot.endpoint, game="take5", bot_secret=given)))
        assert code == grpc.StatusCode.FAILED_PRECONDITION and says in details, details
        assert SECRET not in details and OTHER not in details
    assert store.bot_versions("take5", "guarded") == [] and store.owner_hash("take5", "guarded") is None
    assert len(stub.ListOwners(arena_pb2.ListOwnersRequest()).owners) == owners
    owned = stub.RegisterBot(arena_pb2.RegisterBotRequest(name="guarded", endpoint=bot.endpoint, game="take5",
                                                          bot_secret=SECRET))
    assert owned.has_bot_secret
    # a move keeps the secret when none is given, and it must be the new endpoint's: a bot without it is refused
    moved = start_bot("sample:random", extra_args=["--secret", SECRET, "--name", "guarded"])
    stub.UpdateBot(arena_pb2.UpdateBotRequest(game="take5", bot="guarded", endpoint=moved.endpoint,
                                              owner_token=owned.owner_token))
    code, details = rpc_error(lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(
        game="take5", bot="guarded", endpoint=bot.endpoint, owner_token=owned.owner_token, bot_secret=OTHER)))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "refuses the bot secret given" in details, details
    assert store.get_bot("take5", owned.bot_id).endpoint == moved.endpoint
    assert store.get_bot("take5", owned.bot_id).secret == SECRET
    # a bot without a secret takes any (it checks none), as before
    assert stub.RegisterBot(arena_pb2.RegisterBotRequest(name="open", endpoint=open_bot.endpoint, game="take5",
                                                         bot_secret=OTHER)).has_bot_secret
    for b in (bot, moved, open_bot):
        assert "Traceback" not in b.stderr_tail()


class _SlowCheckBot(bot_pb2_grpc.BotServicer):
    """A bot that checks the secret, as the SDK does, but only after ``delay_s`` (a busy or hostile bot): GetInfo
    answers at once."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def GetInfo(self, request: Any, context: grpc.ServicerContext) -> bot_pb2.BotInfo:  # noqa: N802 - gRPC API
        return bot_pb2.BotInfo(name="slowcheck", version="1.0", games=["take5"])

    def EndMatch(self, request: Any, context: grpc.ServicerContext) -> bot_pb2.EndMatchResponse:  # noqa: N802
        time.sleep(self.delay_s)
        if dict(context.invocation_metadata()).get(BOT_SECRET_METADATA) != SECRET:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "no secret")
        return bot_pb2.EndMatchResponse()


def test_a_bot_that_keeps_the_secret_check_waiting_is_not_registered(arena_server: Callable[..., Any],
                                                                     start_bot: Callable[..., Any],
                                                                     store: Store) -> None:
    """The check fails closed: a bot whose EndMatch gives no status of its own within the check's bound is refused
    (else a squatter could claim a busy protected bot); and the refusal of a secret kept from the registration,
    none given, says so."""
    _server, stub = arena_server(verify_timeout_s=2.0)  # a loaded machine's GetInfo of a real bot fits in it
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    bot_pb2_grpc.add_BotServicer_to_server(_SlowCheckBot(6.0), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        for given in ("", SECRET):
            code, details = rpc_error(lambda: stub.RegisterBot(arena_pb2.RegisterBotRequest(  # noqa: B023
                name="slowcheck", endpoint=f"127.0.0.1:{port}", game="take5", bot_secret=given)))
            assert code == grpc.StatusCode.FAILED_PRECONDITION, details
            assert "answered GetInfo but not the bot secret check (EndMatch without a match id) within 2000 ms " \
                   "(DEADLINE_EXCEEDED)" in details, details
        assert store.bot_versions("take5", "slowcheck") == []
    finally:
        server.stop(0)
    # the secret kept for a bot (none given with the call) that its new endpoint refuses
    first = start_bot("sample:random", extra_args=["--secret", SECRET, "--name", "kept"])
    owned = stub.RegisterBot(arena_pb2.RegisterBotRequest(name="kept", endpoint=first.endpoint, game="take5",
                                                          bot_secret=SECRET))
    other = start_bot("sample:random", extra_args=["--secret", OTHER, "--name", "kept"])
    code, details = rpc_error(lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(
        game="take5", bot="kept", endpoint=other.endpoint, owner_token=owned.owner_token)))
    assert code == grpc.StatusCode.FAILED_PRECONDITION, details
    assert "refuses the bot secret kept for it (none was given) (PERMISSION_DENIED)" in details, details


def test_the_referees_getinfo_checks_carry_the_secret_and_keep_their_room(start_bot: Callable[..., Any]) -> None:
    """A stranger holding the share of a secret bot that calls without the secret take (here 2 GetInfo calls that
    never send their request, against --max-workers 4) leaves the referee's GetInfo checks served: they carry the
    secret (``checks.dial_infos`` with ``secrets``, as a tournament's readiness check sends them); without it the
    same check is refused at once."""
    import threading

    from arena.server.checks import NoAnswer, dial_infos

    bot = start_bot("sample:random", extra_args=["--secret", SECRET, "--max-workers", "4"])
    release = threading.Event()

    def never_sent() -> Any:
        release.wait(30)
        yield b""

    with grpc.insecure_channel(bot.endpoint) as stranger:
        held = stranger.stream_unary("/arena.v1.Bot/GetInfo", request_serializer=lambda b: b,
                                     response_deserializer=lambda b: b)
        calls = [held.future(never_sent(), timeout=30) for _ in range(2)]
        try:
            time.sleep(0.5)
            without = dial_infos([bot.endpoint], 3.0)[bot.endpoint]
            assert isinstance(without, NoAnswer) and "RESOURCE_EXHAUSTED" in without.reason, without
            with_secret = dial_infos([bot.endpoint], 3.0, secrets={bot.endpoint: SECRET})[bot.endpoint]
            assert isinstance(with_secret, bot_pb2.BotInfo) and with_secret.games
        finally:
            release.set()
            for call in calls:
                call.cancel()
