"""`arena serve` / `arena worker` as real processes, driven by the CLI commands a user types: register bots,
run a round robin with --wait, read the ladder. Real redis-server, real bot processes, real gRPC."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli

ARENA = Path(sys.executable).parent / "arena"
START_TIMEOUT_S = 30


class Proc:
    """An `arena` subprocess whose stdout lines are collected by a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen([str(ARENA), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env)
        self.lines: list[str] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.lines.append("<eof>")
            self.changed.notify_all()

    def wait_for(self, fragment: str) -> str:
        with self.changed:
            ok = self.changed.wait_for(lambda: any(fragment in line for line in self.lines) or "<eof>" in self.lines,
                                       timeout=START_TIMEOUT_S)
        found = [line for line in self.lines if fragment in line]
        assert ok and found, f"no {fragment!r} in {self.lines}; stderr: {self._stderr()}"
        return found[0]

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return "(running)"
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def terminate(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(extra)
    return env


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[Proc, str, Path]]:
    """`arena serve` on a free port with a private redis-server in a temporary data dir."""
    data_dir = tmp_path / "arena-data"
    proc = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "1"], _env())
    try:
        line = proc.wait_for("listening on ")
        yield proc, line.rsplit("listening on ", 1)[1].strip(), data_dir
    finally:
        proc.terminate()


def _ok(args: list[str], server: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--server", server])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_serve_register_tournament_ladder(serve: tuple[Proc, str, Path], start_bot) -> None:  # type: ignore[no-untyped-def]
    proc, server, data_dir = serve
    assert "private redis-server" in proc.wait_for("redis: ")
    assert (data_dir / "redis.url").exists()  # so that `arena worker` on this machine finds it
    bots = {"rnd": start_bot("sample:random"), "heur": start_bot("sample:heuristic"),
            "rnd2": start_bot("sample:random")}
    for name, bot in bots.items():
        out = _ok(["bot", "register", name, bot.endpoint], server)
        assert out.strip() == f"registered take5 bot {name} at {bot.endpoint}"
    moved = start_bot("sample:random")
    _ok(["bot", "register", "rnd2", moved.endpoint], server)  # same name again: the endpoint is updated
    listed = json.loads(_ok(["bot", "list", "--json"], server))
    assert {b["name"]: b["endpoint"] for b in listed} == {"rnd": bots["rnd"].endpoint,
                                                         "heur": bots["heur"].endpoint, "rnd2": moved.endpoint}

    out = _ok(["tournament", "create", "--bots", "rnd,heur", "--bots", "rnd2", "--seats", "3", "--limit", "10",
               "--seed", "5", "--wait", "--json"], server)
    t = json.loads(out)
    assert (t["id"], t["state"], t["matches_total"], t["matches_done"]) == ("t1", "finished", 3, 3)
    assert t["seed"] == 5 and t["config"]["limit"] == 10 and t["bots"] == ["rnd", "heur", "rnd2"]

    status = json.loads(_ok(["tournament", "status", "t1", "--json"], server))
    assert status["matches_done"] == 3 and status["state"] == "finished"
    table = _ok(["tournament", "status", "t1"], server)
    assert "3/3 matches" in table and "finished" in table

    ladder = json.loads(_ok(["ladder", "--json"], server))
    entries = ladder["entries"]
    assert sorted(e["bot"] for e in entries) == ["heur", "rnd", "rnd2"]
    assert all(e["matches"] == 3 for e in entries)  # 3 seat rotations of one deal, all three bots in each
    assert sum(e["rating"] for e in entries) == pytest.approx(3 * 1500.0)  # Elo deltas sum to zero
    assert [e["rank"] for e in entries] == sorted(e["rank"] for e in entries)
    text = _ok(["ladder"], server)
    for header in ("rank", "bot", "rating", "matches", "wins", "mean score"):
        assert header in text
    assert entries[0]["bot"] in text

    missing = CliRunner().invoke(cli, ["tournament", "status", "t99", "--server", server])
    assert missing.exit_code == 1
    lines = missing.stderr.strip().splitlines()
    assert len(lines) == 1 and "NOT_FOUND" in lines[0] and "Traceback" not in missing.output

    worker = Proc(["worker", "--data-dir", str(data_dir), "--name", "extra", "--concurrency", "2"], _env())
    assert "redis://127.0.0.1:" in worker.wait_for("arena worker extra working for redis")
    assert worker.terminate() == 0

    assert proc.terminate() == 0
    assert "arena serve stopping" in proc.lines
    assert not (data_dir / "redis.url").exists()  # the private redis-server was stopped with the server


def test_serve_uses_ARENA_REDIS_URL(redis_url: str, tmp_path: Path) -> None:
    data_dir = tmp_path / "unused"
    proc = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "0"],
                _env(ARENA_REDIS_URL=redis_url))
    try:
        assert proc.wait_for("redis: ") == f"redis: {redis_url} (external)"
        assert not (data_dir / "redis.url").exists()  # no private server was started
    finally:
        assert proc.terminate() == 0


def test_serve_on_a_taken_port_is_one_line(serve: tuple[Proc, str, Path], redis_url: str) -> None:
    _, server, _ = serve
    done = subprocess.run([str(ARENA), "serve", "--listen", server, "--workers", "0"], capture_output=True,
                          text=True, env=_env(ARENA_REDIS_URL=redis_url), timeout=60)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot listen on {server}"), done.stderr
