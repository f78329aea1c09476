"""Fair admission of the referee's bot checks, attacked over real gRPC with real bot processes and real sockets: a
stranger's flood of registrations at a silent socket, or of ``ListBots(check_endpoints)`` with a paused bot, leaves
organiser and owner calls working; a failed registration takes the check's bound whatever listens at the port and
never names another bot; and the admission rules themselves (``arena.server.admission``) on their own."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
from platform_helpers import VERSIONED_BOT, rpc_error

from arena.core import limits
from arena.match import local_bots
from arena.server.admission import Admission, Caller, OutcomeCache, caller_of
from arena.server.app import ArenaServer
from arena.server.checks import NoAnswer
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2
from arena_sdk.peers import peer_address

CHECK_S = 0.5  # the servers here wait this long for a GetInfo answer: the check's bound
FLOOD_S = 3.0  # how long each flood lasts
FLOODERS = 8  # threads of the stranger
NAMES = ("a", "b", "mine", "paused", "zebra")  # "zebra" is the bot a stranger must never learn of

ServerFactory = Callable[..., tuple[ArenaServer, arena_pb2_grpc.ArenaStub]]


@pytest.fixture(scope="module")
def bots() -> Iterator[dict[str, local_bots.BotProcess]]:
    """One sample bot process per name of ``NAMES`` (GetInfo says that name), started at once, for the module."""
    with futures.ThreadPoolExecutor(len(NAMES)) as pool:
        started = dict(zip(NAMES, pool.map(
            lambda name: local_bots.start_bot("sample:random", extra_args=["--name", name]), NAMES)))
    try:
        yield started
    finally:
        for bot in started.values():
            bot.stop()


@dataclass
class SilentListener:
    """A socket that accepts every connection and never answers; ``accepted`` counts the connections (dials)."""

    endpoint: str
    accepted: int = 0
    held: list[socket.socket] = field(default_factory=list)


@pytest.fixture
def silent() -> Iterator[SilentListener]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.settimeout(0.1)
    listener = SilentListener(f"127.0.0.1:{sock.getsockname()[1]}")
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            listener.accepted += 1
            listener.held.append(conn)  # kept open, never written to

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener
    finally:
        stop.set()
        thread.join()
        for conn in listener.held:
            conn.close()
        sock.close()


def _register_all(stub: arena_pb2_grpc.ArenaStub, bots: dict[str, local_bots.BotProcess],
                  names: tuple[str, ...]) -> dict[str, str]:
    """Register ``names`` at their bots; their owner tokens."""
    return {name: stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bots[name].endpoint,
                                                                game="take5")).owner_token for name in names}


def _legit_calls(stub: arena_pb2_grpc.ArenaStub, bots: dict[str, local_bots.BotProcess], token: str,
                 until: float) -> Counter[str]:
    """Organiser and owner calls, one after another until ``until`` (monotonic): outcomes by "call: code"."""
    calls: dict[str, Callable[[], Any]] = {
        "organiser CreateTournament": lambda: stub.CreateTournament(arena_pb2.CreateTournamentRequest(
            game="take5", bots=["a", "b"], seats_per_match=2, dry_run=True), timeout=30),
        "owner RegisterBot": lambda: stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name="mine", endpoint=bots["mine"].endpoint, game="take5", owner_token=token), timeout=30),
        "owner UpdateBot": lambda: stub.UpdateBot(arena_pb2.UpdateBotRequest(
            game="take5", bot="mine@1.0", endpoint=bots["mine"].endpoint, owner_token=token), timeout=30),
    }
    outcomes: Counter[str] = Counter()
    while time.monotonic() < until:
        for what, call in calls.items():
            try:
                call()
                outcomes[f"{what}: OK"] += 1
            except grpc.RpcError as exc:
                outcomes[f"{what}: {exc.code().name} {exc.details()}"] += 1
        time.sleep(0.05)
    return outcomes


def _flood(call: Callable[[int, int], Any], until: float) -> tuple[Counter[str], list[float]]:
    """``FLOODERS`` threads making ``call(thread, n)`` until ``until``: outcomes by code (and message of a
    RESOURCE_EXHAUSTED), and the seconds each call took."""
    outcomes: Counter[str] = Counter()
    took: list[float] = []

    def run(i: int) -> None:
        n = 0
        while time.monotonic() < until:
            n += 1
            started = time.monotonic()
            try:
                call(i, n)
                outcomes["OK"] += 1
            except grpc.RpcError as exc:
                key = exc.code().name
                outcomes[f"{key}: {exc.details()}" if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED else key] += 1
            took.append(time.monotonic() - started)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(FLOODERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes, took


def test_a_strangers_registration_flood_at_a_silent_socket_leaves_organiser_and_owner_calls_working(
        arena_server: ServerFactory, bots: dict[str, local_bots.BotProcess], silent: SilentListener) -> None:
    """8 threads register new names at a socket that never answers (on main: every organiser and owner call got
    RESOURCE_EXHAUSTED); now every organiser CreateTournament and owner RegisterBot/UpdateBot succeeds, the
    stranger gets RESOURCE_EXHAUSTED saying why, and its flood costs one dial per cached failure, not one per
    call."""
    _server, stub = arena_server(verify_timeout_s=CHECK_S)
    token = _register_all(stub, bots, ("a", "b", "mine"))["mine"]
    until = time.monotonic() + FLOOD_S
    with futures.ThreadPoolExecutor(1) as pool:
        flood = pool.submit(_flood, lambda i, n: stub.RegisterBot(arena_pb2.RegisterBotRequest(
            name=f"flood{i}x{n}", endpoint=silent.endpoint, game="take5"), timeout=30), until)
        time.sleep(0.2)  # the flood is on
        legit = _legit_calls(stub, bots, token, until)
        strangers, _took = flood.result()

    failed = {k: v for k, v in legit.items() if not k.endswith(": OK")}
    assert not failed, f"organiser/owner calls failed during the flood: {failed}"
    assert all(legit[f"{what}: OK"] >= 3 for what in ("organiser CreateTournament", "owner RegisterBot",
                                                      "owner UpdateBot")), legit
    refused = {k: v for k, v in strangers.items() if k.startswith("RESOURCE_EXHAUSTED")}
    assert sum(refused.values()) > strangers["FAILED_PRECONDITION"] >= 1, strangers
    assert all("your address 127.0.0.1" in k or "callers without an owner or admin token" in k for k in refused)
    # one client, one stranger check at a time: about FLOOD_S / CHECK_S checks, and with the cache fewer dials
    assert strangers["FAILED_PRECONDITION"] <= FLOOD_S / CHECK_S + 1
    assert 1 <= silent.accepted <= FLOOD_S / limits.CHECK_CACHE_S + 1, f"{silent.accepted} dials"


def test_a_list_flood_with_a_paused_bot_leaves_organiser_and_owner_calls_working(
        arena_server: ServerFactory, bots: dict[str, local_bots.BotProcess]) -> None:
    """8 threads call ListBots(check_endpoints) while one registered bot is paused (SIGSTOP: its socket accepts
    and never answers); organiser and owner calls keep working, no list takes more than about one check bound,
    and the paused bot is shown as not answering."""
    _server, stub = arena_server(verify_timeout_s=CHECK_S)
    token = _register_all(stub, bots, ("a", "b", "mine", "paused"))["mine"]
    paused = bots["paused"].process.pid
    os.kill(paused, signal.SIGSTOP)
    try:
        until = time.monotonic() + FLOOD_S
        problems: Counter[str] = Counter()

        def list_bots(_i: int, _n: int) -> None:
            for bot in stub.ListBots(arena_pb2.ListBotsRequest(game="take5", check_endpoints=True),
                                     timeout=30).bots:
                if bot.endpoint_checked:
                    problems[f"{bot.name}: {bot.endpoint_problem}"] += 1

        with futures.ThreadPoolExecutor(1) as pool:
            flood = pool.submit(_flood, list_bots, until)
            time.sleep(0.2)
            legit = _legit_calls(stub, bots, token, until)
            lists, took = flood.result()
    finally:
        os.kill(paused, signal.SIGCONT)

    failed = {k: v for k, v in legit.items() if not k.endswith(": OK")}
    assert not failed, f"organiser/owner calls failed during the flood: {failed}"
    assert legit["organiser CreateTournament: OK"] >= 3 and legit["owner UpdateBot: OK"] >= 3, legit
    assert set(lists) == {"OK"} and lists["OK"] >= FLOODERS, lists
    assert max(took) < 2 * CHECK_S + 1.0, f"a ListBots took {max(took):.2f} s"  # one check bound, not several
    assert problems[f"paused: no answer within {CHECK_S:g} s"] >= 1, problems
    assert problems["a: "] >= 1 and not any(k.startswith(("a: ", "b: ")) and not k.endswith(": ")
                                            for k in problems), problems


def test_a_failed_registration_takes_the_bound_whatever_listens_and_never_names_another_bot(
        arena_server: ServerFactory, bots: dict[str, local_bots.BotProcess], dead_endpoint: str,
        silent: SilentListener, redis_url: str, start_bot: Callable[..., Any]) -> None:
    """A closed port, a silent listener, a Redis server, the arena's own gRPC port and another bot: each refusal
    comes no sooner than the bound (padded; the second try of a closed or silent port is a cached failure) and
    they end within a small margin of each other; the refusals never say the other bot's name."""
    server, stub = arena_server(verify_timeout_s=CHECK_S)
    taki = start_bot(VERSIONED_BOT, extra_args=["--games", "taki", "--name", "okapi"]).endpoint
    parts = urlsplit(redis_url)
    targets = [("closed", dead_endpoint), ("closed", dead_endpoint), ("silent", silent.endpoint),
               ("silent", silent.endpoint), ("redis", f"{parts.hostname}:{parts.port}"),
               ("arena", f"127.0.0.1:{server.port}"), ("other bot", bots["zebra"].endpoint),
               ("taki bot", taki)]
    took: dict[str, list[float]] = {}
    for i, (what, endpoint) in enumerate(targets):
        started = time.monotonic()
        code, details = rpc_error(lambda: stub.RegisterBot(arena_pb2.RegisterBotRequest(  # noqa: B023 - at once
            name=f"mine{i}", endpoint=endpoint, game="take5"), timeout=30))  # noqa: B023
        took.setdefault(what, []).append(time.monotonic() - started)
        assert code == grpc.StatusCode.FAILED_PRECONDITION, (what, details)
        assert "zebra" not in details and "okapi" not in details, details
        if what == "other bot":
            assert details == (f"the bot at {endpoint} reports another name than 'mine{i}' in GetInfo; make it "
                               f"report mine{i} (a Python SDK bot: start it with --name=mine{i}), or register it "
                               f"under the name it reports")
        elif what == "taki bot":
            assert details.startswith(f"the bot at {endpoint} plays taki, not take5")
            assert details.endswith("give the game: --game taki)")
        else:
            assert details.startswith(f"no arena bot answered GetInfo at {endpoint} within 500 ms; ")
    every = [s for seconds in took.values() for s in seconds]
    assert min(every) >= CHECK_S - 0.02, took  # the behaviour is a bound: nothing answers sooner
    # and a closed port looks like a silent one: each kind's fastest refusal within a small margin of the others'
    # (one slow try is the machine's load, not a tell); none waits much past the bound
    fastest = [min(seconds) for seconds in took.values()]
    assert max(fastest) - min(fastest) < 0.25 and max(every) < CHECK_S + 2.0, took
    assert silent.accepted == 1  # the second try reused the failure


# -- the rules on their own ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("peer", "client"), [
    ("ipv4:127.0.0.1:5555", "loopback"),
    ("ipv4:127.0.0.2:5555", "loopback"),  # a local process can connect from any loopback address: one client
    ("ipv6:[::ffff:127.9.9.9]:5555", "loopback"),
    ("ipv4:203.0.113.7:40000", "203.0.113.7"),
    ("ipv6:[::1]:5555", "loopback"),
    ("ipv6:%5B2001:db8:1:2:aaaa::1%5D:443", "2001:db8:1:2::/64"),
    ("ipv6:[2001:db8:1:2:ffff::9]:1", "2001:db8:1:2::/64"),
    ("ipv6:[::ffff:198.51.100.4]:80", "198.51.100.4"),
    ("unix:/tmp/arena.sock", "unix"),
])
def test_the_client_of_a_call_is_its_address_and_an_ipv6_64_is_one_client(peer: str, client: str) -> None:
    assert peer_address(peer) == client


def test_strangers_never_take_the_organisers_or_owners_capacity_and_are_limited_per_client() -> None:
    admission = Admission()
    assert admission.enter(Caller.STRANGER, "198.51.100.1") is None
    refusal = admission.enter(Caller.STRANGER, "198.51.100.1")  # the same client: its share is used
    assert refusal is not None and "your address 198.51.100.1" in refusal
    for i in range(2, limits.STRANGER_CHECKS + 1):
        assert admission.enter(Caller.STRANGER, f"198.51.100.{i}") is None
    refusal = admission.enter(Caller.STRANGER, "198.51.100.99")  # a new client, but the class is full
    assert refusal == (f"{limits.STRANGER_CHECKS} bot checks (GetInfo calls to bots) of callers without an owner "
                       f"or admin token are running already, the arena's limit; try again in a few seconds")
    for _ in range(limits.ORGANISER_CHECKS):
        assert admission.enter(Caller.ORGANISER, "198.51.100.1") is None
    for i in range(limits.OWNER_CHECKS):
        assert admission.enter(Caller.OWNER, f"192.0.2.{i // limits.OWNER_CHECKS_PER_CLIENT}") is None
    assert admission.enter(Caller.OWNER, "192.0.2.77") is not None  # owners are full too, now
    admission.leave(Caller.STRANGER, "198.51.100.1")
    assert admission.enter(Caller.STRANGER, "198.51.100.99") is None  # a slot given back is free again
    assert admission.running(Caller.STRANGER) == limits.STRANGER_CHECKS


def test_a_call_is_an_owners_only_with_the_names_owner_key() -> None:
    asked: list[bool] = []

    def admin(answer: bool) -> Callable[[], bool]:
        return lambda: asked.append(answer) or answer

    assert caller_of("k" * 64, "k" * 64, admin(False)) is Caller.OWNER and asked == []  # admin never asked
    assert caller_of("k" * 64, "j" * 64, admin(False)) is Caller.STRANGER
    assert caller_of(None, None, admin(False)) is Caller.STRANGER  # a first registration of a new NAME
    assert caller_of(None, "j" * 64, admin(True)) is Caller.ORGANISER


def test_outcomes_are_kept_a_few_seconds_and_the_cache_is_bounded() -> None:
    now = [100.0]
    cache = OutcomeCache(ttl_s=3.0, size=2, clock=lambda: now[0])
    cache.put("h:1", NoAnswer("connection refused"))
    cache.put("h:2", bot_pb2.BotInfo(name="a", version="1.0"))
    now[0] += 2.9
    assert cache.get("h:1") == NoAnswer("connection refused")
    assert cache.get("h:2") == bot_pb2.BotInfo(name="a", version="1.0")
    cache.put("h:3", NoAnswer("no answer within 2 s"))  # the oldest stored goes
    assert cache.get("h:1") is None and len(cache) == 2
    now[0] += 0.2
    assert cache.get("h:2") is None  # 3.1 s old
    assert cache.get("h:3") == NoAnswer("no answer within 2 s")
