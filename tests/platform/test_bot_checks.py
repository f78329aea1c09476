"""The referee checks bots before it relies on them, over real gRPC with real bot processes: registration says
what went wrong with an endpoint (connection refused, no answer within the timeout, an error status), and a new
tournament is refused, with nothing queued, while any of its bots does not answer GetInfo as registered."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
from platform_helpers import INFO_BOT, STREAM_BOT, VERSIONED_BOT, rpc_error

from arena.server.app import ArenaServer
from arena.store import Store
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

CHECK_S = 0.5  # the servers here wait this long for a GetInfo answer

AUTH_KEYS = ("arena:challenge-key", "arena:nonce:", "arena:id")  # what a signed call leaves: no tournament state


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """A listening port that never answers: the connection is made (by the kernel), then nothing comes back."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def _register(stub: arena_pb2_grpc.ArenaStub, name: str, endpoint: str) -> arena_pb2.BotRecord:
    return stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint, game="take5"))


def _create(stub: arena_pb2_grpc.ArenaStub, bots: list[str], **kwargs: Any) -> arena_pb2.Tournament:
    return stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=bots, seats_per_match=2,
                                                                   **kwargs))


def test_registration_errors_do_not_tell_what_listens_at_a_port(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], dead_endpoint: str,
        silent_endpoint: str, redis_url: str) -> None:
    """RegisterBot is no port scanner: a closed port, a silent socket, a gRPC server that is no bot (the arena's own
    port) and a Redis server all get the same sentence (only the address differs)."""
    server, stub = arena_server(verify_timeout_s=CHECK_S)
    parts = urlsplit(redis_url)  # the private Redis has a password: redis://:PW@HOST:PORT/0
    redis_endpoint = f"{parts.hostname}:{parts.port}"
    answers = []
    for name, endpoint in (("ghost", dead_endpoint), ("mute", silent_endpoint),
                           ("arena", f"127.0.0.1:{server.port}"), ("redis", redis_endpoint)):
        code, details = rpc_error(lambda: _register(stub, name, endpoint))  # noqa: B023 - called at once
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        answers.append(details.replace(endpoint, "HOST:PORT"))
    assert answers == [answers[0]] * 4
    assert answers[0].startswith("no arena bot answered GetInfo at HOST:PORT within 500 ms; ")
    assert list(stub.ListBots(arena_pb2.ListBotsRequest()).bots) == []


def test_a_tournament_whose_bots_are_down_is_refused_and_nothing_is_queued(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], start_bot: Callable[..., Any],
        store: Store, silent_endpoint: str) -> None:
    """The reviewer's case: bots registered, then stopped; a tournament among them would only rate faults."""
    _server, stub = arena_server(verify_timeout_s=CHECK_S)
    bots = {name: start_bot("sample:random", extra_args=["--name", name]) for name in ("up", "down", "mute", "up2")}
    for name, bot in bots.items():
        _register(stub, name, bot.endpoint)
    bots["down"].stop()  # its port now refuses connections
    store.update_bot("take5", "mute@1.0", silent_endpoint)  # moved to a port that never answers
    keys_before = sorted(k for k in store.client.keys("*") if not k.startswith(AUTH_KEYS))

    for dry_run in (False, True):
        code, details = rpc_error(lambda dry_run=dry_run: _create(stub, ["up", "down", "mute", "up2"],
                                                                  dry_run=dry_run))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert details.startswith(
            f"bots not answering: down@1.0 ({bots['down'].endpoint}: connection refused), "
            f"mute@1.0 ({silent_endpoint}: no answer within 0.5 s); nothing was queued: ")
        assert "up@1.0" not in details and "up2@1.0" not in details
    after = sorted(k for k in store.client.keys("*") if not k.startswith(AUTH_KEYS))
    assert after == keys_before  # no tournament, no job, no id used
    assert store.queued_jobs() == 0
    assert list(stub.ListTournaments(arena_pb2.ListTournamentsRequest()).tournaments) == []

    # the bots that answer can play; the first tournament stored gets the first id
    t = _create(stub, ["up", "up2"], rounds=2)
    assert (t.id, t.state, t.matches_total) == ("t1", "running", 2)
    assert store.queued_jobs() == 2


def test_a_tournament_whose_bot_now_reports_another_version_or_game_is_refused(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], start_bot: Callable[..., Any],
        store: Store, caplog: pytest.LogCaptureFixture) -> None:
    _server, stub = arena_server(verify_timeout_s=CHECK_S)
    for name in ("v", "g", "ok"):
        _register(stub, name, start_bot(VERSIONED_BOT, extra_args=["--bot-version", "1.0", "--name", name]).endpoint)
    # behind the arena's back, new code now answers at the registered endpoints
    newer = start_bot(VERSIONED_BOT, extra_args=["--bot-version", "2.0"]).endpoint
    taki = start_bot(VERSIONED_BOT, extra_args=["--bot-version", "1.0", "--games", "taki"]).endpoint
    store.update_bot("take5", "v@1.0", newer)
    store.update_bot("take5", "g@1.0", taki)
    code, details = rpc_error(lambda: _create(stub, ["ok", "v", "g"]))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details.startswith(
        f"bots not as registered: v@1.0 ({newer} now reports version '2.0'; register it as a new version), "
        f"g@1.0 ({taki} now plays taki, not take5); nothing was queued")
    assert store.queued_jobs() == 0
    # found so again (anyone's read may check): no new write, no new log line
    marked = store.bot_health("take5", ["v@1.0", "g@1.0"])
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="arena.server.checks"):
        for _ in range(3):
            assert rpc_error(lambda: _create(stub, ["ok", "v", "g"]))[0] == grpc.StatusCode.FAILED_PRECONDITION
            stub.ListBots(arena_pb2.ListBotsRequest(check_endpoints=True))
    assert store.bot_health("take5", ["v@1.0", "g@1.0"]) == marked
    assert not [r for r in caplog.records if "not as registered" in r.getMessage()], caplog.text


def test_without_verification_nothing_is_called(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], dead_endpoint: str) -> None:
    """``verify_bots=False`` (tests with made-up endpoints): registration and tournaments call no bot."""
    _server, stub = arena_server(verify_bots=False)
    for name in ("a", "b"):
        _register(stub, name, dead_endpoint)
    assert _create(stub, ["a", "b"]).id == "t1"


def test_a_bad_verify_timeout_is_refused(redis_url: str) -> None:
    with pytest.raises(ValueError, match="verify timeout must be more than 0 s, got 0"):
        ArenaServer("127.0.0.1:0", redis_url, verify_timeout_s=0)


def test_an_author_is_stored_without_control_or_bidi_characters() -> None:
    """A bot's GetInfo author and sdk_version are shown on pages and in terminals: a terminal escape, a line break
    or a right-to-left override (which would reorder the text shown after it) is dropped at registration; text,
    HTML (escaped where shown) and other scripts stay."""
    from arena.server.checks import registration_info

    info = bot_pb2.BotInfo(name="spoof", version="1.0", games=["take5"], sdk_version="1.2\x1b[31m",
                           author="Eve \u202egnp.exe\x1b[2J <b>x</b>\nÉlodie 山田\u00a0")
    kept = registration_info("127.0.0.1:1", "take5", "spoof", info)
    assert kept.author == "Eve gnp.exe[2J <b>x</b>Élodie 山田\u00a0" and kept.sdk_version == "1.2[31m"
    assert (kept.name, kept.version, list(kept.games)) == ("spoof", "1.0", ["take5"])
    plain = bot_pb2.BotInfo(name="ok", version="2", games=["take5"], author="Ann Lee", sdk_version="0.9")
    assert registration_info("127.0.0.1:1", "take5", "ok", plain) is plain


def test_a_bot_claiming_the_match_stream_without_serving_it_is_refused_at_registration(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]],
        start_bot: Callable[..., Any]) -> None:
    """A bot written from the .proto whose GetInfo says serves_match_stream but that does not implement PlayMatch
    (grpc's generated servicer answers UNIMPLEMENTED) was registered, shown healthy, and forfeited every match with
    10 `error` faults; RegisterBot and UpdateBot now refuse it, saying what to change, and nothing is stored. A bot
    that serves the stream, with a bot secret it checks before reading, registers as before."""
    _server, stub = arena_server()
    claims = start_bot(STREAM_BOT, extra_args=["--style", "no_stream", "--name", "claims"])
    code, details = rpc_error(lambda: _register(stub, "claims", claims.endpoint))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details.startswith(f"the bot at {claims.endpoint} says serves_match_stream in GetInfo, but it does not "
                              f"implement PlayMatch (it refused a match stream with UNIMPLEMENTED)")
    assert "implement PlayMatch" in details and "or leave serves_match_stream false" in details
    assert list(stub.ListBots(arena_pb2.ListBotsRequest()).bots) == []

    secret = "s" * 16
    serves = start_bot(STREAM_BOT, extra_args=["--style", "honest", "--name", "claims", "--secret", secret])
    record = stub.RegisterBot(arena_pb2.RegisterBotRequest(name="claims", endpoint=serves.endpoint, game="take5",
                                                           bot_secret=secret))
    assert record.endpoint == serves.endpoint
    code, details = rpc_error(lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(
        game="take5", bot="claims@test", endpoint=claims.endpoint, owner_token=record.owner_token)))
    assert code == grpc.StatusCode.FAILED_PRECONDITION, details
    assert details.startswith(f"the bot at {claims.endpoint} says serves_match_stream in GetInfo, but it does not "
                              f"implement PlayMatch")
    [kept] = stub.ListBots(arena_pb2.ListBotsRequest()).bots
    assert kept.endpoint == serves.endpoint


def test_a_getinfo_answer_over_the_read_limit_is_refused_as_such_at_registration(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]],
        start_bot: Callable[..., Any]) -> None:
    """A bot (written from the .proto) whose GetInfo answer is over the 16 KiB the referee reads (a 20,000-character
    author) was told "no arena bot answered GetInfo ...; check that the bot runs there"; it is told that its answer
    was over the limit, and what the limits are. One within 16 KiB but with a 200-character author is told that."""
    _server, stub = arena_server()
    big = start_bot(INFO_BOT, extra_args=["--author-chars", "20000", "--name", "big"])
    code, details = rpc_error(lambda: _register(stub, "big", big.endpoint))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "no arena bot answered" not in details
    assert details.startswith(f"the bot at {big.endpoint} answered GetInfo with a BotInfo over the arena's size "
                              f"limit (20,"), details
    assert "the arena reads at most 16,384 bytes (16 KiB) of it" in details
    assert "author 128 characters" in details and "games at most 16 ids of 32 characters" in details
    long = start_bot(INFO_BOT, extra_args=["--author-chars", "200", "--name", "long"])
    code, details = rpc_error(lambda: _register(stub, "long", long.endpoint))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert details == (f"the bot at {long.endpoint} answered GetInfo over the arena's limits: BotInfo.author is 200 "
                       f"characters long; the limit is 128")
    assert list(stub.ListBots(arena_pb2.ListBotsRequest()).bots) == []
