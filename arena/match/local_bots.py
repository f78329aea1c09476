"""Bots started as local OS processes (``arena play --bot sample:NAME``, tests, the demo), and ``play``: one game
between sample bots, bot files and/or running endpoints, without Redis.

A bot process is started as ``python -m MODULE --host H --port 0`` (a sample bot) or ``python FILE.py --host H
--port 0`` (a bot file); port 0 lets the bot pick a free port. Per the SDK's stdout contract, it prints exactly
one line ``arena-bot <name> listening on <host>:<port>`` (``tls://<host>:<port>`` for a bot serving TLS) once its
server is ready; that line gives the bot's name and endpoint. The process's stdout and stderr are drained by
background threads (the last lines are kept for error messages), so a chatty bot never blocks on a full pipe.
"""

from __future__ import annotations

import collections
import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import grpc

from arena.core.config import DEFAULTS
from arena.core.seeds import local_seat_seeds
from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import check_match, run_match_sync
from arena_sdk.bot_process import PARENT_ENV, SECRET_ENV
from arena_sdk.games import game_ids
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

SAMPLE_ENTRY_POINT_GROUP = "arena.sample_bots"


def installed_sample_bots() -> dict[str, str]:
    """Sample bot name -> the module that serves it (``python -m MODULE``), from the installed entry points of the
    group ``arena.sample_bots`` (``SAMPLE_ENTRY_POINT_GROUP``), in order of name. Each entry point is named by the
    sample name and points at the bot class in its module (``random = "sample_bots.random_bot:RandomBot"``): the
    arena's own sample bots are declared in its ``pyproject.toml``, a game's distribution may declare its own."""
    return {e.name: e.module for e in sorted(metadata.entry_points(group=SAMPLE_ENTRY_POINT_GROUP),
                                             key=lambda e: e.name)}


SAMPLE_BOTS: dict[str, str] = installed_sample_bots()
SAMPLE_PREFIX = "sample:"
READY_TIMEOUT_S = 15.0
# the SDK's ready line; what follows the endpoint (" (bot secret on)") is for people
READY_RE = re.compile(r"^arena-bot (?P<name>\S+) listening on (?P<host>\S+):(?P<port>\d+)(?:\s+\(.*\))?\s*$")
_WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]", ""}
_TAIL_LINES = 40


class BotStartError(RuntimeError):
    """A bot process that did not become ready: it exited, or printed no ready line within the timeout.
    The message holds the command and the tail of the process's stderr."""


class _Drain:
    """Reads a pipe line by line in a daemon thread; keeps the last lines; signals the ready line."""

    def __init__(self, pipe: IO[bytes], watch_ready: bool) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self.ready: re.Match[str] | None = None
        self.ready_event = threading.Event()
        self.closed = threading.Event()
        self._watch = watch_ready
        self._thread = threading.Thread(target=self._run, args=(pipe,), daemon=True)
        self._thread.start()

    def _run(self, pipe: IO[bytes]) -> None:
        try:
            for raw in iter(pipe.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self.lines.append(line)
                if self._watch and self.ready is None:
                    m = READY_RE.match(line)
                    if m:
                        self.ready = m
                        self.ready_event.set()
        except (OSError, ValueError):
            pass
        finally:
            self.closed.set()
            self.ready_event.set()

    def tail(self) -> str:
        return "\n".join(self.lines)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


@dataclass
class BotProcess:
    """A bot running as a separate OS process.

    Attributes:
        endpoint: ``"host:port"`` where its ``arena.v1.Bot`` server listens.
        name: the bot's name from its ready line.
        process: the ``subprocess.Popen`` of the bot.
        command: the command line that started it.
    """

    endpoint: str
    name: str
    process: subprocess.Popen[bytes]
    command: tuple[str, ...] = ()
    _stdout: _Drain | None = field(default=None, repr=False)
    _stderr: _Drain | None = field(default=None, repr=False)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the process: SIGTERM, then SIGKILL when it has not exited after ``timeout`` seconds. Idempotent;
        never raises because the process is already gone."""
        _terminate(self.process, timeout)
        for drain in (self._stdout, self._stderr):
            if drain is not None:
                drain.join(1.0)

    @property
    def running(self) -> bool:
        """True while the process has not exited."""
        return self.process.poll() is None

    def stderr_tail(self) -> str:
        """The last lines (up to 40) the process wrote to stderr."""
        return self._stderr.tail() if self._stderr is not None else ""

    def warnings(self, wait_s: float = 0.2) -> list[str]:
        """The "warning: ..." lines the bot wrote to stderr before its ready line (a misspelt decision method, as
        ``arena_sdk.definition`` finds it), without the prefix; waits up to ``wait_s`` for the stderr reader to
        have them (they were written first, but come through another pipe)."""
        end = time.monotonic() + wait_s
        while True:
            found = [line[len("warning: "):] for line in (self._stderr.lines if self._stderr is not None else ())
                     if line.startswith("warning: ")]
            if found or time.monotonic() >= end:
                return found
            time.sleep(0.02)


def _terminate(process: subprocess.Popen[bytes], timeout: float) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            process.wait()


def sample_bots_of(game: str) -> tuple[str, ...]:
    """The names of the sample bots that play ``game`` (their bot class lists it in ``games``), in order of name.
    Imports each sample bot's module; an entry point that does not load is left out."""
    names = []
    for entry_point in sorted(metadata.entry_points(group=SAMPLE_ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            bot_class = entry_point.load()
        except Exception:  # a broken third-party sample bot: it fails later, when started, with its own error
            continue
        if game in getattr(bot_class, "games", ()):
            names.append(entry_point.name)
    return tuple(names)


def bot_command(spec: str, *, host: str = "127.0.0.1", port: int = 0, extra_args: Sequence[str] = ()) -> list[str]:
    """The command line that starts the bot of ``spec``: ``"sample:NAME"`` (a key of ``SAMPLE_BOTS``) or a path
    to a ``.py`` bot file. Raises ``ValueError`` for an unknown sample name or a file that does not exist."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"a bot spec must be 'sample:NAME' or a path to a .py file, got {spec!r}")
    if spec.startswith(SAMPLE_PREFIX):
        name = spec[len(SAMPLE_PREFIX):]
        if name not in SAMPLE_BOTS:
            raise ValueError(f"unknown sample bot {name!r}; sample bots: {', '.join(sorted(SAMPLE_BOTS))}")
        target = ["-m", SAMPLE_BOTS[name]]
    else:
        path = Path(spec)
        if path.suffix != ".py":
            raise ValueError(f"a bot spec must be 'sample:NAME' or a path to a .py file, got {spec!r}")
        if not path.is_file():
            raise ValueError(f"bot file {spec!r} does not exist")
        target = [str(path.resolve())]
    if not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be 0..65535, got {port!r}")
    return [sys.executable, "-u", *target, "--host", host, "--port", str(port), *extra_args]


def bot_environment(secret: str = "") -> dict[str, str]:
    """The environment of a bot process started here: this process's, without its ``ARENA_BOT_SECRET`` (a secret
    exported in the shell is not the referee's: a bot that inherited it would refuse every call of a referee that
    does not send it), with ``secret`` as ``ARENA_BOT_SECRET`` when given (in the environment, not on the command
    line, which every local user can read with ps), and ``ARENA_PARENT_PID`` (the bot stops when this process dies,
    by SIGKILL too)."""
    env = {k: v for k, v in os.environ.items() if k != SECRET_ENV}
    env[PARENT_ENV] = str(os.getpid())
    if secret:
        env[SECRET_ENV] = secret
    return env


@dataclass
class _Launch:
    spec: str
    command: list[str]
    process: subprocess.Popen[bytes]
    stdout: _Drain
    stderr: _Drain
    host: str


def _launch(spec: str, host: str, port: int, extra_args: Sequence[str], secret: str = "") -> _Launch:
    command = bot_command(spec, host=host, port=port, extra_args=extra_args)
    env = bot_environment(secret)
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=env)
    except OSError as exc:
        raise BotStartError(f"cannot start bot {spec!r} ({' '.join(command)}): {exc}") from exc
    assert process.stdout is not None and process.stderr is not None
    return _Launch(spec, command, process, _Drain(process.stdout, True), _Drain(process.stderr, False), host)


def _await_ready(launch: _Launch, deadline: float) -> BotProcess:
    launch.stdout.ready_event.wait(max(0.0, deadline - time.monotonic()))
    m = launch.stdout.ready
    if m is None:
        if launch.stdout.closed.is_set():  # stdout closed: the process is exiting; give it a moment for its status
            with contextlib.suppress(subprocess.TimeoutExpired):
                launch.process.wait(2.0)
        exited = launch.process.poll()
        _terminate(launch.process, 2.0)
        launch.stderr.join(1.0)
        why = (f"exited with status {exited}" if exited is not None
               else f"printed no 'arena-bot NAME listening on HOST:PORT' line within {READY_TIMEOUT_S:g} s")
        if exited == 0:  # ran to its end without serving: a file that defines a bot but never serves it
            why += ' without serving (does it end with `if __name__ == "__main__": serve(MyBot)`?)'

        tail = launch.stderr.tail() or "(nothing on stderr)"
        raise BotStartError(f"bot {launch.spec!r} {why}; command: {' '.join(launch.command)}\nstderr tail:\n{tail}")
    scheme, host = ("tls://", m.group("host")[6:]) if m.group("host").startswith("tls://") else ("", m.group("host"))
    if host in _WILDCARD_HOSTS:
        host = "127.0.0.1" if launch.host in _WILDCARD_HOSTS else launch.host
    return BotProcess(endpoint=f"{scheme}{host}:{m.group('port')}", name=m.group("name"), process=launch.process,
                      command=tuple(launch.command), _stdout=launch.stdout, _stderr=launch.stderr)


def start_bot(spec: str, *, host: str = "127.0.0.1", port: int = 0, extra_args: Sequence[str] = (),
              timeout: float = READY_TIMEOUT_S, secret: str = "") -> BotProcess:
    """Start the bot of ``spec`` (``"sample:NAME"`` or a path to a ``.py`` bot file) as a separate process and
    wait (up to ``timeout`` seconds) for its ready line. ``secret``: the bot secret it is started with (in its
    environment, ``ARENA_BOT_SECRET``), so that it answers only calls that carry it; "" for none, even when this
    process has an ``ARENA_BOT_SECRET`` (``bot_environment``).

    Raises ``ValueError`` for a bad spec (unknown sample, missing file) and ``BotStartError`` (with the tail of
    the process's stderr) when the process exits or prints no ready line in time; the process is stopped then.
    """
    launch = _launch(spec, host, port, extra_args, secret)
    return _await_ready(launch, time.monotonic() + timeout)


def start_bots(specs: Sequence[str], *, host: str = "127.0.0.1", extra_args: Sequence[str] = (),
               timeout: float = READY_TIMEOUT_S, secret: str = "") -> list[BotProcess]:
    """Start several bots at once (every process launched first, then awaited, so start-up overlaps), each with
    the bot secret ``secret`` ("" for none), as ``start_bot``. Same errors as ``start_bot``; on an error every
    process already started is stopped."""
    launches: list[_Launch] = []
    bots: list[BotProcess] = []
    try:
        for spec in specs:
            launches.append(_launch(spec, host, 0, extra_args, secret))
        deadline = time.monotonic() + timeout
        for launch in launches:
            bots.append(_await_ready(launch, deadline))
    except BaseException:
        for launch in launches:
            _terminate(launch.process, 2.0)
        raise
    return bots


@contextlib.contextmanager
def started_bots(specs: Sequence[str], *, host: str = "127.0.0.1", extra_args: Sequence[str] = (),
                 timeout: float = READY_TIMEOUT_S) -> Iterator[list[BotProcess]]:
    """Context manager: the bots of ``specs`` running as processes (in spec order); all stopped on exit, also
    on an exception. Errors as ``start_bots``."""
    bots = start_bots(specs, host=host, extra_args=extra_args, timeout=timeout)
    try:
        yield bots
    finally:
        for bot in bots:
            bot.stop()


# --- one game --------------------------------------------------------------------------------------------------

_ENDPOINT_RE = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})\Z")


def is_endpoint(spec: str) -> bool:
    """True when ``spec`` looks like ``HOST:PORT`` (``[v6]:PORT`` too) with a port 1..65535."""
    m = _ENDPOINT_RE.match(spec) if isinstance(spec, str) else None
    return m is not None and 1 <= int(m.group("port")) <= 65535


def bot_name(endpoint: str, timeout_ms: int = DEFAULTS.call_deadline_ms) -> str | None:
    """The name a running bot gives in ``GetInfo``, or None when it does not answer within ``timeout_ms``."""
    with grpc.insecure_channel(endpoint) as channel:
        try:
            info = bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=timeout_ms / 1000)
        except grpc.RpcError:
            return None
    return info.name or None


def play(
    specs: Sequence[str],
    *,
    game: str | None = None,
    config: Any = None,
    seed: int | None = None,
    deadline_ms: int = DEFAULTS.deadline_ms,
    call_deadline_ms: int = DEFAULTS.call_deadline_ms,
    match_id: str | None = None,
) -> MatchRecord:
    """Play one game (no Redis) and return its record; one seat per spec, in order.

    A spec is ``"sample:NAME"`` or a path to a ``.py`` bot file (started here as a process and stopped
    afterwards, also on errors) or ``"HOST:PORT"`` of a running bot (its seat name comes from ``GetInfo``, or
    is the endpoint when the bot does not answer; an unreachable bot plays by faults and default actions).
    ``game`` None plays the first registered game (``arena_sdk.games.game_ids()[0]``, as the CLI's ``--game``).
    ``seed`` None picks a random seed, recorded in the record; it also gives every seat its seat seed
    (``arena.core.seeds.local_seat_seeds``), so one seed replays the whole game, the bots' randomness included.
    ``match_id`` None makes ``"play-<uuid>"``.

    Raises ``ValueError`` for a bad spec or argument (see ``referee.run_match``) and ``BotStartError`` when a bot
    process does not start.
    """
    specs = list(specs)
    if game is None:
        game = game_ids()[0]
    starts = []  # True: start the spec as a process; False: a running endpoint
    for spec in specs:
        if isinstance(spec, str) and (spec.startswith(SAMPLE_PREFIX) or spec.endswith(".py")):
            bot_command(spec)  # validates before anything starts
            starts.append(True)
        elif is_endpoint(spec):
            starts.append(False)
        else:
            raise ValueError(f"bot spec must be 'sample:NAME', a path to a .py file or HOST:PORT, got {spec!r}")
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)
    if match_id is None:
        match_id = f"play-{uuid.uuid4().hex[:12]}"
    # game, seat count, config and deadlines are checked before any process starts
    options = RefereeOptions(deadline_ms=deadline_ms, call_deadline_ms=call_deadline_ms)  # ValueError when bad
    check_match(match_id, game, [SeatSpec("?", "?")] * len(specs), config)
    with started_bots([s for s, start in zip(specs, starts) if start]) as bots:
        started = iter(bots)
        seats = []
        for spec, start in zip(specs, starts):
            if start:
                bot = next(started)
                seats.append(SeatSpec(bot.name, bot.endpoint))
            else:
                seats.append(SeatSpec(bot_name(spec, call_deadline_ms) or spec, spec))
        return run_match_sync(match_id, game, seats, config, seed=seed, options=options,
                              seat_seeds=local_seat_seeds(seed, len(seats)))
