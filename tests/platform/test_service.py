"""The Arena gRPC service over real loopback gRPC, a real redis-server and real bot processes."""

from __future__ import annotations

import asyncio
import re
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.cli.app import admin_signer
from arena.server.app import ArenaServer
from arena.server.servicer import ServiceError
from arena.store import Store, WorkerStatus
from arena.store.keys import deferred_key
from arena.store.redis_server import PrivateRedis
from arena.store.redis_urls import redact_url
from arena.web.client import ArenaDown, ArenaReader
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

WAIT_S = 180.0  # a hang guard, not a speed requirement


def _serve(redis_url: str, **kwargs: Any) -> Iterator[tuple[ArenaServer, arena_pb2_grpc.ArenaStub,
                                                                grpc.Channel]]:
    server = ArenaServer("127.0.0.1:0", redis_url, **kwargs)
    port = server.start()
    assert port == server.port and port > 0
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    token = server.admin_token  # organiser calls carry it, as from the CLI
    try:
        yield server, arena_pb2_grpc.ArenaStub(grpc.intercept_channel(channel, admin_signer(channel, token))), \
            channel
    finally:
        channel.close()
        server.stop()


@pytest.fixture
def arena(redis_url: str) -> Iterator[arena_pb2_grpc.ArenaStub]:
    """An Arena stub on a server without workers that registers endpoints without checking them."""
    for _server, stub, _channel in _serve(redis_url, workers=0, verify_bots=False):
        yield stub


def _code(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as excinfo:
        call()
    return excinfo.value.code(), excinfo.value.details()


def _register(stub: arena_pb2_grpc.ArenaStub, name: str, endpoint: str = "127.0.0.1:5001",
              token: str = "") -> arena_pb2.BotRecord:
    return stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint, game="take5",
                                                         owner_token=token))


# -- validation and errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "endpoint", "game", "message"),
    [
        ("bad name", "127.0.0.1:5001", "take5", "bad bot name 'bad name'"),
        ("x" * 65, "127.0.0.1:5001", "take5", "RegisterBotRequest.name is 65 characters long; the limit is 64"),
        ("", "127.0.0.1:5001", "take5", "bad bot name ''"),
        ("ok", "127.0.0.1", "take5", "bad endpoint '127.0.0.1': expected HOST:PORT"),
        ("ok", "127.0.0.1:70000", "take5", "port 1..65535"),
        ("ok", "unix-abstract:51301", "take5", "'unix-abstract' is not a host name (gRPC reads it as a URI scheme)"),
        ("ok", "tls://UNIX:1234", "take5", "'UNIX' is not a host name"),
        ("ok", "127.0.0.1:5001", "chess", "unknown game 'chess'; known games: take5"),
        ("ok", "127.0.0.1:5001", "", "game is required"),
    ],
)
def test_register_bot_refuses_bad_input(arena: arena_pb2_grpc.ArenaStub, name: str, endpoint: str, game: str,
                                        message: str) -> None:
    code, details = _code(lambda: arena.RegisterBot(
        arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint, game=game)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert message in details


def test_register_with_the_owner_token_upserts_and_list_filters_by_game(arena: arena_pb2_grpc.ArenaStub) -> None:
    first = _register(arena, "alpha", "127.0.0.1:5001")
    assert first.owner_token and first.bot_id == "alpha@0" and first.version == "0"
    again = _register(arena, "alpha", "[::1]:6001", token=first.owner_token)
    assert again.owner_token == ""  # shown only once
    _register(arena, "bravo", "bots.example:5002")
    assert again.endpoint == "[::1]:6001" and again.registered_at == first.registered_at > 0
    assert again.updated_at >= first.updated_at > 0
    listed = arena.ListBots(arena_pb2.ListBotsRequest(game="take5")).bots
    assert [(b.bot_id, b.endpoint) for b in listed] == [("alpha@0", "[::1]:6001"), ("bravo@0", "bots.example:5002")]
    assert all(b.owner_token == "" for b in listed)
    assert len(arena.ListBots(arena_pb2.ListBotsRequest()).bots) == 2
    code, details = _code(lambda: arena.ListBots(arena_pb2.ListBotsRequest(game="chess")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "unknown game" in details


def test_create_tournament_errors(arena: arena_pb2_grpc.ArenaStub) -> None:
    for name in ("a", "b", "c"):
        _register(arena, name)

    def create(**kwargs: Any) -> Any:
        kwargs.setdefault("game", "take5")
        return arena.CreateTournament(arena_pb2.CreateTournamentRequest(**kwargs))

    code, details = _code(lambda: create(bots=["a", "b", "zed", "yan"]))
    assert code == grpc.StatusCode.NOT_FOUND
    assert "not registered for take5: zed, yan" in details and "arena bot register" in details
    _register(arena, "lowrisk")
    code, details = _code(lambda: create(bots=["a", "lowrsk", "lowrisk2@1.0"]))  # a NAME close to a registered one
    assert code == grpc.StatusCode.NOT_FOUND
    assert "lowrsk (did you mean lowrisk?), lowrisk2@1.0 (did you mean lowrisk@1.0?)" in details, details
    for kwargs, message in [
        ({"bots": []}, "at least 2 bots"),
        ({"bots": ["a", "b", "a"]}, "more than once: a"),
        ({"bots": ["a", "b"], "seats_per_match": 3}, "at least 3 bots, got 2"),
        ({"bots": ["a", "b"], "seats_per_match": 1}, "2..10 seats"),
        ({"bots": ["a", "b"], "game": "chess"}, "unknown game 'chess'"),
        ({"bots": ["a", "b"], "seed": 3}, "a tournament seed cannot be given"),
        ({"bots": ["a", "b"], "deals": "swiss"}, "unknown deal plan 'swiss'; choose one of duplicate, unique, rotate"),
        ({"bots": ["a", "b"], "config": bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit_rule=9))},
         "limit_rule"),
        ({"bots": ["a", "b"], "config": bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=1001))},
         "take5 limit must be 1..1000 bullheads, got 1001"),
        ({"bots": ["a", "b"], "deadline_ms": 9},
         "deadline_ms must be 10..60000 ms (the deadline of each Decide call; 0 means the default, 1000 ms), got 9"),
        ({"bots": ["a", "b"], "deadline_ms": 60001}, "deadline_ms must be 10..60000 ms"),
        ({"bots": ["a", "b"], "deadline_ms": 2**32 - 1}, f"got {2**32 - 1}"),
        ({"bots": ["a", "b"], "deadline_ms": 5, "dry_run": True}, "deadline_ms must be 10..60000 ms"),
    ]:
        code, details = _code(lambda: create(**kwargs))
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (kwargs, details)
        assert message in details, (kwargs, details)
    # nothing was created by the refused requests
    assert create(bots=["a", "b"]).id == "t1"
    # the ends of the ranges are accepted
    edges = [create(bots=["a", "b"], deadline_ms=10), create(bots=["a", "b"], deadline_ms=60000,
                                                              config=bot_pb2.GameConfig(
                                                                  take5=bot_pb2.Take5Config(limit=1000)))]
    assert [(t.id, t.deadline_ms) for t in edges] == [("t2", 10), ("t3", 60000)]
    assert edges[1].config.take5.limit == 1000


def test_create_tournament_defaults_and_get(arena: arena_pb2_grpc.ArenaStub) -> None:
    for name in ("a", "b", "c", "d", "e"):
        _register(arena, name)
    t = arena.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=["e", "d", "c", "b", "a"]))
    assert (t.id, t.seats_per_match, t.rounds, t.deadline_ms, t.state) == ("t1", 4, 1, 1000, "running")
    assert t.matches_total == 5 and t.matches_done == 0 and (t.deals, t.deal_count, t.tables_per_deal) == (
        "unique", 5, 1)  # open registration: unique deals by default
    assert len(t.seed_commitment) == 64 and t.seed_hex == ""  # the seed stays secret while the tournament runs
    assert t.formula == "C(5,4) subsets x 1 round = 5, on 5 unique deals (every table its own deal)"
    assert t.config.take5.limit == 66 and list(t.bots) == ["e@0", "d@0", "c@0", "b@0", "a@0"]
    got = arena.GetTournament(arena_pb2.GetTournamentRequest(id="t1"))
    assert got == t
    t2 = arena.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["a", "b"], rounds=3, deadline_ms=200,
        config=bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=30, known_cards=True))))
    assert (t2.id, t2.matches_total, t2.deadline_ms) == ("t2", 3, 200)
    assert t2.seed_commitment != t.seed_commitment
    assert t2.config.take5.limit == 30 and t2.config.take5.known_cards
    code, details = _code(lambda: arena.GetTournament(arena_pb2.GetTournamentRequest(id="t9")))
    assert code == grpc.StatusCode.NOT_FOUND and "no tournament t9" in details
    code, details = _code(lambda: arena.GetTournament(arena_pb2.GetTournamentRequest(id="nine")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "t1, t2" in details


def test_a_running_tournament_names_the_unhealthy_bots_it_waits_for(arena: arena_pb2_grpc.ArenaStub,
                                                                    redis_url: str) -> None:
    from arena.cli.tournament_views import waiting_text

    for name in ("a", "b", "c"):
        _register(arena, name)
    t = arena.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=["a", "b", "c"], seats_per_match=2))
    assert list(arena.GetTournament(arena_pb2.GetTournamentRequest(id=t.id)).waiting_for) == []
    store = Store.from_url(redis_url)
    try:
        for k in range(2):  # two failed matches in a row make b@0 unhealthy
            store.record_match_health("take5", f"x{k}", {"b@0": "answered no call", "a@0": None},
                                      unhealthy_after=2, now=1000.0 + k)
        got = arena.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))
        assert [(w.bot, w.unhealthy_since) for w in got.waiting_for] == [("b@0", 1001.0)]
        assert got.waiting_for[0].reason.startswith("answered no call")
        assert got.waiting_for[0].forced_at == 0.0 and got.matches_deferred == 0  # no worker alive to say
        assert "b@0: unhealthy since" in waiting_text(got) and "wait until it answers GetInfo" in waiting_text(got)
        # a live worker's cap says when its matches are played anyway; the deferred ones are counted
        now = time.time()
        for name, cap in (("w1", 300.0), ("w2", 900.0)):
            store.heartbeat(WorkerStatus(name=name, host="h", pid=1, started_at=now, last_seen=now, concurrency=1,
                                         running=(), matches_done=0, timeout_s=30.0, max_deferral_s=cap))
        store.client.zadd(deferred_key("take5"), {f"{t.id}-000001": 1002.0, f"{t.id}-000002": 1003.0,
                                                  "t99-000001": 1004.0})
        got = arena.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))
        assert got.waiting_for[0].forced_at == 1001.0 + 300.0 and got.matches_deferred == 2
        from arena.cli.tournament_views import tournament_dict

        as_json = tournament_dict(got)
        assert as_json["matches_deferred"] == 2 and as_json["waiting_for"][0]["forced_at"] == 1301.0
        text = waiting_text(got, now=1100.0)  # before its forced_at
        assert "its 2 matches wait until it answers GetInfo again, or until then, when it forfeits them" in text, text
        assert "played anyway from about" in text and "(start the bot; " in text
        assert waiting_text(got, short=True) == "waiting for b@0 (unhealthy)"
        # unhealthy again 100 s after it recovered (within the cap): its matches are forced at once, not 300 s on
        store.mark_healthy("take5", "b@0", now=2000.0)
        store.mark_unhealthy("take5", "b@0", "not as registered: another name", now=2100.0)
        got = arena.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))
        assert got.waiting_for[0].forced_at == 2100.0
        text = waiting_text(got, now=2101.0)
        assert "its matches played anyway now" in text and "wait until" not in text, text
        # a bot that answers, but not as registered, is not to be started (a re-attack: "start the bot")
        assert "(make it answer GetInfo as registered (name, version, game); " in text and "start" not in text, text
        listed = arena.ListTournaments(arena_pb2.ListTournamentsRequest()).tournaments
        assert [list(x.waiting_for) for x in listed] == [[]]  # the list reads no health
        arena.CancelTournament(arena_pb2.CancelTournamentRequest(id=t.id))
        assert list(arena.GetTournament(arena_pb2.GetTournamentRequest(id=t.id)).waiting_for) == []  # not running
    finally:
        store.close()


def test_ladder_of_an_unknown_game_and_an_empty_ladder(arena: arena_pb2_grpc.ArenaStub) -> None:
    code, _ = _code(lambda: arena.GetLadder(arena_pb2.GetLadderRequest(game="nope")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    ladder = arena.GetLadder(arena_pb2.GetLadderRequest(game="take5"))
    assert ladder.game == "take5" and list(ladder.entries) == []


def test_health_and_reflection(redis_url: str) -> None:
    for _server, _stub, channel in _serve(redis_url, workers=0):
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "arena.v1.Arena"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        reflect = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = list(reflect.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(
            list_services="")]), timeout=5))
        names = {s.name for s in replies[0].list_services_response.service}
        assert {"arena.v1.Arena", "grpc.health.v1.Health"} <= names


def test_health_watch_streams_the_status(redis_url: str) -> None:
    for _server, _stub, channel in _serve(redis_url, workers=0):
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service="arena.v1.Arena"),
                                                         timeout=5)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        watch.cancel()


def test_answer_streams_are_capped_per_client(redis_url: str, outside_address: str) -> None:
    """Health Watch and reflection streams stay open as long as their client likes, each holding memory: one client
    has at most ``RPC_CLIENT_STREAMS`` open at once, the next is refused at once (RESOURCE_EXHAUSTED), another
    client opens its own, and a stream that ends gives its place back."""
    from platform_helpers import wait_until

    from arena.server.app import RPC_CLIENT_STREAMS

    server = ArenaServer("[::]:0", redis_url, workers=0)
    port = server.start()
    request = health_pb2.HealthCheckRequest(service="arena.v1.Arena")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ours, \
                grpc.insecure_channel(f"{outside_address}:{port}") as other:
            watches = [health_pb2_grpc.HealthStub(ours).Watch(request, timeout=WAIT_S)
                       for _ in range(RPC_CLIENT_STREAMS)]
            assert all(next(w).status == health_pb2.HealthCheckResponse.SERVING for w in watches)
            late = health_pb2_grpc.HealthStub(ours).Watch(request, timeout=WAIT_S)
            with pytest.raises(grpc.RpcError) as refused:
                next(late)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "answer streams of this client are open" in (refused.value.details() or "")
            reflect = reflection_pb2_grpc.ServerReflectionStub(ours).ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=WAIT_S)
            with pytest.raises(grpc.RpcError) as refused:  # reflection counts too
                list(reflect)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            theirs = health_pb2_grpc.HealthStub(other).Watch(request, timeout=WAIT_S)
            assert next(theirs).status == health_pb2.HealthCheckResponse.SERVING
            theirs.cancel()
            for watch in watches:
                watch.cancel()
            wait_until(lambda: server.streams.open() == {}, "the streams' places given back", 10)
            again = health_pb2_grpc.HealthStub(ours).Watch(request, timeout=WAIT_S)
            assert next(again).status == health_pb2.HealthCheckResponse.SERVING
            again.cancel()
    finally:
        server.stop()


def test_calls_that_never_send_their_request_hold_no_thread(redis_url: str) -> None:
    """A stranger who opens more calls than the service has threads and never sends their requests (no token
    needed) leaves every other client served at once; once their requests come, the calls it opened are answered
    within its share (``RPC_CLIENT_SHARE`` at once, twice that waiting) or refused (RESOURCE_EXHAUSTED), never
    left hanging."""
    import threading

    from arena.server.app import RPC_CLIENT_SHARE, RPC_THREADS

    for server, stub, _channel in _serve(redis_url, workers=0):
        release = threading.Event()

        def never_sent() -> Iterator[bytes]:
            release.wait(WAIT_S)
            yield arena_pb2.GetArenaInfoRequest().SerializeToString()

        # a connection of its own (channels of one process to one target share one by default), as a stranger has
        stranger = grpc.insecure_channel(f"127.0.0.1:{server.port}", options=[("grpc.use_local_subchannel_pool", 1)])
        held = stranger.stream_unary("/arena.v1.Arena/GetArenaInfo", request_serializer=lambda b: b,
                                     response_deserializer=arena_pb2.ArenaInfo.FromString)
        calls = [held.future(never_sent(), timeout=WAIT_S) for _ in range(2 * RPC_THREADS)]
        try:
            time.sleep(0.5)  # every call opened and waiting for its request
            assert not any(call.done() for call in calls)
            for _ in range(3):  # served as usual (a thread each held by a waiting call would leave none)
                assert stub.ListBots(arena_pb2.ListBotsRequest(), timeout=5).bots is not None
            release.set()
            codes = [call.exception(timeout=WAIT_S) for call in calls]
            answered = [c for c, error in zip(calls, codes) if error is None]
            assert all(c.result().arena_id for c in answered)
            assert len(answered) >= 3 * RPC_CLIENT_SHARE, f"{len(answered)} of {len(calls)} answered"
            assert all(isinstance(e, grpc.RpcError) and e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                       for e in codes if e is not None), [(e.code(), e.details()) for e in codes if e][:3]
        finally:
            release.set()
            stranger.close()


def test_a_call_whose_request_never_comes_is_ended_by_the_referee(redis_url: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Such a call holds no thread, but memory: the referee ends it once its request is ``FIRST_MESSAGE_S`` late
    (DEADLINE_EXCEEDED, saying so), well before the client's own deadline; a call whose request comes is served."""
    import threading

    from arena_sdk import guard

    monkeypatch.setattr(guard, "FIRST_MESSAGE_S", 1.0)
    for server, stub, _channel in _serve(redis_url, workers=0):
        release = threading.Event()

        def never_sent() -> Iterator[bytes]:
            release.wait(WAIT_S)
            yield arena_pb2.GetArenaInfoRequest().SerializeToString()

        with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=[("grpc.use_local_subchannel_pool", 1)]) as c:
            held = c.stream_unary("/arena.v1.Arena/GetArenaInfo", request_serializer=lambda b: b,
                                  response_deserializer=arena_pb2.ArenaInfo.FromString)
            t0 = time.monotonic()
            calls = [held.future(never_sent(), timeout=30) for _ in range(5)]
            try:
                for call in calls:
                    error = call.exception(timeout=20)
                    assert isinstance(error, grpc.RpcError) and error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                    assert "no GetArenaInfo request came within 1 s" in (error.details() or "")
                assert time.monotonic() - t0 < 10
            finally:
                release.set()
        assert stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest(), timeout=5).arena_id


def _unread_calls(port: int, method: str, request: bytes, count: int) -> tuple[socket.socket, Any]:
    """``count`` calls of ``method`` on a raw HTTP/2 connection of their own whose flow-control window is 0: the
    client never reads an answer's bytes (as a stranger can), only headers and trailers come."""
    import h2.config
    import h2.connection
    import h2.settings

    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    for _ in range(count):
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, [(":method", "POST"), (":scheme", "http"), (":path", method),
                                   (":authority", f"127.0.0.1:{port}"), ("content-type", "application/grpc"),
                                   ("te", "trailers")])
        conn.send_data(stream, b"\0" + len(request).to_bytes(4, "big") + request, end_stream=True)
    sock.sendall(conn.data_to_send())
    return sock, conn


def _statuses(sock: socket.socket, conn: Any, count: int) -> list[str]:
    """The grpc-status of the first ``count`` calls of ``conn`` that ended (trailers), read from ``sock``."""
    import h2.events

    statuses: list[str] = []
    deadline = time.monotonic() + WAIT_S
    while len(statuses) < count and time.monotonic() < deadline:
        for event in conn.receive_data(sock.recv(65536)):
            headers = dict(getattr(event, "headers", None) or ())
            if isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)) \
                    and b"grpc-status" in headers:
                statuses.append(headers[b"grpc-status"].decode())
        sock.sendall(conn.data_to_send())
    return statuses


def test_a_client_that_never_reads_its_answers_holds_only_its_share(redis_url: str, outside_address: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A call counts in its client's share until its answer is sent: a client that never reads answers holds
    ``RPC_CLIENT_SHARE`` of them (their memory) and no more, its further calls end with RESOURCE_EXHAUSTED after
    ``RPC_CLIENT_WAIT_S``, another client is served at once, the web app too although on the same machine (its
    calls carry the referee's web key); once its connection goes, its share is free again."""
    from platform_helpers import wait_until

    from arena.server import app

    monkeypatch.setattr(app, "RPC_CLIENT_WAIT_S", 1.0)
    server = ArenaServer("[::]:0", redis_url, workers=0)
    port = server.start()
    request = arena_pb2.GetArenaInfoRequest().SerializeToString()
    try:
        sock, conn = _unread_calls(port, "/arena.v1.Arena/GetArenaInfo", request, app.RPC_CLIENT_SHARE + 3)
        assert _statuses(sock, conn, 3) == [str(grpc.StatusCode.RESOURCE_EXHAUSTED.value[0])] * 3
        assert server.shares.held() == {"loopback": app.RPC_CLIENT_SHARE}
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ours, \
                grpc.insecure_channel(f"{outside_address}:{port}") as other:
            code, detail = _code(lambda: arena_pb2_grpc.ArenaStub(ours).GetArenaInfo(
                arena_pb2.GetArenaInfoRequest(), timeout=WAIT_S))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "waited 1 s" in detail, detail
            with pytest.raises(ArenaDown):  # a web app without the web key: its pages say the referee is busy
                asyncio.run(ArenaReader(f"127.0.0.1:{port}").call("GetArenaInfo", arena_pb2.GetArenaInfoRequest()))
            # the referee's own web app (its calls carry the web key) is a client of its own: served at once
            pages = ArenaReader(f"127.0.0.1:{port}", web_key=server.web_key)
            assert asyncio.run(pages.call("GetArenaInfo", arena_pb2.GetArenaInfoRequest())).arena_id
            assert arena_pb2_grpc.ArenaStub(other).GetArenaInfo(arena_pb2.GetArenaInfoRequest(), timeout=5).arena_id
            sock.close()
            assert arena_pb2_grpc.ArenaStub(ours).GetArenaInfo(arena_pb2.GetArenaInfoRequest(), timeout=5).arena_id
            # calls that end as usual, refused or answered, give their place back
            for _ in range(2 * app.RPC_CLIENT_SHARE):
                _code(lambda: arena_pb2_grpc.ArenaStub(ours).GetMatch(arena_pb2.GetMatchRequest(match_id="m-0"),
                                                                      timeout=5))
                arena_pb2_grpc.ArenaStub(ours).ListBots(arena_pb2.ListBotsRequest(), timeout=5)
        wait_until(lambda: server.shares.held() == {}, "the share given back", 10)  # given back once the call is over, just after its answer
    finally:
        server.stop()


def test_health_follows_redis(tmp_path: Path) -> None:
    from platform_helpers import wait_until

    private = PrivateRedis(tmp_path / "redis")
    url = private.start()
    try:
        for _server, _stub, channel in _serve(url, workers=0, health_check_s=0.1):
            health = health_pb2_grpc.HealthStub(channel)

            def statuses() -> set[int]:
                return {health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
                        for service in ("", "arena.v1.Arena")}

            assert statuses() == {health_pb2.HealthCheckResponse.SERVING}
            private.stop()
            wait_until(lambda: statuses() == {health_pb2.HealthCheckResponse.NOT_SERVING},
                       "health NOT_SERVING while Redis is down", timeout=WAIT_S)
            assert private.start() == url  # the same port again: the referee's URL is valid once more
            wait_until(lambda: statuses() == {health_pb2.HealthCheckResponse.SERVING},
                       "health SERVING once Redis is back", timeout=WAIT_S)
    finally:
        private.stop()


def test_a_bad_health_check_interval_is_refused(redis_url: str) -> None:
    with pytest.raises(ValueError, match="health check interval must be more than 0 s, got 0"):
        ArenaServer("127.0.0.1:0", redis_url, health_check_s=0)


def test_registering_checks_the_endpoint_answers_and_plays_the_game(
        redis_url: str, dead_endpoint: str, start_bot: Callable[..., Any]) -> None:
    bot = start_bot("sample:random", extra_args=["--name", "rnd"])
    for _server, stub, _channel in _serve(redis_url, workers=0, verify_bots=True):
        code, details = _code(lambda: _register(stub, "ghost", dead_endpoint))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert details.startswith(f"no arena bot answered GetInfo at {dead_endpoint} within 2000 ms; ")
        assert list(stub.ListBots(arena_pb2.ListBotsRequest()).bots) == []
        record = _register(stub, "rnd", bot.endpoint)
        assert (record.name, record.endpoint, record.game) == ("rnd", bot.endpoint, "take5")


def test_a_bot_registers_and_updates_only_under_the_name_it_gives(
        redis_url: str, start_bot: Callable[..., Any]) -> None:
    """No bot plays under another's ladder line: GetInfo's name must be the NAME registered or updated."""
    rand, heur = start_bot("sample:random"), start_bot("sample:heuristic")
    for _server, stub, _channel in _serve(redis_url, workers=0, verify_bots=True):
        code, details = _code(lambda: _register(stub, "heuristic", rand.endpoint))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert details == (f"the bot at {rand.endpoint} reports another name than 'heuristic' in GetInfo; make it "
                           f"report heuristic (a Python SDK bot: start it with --name=heuristic), or register it "
                           f"under the name it reports")
        assert list(stub.ListBots(arena_pb2.ListBotsRequest()).bots) == []
        owner = _register(stub, "heuristic", heur.endpoint).owner_token
        assert _register(stub, "random", rand.endpoint).bot_id == "random@1.0"
        code, details = _code(lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(
            bot="heuristic@1.0", game="take5", endpoint=rand.endpoint, owner_token=owner)))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert f"the bot at {rand.endpoint} reports another name than 'heuristic'" in details
        assert stub.ListBots(arena_pb2.ListBotsRequest()).bots[0].endpoint == heur.endpoint  # unchanged
        second = start_bot("sample:random", extra_args=["--name", "random-2"])
        assert _register(stub, "random-2", second.endpoint).bot_id == "random-2@1.0"


def test_redis_going_away_is_unavailable_and_an_absent_redis_refuses_start(tmp_path: Path) -> None:
    private = PrivateRedis(tmp_path)
    url = private.start()
    try:
        for _server, stub, _channel in _serve(url, workers=0):
            private.stop()
            code, details = _code(lambda: stub.ListBots(arena_pb2.ListBotsRequest()))
            assert code == grpc.StatusCode.UNAVAILABLE and "the arena's Redis cannot be used now" in details
            assert private.password not in details  # the private Redis's password never reaches a reply
            assert str(private.port) not in details  # nor its address: that is for the referee's log
    finally:
        private.stop()
    with pytest.raises(ServiceError, match=f"cannot reach Redis at {re.escape(redact_url(url))}") as excinfo:
        ArenaServer("127.0.0.1:0", url).start()
    assert private.password not in str(excinfo.value)


def test_a_taken_listen_address_is_a_clear_error(redis_url: str) -> None:
    for server, _stub, _channel in _serve(redis_url, workers=0):
        with pytest.raises(ServiceError, match=f"cannot listen on 127.0.0.1:{server.port}: port {server.port} is "
                                               "already in use.*--listen"):
            ArenaServer(f"127.0.0.1:{server.port}", redis_url, workers=0).start()


# -- end to end ---------------------------------------------------------------------------------------------------


def test_end_to_end_round_robin_through_redis_workers_and_bot_processes(
        redis_url: str, start_bot: Callable[..., Any]) -> None:
    """Three bot processes registered over gRPC; a round robin with k=3, R=3 (3 matches, each on a deal of its own,
    each bot once in each seat) run by two embedded workers through the Redis stream; the ladder counts each match
    once per bot."""
    bots = {"rand": start_bot("sample:random", extra_args=["--name", "rand"]),
            "heur": start_bot("sample:heuristic", extra_args=["--name", "heur"]),
            "mc": start_bot("sample:montecarlo", extra_args=["--name", "mc"])}
    for server, stub, _channel in _serve(redis_url, workers=2, concurrency=2):
        for name, bot in bots.items():
            _register(stub, name, bot.endpoint)
        assert {b.bot_id for b in stub.ListBots(arena_pb2.ListBotsRequest(game="take5")).bots} == {
            f"{name}@1.0" for name in bots}
        created = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
            game="take5", bots=sorted(bots), seats_per_match=3, rounds=3,
            config=bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=20))))
        assert (created.matches_total, created.state) == (3, "running")
        deadline = time.monotonic() + WAIT_S
        while True:
            t = stub.GetTournament(arena_pb2.GetTournamentRequest(id=created.id))
            assert t.matches_done <= t.matches_total
            if t.state == "finished" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert (t.state, t.matches_done, t.faults) == ("finished", 3, 0)
        ladder = stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")).entries
        assert sorted(e.bot for e in ladder) == sorted(f"{name}@1.0" for name in bots)
        assert [e.matches for e in ladder] == [3, 3, 3]
        assert sum(e.rating for e in ladder) == pytest.approx(1500.0 * 3, abs=1e-6)
        assert [e.rank for e in ladder] == [1 + sum(o.rating > e.rating for o in ladder) for e in ladder]
        assert [e.rating for e in ladder] == sorted((e.rating for e in ladder), reverse=True)
        assert 3 <= sum(e.wins for e in ladder) <= 9  # at least one winner per match; shared wins possible

        store = Store.from_url(redis_url)
        try:
            records = [store.get_match_record(f"{created.id}-{i:06d}") for i in range(3)]
            assert all(r is not None for r in records)
            # no bot sees a deal twice: three deals; each bot in a different seat each time
            assert len({r["seed"] for r in records}) == 3  # type: ignore[index]
            for seat in range(3):
                assert {r["seats"][seat]["name"] for r in records} == {  # type: ignore[index]
                    "heur@1.0", "mc@1.0", "rand@1.0"}
            # the mean score on the ladder is the mean of the bullheads of the recorded results
            for entry in ladder:
                scores = [r["result"]["scores"][[s["name"] for s in r["seats"]].index(entry.bot)]  # type: ignore
                          for r in records]
                assert entry.mean_score == pytest.approx(sum(scores) / 3)
            rebuilt = store.rebuild_ladder("take5")
            assert [(e.bot, e.rating, e.matches, e.wins) for e in rebuilt] == [
                (e.bot, e.rating, e.matches, e.wins) for e in ladder]
            assert store.pending_jobs() == 0
        finally:
            store.close()
