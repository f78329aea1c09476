"""SIGTERM to the processes a user runs (`arena play`, `arena serve`, `make demo`) stops whatever they started:
no bot process, redis-server or server may outlive them (orphaned to PID 1).

Every process here is real. The processes a test starts carry a tag in their environment, which their children
inherit, so the test finds every descendant through /proc, whoever its parent is by then. redis-server is the
exception (it writes its process title over its environment): it is found through the ``redis.pid`` file of its
data dir.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARENA = Path(sys.executable).parent / "arena"
SLUGGISH_BOT = str(Path(__file__).resolve().parent / "bots" / "sluggish_bot.py")
TAG_VAR = "ARENA_SIGNAL_TEST_TAG"
TIMEOUT_S = 60.0

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")


def _env(tag: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update({TAG_VAR: tag, **extra})
    return env


def _tagged(tag: str) -> dict[int, str]:
    """pid -> command line of every live (not zombie) process whose environment carries ``tag``."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile, or not ours
            continue
        if state != "Z":
            found[int(entry.name)] = cmdline
    return found


def _alive(pid: int) -> bool:
    """True while process ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _left_over(tag: str, also: tuple[int, ...] = (), timeout: float = 15.0) -> dict[int, str]:
    """The tagged processes (and the processes ``also``) still alive once ``timeout`` seconds passed, or {} as soon
    as none is left."""
    end = time.monotonic() + timeout
    while True:
        alive = _tagged(tag)
        alive.update({pid: "(untagged)" for pid in also if _alive(pid)})
        if not alive or time.monotonic() >= end:
            return alive
        time.sleep(0.1)


def _redis_pid(data_dir: Path) -> int:
    return int((data_dir / "redis.pid").read_text())


def _ctrl_c_default() -> None:
    """In the child before it runs: SIGINT back to its default. A test run started in the background (``make test
    &``) ignores SIGINT, children inherit that, and Python then never turns a SIGINT into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_until(predicate, what: str, proc: subprocess.Popen) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + TIMEOUT_S
    while not predicate():
        assert proc.poll() is None, f"exited ({proc.returncode}) before {what}: {proc.communicate()}"
        assert time.monotonic() < end, f"no {what} after {TIMEOUT_S:g} s"
        time.sleep(0.05)


REDIS_DATA_DIRS: list[Path] = []  # data dirs of the private redis-servers a test may start (found by redis.pid)


@pytest.fixture
def tag() -> Iterator[str]:
    """A fresh tag; whatever carries it, and the redis-server of every data dir on ``REDIS_DATA_DIRS``, is killed
    after the test (so a failing test leaves nothing behind)."""
    value = uuid.uuid4().hex
    yield value
    leftovers = list(_tagged(value))
    for data_dir in REDIS_DATA_DIRS:
        try:
            pid = _redis_pid(data_dir)
            if b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes():  # not a stale pid file's reuse
                leftovers.append(pid)
        except (OSError, ValueError):
            pass
    REDIS_DATA_DIRS.clear()
    for pid in leftovers:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("seats, when, sig", [
    ([SLUGGISH_BOT, SLUGGISH_BOT], "mid-game", signal.SIGTERM),
    (["sample:random", SLUGGISH_BOT], "start-up", signal.SIGTERM),
    ([SLUGGISH_BOT, SLUGGISH_BOT], "mid-game", signal.SIGINT),  # Ctrl-C: not an "Error:"
])
def test_sigterm_to_play_stops_the_bots_it_started(tag: str, tmp_path: Path, seats: list[str], when: str,
                                                   sig: signal.Signals) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    record = tmp_path / "game.json"
    args = [str(ARENA), "play", "take5", "--limit", "1000", "--deadline-ms", "5000", "--record", str(record)]
    for seat in seats:
        args += ["--bot", seat]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(tag, SLUGGISH_MARKER_DIR=str(markers)), preexec_fn=_ctrl_c_default)
    try:
        if when == "mid-game":  # both bots have played a card
            _wait_until(lambda: len(list(markers.iterdir())) >= 2, "card from both bots", proc)
        else:  # both bot processes exist, maybe not ready yet
            _wait_until(lambda: len(set(_tagged(tag)) - {proc.pid}) >= 2, "bot processes", proc)
        bots = set(_tagged(tag)) - {proc.pid}
        assert len(bots) == 2, _tagged(tag)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (143 if sig == signal.SIGTERM else 130), (out, err)
    assert "Traceback" not in err
    assert err.strip().splitlines() == ["interrupted: the game was stopped before its end; no record was written"]
    assert _left_over(tag) == {}  # the bot processes were stopped, not orphaned
    assert not record.exists()  # an interrupted game is not recorded


def test_sigterm_to_serve_stops_its_private_redis(tag: str, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    REDIS_DATA_DIRS.append(data_dir)
    proc = subprocess.Popen([str(ARENA), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir),
                             "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(tag))
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # the third line comes once everything runs
            lines.append(line)
            if line.startswith("workers: "):
                break
        assert lines and lines[-1].startswith("workers: 2 embedded"), (lines, proc.poll())
        redis_pid = _redis_pid(data_dir)
        assert _alive(redis_pid)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err  # SIGTERM is how a server is asked to stop
    assert "arena serve stopping" in out and "Traceback" not in err
    assert _left_over(tag, also=(redis_pid,)) == {}  # redis-server included
    assert not (data_dir / "redis.url").exists()


def test_sigterm_to_the_demo_while_a_bot_starts_stops_everything(tag: str, tmp_path: Path) -> None:
    REDIS_DATA_DIRS.append(tmp_path / "demo")
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "demo.py")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=_env(tag, DEMO_DATA_DIR=str(tmp_path / "demo"), DEMO_ROUNDS="1"))
    try:
        # the second bot process exists: the demo is waiting for its ready line (or just got it)
        _wait_until(lambda: any("heuristic_bot" in c for c in _tagged(tag).values()), "heuristic bot", proc)
        redis_pid = _redis_pid(tmp_path / "demo")
        assert _alive(redis_pid)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=2 * TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, (out, err)
    assert "interrupted: removing the demo's bots, stopping the server" in err and "Traceback" not in err
    assert "demo wall time" in out
    assert _left_over(tag, also=(redis_pid,)) == {}  # server, redis-server, every bot, also the one starting


def test_ctrl_c_while_the_cli_is_imported_exits_130_without_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The console script's import of the command line takes about a second: a Ctrl-C then is one line, exit 130."""
    import importlib.abc

    from arena.__main__ import main

    class CtrlC(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: object, target: object = None) -> None:
            if name == "arena.cli":
                raise KeyboardInterrupt

    for name in [m for m in sys.modules if m == "arena.cli" or m.startswith("arena.cli.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [CtrlC(), *sys.meta_path])
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err.strip() == "Aborted."
