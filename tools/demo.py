"""`make demo`: the main job of the arena, end to end, on one machine, done the way a user would do it.

1. ``arena serve`` as its own process (private redis-server in ./.arena, a free port on 127.0.0.1);
2. the sample bots as separate processes (random, heuristic, montecarlo, and a second random bot);
3. ``arena bot register`` for each (a second run re-registers the same names: endpoints updated, ladder kept);
4. ``arena tournament create ... --wait``: a Take 5 round robin through the Redis queue, with a progress bar;
5. ``arena ladder``: the Elo ladder (a second run adds to the same ladder, since ./.arena persists);
6. everything started here is stopped again, also on Ctrl-C, SIGTERM or a failure.

The server and the bots run in sessions of their own, so Ctrl-C reaches only this script and the command in the
foreground; the script then stops the server first (its workers finish the matches they are running while the
bots are still up, so no match is stored with bots that vanished) and the bots after it. Queued matches of an
interrupted tournament stay in Redis and are played by the workers of the next run.

Prints the wall time at the end. Environment: DEMO_ROUNDS (default 10), DEMO_SEATS (3), DEMO_DATA_DIR (.arena).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `python tools/demo.py` from a checkout finds arena/ and sample_bots/

from arena.local_bots import READY_RE, bot_command  # noqa: E402

# (ladder name, bot to start). Four bots in 3-seat matches: every 3-subset plays, 12 matches a round.
BOTS = (
    ("random", "sample:random"),
    ("heuristic", "sample:heuristic"),
    ("montecarlo", "sample:montecarlo"),
    ("random-2", "sample:random"),
)
SEATS = int(os.environ.get("DEMO_SEATS", "3"))
ROUNDS = int(os.environ.get("DEMO_ROUNDS", "10"))  # 10 x 12 matches: about a minute on 2 cores
DATA_DIR = os.environ.get("DEMO_DATA_DIR", ".arena")
START_TIMEOUT_S = 30.0
SERVE_STOP_TIMEOUT_S = 90.0  # running matches drain first
BOT_STOP_TIMEOUT_S = 5.0


class DemoError(RuntimeError):
    """A step of the demo failed; the message says which."""


class Terminated(Exception):
    """SIGTERM reached the demo: clean up as on Ctrl-C."""


def arena_command() -> list[str]:
    """The ``arena`` console script next to this Python, else ``python -m arena.cli``."""
    script = Path(sys.executable).parent / "arena"
    return [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]


def say(text: str) -> None:
    print(f"\033[1m{text}\033[0m" if sys.stdout.isatty() else text, flush=True)


@dataclass
class Background:
    """A process started by the demo in a session of its own, with its stdout echoed line by line."""

    label: str
    process: subprocess.Popen[str]
    ready: str | None = None  # what the ready line told

    def stop(self, timeout: float) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_background(label: str, command: list[str], is_ready: Callable[[str], str | None],
                     echo: bool, stderr: Any = None) -> Background:
    """Start ``command`` in its own session and wait until a stdout line passes ``is_ready`` (which returns
    what the line tells, e.g. an address). ``stderr``: a file for the process's stderr (default: ours).
    Raises DemoError when the process exits or is not ready in time."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                               bufsize=1, start_new_session=True, stderr=stderr)
    bg = Background(label, process)
    seen = threading.Event()

    def pump() -> None:  # reads stdout for the whole run, so the pipe never fills up
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip("\n")
            if bg.ready is None:
                bg.ready = is_ready(line)
                if bg.ready is not None:
                    seen.set()
            if echo:
                print(f"  [{label}] {line}", flush=True)
        seen.set()

    threading.Thread(target=pump, daemon=True).start()
    if not seen.wait(START_TIMEOUT_S) or bg.ready is None:
        bg.stop(BOT_STOP_TIMEOUT_S)
        raise DemoError(f"{label} did not start (exit code {process.poll()}); command: {shlex.join(command)}")
    return bg


def start_serve() -> tuple[Background, str]:
    """``arena serve`` on a free port; returns it and the address it listens on."""
    args = ["serve", "--listen", "127.0.0.1:0", "--data-dir", DATA_DIR]
    say("$ arena " + shlex.join(args) + " &")

    def listening(line: str) -> str | None:
        return line.rsplit("listening on ", 1)[1].strip() if "listening on " in line else None

    serve = start_background("serve", arena_command() + args, listening, echo=True)
    assert serve.ready is not None
    return serve, serve.ready


def start_sample_bot(name: str, spec: str) -> tuple[Background, str]:
    """A sample bot as a user starts one (``python -m sample_bots.X --port 0``); returns it and its endpoint."""
    command = bot_command(spec)
    say(f"$ {shlex.join(['python'] + command[1:])} &")

    def listening(line: str) -> str | None:
        m = READY_RE.match(line)
        return f"{m.group('host')}:{m.group('port')}" if m else None

    log_path = Path(DATA_DIR) / "demo-bots.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a") as log:  # the child keeps its own copy of the descriptor
        try:
            bot = start_background(name, command, listening, echo=False, stderr=log)
        except DemoError as exc:
            raise DemoError(f"{exc}; its stderr is in {log_path}") from None
    assert bot.ready is not None
    host, _, port = bot.ready.rpartition(":")
    endpoint = f"127.0.0.1:{port}" if host in ("0.0.0.0", "[::]", "::") else bot.ready
    say(f"  bot {name} listening on {endpoint} (process {bot.process.pid})")
    return bot, endpoint


def run_arena(*args: str) -> None:
    """Run one ``arena`` command in the foreground, echoing it as a user would type it; DemoError on failure."""
    say("$ arena " + shlex.join(args))
    done = subprocess.run(arena_command() + list(args), cwd=ROOT)
    if done.returncode != 0:
        raise DemoError(f"`arena {shlex.join(args)}` failed with exit code {done.returncode}")


def check_strength_order(server: str) -> None:
    """Say whether the ladder shows the sample bots' strength order: random < heuristic < montecarlo."""
    done = subprocess.run(arena_command() + ["ladder", "--json", "--server", server], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise DemoError(f"`arena ladder --json` failed: {done.stderr.strip()}")
    rating = {e["bot"]: e["rating"] for e in json.loads(done.stdout)["entries"]}
    randoms = [rating[n] for n, spec in BOTS if spec == "sample:random" and n in rating]
    shown = bool(randoms) and rating.get("montecarlo", 0) > rating.get("heuristic", 0) > max(randoms)
    say("strength order on the ladder: random < heuristic < montecarlo"
        + (" (as expected)" if shown else " is NOT shown this time (too few matches? run again to add more)"))


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def main() -> int:
    os.chdir(ROOT)
    started_at = time.monotonic()
    signal.signal(signal.SIGTERM, _on_sigterm)
    serve: Background | None = None
    bots: list[Background] = []
    try:
        serve, server = start_serve()
        endpoints = []
        for name, spec in BOTS:
            bot, endpoint = start_sample_bot(name, spec)
            bots.append(bot)
            endpoints.append(endpoint)
        for (name, _), endpoint in zip(BOTS, endpoints, strict=True):
            run_arena("bot", "register", name, endpoint, "--server", server)
        names = ",".join(name for name, _ in BOTS)
        run_arena("tournament", "create", "--bots", names, "--seats", str(SEATS), "--rounds", str(ROUNDS),
                  "--wait", "--server", server)
        run_arena("ladder", "--server", server)
        check_strength_order(server)
        return 0
    except (KeyboardInterrupt, Terminated):
        print("\ninterrupted: stopping the server (running matches finish first), then the bots", file=sys.stderr)
        return 130
    except (DemoError, OSError, ValueError) as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # another Ctrl-C must not leave processes behind
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if serve is not None:
            serve.stop(SERVE_STOP_TIMEOUT_S)
        for bot in bots:
            bot.stop(BOT_STOP_TIMEOUT_S)
        print(f"demo wall time: {time.monotonic() - started_at:.1f} s "
              f"(ladder kept in {DATA_DIR}/; run `make demo` again to add to it)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
