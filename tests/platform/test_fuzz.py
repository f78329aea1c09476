"""Fuzzing (issue 8, item 5): random and mutated bytes sent to every method of the Arena service and of the SDK's
Bot server, on raw gRPC channels (no serializer: the bytes go out as they are). Every input must get a clean status
(never INTERNAL or UNKNOWN, no traceback in the log), and the service must answer the next valid request within
its normal time. A third of the inputs are valid messages with odd values in random fields (huge numbers, unknown
enum values, strange strings, NaN), the rest random or mutated bytes. A seeded generator, so a failure replays; the number of inputs is printed and recorded
(``record_property("fuzz_inputs", N)``)."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from arena.server import auth
from arena.server.app import ArenaServer
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2
from arena_sdk.server import create_server
from sample_bots.random_bot import RandomBot

SEED = 20240608
ARENA_INPUTS_PER_METHOD = 24
BOT_INPUTS_PER_METHOD = 50
PROBE_LIMIT_S = 1.0  # a valid call after each input must answer within this (normally a few ms)
BAD = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}


def _valid_arena_requests() -> dict[str, list[bytes]]:
    """Well-formed requests of every Arena method, to mutate."""
    tournament = arena_pb2.CreateTournamentRequest(game="take5", bots=["fz-a", "fz-b@1.0", "fz-c"], seats_per_match=2,
                                                   rounds=1, seed=9, deadline_ms=100, dry_run=True)
    tournament.config.take5.limit = 66
    samples: dict[str, list[Any]] = {
        "RegisterBot": [arena_pb2.RegisterBotRequest(name="fz-a", endpoint="127.0.0.1:9", game="take5",
                                                     owner_token="t" * 43, bot_secret="s" * 20)],
        "UpdateBot": [arena_pb2.UpdateBotRequest(bot="fz-a@1.0", game="taki", endpoint="[::1]:9",
                                                 owner_token="t" * 43)],
        "RemoveBot": [arena_pb2.RemoveBotRequest(bot="fz-a", game="take5", owner_token="t")],
        "ListBots": [arena_pb2.ListBotsRequest(game="take5")],
        "CreateTournament": [tournament],
        "GetTournament": [arena_pb2.GetTournamentRequest(id="t1")],
        "ListTournaments": [arena_pb2.ListTournamentsRequest(game="taki")],
        "CancelTournament": [arena_pb2.CancelTournamentRequest(id="t1")],
        "GetStandings": [arena_pb2.GetStandingsRequest(id="t1")],
        "ListMatches": [arena_pb2.ListMatchesRequest(tournament_id="t1", bot="fz-a@1.0", limit=5)],
        "GetMatch": [arena_pb2.GetMatchRequest(match_id="t1-000001")],
        "GetLiveMatch": [arena_pb2.GetLiveMatchRequest(match_id="t1-000001")],
        "GetLadder": [arena_pb2.GetLadderRequest(game="take5"), arena_pb2.GetLadderRequest(game="taki", method="fit")],
        "RebuildLadder": [arena_pb2.RebuildLadderRequest(game="take5")],
        "ListWorkers": [arena_pb2.ListWorkersRequest()],
        "GetArenaInfo": [arena_pb2.GetArenaInfoRequest()],
        "GetChallenge": [arena_pb2.GetChallengeRequest()],
        "CreateSprt": [arena_pb2.CreateSprtRequest(game="take5", v1="fz-a@1.0", v2="fz-a@2.0", seats=2, elo0=0,
                                                   elo1=5, alpha=0.05, beta=0.05, window=4, max_blocks=100,
                                                   deadline_ms=100)],
        "GetSprt": [arena_pb2.GetSprtRequest(id="t1")],
        "CreateOwner": [arena_pb2.CreateOwnerRequest(label="fz team")],
        "GetOwner": [arena_pb2.GetOwnerRequest(owner_token="t" * 43), arena_pb2.GetOwnerRequest(id="o-0123456789abcdef")],
        "ListOwners": [arena_pb2.ListOwnersRequest(page_size=3, page_token="o-0123456789abcdef")],
        "SetRegistration": [arena_pb2.SetRegistrationRequest(mode="open", max_names_per_owner=20,
                                                             max_names_total=10000)],
        "RemoveOwner": [arena_pb2.RemoveOwnerRequest(id="o-0123456789abcdef")],
    }
    return {method: [m.SerializeToString() for m in ms] for method, ms in samples.items()}


def _valid_bot_requests() -> dict[str, list[bytes]]:
    """Well-formed requests of every Bot method, Decide with real views of both games, to mutate."""
    from arena_sdk import wire
    from arena_sdk.games import GAMES

    decides = []
    for game_id, game in sorted(GAMES.items()):
        state = game.new_game(3, seed=5)
        seat = game.pending_seats(state)[0]
        request = bot_pb2.DecideRequest(match_id="m1", seat=seat,
                                        kind=wire.kind_value(game.decision_kind(state, seat)))
        getattr(request, game_id).CopyFrom(game.view_to_proto(game.observe(state, seat)))
        decides.append(request)
    samples: dict[str, list[Any]] = {
        "GetInfo": [bot_pb2.GetInfoRequest()],
        "StartMatch": [bot_pb2.StartMatchRequest(match_id="m1", game="take5", seat=1, num_players=3,
                                                 player_names=["a", "b", "c"])],
        "Decide": decides,
        "EndMatch": [bot_pb2.EndMatchRequest(match_id="m1", seat=1)],
        "PlayMatch": [bot_pb2.RefereeMessage(start=bot_pb2.StartMatchRequest(
                          match_id="m2", game="take5", seat=1, num_players=3, player_names=["a", "b", "c"])),
                      *(bot_pb2.RefereeMessage(decide=d, deadline_ms=1000) for d in decides),
                      bot_pb2.RefereeMessage(end=bot_pb2.EndMatchRequest(match_id="m2", seat=1))],
    }
    return {method: [m.SerializeToString() for m in ms] for method, ms in samples.items()}


def _mutate(rng: random.Random, data: bytes) -> bytes:
    """One random change of ``data``: flipped bytes, a cut, inserted or duplicated bytes, an overlong varint, or
    plain random bytes."""
    buf = bytearray(data)
    kind = rng.randrange(7)
    if kind == 0 or not buf:
        return rng.randbytes(rng.randrange(0, 200))
    if kind == 1:
        for _ in range(rng.randint(1, 4)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        return bytes(buf)
    if kind == 2:
        return bytes(buf[:rng.randrange(len(buf))])
    if kind == 3:
        at = rng.randrange(len(buf) + 1)
        return bytes(buf[:at] + rng.randbytes(rng.randint(1, 16)) + buf[at:])
    if kind == 4:
        return bytes(buf + buf)  # fields repeated: a valid message merges them
    if kind == 5:
        return bytes(buf) + bytes([0x08]) + b"\xff" * rng.randint(9, 12)  # a varint of 10+ bytes
    return bytes([rng.randrange(256)]) + rng.randbytes(rng.randrange(0, 8)) + bytes(buf)


STRINGS = ("", "take5", "taki", "t1", "t0", "t-1", "fz-a", "fz-a@", "@1.0", "a@b@c", "127.0.0.1:0", "[::1]:99999",
           "\u00e9\u4e2d\U0001f600", "\x00", " ", "../../etc/passwd", "*", "t1-000001", "x" * 300)
INTS = (0, 1, 2, 3, 10, 255, 2**31 - 1, 2**31, 2**32 - 1)


def _random_values(rng: random.Random, message: Any, depth: int = 0) -> Any:  # noqa: C901 - one branch per protobuf field type (16)
    """``message`` with random, often odd, values in about half its fields (a valid message with bad content)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    def value(field: Any) -> Any:
        if field.type == F.TYPE_STRING:
            return rng.choice(STRINGS)
        if field.type == F.TYPE_BYTES:  # keys and sealed fields: empty, short, the right size, junk
            return rng.choice((b"", b"\x00", bytes(32), rng.randbytes(32), rng.randbytes(300)))
        if field.type == F.TYPE_BOOL:
            return rng.random() < 0.5
        if field.type == F.TYPE_ENUM:
            return rng.randrange(0, 12)  # proto3 enums are open: unknown numbers decode
        if field.type in (F.TYPE_UINT64, F.TYPE_FIXED64):
            return rng.choice(INTS + (2**63, 2**64 - 1))
        if field.type in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32, F.TYPE_INT64, F.TYPE_SINT64):
            return rng.choice((0, -1, 1, 7, -(2**31), 2**31 - 1))
        if field.type in (F.TYPE_DOUBLE, F.TYPE_FLOAT):
            return rng.choice((0.0, -1.0, 1e308, float("nan"), float("inf")))
        return rng.choice(INTS)

    for field in message.DESCRIPTOR.fields:
        if rng.random() < 0.5:
            continue
        if field.type == F.TYPE_MESSAGE:
            if depth < 4 and not field.is_repeated:
                _random_values(rng, getattr(message, field.name), depth + 1)
            elif depth < 4:
                for _ in range(rng.randrange(0, 4)):
                    _random_values(rng, getattr(message, field.name).add(), depth + 1)
        elif field.is_repeated:
            getattr(message, field.name).extend(value(field) for _ in range(rng.randrange(0, 6)))
        elif field.containing_oneof is None or rng.random() < 0.5:
            setattr(message, field.name, value(field))
    return message


def _raw(channel: grpc.Channel, service: str, method: str) -> Callable[..., bytes]:
    return channel.unary_unary(f"/{service}/{method}", request_serializer=None, response_deserializer=None)


class _LogWatch(logging.Handler):
    """Collects every log record that carries a traceback, or comes from grpc's server."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.bad: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.name.startswith("grpc"):
            self.bad.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture
def log_watch() -> Iterator[_LogWatch]:
    watch = _LogWatch()
    root = logging.getLogger()
    root.addHandler(watch)
    try:
        yield watch
    finally:
        root.removeHandler(watch)


def _fuzz(call_raw: Callable[[str, bytes, Any], bytes], samples: dict[str, list[bytes]], per_method: int,
          probe: Callable[[], Any], rng: random.Random, metadata_for: Callable[[str, int], Any],
          service: Any) -> int:
    """Send ``per_method`` inputs to every method of ``samples``: a third are valid messages with random field
    values, the rest mutated bytes; ``probe()`` (a valid call) after each must answer within PROBE_LIMIT_S."""
    from google.protobuf import message_factory

    sent = 0
    for method, valid in samples.items():
        request_cls = message_factory.GetMessageClass(service.methods_by_name[method].input_type)
        for i in range(per_method):
            if i % 3 == 0:
                data = _random_values(rng, request_cls.FromString(rng.choice(valid))).SerializeToString()
            else:
                data = _mutate(rng, rng.choice(valid))
            try:
                call_raw(method, data, metadata_for(method, i))
            except grpc.RpcError as exc:
                assert exc.code() not in BAD, (method, data.hex(), exc.code(), exc.details())
            sent += 1
            started = time.perf_counter()
            probe()
            took = time.perf_counter() - started
            assert took < PROBE_LIMIT_S, f"a valid call took {took:.2f} s after {method}({data.hex()})"
    return sent


def test_fuzz_every_arena_and_bot_method(redis_url: str, log_watch: _LogWatch,
                                         record_property: Callable[[str, Any], None]) -> None:
    rng = random.Random(SEED)
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0, verify_timeout_s=0.3)
    port = server.start()
    bot_server, bot_port = create_server(RandomBot, "127.0.0.1:0")
    bot_server.start()
    arena_service = arena_pb2.DESCRIPTOR.services_by_name["Arena"]
    bot_service = bot_pb2.DESCRIPTOR.services_by_name["Bot"]
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel, \
                grpc.insecure_channel(f"127.0.0.1:{bot_port}") as bot_channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            samples = _valid_arena_requests()
            assert set(samples) == {m.name for m in arena_service.methods}  # every method

            def arena_call(method: str, data: bytes, metadata: Any) -> bytes:
                return _raw(channel, arena_service.full_name, method)(data, timeout=10, metadata=metadata)

            def admin_half(method: str, i: int) -> Any:  # half the organiser calls carry the token
                return auth.admin_metadata(server.admin_token) if i % 2 else None

            arena_sent = _fuzz(arena_call, samples, ARENA_INPUTS_PER_METHOD,
                               lambda: stub.GetLadder(arena_pb2.GetLadderRequest(game="take5"), timeout=10),
                               rng, admin_half, arena_service)
            bot_samples = _valid_bot_requests()
            assert set(bot_samples) == {m.name for m in bot_service.methods}

            def bot_call(method: str, data: bytes, metadata: Any) -> Any:
                if method == "PlayMatch":  # the match stream: one message in, its answers read to the end
                    stream = bot_channel.stream_stream(f"/{bot_service.full_name}/PlayMatch",
                                                       request_serializer=None, response_deserializer=None)
                    return list(stream(iter([data]), timeout=10, metadata=metadata))
                return _raw(bot_channel, bot_service.full_name, method)(data, timeout=10, metadata=metadata)

            def bot_probe() -> Any:
                return _raw(bot_channel, bot_service.full_name, "GetInfo")(b"", timeout=10)

            bot_sent = _fuzz(bot_call, bot_samples, BOT_INPUTS_PER_METHOD, bot_probe, rng, lambda m, i: None,
                             bot_service)
    finally:
        bot_server.stop(0)
        server.stop()
    total = arena_sent + bot_sent
    print(f"fuzz: {arena_sent} inputs to {len(samples)} Arena methods, {bot_sent} to {len(bot_samples)} Bot "
          f"methods, {total} in all; no INTERNAL/UNKNOWN, no traceback")
    record_property("fuzz_inputs", total)
    assert total >= 500
    assert log_watch.bad == [], log_watch.bad[:5]
