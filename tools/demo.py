"""`make demo`: the main job of the arena, end to end, on one machine, done the way a user would do it.

1. ``arena serve`` as its own process (private redis-server in ./.arena, on 127.0.0.1, a free port);
2. the sample bots as separate processes, under demo names of their own (demo-random, demo-heuristic,
   demo-montecarlo, demo-random-2), so the names a user registers after the demo (the README's heuristic,
   montecarlo, ...) are never touched by it;
3. ``arena bot register`` for each: the first run prints each NAME's owner token and saves it in
   ./.arena/tokens.json, filed under the arena's id; a second run re-registers the same NAMEs with those tokens
   (same NAME@VERSION, so the ladder is kept);
4. ``arena tournament create ... --no-wait`` then ``arena tournament status ID --watch``: a Take 5 round robin
   through the Redis queue, with a progress bar, then the tournament's standings;
5. ``arena ladder``: the Elo ladder (a second run adds to the same ladder, since ./.arena persists), and a check
   that the ladder recomputed from the results log (``arena ladder --rebuild``) equals the live one;
   steps 2-5 run again for a short Taki round robin (taki-random, taki-heuristic, a second taki-random), ending
   with the Taki ladder (``arena ladder --game taki``);
6. ``arena bot remove`` of the demo's bots, whose processes stop with the demo (their ladder lines stay), so no
   registered bot is left pointing at a stopped process; then everything started here is stopped, also on
   Ctrl-C, SIGTERM or a failure, at any step (a process is on the list of things to stop from the moment it is
   started, before it is ready).

Every command shown with ``$`` runs as shown, and what follows it is that command's own output.

The server and the bots run in sessions of their own, so Ctrl-C reaches only this script and the command in the
foreground; the script then stops the server first (its workers finish the matches they are running while the
bots are still up, so no match is stored with bots that vanished) and the bots after it. Queued matches of an
interrupted tournament stay in Redis and are played by the workers of the next run.

The demo sets ``ARENA_ADMIN_TOKEN`` (a new random one, unless it is set already) for every process it starts:
``arena serve`` takes it as the arena's admin token (and saves it in the data dir, where the CLI on this machine
finds it later), and the organiser commands (``tournament create``, ``ladder --rebuild``) send it.

``arena serve --web`` serves the web pages (ladders, bots, tournaments, matches) beside the referee; the demo
prints their URL at the start and at the end. With DEMO_WEB=1 (``make demo-web``) the arena, the demo's bots and
the pages stay up after the tournaments until Ctrl-C, so a person can open the pages and replay any demo match.

Prints the wall time at the end. Exit code: 0, 1 when a step failed, 130 after Ctrl-C (0 when DEMO_WEB=1 waits
for it), 143 after SIGTERM. Environment: DEMO_ROUNDS (default 36), DEMO_SEATS (3), DEMO_TAKI_ROUNDS (24),
DEMO_DATA_DIR (.arena), DEMO_WEB_LISTEN (the pages' address, default 127.0.0.1:0: a free port), DEMO_WEB,
ARENA_ADMIN_TOKEN.
"""

from __future__ import annotations

import json
import os
import re
import secrets
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

from arena.cli.tokens import ArenaRef, TokenStore  # noqa: E402
from arena.match.local_bots import READY_RE, bot_command  # noqa: E402

# (ladder name, bot to start). Four bots in 3-seat matches: every 3-subset plays, 4 matches a round, each on a deal
# of its own (with fewer than 2 x 3 bots no deal can be played at a second table by other bots). Names of the
# demo's own: the README's commands register the sample bots as heuristic and montecarlo, and the demo must
# never re-register (and strand) those.
BOTS = (
    ("demo-random", "sample:random"),
    ("demo-heuristic", "sample:heuristic"),
    ("demo-montecarlo", "sample:montecarlo"),
    ("demo-random-2", "sample:random"),
)
TAKI_BOTS = (
    ("demo-taki-random", "sample:taki-random"),
    ("demo-taki-heuristic", "sample:taki-heuristic"),
    ("demo-taki-random-2", "sample:taki-random"),
)
SEATS = int(os.environ.get("DEMO_SEATS", "3"))
ROUNDS = int(os.environ.get("DEMO_ROUNDS", "36"))  # 36 x 4 matches: about 85 s on 2 cores
TAKI_ROUNDS = int(os.environ.get("DEMO_TAKI_ROUNDS", "24"))  # 24 x 1 short matches: about 15 s
DATA_DIR = os.environ.get("DEMO_DATA_DIR", ".arena")
WEB_LISTEN = os.environ.get("DEMO_WEB_LISTEN", "127.0.0.1:0")
KEEP_WEB = os.environ.get("DEMO_WEB", "") not in ("", "0")
WEB_URL: list[str] = []  # the pages' URL, from the `web pages: URL` line of arena serve
SERVER_FILE = "demo-server"  # in DATA_DIR: where demos before arena ids left their server address
START_TIMEOUT_S = 30.0
SERVE_STOP_TIMEOUT_S = 90.0  # running matches drain first
BOT_STOP_TIMEOUT_S = 5.0
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


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


# Every process the demo started, in start order; main() stops them all at the end.
STARTED: list[Background] = []


def start_background(label: str, command: list[str], is_ready: Callable[[str], str | None],
                     echo: bool, stderr: Any = None) -> Background:
    """Start ``command`` in its own session and wait until a stdout line passes ``is_ready`` (which returns
    what the line tells, e.g. an address). ``stderr``: a file for the process's stderr (default: ours).
    The process goes on ``STARTED`` at once, so an interruption while it starts up still stops it.
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

    STARTED.append(bg)  # from now on the clean-up of main() stops it, even if we never see it ready
    threading.Thread(target=pump, daemon=True).start()
    if not seen.wait(START_TIMEOUT_S) or bg.ready is None:
        bg.stop(BOT_STOP_TIMEOUT_S)
        raise DemoError(f"{label} did not start (exit code {process.poll()}); command: {shlex.join(command)}")
    return bg


def start_serve() -> tuple[Background, str]:
    """``arena serve`` on 127.0.0.1, a free port; returns it and the address it listens on."""
    args = ["serve", "--listen", "127.0.0.1:0", "--data-dir", DATA_DIR, "--web", WEB_LISTEN]
    say("$ arena " + shlex.join(args) + " &")

    def listening(line: str) -> str | None:
        if line.startswith("web pages: "):
            WEB_URL.append(line.removeprefix("web pages: ").strip())
        return line.rsplit("listening on ", 1)[1].strip() if "listening on " in line else None

    try:
        serve = start_background("serve", arena_command() + args, listening, echo=True)
    except DemoError as exc:  # its own error (above) names --data-dir: the demo's is DEMO_DATA_DIR
        raise DemoError(f"{exc}; if its data folder {DATA_DIR} is in use by another `arena serve`, stop that one or "
                        f"give the demo another folder: DEMO_DATA_DIR=.arena-2 make demo") from None
    assert serve.ready is not None
    refile_old_tokens(serve.ready)
    return serve, serve.ready


def refile_old_tokens(server: str) -> None:
    """Demos before arena ids saved owner tokens under the random address of their server (``SERVER_FILE``):
    file those under this arena's id, where the CLI looks for them now (same data dir, so the same arena)."""
    marker = Path(DATA_DIR) / SERVER_FILE
    try:
        old = marker.read_text().strip()
    except OSError:
        return
    import grpc

    from arena_sdk.pb import arena_pb2, arena_pb2_grpc

    with grpc.insecure_channel(server) as channel:
        info = arena_pb2_grpc.ArenaStub(channel).GetArenaInfo(arena_pb2.GetArenaInfoRequest(), timeout=10)
    moved = TokenStore(Path(DATA_DIR)).refile(old, ArenaRef(f"arena:{info.arena_id}", server))
    if moved:
        say(f"  {moved} owner token(s) saved for {old} by an older demo are now filed under this arena's id")
    marker.unlink()


def start_sample_bot(name: str, spec: str) -> tuple[Background, str]:
    """A sample bot as a user starts one (``python -m sample_bots.X --port 0 --name NAME``: registration checks
    the name GetInfo reports); returns it and its endpoint."""
    command = bot_command(spec, extra_args=["--name", name])
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


def run_arena(*args: str) -> str:
    """Run one ``arena`` command in the foreground, echoing it as a user would type it, with its own output
    (stdout, also returned; stderr passes through); DemoError on failure."""
    say("$ arena " + shlex.join(args))
    process = subprocess.Popen(arena_command() + list(args), cwd=ROOT, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    if process.wait() != 0:
        raise DemoError(f"`arena {shlex.join(args)}` failed with exit code {process.returncode}")
    return "".join(lines)


def run_arena_json(*args: str) -> Any:
    """Run one ``arena ... --json`` command without showing it (the demo reads its answer); DemoError on
    failure."""
    done = subprocess.run(arena_command() + list(args), cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise DemoError(f"`arena {shlex.join(args)}` failed with exit code {done.returncode}: "
                        f"{done.stderr.strip()}")
    return json.loads(done.stdout)


def register(name: str, endpoint: str, server: str, game: str) -> str:
    """``arena bot register NAME ENDPOINT --game GAME``: on the first run it prints the owner token and saves it;
    later runs find the saved token. Returns the bot id NAME@VERSION."""
    out = run_arena("bot", "register", name, endpoint, "--game", game, "--server", server, "--data-dir", DATA_DIR)
    found = re.search(r"^registered \S+ bot (\S+) at ", out, re.MULTILINE)
    if found is None:
        raise DemoError(f"`arena bot register {name}` did not say which bot id it registered: {out.strip()!r}")
    return found.group(1)


def unregister(names: list[tuple[str, str]], server: str) -> None:
    """``arena bot remove NAME`` for the demo's bots (their processes stop with the demo; the ladder keeps their
    history). Best effort: a failure is reported, not raised, since this runs while the demo ends."""
    if not names:
        return
    say("the demo's bots stop with it, so it removes them from the arena (their ladder lines stay):")
    for name, game in names:
        try:
            run_arena("bot", "remove", name, "--game", game, "--server", server, "--data-dir", DATA_DIR)
        except (DemoError, OSError) as exc:
            print(f"  could not remove {name}: {exc}", file=sys.stderr, flush=True)


def check_rebuild(server: str, game: str) -> None:
    """``arena ladder --rebuild``: the ladder recomputed from the results log must equal the live one."""
    args = ("ladder", "--rebuild", "--json", "--game", game, "--server", server)
    done = subprocess.run(arena_command() + list(args), cwd=ROOT, capture_output=True, text=True)
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise DemoError(f"`arena ladder --rebuild` failed: {done.stderr.strip()}") from None
    if not data["equal"]:
        raise DemoError(f"the ladder rebuilt from {data['results']} results differs from the live ladder: "
                        f"{'; '.join(data['differences'])}")
    say(f"check: the {game} ladder recomputed from the {data['results']} stored results (`arena ladder --rebuild "
        f"--game {game}`) equals the live ladder ({len(data['live']['entries'])} bots)")


LOS_CALLED = 0.95  # the demo calls two adjacent ladder lines ordered from this likelihood of superiority


def check_strength_order(server: str, bot_ids: dict[str, str]) -> None:
    """Say what the Take 5 ladder shows of the sample bots' strength order (random < heuristic < montecarlo): the
    two strong bots above random, then montecarlo against heuristic, which are close: ordered when the ladder's
    likelihood of superiority of the upper over the lower (adjacent lines) is at least ``LOS_CALLED`` (when another
    bot sits between them: when their 95 % margins do not overlap), else "too close to call" after this many
    matches."""
    ladder = run_arena_json("ladder", "--json", "--game", "take5", "--server", server)
    entry = {e["bot"]: e for e in ladder["entries"]}
    of = {name: entry.get(bot_id) for name, bot_id in bot_ids.items()}
    randoms = [of[n]["rating"] for n, spec in BOTS if spec == "sample:random" and of.get(n) is not None]
    mc, heur = of.get("demo-montecarlo"), of.get("demo-heuristic")
    if not randoms or mc is None or heur is None:
        say("check: strength order on the ladder: not every sample bot is on it yet")
        return
    above = min(mc["rating"], heur["rating"]) > max(randoms)
    say("check: heuristic and montecarlo above random on the ladder"
        + (" (as expected)" if above else " is NOT shown this time (too few matches? run again to add more)"))
    entries = ladder["entries"]
    order = [e["bot"] for e in entries]
    upper, lower = (mc, heur) if order.index(mc["bot"]) < order.index(heur["bot"]) else (heur, mc)
    los = upper.get("los_next") if order.index(upper["bot"]) + 1 == order.index(lower["bot"]) else None
    if los is not None and los >= LOS_CALLED:  # the ladder's own likelihood of superiority, as its table shows it
        name = "montecarlo" if upper is mc else "heuristic"
        shown = "> 99.9 %" if 0.999 < los < 1 else f"{100 * los:.1f} %"  # as the ladder's table says it
        say(f"check: {name} above {'heuristic' if upper is mc else 'montecarlo'} on the ladder, likelihood of "
            f"superiority {shown}" + (" (as expected)" if upper is mc else ": NOT the expected order"))
    elif los is None and mc.get("low") is not None and heur.get("high") is not None and mc["low"] > heur["high"]:
        say("check: montecarlo above heuristic, beyond their 95 % margins (as expected)")
    elif los is None and heur.get("low") is not None and mc.get("high") is not None and heur["low"] > mc["high"]:
        say("check: heuristic above montecarlo beyond their 95 % margins: NOT the expected order")
    else:
        say(f"check: montecarlo {mc['rating']:.0f} vs heuristic {heur['rating']:.0f}: too close to call after these "
            f"matches (likelihood of superiority under {LOS_CALLED:.0%}); each `make demo` adds more")


def check_taki_order(server: str, bot_ids: dict[str, str]) -> None:
    """Say whether the Taki ladder shows taki-heuristic above both taki-random bots."""
    ladder = run_arena_json("ladder", "--json", "--game", "taki", "--server", server)
    rating = {e["bot"]: e["rating"] for e in ladder["entries"]}
    heur = rating.get(bot_ids.get("demo-taki-heuristic", ""))
    randoms = [rating.get(bot_ids.get(n, "")) for n, spec in TAKI_BOTS if spec == "sample:taki-random"]
    shown = heur is not None and all(r is not None and heur > r for r in randoms)
    say("check: on the Taki ladder taki-heuristic is above taki-random"
        + (" (as expected)" if shown else " is NOT shown this time (too few matches? run again to add more)"))


def run_round_robin(game: str, bots: tuple[tuple[str, str], ...], rounds: int, server: str,
                    registered: list[tuple[str, str]]) -> dict[str, str]:
    """Start ``bots`` as processes, register them for ``game``, run a round robin through the queue and show the
    game's ladder. Returns name -> bot id."""
    endpoints = []
    for name, spec in bots:
        _, endpoint = start_sample_bot(name, spec)
        endpoints.append(endpoint)
    bot_ids = {}
    for (name, _), endpoint in zip(bots, endpoints, strict=True):
        bot_ids[name] = register(name, endpoint, server, game)
        registered.append((name, game))
    names = ",".join(name for name, _ in bots)
    out = run_arena("tournament", "create", "--game", game, "--bots", names, "--seats", str(SEATS), "--rounds",
                    str(rounds), "--no-wait", "--server", server)
    created = re.search(r"^tournament (\S+): ", out, re.MULTILINE)
    if created is None:
        raise DemoError(f"`arena tournament create` did not say the tournament id: {out.strip()!r}")
    run_arena("tournament", "status", created.group(1), "--watch", "--server", server)
    run_arena("ladder", "--game", game, "--server", server)
    check_rebuild(server, game)
    return bot_ids


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def stop_everything() -> None:
    """Stop every process on ``STARTED``: the server first (its workers finish their running matches while the
    bots are still up), then the bots."""
    for bg in sorted(STARTED, key=lambda b: b.label != "serve"):
        bg.stop(SERVE_STOP_TIMEOUT_S if bg.label == "serve" else BOT_STOP_TIMEOUT_S)


def keep_up() -> int:
    """Keep the arena, its bots and its pages up until Ctrl-C (``make demo-web``); 0 then."""
    say("the arena and its pages stay up until Ctrl-C" + (f": open {WEB_URL[0]}" if WEB_URL else ""))
    try:
        while all(bg.process.poll() is None for bg in STARTED if bg.label == "serve"):
            time.sleep(0.5)
    except KeyboardInterrupt:
        print("\nCtrl-C: stopping the arena and the demo's bots", file=sys.stderr)
        return 0
    print("arena serve stopped by itself", file=sys.stderr)
    return 1


def main() -> int:
    os.chdir(ROOT)
    if not os.environ.get("ARENA_ADMIN_TOKEN"):  # inherited by arena serve and every arena command below
        os.environ["ARENA_ADMIN_TOKEN"] = secrets.token_urlsafe(32)
    started_at = time.monotonic()
    signal.signal(signal.SIGTERM, _on_sigterm)
    server = None
    registered: list[tuple[str, str]] = []
    played = False  # both tournaments ran: their results are on the ladder in DATA_DIR
    try:
        _, server = start_serve()
        say("--- Take 5 ---")
        bot_ids = run_round_robin("take5", BOTS, ROUNDS, server, registered)
        check_strength_order(server, bot_ids)
        say("--- Taki ---")
        taki_ids = run_round_robin("taki", TAKI_BOTS, TAKI_ROUNDS, server, registered)
        check_taki_order(server, taki_ids)
        played = True
        if WEB_URL:
            if KEEP_WEB:
                say(f"web pages of this arena: {WEB_URL[0]} (ladders, bots, tournaments, every match)")
            else:
                say(f"web pages of this arena were at {WEB_URL[0]} while it ran; `make demo-web` keeps them up "
                    "after the tournaments, to replay any match card by card")
        if KEEP_WEB:
            return keep_up()
        unregister(registered, server)
        registered = []
        return 0
    except (KeyboardInterrupt, Terminated) as exc:
        print("\ninterrupted: removing the demo's bots, stopping the server (running matches finish first), then "
              "the bots", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    except (DemoError, OSError, ValueError) as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # another Ctrl-C must not leave processes behind
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if server is not None:
            unregister(registered, server)
        stop_everything()
        print(f"demo wall time: {time.monotonic() - started_at:.1f} s"
              + (f" (ladder kept in {DATA_DIR}/; run `make demo` again to add to it)" if played else ""), flush=True)


if __name__ == "__main__":
    sys.exit(main())
