"""Input limits (issue 8, item 5): every string and list of every Arena request and of a bot's GetInfo answer has a
limit in ``arena.core.limits``, named in the field's comment in the .proto; a request over a limit gets
INVALID_ARGUMENT naming the field; a bot whose GetInfo is over a limit is refused at registration (a 2.5 MB author
once broke ListBots for everyone); calls to bots' GetInfo cannot take the referee's RPC threads."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from platform_helpers import rpc_error

from arena.core import limits
from arena.server.app import ArenaServer
from arena_sdk import Take5Bot
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2
from arena_sdk.server import create_server

PROTO = Path(__file__).resolve().parents[2] / "proto" / "arena" / "v1"
ARENA = arena_pb2.DESCRIPTOR.services_by_name["Arena"]
METHOD_OF = {m.input_type.name: m.name for m in ARENA.methods}  # request message -> Arena method


def _field_comment(proto_text: str, message: str, field: str) -> str:
    """The comment lines right above ``field`` in ``message`` of a .proto file."""
    body = re.search(r"\nmessage " + message + r" \{\n(.*?)\n\}", proto_text, re.S)
    assert body, f"message {message} not found"
    comment: list[str] = []
    for line in body.group(1).splitlines():
        line = line.strip()
        if line.startswith("//"):
            comment.append(line[2:].strip())
        elif re.match(r"(repeated |optional )?[\w.]+ " + field + r" = \d+;", line):
            return " ".join(comment)
        else:
            comment = []
    raise AssertionError(f"{message}.{field} not found")


def test_every_string_and_list_has_a_limit_named_in_the_proto() -> None:
    arena_text = (PROTO / "arena.proto").read_text()
    bot_text = (PROTO / "bot.proto").read_text()
    listed = set()
    for method in ARENA.methods:
        for name, _field in limits.limited_fields(method.input_type):
            if name.split(".")[0] in ("GameConfig", "Take5Config", "TakiConfig"):
                continue  # rule options: scalars only, checked by the game
            assert name in limits.REQUEST_FIELDS, f"{name} has no limit in arena/limits.py REQUEST_FIELDS"
            listed.add(name)
    assert listed == set(limits.REQUEST_FIELDS)
    assert {n for n, _ in limits.limited_fields(bot_pb2.BotInfo.DESCRIPTOR)} == set(limits.BOT_INFO_FIELDS)
    for table, text in ((limits.REQUEST_FIELDS, arena_text), (limits.BOT_INFO_FIELDS, bot_text)):
        for name, (chars, entries) in table.items():
            message, field = name.split(".")
            comment = _field_comment(text, message, field)
            for number in (chars, entries):
                if number is not None:
                    assert re.search(rf"\b{number}\b", comment), f"the comment of {name} does not say {number}"


HELD_IN = {"SwissOptions": ("CreateTournamentRequest", "swiss")}  # message -> (request, its field)


def _over(message_cls: Any, field: str) -> Any:
    """A request whose ``field`` is one over its limit (one character, or one entry)."""
    chars, entries = limits.REQUEST_FIELDS[f"{message_cls.DESCRIPTOR.name}.{field}"]
    descriptor = message_cls.DESCRIPTOR.fields_by_name[field]
    if descriptor.is_repeated:
        assert entries is not None
        return message_cls(**{field: [f"b{i}" for i in range(entries + 1)]})
    assert chars is not None
    return message_cls(**{field: "a" * (chars + 1)})


@pytest.mark.parametrize("name", sorted(limits.REQUEST_FIELDS))
def test_a_request_over_a_limit_is_refused_naming_the_field(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], name: str) -> None:
    message, field = name.split(".")
    request = _over(getattr(arena_pb2, message), field)
    if message in HELD_IN:  # a message a request holds: sent inside that request
        message, holder_field = HELD_IN[message]
        request = getattr(arena_pb2, message)(**{holder_field: request})
    _server, stub = arena_server(verify_bots=False)
    code, details = rpc_error(lambda: getattr(stub, METHOD_OF[message])(request, timeout=10))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(f"{name} ") and "the limit is" in details


def test_a_request_over_64_KiB_is_refused_and_the_server_carries_on(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]]) -> None:
    _server, stub = arena_server(verify_bots=False)
    huge = arena_pb2.CreateTournamentRequest(game="take5", bots=["x" * 100] * 1000)  # about 100 KB
    code, _ = rpc_error(lambda: stub.CreateTournament(huge, timeout=10))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    started = time.perf_counter()
    many = arena_pb2.CreateTournamentRequest(game="take5", bots=[f"b{i}" for i in range(5000)])  # 34 KB
    code, details = rpc_error(lambda: stub.CreateTournament(many, timeout=10))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == "CreateTournamentRequest.bots holds 5000 entries; the limit is 128"
    assert time.perf_counter() - started < 2.0  # a hang guard: the refusal is linear (it was quadratic)
    assert stub.GetLadder(arena_pb2.GetLadderRequest(game="take5"), timeout=10).game == "take5"


def _info_bot(**info: Any) -> type[Take5Bot]:
    class Big(Take5Bot):
        name, version = "big", "1.0"

        def choose_card(self, view: Any) -> int:
            return int(min(view.hand))

    for key, value in info.items():
        setattr(Big, key, value)
    return Big


@pytest.mark.parametrize(("info", "refusal"), [
    # over 16 KiB: not even read, and said so
    ({"author": "x" * 2_500_000}, "answered GetInfo with a BotInfo over the arena's size limit (2,500,0"),
    ({"author": "x" * 129}, "BotInfo.author is 129 characters long; the limit is 128"),
])
def test_a_bot_whose_getinfo_is_over_the_limits_is_refused_at_registration(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], info: dict[str, Any],
        refusal: str) -> None:
    bot_server, port = create_server(_info_bot(**info), "127.0.0.1:0")
    bot_server.start()
    try:
        _server, stub = arena_server()
        code, details = rpc_error(lambda: stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name="big", endpoint=f"127.0.0.1:{port}", game="take5"), timeout=10))
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert refusal in details
        assert list(stub.ListBots(arena_pb2.ListBotsRequest(), timeout=10).bots) == []  # nothing stored
    finally:
        bot_server.stop(0)


@pytest.fixture
def silent_endpoint() -> Any:
    """``127.0.0.1:PORT`` of a socket that accepts connections and never answers."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def test_registrations_to_a_silent_socket_cannot_starve_other_calls(
        arena_server: Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]], silent_endpoint: str) -> None:
    """32 RegisterBot calls from one client to a socket that never answers: at most STRANGER_CHECKS_PER_CLIENT at
    a time wait for their GetInfo (then FAILED_PRECONDITION), the others are refused at once with
    RESOURCE_EXHAUSTED, and GetLadder answers as fast as ever meanwhile (it took 5.8 s instead of 0.2 s)."""
    check_s = 1.0
    _server, stub = arena_server(verify_timeout_s=check_s)

    def register(i: int) -> tuple[grpc.StatusCode, float]:
        started = time.perf_counter()
        code, _ = rpc_error(lambda: stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name=f"mute{i}", endpoint=silent_endpoint, game="take5"), timeout=30))
        return code, time.perf_counter() - started

    ladder_s: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            started = time.perf_counter()
            stub.GetLadder(arena_pb2.GetLadderRequest(game="take5"), timeout=30)
            ladder_s.append(time.perf_counter() - started)
            time.sleep(0.02)

    prober = threading.Thread(target=probe)
    with futures.ThreadPoolExecutor(32) as pool:
        prober.start()
        outcomes = list(pool.map(register, range(32)))
    stop.set()
    prober.join()
    waited = [s for code, s in outcomes if code == grpc.StatusCode.FAILED_PRECONDITION]
    refused = [s for code, s in outcomes if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert len(waited) + len(refused) == 32 and 1 <= len(waited) <= 32 - len(refused)
    assert all(s < check_s * 3 for s in waited)  # each waited about one check, not in a queue behind the others
    assert len(refused) >= 32 - 2 * limits.STRANGER_CHECKS * 3  # the slots were taken: most refused at once
    assert ladder_s and max(ladder_s) < 0.5, f"GetLadder took up to {max(ladder_s):.2f} s meanwhile"
