"""The TypeScript starter bot (``starters/typescript``) on real parts: installed with ``npm ci`` from its committed
lockfile, compiled with its ``tsc`` build script, started as a Node.js process that loads the repository's own
``proto/arena/v1/*.proto`` (so a protocol change that breaks it fails here), and played through the real referee
over gRPC against sample bot processes, one match of each game, with its bot secret: no fault. A call without the
secret is refused as the Python SDK refuses it."""

from __future__ import annotations

import asyncio
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

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


@pytest.fixture
def ts_bot(built: Path) -> Iterator[str]:
    """The starter running as a Node.js process with the bot secret (env ARENA_BOT_SECRET) and the repository's
    protocol (--proto); its endpoint. Stopped after the test."""
    env = {**os.environ, "ARENA_BOT_SECRET": SECRET}
    process = subprocess.Popen(["node", "dist/bot.js", "--port", "0", "--proto", str(REPO / "proto")], cwd=built,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
        yield ready.rsplit(" ", 1)[1].strip()
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.mark.parametrize("game, others", [("take5", ("sample:heuristic", "sample:random")),
                                          ("taki", ("sample:taki-heuristic", "sample:taki-random"))])
def test_the_starter_plays_a_match_through_the_referee_without_a_fault(
        ts_bot: str, start_bot: Callable[..., Any], game: str, others: tuple[str, str]) -> None:
    opponents = [start_bot(spec) for spec in others]
    seats = [SeatSpec("ts-starter", ts_bot, secret=SECRET),
             *(SeatSpec(b.name, b.endpoint) for b in opponents)]
    record = asyncio.run(run_match(f"m-ts-{game}", game, seats, None, seed=21,
                                   options=RefereeOptions(deadline_ms=5000)))
    assert record.faults == (), record.faults
    assert len(record.result.ranks) == 3 and min(record.result.ranks) == 1
    mine = [d for d in record.decisions if d["seat"] == 0]
    assert mine and all(d["source"] == "bot" for d in mine)  # every decision of the starter was its own answer


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
