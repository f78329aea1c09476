"""The TypeScript starter bot (``starters/typescript``) on real parts: installed with ``npm ci`` from its committed
lockfile, compiled with its ``tsc`` build script, started as a Node.js process that loads the repository's own
``proto/arena/v1/*.proto`` (so a protocol change that breaks it fails here), and played through the real referee
over gRPC against sample bot processes, one match of each game through the match stream (PlayMatch, which the
starter serves by default) and one through the unary calls (``--unary-only``), with its bot secret: no fault. A call
without the secret, unary or a stream, is refused as the Python SDK refuses it."""

from __future__ import annotations

import asyncio
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.match import running
from arena.match.options import RefereeOptions
from arena.match.record import SeatSpec
from arena.match.referee import run_match
from arena_sdk.guard import BOT_SECRET_METADATA
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

REPO = Path(__file__).resolve().parents[2]
STARTER = REPO / "starters" / "typescript"
SECRET = "ts-starter-secret-0123456789"
NPM_TIMEOUT_S = 240  # a hang guard for the install from the registry, not a speed requirement
READY_TIMEOUT_S = 30

pytestmark = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                                reason="Node.js (node and npm) is not installed: the TypeScript starter is not tested")


def _run(cmd: list[str], cwd: Path) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the starter (package.json, package-lock.json, tsconfig.json, src/), installed with ``npm ci`` and
    built with ``npm run build``; its folder."""
    folder = tmp_path_factory.mktemp("ts-starter")
    for name in ("package.json", "package-lock.json", "tsconfig.json"):
        shutil.copy(STARTER / name, folder / name)
    shutil.copytree(STARTER / "src", folder / "src")
    _run(["npm", "ci", "--no-audit", "--no-fund"], folder)
    _run(["npm", "run", "build"], folder)
    assert (folder / "dist" / "bot.js").is_file()
    return folder


def _start_ts(built: Path, *extra: str) -> Iterator[str]:
    """The starter running as a Node.js process with the bot secret (env ARENA_BOT_SECRET), the repository's
    protocol (--proto) and ``extra`` options; its endpoint, until the generator is closed."""
    env = {**os.environ, "ARENA_BOT_SECRET": SECRET}
    process = subprocess.Popen(["node", "dist/bot.js", "--port", "0", "--proto", str(REPO / "proto"), *extra],
                               cwd=built, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    out = process.stdout
    assert out is not None

    def drain() -> None:  # read stdout to its end, so the bot never blocks on a full pipe
        for line in out:
            lines.put(line)

    threading.Thread(target=drain, daemon=True).start()
    try:
        try:
            ready = lines.get(timeout=READY_TIMEOUT_S)
        except queue.Empty:
            process.kill()
            pytest.fail(f"the TypeScript bot printed no ready line: {process.stderr.read() if process.stderr else ''}")
        assert ready.startswith("arena-bot ts-starter listening on 127.0.0.1:"), ready
        assert ready.rstrip().endswith("(bot secret on)"), ready  # _start_ts gives it ARENA_BOT_SECRET
        yield ready.split(" listening on ", 1)[1].split()[0]
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture
def ts_bot(built: Path) -> Iterator[str]:
    """The starter as it starts by default (it serves the match stream too); its endpoint."""
    yield from _start_ts(built)


@pytest.fixture
def ts_bot_unary(built: Path) -> Iterator[str]:
    """The starter started with ``--unary-only``; its endpoint."""
    yield from _start_ts(built, "--unary-only")


class CountingStream(running.SeatStream):
    """The referee's ``SeatStream``, counting the streams it opens per seat (``opened``)."""

    made: list[CountingStream] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        CountingStream.made.append(self)


@pytest.mark.parametrize("path", ["stream", "unary"])
@pytest.mark.parametrize("game, others", [("take5", ("sample:heuristic", "sample:random")),
                                          ("taki", ("sample:taki-heuristic", "sample:taki-random"))])
def test_the_starter_plays_a_match_through_the_referee_without_a_fault(
        request: pytest.FixtureRequest, start_bot: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, game: str,
        others: tuple[str, str], path: str) -> None:
    endpoint = request.getfixturevalue("ts_bot" if path == "stream" else "ts_bot_unary")
    monkeypatch.setattr(running, "SeatStream", CountingStream)
    monkeypatch.setattr(CountingStream, "made", [])
    opponents = [start_bot(spec) for spec in others]
    seats = [SeatSpec("ts-starter", endpoint, secret=SECRET),
             *(SeatSpec(b.name, b.endpoint) for b in opponents)]
    record = asyncio.run(run_match(f"m-ts-{game}-{path}", game, seats, None, seed=21,
                                   options=RefereeOptions(deadline_ms=5000)))
    assert record.faults == (), record.faults
    assert len(record.result.ranks) == 3 and min(record.result.ranks) == 1
    mine = [d for d in record.decisions if d["seat"] == 0]
    assert mine and all(d["source"] == "bot" for d in mine)  # every decision of the starter was its own answer
    streams = [s for s in CountingStream.made if s.seat == 0]  # the sample bots (Python SDK) stream as well
    if path == "stream":
        assert [s.opened for s in streams] == [1] and streams[0].answered  # one stream for the whole match
    else:
        assert streams == []  # GetInfo said serves_match_stream false: the four unary calls


def test_the_starter_answers_match_calls_only_with_its_secret(ts_bot: str) -> None:
    with grpc.insecure_channel(ts_bot) as channel:
        stub = bot_pb2_grpc.BotStub(channel)
        info = stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=10)  # open: registration uses it
        assert (info.name, sorted(info.games)) == ("ts-starter", ["take5", "taki"])
        start = bot_pb2.StartMatchRequest(match_id="m-x", game="take5", seat=0, num_players=2)
        with pytest.raises(grpc.RpcError) as missing:
            stub.StartMatch(start, timeout=10)
        assert missing.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert BOT_SECRET_METADATA in (missing.value.details() or "")
        with pytest.raises(grpc.RpcError) as wrong:
            stub.Decide(bot_pb2.DecideRequest(match_id="m-x", seat=0), timeout=10,
                        metadata=((BOT_SECRET_METADATA, "not-the-secret"),))
        assert wrong.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert SECRET not in (wrong.value.details() or "")
        assert stub.StartMatch(start, timeout=10, metadata=((BOT_SECRET_METADATA, SECRET),)) is not None
        assert info.serves_match_stream
        # refused once its first message is in: the status reaches a client still writing it, every time
        for metadata, code in [(None, grpc.StatusCode.UNAUTHENTICATED),
                               (((BOT_SECRET_METADATA, "not-the-secret"),), grpc.StatusCode.PERMISSION_DENIED)] * 10:
            with pytest.raises(grpc.RpcError) as refused:
                list(stub.PlayMatch(iter([bot_pb2.RefereeMessage(start=start)]), timeout=10, metadata=metadata))
            assert refused.value.code() == code and SECRET not in (refused.value.details() or "")
        silent = threading.Event()  # a stream that sends nothing is refused too, within about half a second

        def nothing() -> Iterator[bot_pb2.RefereeMessage]:
            silent.wait(20)
            yield from ()

        began = time.monotonic()
        with pytest.raises(grpc.RpcError) as refused:
            list(stub.PlayMatch(nothing(), timeout=10))
        silent.set()
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED and time.monotonic() - began < 5
        answers = list(stub.PlayMatch(iter([bot_pb2.RefereeMessage(start=start), bot_pb2.RefereeMessage(
            end=bot_pb2.EndMatchRequest(match_id="m-x", seat=0))]), timeout=10,
            metadata=((BOT_SECRET_METADATA, SECRET),)))
        assert [a.WhichOneof("answer") for a in answers] == ["started", "ended"]


@pytest.mark.parametrize("env, args, says", [
    ({"ARENA_BOT_SECRET": ""}, [], "ARENA_BOT_SECRET is empty"),
    ({}, ["--secret", "s3cret"], "--secret has 6 characters: a bot secret has 16..256"),
    ({}, ["--secret", "pässwörd-1234567890"], "--secret has a space, a tab or a non-ASCII character"),
])
def test_the_starter_refuses_a_secret_the_arena_would_not_register(built: Path, env: dict[str, str],
                                                                    args: list[str], says: str) -> None:
    """As the Python SDK: a secret set but empty (a ``$(cat FILE)`` that failed), too short or not visible ASCII
    stops the bot before it serves, exit 2, the secret itself not printed."""
    environ = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_SECRET"} | env
    done = subprocess.run(["node", "dist/bot.js", "--port", "0", "--proto", str(REPO / "proto"), *args], cwd=built,
                          env=environ, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == "", (done.returncode, done.stdout, done.stderr)
    assert says in done.stderr and "umask 077" in done.stderr, done.stderr
    assert all(a not in done.stderr for a in args if a != "--secret")


def test_the_starter_explains_itself_with_help(built: Path) -> None:
    for flag in ("--help", "-h"):
        done = subprocess.run(["node", "dist/bot.js", flag], cwd=built, capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0 and done.stderr == "", (done.returncode, done.stderr)
        assert done.stdout.startswith("usage: node dist/bot.js [--host H] [--port P]") and "needs a value" not in \
            done.stdout, done.stdout
