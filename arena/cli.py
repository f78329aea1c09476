"""The ``arena`` command line: run the referee and workers, manage bots (register, update, remove, with owner
tokens), run tournaments (create, dry run, follow, cancel, standings), read matches turn by turn, read and rebuild
the ladder, list the workers, play and replay single games.

Thin by design (STYLE.md habit 9): every command parses its options, calls one platform function or one RPC of
the referee's ``arena.v1.Arena`` service, and prints the answer with rich (tables, progress bars) or as JSON
(``--json`` on every read). Every option can also come from an environment variable: ``ARENA_SERVER``,
``ARENA_REDIS_URL``, ``ARENA_DATA_DIR`` and ``ARENA_TOKEN`` are shared by the commands that use them; any other
option reads ``ARENA_<COMMAND>_<OPTION>``: the command path and the option's long name, upper case, ``-`` as ``_``
(``ArenaOption``), e.g. ``ARENA_SERVE_WORKERS=4``, ``ARENA_LADDER_JSON=1``,
``ARENA_TOURNAMENT_CREATE_DEADLINE_MS=200``. Several values of a repeatable option are separated by spaces
(``ARENA_PLAY_TAKE5_BOT="sample:random sample:heuristic"``).

Owner tokens: the first ``arena bot register`` of a NAME prints its owner token once and saves it in
``<data-dir>/tokens.json`` (mode 0600, keyed by server address, game and NAME), where later ``register``,
``update`` and ``remove`` of that NAME on this machine find it (``TokenStore``).

Errors are one line on stderr and a non-zero exit code, never a traceback: 1 for a failed operation, 2 for a bad
command line, 130 after Ctrl-C, 143 after SIGTERM (which unwinds like Ctrl-C: whatever the command started, such
as the bot processes of ``arena play``, is stopped first). Set ``ARENA_DEBUG=1`` to see the traceback of an
unexpected error.

The heavy platform modules (referee, service, Redis) are imported inside the commands that need them, so
``--help`` stays fast and works everywhere.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

# gRPC's C core logs errors (e.g. a port it cannot bind) straight to stderr, beside the CLI's own one-line error.
# Quiet unless the user asks (GRPC_VERBOSITY=ERROR or DEBUG); read once, when grpc is first imported.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import click  # noqa: E402
import grpc  # noqa: E402
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2, bot_pb2_grpc  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import (  # noqa: E402
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table  # noqa: E402

from arena_sdk.wire import MAX_TAKE5_LIMIT  # noqa: E402

from .config import DEFAULTS, MAX_DEADLINE_MS, MIN_DEADLINE_MS  # noqa: E402

GAMES = ("take5",)
VARIANTS = ("known-cards", "draft")
LIMIT_RULES = ("at-least", "more-than")
BOT_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
RPC_TIMEOUT_S = 30.0
POLL_INTERVAL_S = 0.5
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
# click >= 8.2 raises NoArgsIsHelpError (a UsageError whose message is the whole help) for a group called without
# a subcommand; older click prints the help itself.
_NO_ARGS_IS_HELP: type[Exception] = getattr(click.exceptions, "NoArgsIsHelpError", type("_Never", (Exception,), {}))


# --- errors ------------------------------------------------------------------------------------------------


class ArenaCliError(click.ClickException):
    """A failed operation: printed as one line ``Error: <message>``, exit code 1."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))  # one line, whatever the source message looked like


class ArenaInterrupted(ArenaCliError):
    """Ctrl-C while the CLI waits on something that goes on without it (a tournament): exit code 130 (143 after
    SIGTERM)."""

    exit_code = EXIT_INTERRUPTED


class Terminated(KeyboardInterrupt):
    """SIGTERM reached the CLI. Raised by the SIGTERM handler that ``ArenaGroup.main`` installs, it unwinds the
    command exactly as Ctrl-C does (a ``KeyboardInterrupt``, so asyncio lets it through too): every ``finally``
    runs, the bot processes ``arena play`` started are stopped. Exit code 143 (128 + SIGTERM)."""


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While the block runs, SIGTERM raises ``Terminated`` in the main thread (once: a second SIGTERM during the
    clean-up is ignored, so the clean-up finishes). Does nothing outside the main thread, where Python cannot set
    signal handlers. The previous handler comes back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = False

    def handler(signum: int, frame: Any) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def rpc_error(exc: grpc.RpcError, server: str, hints: Mapping[grpc.StatusCode, str] | None = None) -> ArenaCliError:
    """The one-line CLI error for a failed call to the arena server at ``server``.

    UNAVAILABLE becomes "cannot reach the arena server at X: is `arena serve` running?" (unless the server itself
    answered UNAVAILABLE because its Redis is down: then its message), DEADLINE_EXCEEDED says the server did not answer
    in time, UNIMPLEMENTED says the server is older than this CLI, every other status code gives the server's
    details (its message is written for people, see arena.proto) followed by the code name. ``hints`` adds a
    sentence for some codes (e.g. where to find an owner token after PERMISSION_DENIED).
    """
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    details = exc.details() if callable(getattr(exc, "details", None)) else None
    if code == grpc.StatusCode.UNAVAILABLE and "Redis" not in (details or ""):  # else the server answered
        return ArenaCliError(f"cannot reach the arena server at {server}: is `arena serve` running?")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ArenaCliError(f"the arena server at {server} did not answer in time")
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return ArenaCliError(f"the arena server at {server} does not offer this call ({details or 'UNIMPLEMENTED'}); "
                             "is it an older version than this CLI?")
    name = code.name if code is not None else "UNKNOWN"
    hint = (hints or {}).get(code) if code is not None else None
    return ArenaCliError(f"{details or 'the arena server failed'} ({name})" + (f"; {hint}" if hint else ""))


class ArenaGroup(click.Group):
    """The root group: turns every failure into one line on stderr and an exit code.

    Usage errors print ``Error: <what is wrong> (see `arena ... --help`)`` with exit code 2 instead of click's
    usage block; a group called without a subcommand (``arena``, ``arena bot``) prints its help as click does
    (stderr, exit code 2); ``ClickException``s print their message; Ctrl-C exits 130, SIGTERM 143 (both after the
    same clean-up); an unexpected exception prints its type and message (``ARENA_DEBUG=1`` re-raises it for the
    traceback).
    """

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            with _sigterm_raises():
                rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NO_ARGS_IS_HELP as exc:  # `arena`, `arena bot`: the group's help, as click prints it
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
            click.echo(f"Error: {' '.join(exc.format_message().split())}{where}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt, EOFError) as exc:
            # click turns a KeyboardInterrupt (Terminated included) into Abort, keeping it as the context
            if isinstance(exc, Terminated) or isinstance(exc.__context__, Terminated):
                click.echo("\nTerminated.", err=True)
                sys.exit(EXIT_TERMINATED)
            click.echo("\nAborted.", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except Exception as exc:  # never a traceback for a user; ARENA_DEBUG=1 shows it
            if os.environ.get("ARENA_DEBUG"):
                raise
            message = " ".join(str(exc).split()) or "(no message)"
            click.echo(f"Error: unexpected {type(exc).__name__}: {message} (ARENA_DEBUG=1 shows the traceback)",
                       err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


# --- options and parameter types ---------------------------------------------------------------------------


class ArenaOption(click.Option):
    """A click option whose environment variable is named after its long name: ``--deadline-ms`` of ``arena
    tournament create`` reads ``ARENA_TOURNAMENT_CREATE_DEADLINE_MS`` (click's ``auto_envvar_prefix`` would use
    the Python parameter name instead, e.g. ``..._AS_JSON`` for ``--json``). An explicit ``envvar=`` (the shared
    ``ARENA_SERVER``, ``ARENA_REDIS_URL``, ``ARENA_DATA_DIR``, ``ARENA_TOKEN``) replaces it. An empty variable counts
    as unset, as in click."""

    def auto_envvar(self, ctx: click.Context) -> str | None:
        """``ARENA_<COMMAND PATH>_<LONG NAME>`` (upper case, ``-`` as ``_``) in ``ctx``, or None when the option
        has an explicit ``envvar``, no long name, or the context no prefix."""
        if self.envvar or not self.allow_from_autoenv or ctx.auto_envvar_prefix is None:
            return None
        long_names = [o for o in self.opts if o.startswith("--")]
        if not long_names:
            return None
        return f"{ctx.auto_envvar_prefix}_{long_names[0][2:].upper().replace('-', '_')}"

    def resolve_envvar_value(self, ctx: click.Context) -> str | None:
        rv = click.Parameter.resolve_envvar_value(self, ctx)  # the explicit envvar=, if any
        if rv is not None:
            return rv
        name = self.auto_envvar(ctx)
        return (os.environ.get(name) or None) if name else None


def option(*param_decls: str, **attrs: Any) -> Any:
    """``click.option`` with ``ArenaOption``: every option of the CLI is declared through it."""
    attrs.setdefault("cls", ArenaOption)
    return click.option(*param_decls, **attrs)



def parse_endpoint(value: str, *, allow_port_zero: bool = False) -> str:
    """Check a ``host:port`` endpoint (``[v6addr]:port`` for IPv6) and return it stripped.

    Raises ``ValueError`` naming the bad value when the host is empty or the port is not an integer in 1..65535
    (0..65535 with ``allow_port_zero``, for addresses to listen on).
    """
    text = value.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:50061)")
    if host.startswith("["):
        if not host.endswith("]") or len(host) < 3:
            raise ValueError(f"{value!r} is not HOST:PORT: bad IPv6 host {host!r}")
    elif ":" in host or any(c.isspace() for c in host):
        raise ValueError(f"{value!r} is not HOST:PORT (write an IPv6 host as [::1]:50061)")
    if not port_text.isdigit():
        raise ValueError(f"{value!r} is not HOST:PORT: the port {port_text!r} is not a number")
    port = int(port_text)
    low = 0 if allow_port_zero else 1
    if not low <= port <= 65535:
        raise ValueError(f"{value!r}: the port must be in {low}..65535, got {port}")
    return text


class EndpointType(click.ParamType):
    """A ``HOST:PORT`` parameter, checked by ``parse_endpoint``."""

    name = "HOST:PORT"

    def __init__(self, allow_port_zero: bool = False) -> None:
        self.allow_port_zero = allow_port_zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return parse_endpoint(str(value), allow_port_zero=self.allow_port_zero)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@dataclass(frozen=True)
class BotSpec:
    """A ``--bot`` of ``arena play``: ``kind`` is "endpoint" (a running bot at HOST:PORT), "sample" (a sample
    bot to start, ``value`` its name) or "file" (a bot .py file to start)."""

    kind: str
    value: str


class BotSpecType(click.ParamType):
    """``HOST:PORT`` of a running bot, ``sample:NAME`` for a sample bot, or a path to a ``.py`` bot file."""

    name = "HOST:PORT|sample:NAME|FILE.py"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> BotSpec:
        if isinstance(value, BotSpec):
            return value
        text = str(value).strip()
        if text.startswith("sample:"):
            name = text[len("sample:"):]
            known = _sample_bot_names()
            if known is not None and name not in known:
                self.fail(f"unknown sample bot {name!r}; sample bots: {', '.join(sorted(known))}", param, ctx)
            if not name:
                self.fail("sample:NAME needs a name, e.g. sample:random", param, ctx)
            return BotSpec("sample", name)
        if text.endswith(".py"):
            if not Path(text).is_file():
                self.fail(f"bot file {text!r} does not exist", param, ctx)
            return BotSpec("file", text)
        try:
            return BotSpec("endpoint", parse_endpoint(text))
        except ValueError as exc:
            self.fail(f"{exc}; or use sample:NAME or a bot .py file", param, ctx)


def _sample_bot_names() -> Sequence[str] | None:
    try:
        from .local_bots import SAMPLE_BOTS
    except ImportError:  # the local bot launcher is missing: let start_bot report it later
        return None
    return tuple(SAMPLE_BOTS)


def _bot_name(value: str) -> str:
    if not BOT_NAME_RE.match(value):
        raise click.BadParameter(f"{value!r}: a bot name is 1..64 characters of A-Z a-z 0-9 _ . -")
    return value


# --- context object ----------------------------------------------------------------------------------------


def _table_width() -> int | None:
    """Width of the tables: the terminal's (rich's default) on a terminal or with COLUMNS set, else 120 columns
    (rich would fall back to 80 and squeeze bot ids and endpoints)."""
    if os.environ.get("COLUMNS") or sys.stdout.isatty():
        return None
    return 120


@dataclass
class AppContext:
    """Shared by every command (``ctx.obj``): the consoles and the gRPC clients opened during the command."""

    console: Console = field(default_factory=lambda: Console(highlight=False, width=_table_width()))
    _channels: list[grpc.Channel] = field(default_factory=list)

    def arena(self, server: str) -> "ArenaClient":
        """A client of the Arena service at ``server`` ("host:port"), closed when the command ends."""
        channel = grpc.insecure_channel(server)
        self._channels.append(channel)
        return ArenaClient(server, arena_pb2_grpc.ArenaStub(channel))

    def close(self) -> None:
        for channel in self._channels:
            channel.close()
        self._channels.clear()


@dataclass
class ArenaClient:
    """Calls of the referee's Arena service; every ``grpc.RpcError`` becomes a one-line ``ArenaCliError``."""

    server: str
    stub: arena_pb2_grpc.ArenaStub

    def call(self, method: str, request: Any, timeout: float = RPC_TIMEOUT_S,
             hints: Mapping[grpc.StatusCode, str] | None = None) -> Any:
        """``stub.<method>(request)``; a failure raises the one-line ``rpc_error`` (with ``hints``)."""
        try:
            return getattr(self.stub, method)(request, timeout=timeout)
        except grpc.RpcError as exc:
            raise rpc_error(exc, self.server, hints) from None


def server_option(f: Any) -> Any:
    return option(
        "--server", envvar="ARENA_SERVER", default=DEFAULTS.server, show_default=True, metavar="HOST:PORT",
        help="Address of the referee (`arena serve`); env ARENA_SERVER.")(f)


def json_option(f: Any) -> Any:
    return option("--json", "as_json", is_flag=True, help="Print JSON for scripts instead of a table.")(f)


def game_option(f: Any) -> Any:
    return option("--game", type=click.Choice(GAMES), default="take5", show_default=True,
                  help="Game id.")(f)


def data_dir_option(f: Any) -> Any:
    return option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ARENA_DATA_DIR",
        default=DEFAULTS.data_dir, show_default=True,
        help="Folder of the private redis-server (used when ARENA_REDIS_URL is unset); env ARENA_DATA_DIR.")(f)


def redis_url_option(f: Any) -> Any:
    return option(
        "--redis-url", envvar="ARENA_REDIS_URL", default=None, metavar="URL",
        help="External Redis, e.g. redis://host:6379/0; env ARENA_REDIS_URL. Unset: the private server of "
             "--data-dir.")(f)


def visibility_timeout_option(f: Any) -> Any:
    return option(
        "--visibility-timeout", "visibility_timeout", type=click.FloatRange(min=0, min_open=True),
        default=DEFAULTS.visibility_timeout_s, show_default=True, metavar="SECONDS",
        help="A claimed match job whose worker has not refreshed it for this long is taken for dead and reclaimed "
             "by another worker, which runs the match again (the result still counts once).")(f)


def deadline_option(f: Any) -> Any:
    return option("--deadline-ms", type=click.IntRange(MIN_DEADLINE_MS, MAX_DEADLINE_MS),
                  default=DEFAULTS.deadline_ms, show_default=True, help="Deadline of each decision, milliseconds.")(f)


def variant_options(f: Any) -> Any:
    f = option("--limit-rule", type=click.Choice(LIMIT_RULES), default="at-least", show_default=True,
               help="Game end: a total at least (>=) or more than (>) the limit after a complete hand.")(f)
    f = option("--limit", type=click.IntRange(1, MAX_TAKE5_LIMIT), default=66, show_default=True,
               help="Bullhead limit, checked after each complete hand.")(f)
    f = option("--variant", "variants", type=click.Choice(VARIANTS), multiple=True,
               help="Rules variant (repeatable, combinable): known-cards (only cards 1..10*players+4), "
                    "draft (cards are drafted face up).")(f)
    return f


def take5_config_of(limit: int, limit_rule: str, variants: Sequence[str]) -> Any:
    """The ``Take5Config`` of the command-line options (``--limit``, ``--limit-rule``, ``--variant``)."""
    from arena_sdk import wire

    try:
        return wire.take5_config(limit=limit, limit_rule=limit_rule.replace("-", "_"),
                                 known_cards="known-cards" in variants, draft="draft" in variants)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _redact(url: str) -> str:
    """``url`` with its password replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))


@contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """An event set by SIGTERM or SIGINT while the block runs; the previous handlers come back afterwards."""
    stop = threading.Event()
    previous = {}

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


# --- the group -----------------------------------------------------------------------------------------------


@click.group(cls=ArenaGroup, context_settings={"auto_envvar_prefix": "ARENA", "help_option_names": ["-h", "--help"],
                                                "max_content_width": 110})
@click.version_option(package_name="bot-arena", prog_name="arena")
@option("-v", "--verbose", is_flag=True, help="Log what the referee and workers do (INFO) on stderr.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """Bot arena for multiplayer card games (Take 5!).

    \b
    A typical session:
      arena serve                                   # referee + workers + private Redis in ./.arena
      python my_bot.py --port 50061                 # your bot, as its own process
      arena bot register mybot 127.0.0.1:50061      # prints mybot@VERSION and its owner token (saved)
      arena tournament create --all --wait          # round robin between every registered bot
      arena tournament standings t1                 # points, mean score, Elo performance
      arena match show t1-000000                    # one match, turn by turn
      arena ladder                                  # Elo ladder (--rebuild: recompute it from the results)
      arena play take5 --bot sample:random --bot sample:heuristic --bot 127.0.0.1:50061

    Every read takes --json. Every option can come from an environment variable: ARENA_SERVER, ARENA_REDIS_URL,
    ARENA_DATA_DIR, ARENA_TOKEN, or ARENA_<COMMAND>_<OPTION> with the option's long name (e.g.
    ARENA_SERVE_WORKERS=4, ARENA_LADDER_JSON=1, ARENA_TOURNAMENT_CREATE_BOTS=a,b,c).
    """
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = AppContext()
    ctx.obj = app
    ctx.call_on_close(app.close)


# --- serve / worker -----------------------------------------------------------------------------------------


@cli.command(short_help="Run the referee (Arena gRPC service + workers).")
@option("--listen", type=EndpointType(allow_port_zero=True), default=DEFAULTS.listen, show_default=True,
        help="Address to serve the Arena gRPC service on (port 0: a free port, printed).")
@option("--workers", type=click.IntRange(min=0), default=DEFAULTS.workers, show_default=True,
        help="Workers embedded in this process (0: only separate `arena worker`s run matches).")
@option("--concurrency", type=click.IntRange(min=1), default=DEFAULTS.concurrency, show_default=True,
        help="Matches each worker runs at once.")
@visibility_timeout_option
@data_dir_option
@redis_url_option
@click.pass_obj
def serve(app: AppContext, listen: str, workers: int, concurrency: int, visibility_timeout: float,
          data_dir: Path, redis_url: str | None) -> None:
    """Run the referee: the Arena gRPC service plus embedded workers, until SIGTERM or Ctrl-C.

    Redis: --redis-url / ARENA_REDIS_URL when set; else the private redis-server of --data-dir, started here
    (appendonly, so the ladder survives restarts) and stopped on exit.

    \b
    Example:
      arena serve --listen 0.0.0.0:50051 --workers 2 --concurrency 4
    """
    from .redis_server import PrivateRedis, resolve_redis_url
    from .service import ArenaServer

    private = None
    server = None
    with _stop_on_signals() as stop:
        try:
            url = redis_url or resolve_redis_url(data_dir)
            if url is not None:
                source = "external" if redis_url or os.environ.get("ARENA_REDIS_URL") else \
                    f"private redis-server of {data_dir}, already running"
            else:
                private = PrivateRedis(data_dir)
                url = private.start()
                source = f"private redis-server in {data_dir}, started here"
            _check_redis(url)
            server = ArenaServer(listen, url, workers=workers, concurrency=concurrency,
                                 visibility_timeout_s=visibility_timeout)
            port = server.start()
            host = listen.rpartition(":")[0]
            click.echo(f"arena serve listening on {host}:{port}")
            click.echo(f"redis: {_redact(url)} ({source})")
            click.echo(f"workers: {workers} embedded, {concurrency} matches each, jobs of a dead worker reclaimed "
                       f"after {visibility_timeout:g} s; stop with Ctrl-C or SIGTERM")
            sys.stdout.flush()
            while not stop.wait(0.5):
                pass
            click.echo("arena serve stopping")
        except _redis_errors() as exc:
            raise ArenaCliError(f"cannot use Redis: {exc}") from None
        except RuntimeError as exc:  # e.g. the port is taken, redis-server would not start
            raise ArenaCliError(_first_line(str(exc), data_dir / "redis.log")) from None
        finally:
            if server is not None:
                server.stop()
            if private is not None:
                private.stop()


def _first_line(message: str, log_path: Path) -> str:
    """The first line of a multi-line error message (a log tail follows it), pointing at the log instead."""
    lines = message.strip().splitlines() or ["(no message)"]
    if len(lines) == 1:
        return lines[0]
    first = lines[0].strip().removesuffix("log tail:").rstrip(" ;:,")
    return f"{first}; see {log_path}"


REDIS_LOADING_TIMEOUT_S = 120.0  # a restarted Redis answers LOADING while it reads its appendonly file


def _check_redis(url: str, loading_timeout_s: float = REDIS_LOADING_TIMEOUT_S) -> None:
    """Raise ``ArenaCliError`` unless the Redis at ``url`` answers PING. A Redis still loading its data (a restart
    with a large appendonly file) is waited for, up to ``loading_timeout_s`` seconds."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    except ValueError as exc:  # not a redis:// URL
        raise ArenaCliError(f"bad Redis URL {_redact(url)}: {exc}") from None
    end = time.monotonic() + loading_timeout_s
    try:
        while True:
            try:
                client.ping()
                return
            except redis.BusyLoadingError as exc:
                if time.monotonic() >= end:
                    raise ArenaCliError(f"Redis at {_redact(url)} is still loading its data after "
                                        f"{loading_timeout_s:.0f} s: {exc}") from None
                time.sleep(0.2)
            except (redis.RedisError, OSError) as exc:
                raise ArenaCliError(f"cannot reach Redis at {_redact(url)}: {exc}") from None
    finally:
        client.close()


def _redis_errors() -> tuple[type[BaseException], ...]:
    try:
        import redis.exceptions
    except ImportError:  # pragma: no cover - redis is a dependency
        return ()
    return (redis.exceptions.RedisError,)


@cli.group(short_help="Run an extra worker for the match queue (or list the workers).",
           invoke_without_command=True)
@option("--concurrency", type=click.IntRange(min=1), default=DEFAULTS.concurrency, show_default=True,
        help="Matches this worker runs at once (a match mostly waits on bots).")
@option("--name", default=None, help="Worker name in the Redis consumer group (default: host and pid).")
@visibility_timeout_option
@data_dir_option
@redis_url_option
@click.pass_context
def worker(ctx: click.Context, concurrency: int, name: str | None, visibility_timeout: float,
           data_dir: Path, redis_url: str | None) -> None:
    """Run an extra worker: take match jobs from Redis, referee them, store the results; until Ctrl-C.
    `arena worker list` shows the workers that are alive instead.

    Redis: --redis-url / ARENA_REDIS_URL, else the private server that `arena serve` runs for --data-dir on this
    machine.

    \b
    Examples:
      ARENA_REDIS_URL=redis://10.0.0.5:6379/0 arena worker --concurrency 8 --name box2
      arena worker list
    """
    if ctx.invoked_subcommand is not None:
        return
    from .redis_server import resolve_redis_url
    from .scheduler import run_worker

    url = redis_url or resolve_redis_url(data_dir)
    if url is None:
        raise ArenaCliError(f"no Redis to work for: set ARENA_REDIS_URL, or run `arena serve --data-dir {data_dir}` "
                            "on this machine first")
    _check_redis(url)
    with _stop_on_signals() as stop:
        label = f"arena worker {name}" if name else "arena worker"
        click.echo(f"{label} working for redis {_redact(url)}, {concurrency} matches at once, jobs of a dead "
                   f"worker reclaimed after {visibility_timeout:g} s; stop with Ctrl-C or SIGTERM")
        sys.stdout.flush()
        try:
            # a URL found in the data directory is looked up again after Redis errors: `arena serve` may have been
            # restarted and its private Redis may listen on another port now
            resolve = None if redis_url else (lambda: resolve_redis_url(data_dir))
            run_worker(url, concurrency=concurrency, name=name, stop=stop, visibility_timeout_s=visibility_timeout,
                       resolve_url=resolve)
        except _redis_errors() as exc:
            raise ArenaCliError(f"cannot use Redis at {_redact(url)}: {exc}") from None


@worker.command("list", short_help="List the workers and what they run.")
@option("--all", "show_all", is_flag=True, help="Also the workers whose heartbeat stopped.")
@server_option
@json_option
@click.pass_obj
def worker_list(app: AppContext, show_all: bool, server: str, as_json: bool) -> None:
    """List the workers that sent a heartbeat recently: name, host, pid, alive, concurrency, the matches it runs
    now, matches done since it started, last heartbeat.

    \b
    Example:
      arena worker list --json
    """
    reply = app.arena(server).call("ListWorkers", arena_pb2.ListWorkersRequest())
    workers = [w for w in reply.workers if show_all or w.alive]
    workers.sort(key=lambda w: (not w.alive, w.name))
    if as_json:
        _print_json([{"name": w.name, "host": w.host, "pid": w.pid, "alive": w.alive, "started_at": w.started_at,
                      "last_seen": w.last_seen, "concurrency": w.concurrency, "running": list(w.running),
                      "matches_done": w.matches_done} for w in workers])
        return
    if not workers:
        hidden = len(reply.workers) - len(workers)
        click.echo("no worker is alive: start `arena worker` (or `arena serve --workers N`)"
                   + (f"; {hidden} dead worker(s) hidden, see --all" if hidden else ""))
        return
    table = Table(title="Workers")
    for col, justify in (("name", "left"), ("host", "left"), ("pid", "right"), ("alive", "left"),
                         ("concurrency", "right"), ("running", "left"), ("done", "right"), ("last seen", "left"),
                         ("started", "left")):
        table.add_column(col, justify=justify, no_wrap=col != "running")  # type: ignore[arg-type]
    now = time.time()
    for w in workers:
        table.add_row(w.name, w.host, str(w.pid), "yes" if w.alive else "no", str(w.concurrency),
                      ", ".join(w.running) or "-", str(w.matches_done), _ago(w.last_seen, now), _when(w.started_at))
    app.console.print(table)


# --- bots ----------------------------------------------------------------------------------------------------


TOKEN_FILE = "tokens.json"
TOKEN_FILE_VERSION = 1


class TokenStore:
    """The owner tokens this machine received, in ``<data-dir>/tokens.json`` (mode 0600), so that later
    ``arena bot register|update|remove`` find them.

    Layout: ``{"version": 1, "tokens": {SERVER: {GAME: {NAME: TOKEN}}}}``, keyed by the ``--server`` address as
    typed (tokens of one arena are never sent to another). Writes go to a temporary file in the same folder,
    created 0600, then renamed over the old file, so a crash never leaves half a file.
    """

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / TOKEN_FILE

    def _load(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {"version": TOKEN_FILE_VERSION, "tokens": {}}
        except OSError as exc:
            raise ArenaCliError(f"cannot read the token file {self.path}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ArenaCliError(f"the token file {self.path} is not valid JSON ({exc}); fix or remove it") from None
        if not isinstance(data, dict) or not isinstance(data.get("tokens"), dict):
            raise ArenaCliError(f"the token file {self.path} has no \"tokens\" object; fix or remove it")
        return data

    def get(self, server: str, game: str, name: str) -> str | None:
        """The saved owner token of bot NAME of ``game`` on ``server``, or None."""
        token = self._load()["tokens"].get(server, {}).get(game, {}).get(name)
        return token if isinstance(token, str) and token else None

    def put(self, server: str, game: str, name: str, token: str) -> None:
        """Save (or replace) the owner token of NAME; the file is created with mode 0600."""
        data = self._load()
        data["version"] = TOKEN_FILE_VERSION
        data["tokens"].setdefault(server, {}).setdefault(game, {})[name] = token
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o600)  # whatever the umask
            os.replace(tmp, self.path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise ArenaCliError(f"cannot save the owner token in {self.path}: {exc.strerror or exc}") from None


def split_bot_id(value: str) -> tuple[str, str]:
    """``"NAME@VERSION"`` -> (NAME, VERSION); ``"NAME"`` -> (NAME, "") meaning its latest version.

    Raises ``ValueError`` naming the value when NAME is not 1..64 characters of A-Z a-z 0-9 _ . - or the version
    after ``@`` is empty or holds white space."""
    name, at, version = value.strip().partition("@")
    if not BOT_NAME_RE.match(name):
        raise ValueError(f"{value!r}: a bot name is 1..64 characters of A-Z a-z 0-9 _ . - "
                         "(optionally followed by @VERSION)")
    if at and (not version or any(c.isspace() for c in version) or "@" in version or len(version) > 64):
        raise ValueError(f"{value!r}: expected NAME@VERSION with a version of 1..64 characters, no spaces")
    return name, version


def _bot_ref(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        split_bot_id(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value.strip()


def token_option(f: Any) -> Any:
    return option(
        "--token", envvar="ARENA_TOKEN", default=None, metavar="TOKEN",
        help="Owner token of the bot's NAME; env ARENA_TOKEN. Default: the one saved in <data-dir>/tokens.json "
             "when NAME was first registered from this machine.")(f)


def tokens_dir_option(f: Any) -> Any:
    return option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ARENA_DATA_DIR",
        default=DEFAULTS.data_dir, show_default=True,
        help="Folder of this machine's owner-token file (tokens.json); env ARENA_DATA_DIR.")(f)


def _owner_token(token: str | None, tokens: TokenStore, server: str, game: str, name: str) -> str:
    """The owner token of NAME: --token / ARENA_TOKEN, else the token file; ``ArenaCliError`` when neither."""
    if token:
        return token
    saved = tokens.get(server, game, name)
    if saved is None:
        raise ArenaCliError(
            f"no owner token for {game} bot {name} on {server}: pass --token TOKEN or set ARENA_TOKEN (the token "
            f"was printed when {name} was first registered; {tokens.path} on this machine has none)")
    return saved


def _owner_call(app: "AppContext", server: str, method: str, request: Any, token: str | None, tokens: TokenStore,
                game: str, name: str) -> Any:
    """``Arena.<method>(request)`` with NAME's owner token (--token / ARENA_TOKEN, else the token file) set in
    ``request.owner_token``. Without any token the call is still made, so that an unknown bot is answered
    NOT_FOUND by the referee; a PERMISSION_DENIED answer then becomes "no owner token for ... on SERVER"."""
    owner = token or tokens.get(server, game, name) or ""
    request.owner_token = owner
    client = app.arena(server)
    try:
        return getattr(client.stub, method)(request, timeout=RPC_TIMEOUT_S)
    except grpc.RpcError as exc:
        if not owner and exc.code() == grpc.StatusCode.PERMISSION_DENIED:
            _owner_token(None, tokens, server, game, name)  # raises the "no owner token" error
        raise rpc_error(exc, client.server, _token_hints(bool(token), tokens, name)) from None


def _token_hints(token_given: bool, tokens: TokenStore, name: str) -> dict[grpc.StatusCode, str]:
    """What to add to a PERMISSION_DENIED answer: where the token that was refused came from."""
    where = "--token / ARENA_TOKEN" if token_given else tokens.path
    return {grpc.StatusCode.PERMISSION_DENIED: f"the token sent came from {where}"}


def _bot_dict(b: Any) -> dict[str, Any]:
    return {"bot_id": b.bot_id or (f"{b.name}@{b.version}" if b.version else b.name), "name": b.name,
            "version": b.version, "endpoint": b.endpoint, "game": b.game, "sdk_version": b.sdk_version,
            "author": b.author, "registered_at": b.registered_at, "updated_at": b.updated_at}


@cli.group(short_help="Register, update, remove and list bots.")
def bot() -> None:
    """Register, update, remove and list bots (a bot is a running process serving arena.v1.Bot at HOST:PORT).

    A bot's ladder identity is NAME@VERSION: the VERSION comes from the bot itself (its GetInfo). The first
    registration of a NAME returns its owner token, shown once and saved in <data-dir>/tokens.json; new versions,
    updates and removals of NAME need it.
    """


@bot.command("register", short_help="Register a bot endpoint (prints its bot id).")
@click.argument("name", callback=lambda ctx, param, value: _bot_name(value))
@click.argument("endpoint", type=EndpointType())
@game_option
@token_option
@tokens_dir_option
@server_option
@json_option
@click.pass_obj
def bot_register(app: AppContext, name: str, endpoint: str, game: str, token: str | None, data_dir: Path,
                 server: str, as_json: bool) -> None:
    """Register the bot at ENDPOINT (HOST:PORT, reachable from the workers) under NAME. The referee first asks
    the bot for its GetInfo (it must answer and play the game); the bot's version makes the ladder identity
    NAME@VERSION, printed here.

    The first registration of NAME prints its owner token once and saves it in <data-dir>/tokens.json (mode
    0600). Registering NAME again (a new version, or a new endpoint) needs that token: --token, ARENA_TOKEN, or
    the saved one.

    \b
    Examples:
      arena bot register mybot 127.0.0.1:50061
      arena bot register mybot 10.0.0.7:50061 --token 9f2c...
    """
    tokens = TokenStore(data_dir)
    owner = token or tokens.get(server, game, name)
    hints = _token_hints(bool(token), tokens, name) if owner else {
        grpc.StatusCode.PERMISSION_DENIED: f"pass it with --token or ARENA_TOKEN ({tokens.path} has none)"}
    record = app.arena(server).call(
        "RegisterBot", arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint, game=game,
                                                    owner_token=owner or ""), hints=hints)
    if record.owner_token:
        tokens.put(server, game, record.name or name, record.owner_token)
    if as_json:
        data = _bot_dict(record)
        data["owner_token"] = record.owner_token or None
        data["token_file"] = str(tokens.path) if record.owner_token else None
        _print_json(data)
        return
    click.echo(f"registered {record.game} bot {_bot_dict(record)['bot_id']} at {record.endpoint}")
    if record.owner_token:
        click.echo(f"owner token of {record.name or name}: {record.owner_token}")
        click.echo(f"  shown once; saved in {tokens.path} for `arena bot register|update|remove` on this machine")


@bot.command("update", short_help="Move a bot version to a new endpoint (owner token).")
@click.argument("bot_ref", metavar="NAME[@VERSION]", callback=_bot_ref)
@option("--endpoint", type=EndpointType(), required=True, help="The new HOST:PORT of the bot.")
@game_option
@token_option
@tokens_dir_option
@server_option
@click.pass_obj
def bot_update(app: AppContext, bot_ref: str, endpoint: str, game: str, token: str | None, data_dir: Path,
               server: str) -> None:
    """Change the endpoint of a registered bot version (NAME alone: its latest version). The referee checks the
    new endpoint answers GetInfo and plays the game. Needs the owner token of NAME.

    \b
    Example:
      arena bot update mybot@1.2 --endpoint 10.0.0.8:50061
    """
    name, _ = split_bot_id(bot_ref)
    tokens = TokenStore(data_dir)
    record = _owner_call(app, server, "UpdateBot", arena_pb2.UpdateBotRequest(bot=bot_ref, game=game,
                                                                              endpoint=endpoint),
                         token, tokens, game, name)
    click.echo(f"updated {record.game} bot {_bot_dict(record)['bot_id']}: endpoint {record.endpoint}")


@bot.command("remove", short_help="Remove a bot version or every version (owner token).")
@click.argument("bot_ref", metavar="NAME[@VERSION]", callback=_bot_ref)
@game_option
@token_option
@tokens_dir_option
@server_option
@click.pass_obj
def bot_remove(app: AppContext, bot_ref: str, game: str, token: str | None, data_dir: Path, server: str) -> None:
    """Remove a bot version (NAME@VERSION) or every version of NAME (NAME alone). Its ladder history stays.
    Needs the owner token of NAME.

    \b
    Examples:
      arena bot remove mybot@1.0
      arena bot remove mybot
    """
    name, _ = split_bot_id(bot_ref)
    tokens = TokenStore(data_dir)
    reply = _owner_call(app, server, "RemoveBot", arena_pb2.RemoveBotRequest(bot=bot_ref, game=game), token,
                        tokens, game, name)
    removed = list(reply.removed)
    click.echo(f"removed {game} bot{'s' if len(removed) != 1 else ''} {', '.join(removed) or '(none)'}; "
               "ladder history kept")


@bot.command("list")
@option("--game", type=click.Choice(GAMES), default=None, help="Only the bots of this game.")
@server_option
@json_option
@click.pass_obj
def bot_list(app: AppContext, game: str | None, server: str, as_json: bool) -> None:
    """List the registered bots: bot id (NAME@VERSION), version, game, endpoint, author, last change.

    \b
    Example:
      arena bot list --game take5 --json
    """
    reply = app.arena(server).call("ListBots", arena_pb2.ListBotsRequest(game=game or ""))
    bots = sorted((_bot_dict(b) for b in reply.bots), key=lambda b: (b["game"], b["name"], b["registered_at"]))
    if as_json:
        _print_json(bots)
        return
    if not bots:
        click.echo("no bots registered yet: `arena bot register NAME HOST:PORT`")
        return
    table = Table(title="Registered bots")
    table.add_column("bot id", no_wrap=True)
    table.add_column("version")
    table.add_column("game")
    table.add_column("endpoint", no_wrap=True)
    table.add_column("author")
    table.add_column("updated", no_wrap=True)
    for b in bots:
        table.add_row(b["bot_id"], b["version"] or "-", b["game"], b["endpoint"], b["author"] or "-",
                      _when(b["updated_at"] or b["registered_at"]))
    app.console.print(table)


def _when(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s).strftime("%Y-%m-%d %H:%M:%S") if epoch_s else "-"


def _ago(epoch_s: float, now: float | None = None) -> str:
    """``epoch_s`` as "12 s ago", "3 min ago", "2 h ago" (or the date past a day); "-" for 0."""
    if not epoch_s:
        return "-"
    age = (time.time() if now is None else now) - epoch_s
    if age < 0:
        return "now"
    if age < 120:
        return f"{age:.0f} s ago"
    if age < 7200:
        return f"{age / 60:.0f} min ago"
    if age < 86400:
        return f"{age / 3600:.0f} h ago"
    return _when(epoch_s)


# --- tournaments ----------------------------------------------------------------------------------------------


@cli.group(short_help="Create, follow and cancel round-robin tournaments.")
def tournament() -> None:
    """Create round-robin tournaments, follow their progress and standings, cancel them."""


def _bot_names(values: Sequence[str]) -> list[str]:
    """The bots of ``--bots a,b@1.0 --bots c``: NAME (its latest version) or NAME@VERSION, in order."""
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    for n in names:
        try:
            split_bot_id(n)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--bots'") from None
    return names


@tournament.command("create", short_help="Create a round robin (optionally wait, or only count it).")
@option("--bots", "bot_lists", multiple=True, metavar="A,B,C",
        help="Registered bots, comma separated (repeatable): NAME (its latest version) or NAME@VERSION.")
@option("--all", "all_bots", is_flag=True, help="Every registered bot version of the game.")
@game_option
@option("--seats", type=click.IntRange(2, 10), default=None,
        help="Seats per match, k (2..10); default min(number of bots, 4).")
@option("--rounds", type=click.IntRange(min=1), default=DEFAULTS.rounds, show_default=True,
        help="Rounds; each round plays new deals.")
@option("--seed", type=click.IntRange(1, 2**64 - 1), default=None,
        help="Tournament seed (every deal derives from it; the same seed plays the same deals); default: the "
             "server picks one and reports it.")
@deadline_option
@variant_options
@option("--dry-run", is_flag=True,
        help="Only validate and count: print the number of matches and its formula, queue nothing.")
@option("--wait/--no-wait", default=None,
        help="Show a live progress bar until every match is done. Default: --wait when stdout is a "
             "terminal, --no-wait otherwise (scripts).")
@server_option
@json_option
@click.pass_obj
def tournament_create(app: AppContext, bot_lists: Sequence[str], all_bots: bool, game: str, seats: int | None,
                      rounds: int, seed: int | None, deadline_ms: int, variants: Sequence[str], limit: int,
                      limit_rule: str, dry_run: bool, wait: bool | None, server: str, as_json: bool) -> None:
    """Create a round-robin tournament: every SEATS-subset of the bots plays once per seat rotation of the same
    deal (duplicate deals), ROUNDS times with new deals. Matches go to the workers through Redis; ratings update
    as results arrive. With --dry-run nothing is queued: the server only counts the matches and says how.

    \b
    Examples:
      arena tournament create --bots random,heuristic,montecarlo --seats 3 --rounds 2 --dry-run
      arena tournament create --bots random,heuristic,montecarlo --seats 3 --rounds 2 --wait
      arena tournament create --all --variant known-cards --limit 33 --no-wait
    """
    names = _bot_names(bot_lists)
    if all_bots and names:
        raise click.UsageError("give either --bots or --all, not both")
    client = app.arena(server)
    if all_bots:
        reply = client.call("ListBots", arena_pb2.ListBotsRequest(game=game))
        names = sorted({_bot_dict(b)["bot_id"] for b in reply.bots})
        if not names:
            raise ArenaCliError(f"no {game} bots registered: `arena bot register NAME HOST:PORT` first")
    if not names:
        raise click.UsageError("name the bots with --bots a,b,c (or use --all)")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise click.UsageError(f"bot named more than once: {', '.join(repeated)}")
    if len(names) < 2:
        raise click.UsageError(f"a tournament needs at least 2 bots, got {len(names)}")
    if seats is not None and seats > len(names):
        raise click.UsageError(f"--seats {seats} needs at least {seats} bots, got {len(names)}")
    from arena_sdk import wire

    config = take5_config_of(limit, limit_rule, variants)
    request = arena_pb2.CreateTournamentRequest(
        game=game, bots=names, seats_per_match=seats or 0, rounds=rounds, seed=seed or 0,
        config=wire.config_to_proto(game, config), deadline_ms=deadline_ms, dry_run=dry_run)
    t = _create_tournament(client, request)
    if dry_run:
        if as_json:
            _print_json(_tournament_dict(t))
            return
        click.echo(f"dry run: {t.matches_total} matches ({len(t.bots)} bots, {t.seats_per_match} seats, "
                   f"{t.rounds} round{'s' if t.rounds != 1 else ''}{f', seed {t.seed}' if t.seed else ''})")
        click.echo(f"formula: {t.formula or '(the server gave none)'}")
        click.echo("nothing was queued; run the same command without --dry-run to create it")
        return
    if wait is None:
        wait = sys.stdout.isatty() and not as_json
    if as_json and not wait:
        _print_json(_tournament_dict(t))
        return
    if not as_json:
        counted = f"{t.formula} matches" if t.formula else (
            f"{t.matches_total} matches ({len(t.bots)} bots, {t.seats_per_match} seats, "
            f"{t.rounds} round{'s' if t.rounds != 1 else ''})")
        click.echo(f"tournament {t.id}: {counted}, seed {t.seed}")
    if not wait:
        click.echo(f"follow it with `arena tournament status {t.id} --watch`")
        return
    t = _watch(app, client, t, quiet=as_json)
    if as_json:
        _print_json(_tournament_dict(t))
    else:
        click.echo(f"tournament {t.id} {t.state}: {t.matches_done}/{t.matches_total} matches{_failed_note(t)}, "
                   f"{t.faults} faults; see `arena tournament standings {t.id}` and `arena ladder`")


BOTS_DOWN_HINT = "start the bot processes and `arena bot update` their endpoints"


def _create_tournament(client: ArenaClient, request: Any) -> Any:
    """CreateTournament; a refusal is the one-line ``rpc_error`` with the server's message, which names the bots
    that do not answer (FAILED_PRECONDITION "bots not answering: ..."), followed by ``BOTS_DOWN_HINT`` then."""
    try:
        return client.stub.CreateTournament(request, timeout=RPC_TIMEOUT_S)
    except grpc.RpcError as exc:
        details = exc.details() if callable(getattr(exc, "details", None)) else None
        hints = {grpc.StatusCode.FAILED_PRECONDITION: BOTS_DOWN_HINT} if "not answering" in (details or "") else None
        raise rpc_error(exc, client.server, hints) from None


@tournament.command("list", short_help="List tournaments, newest first.")
@option("--game", type=click.Choice(GAMES), default=None, help="Only the tournaments of this game.")
@server_option
@json_option
@click.pass_obj
def tournament_list(app: AppContext, game: str | None, server: str, as_json: bool) -> None:
    """List the tournaments, newest first: id, state, progress, faults, bots, creation time.

    \b
    Example:
      arena tournament list --json
    """
    reply = app.arena(server).call("ListTournaments", arena_pb2.ListTournamentsRequest(game=game or ""))
    if as_json:
        _print_json([_tournament_dict(t) for t in reply.tournaments])
        return
    if not reply.tournaments:
        click.echo("no tournaments yet: `arena tournament create --all`")
        return
    table = Table(title="Tournaments")
    for col, justify in (("id", "left"), ("state", "left"), ("game", "left"), ("progress", "right"),
                         ("faults", "right"), ("seats", "right"), ("rounds", "right"), ("created", "left")):
        table.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("bots")
    for t in reply.tournaments:
        progress = f"{t.matches_done}/{t.matches_total}"
        if t.matches_failed:
            progress += f" ({t.matches_failed} failed)"
        table.add_row(t.id, t.state, t.game, progress, str(t.faults),
                      str(t.seats_per_match), str(t.rounds), _when(t.created_at), ", ".join(t.bots))
    app.console.print(table)


@tournament.command("status", short_help="Show a tournament's progress and standings.")
@click.argument("tournament_id", metavar="ID")
@option("--watch", is_flag=True, help="Show a live progress bar until every match is done.")
@server_option
@json_option
@click.pass_obj
def tournament_status(app: AppContext, tournament_id: str, watch: bool, server: str, as_json: bool) -> None:
    """Show a tournament's progress (matches done, faults, state) and its standings so far (rank, bot, points,
    matches, mean score, Elo performance).

    \b
    Example:
      arena tournament status t3 --watch
    """
    client = app.arena(server)
    t = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=tournament_id))
    if watch and not _settled(t):
        t = _watch(app, client, t, quiet=as_json)
    standings = client.call("GetStandings", arena_pb2.GetStandingsRequest(id=t.id))
    if as_json:
        data = _tournament_dict(t)
        data["standings"] = [_standing_dict(e) for e in standings.entries]
        _print_json(data)
        return
    table = Table(title=f"Tournament {t.id}", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    cfg = t.config.take5
    variants = [v for v, on in (("known-cards", cfg.known_cards), ("draft", cfg.draft)) if on]
    progress = f"{t.matches_done}/{t.matches_total} matches"
    notes = []
    if t.matches_failed:
        notes.append(f"{t.matches_failed} failed: given up after repeated platform errors, not rated")
    if t.matches_cancelled:
        notes.append(f"{t.matches_cancelled} dropped by the cancellation")
    if notes:
        progress += f" ({'; '.join(notes)})"
    rows = [
        ("state", t.state),
        ("progress", progress),
        ("faults", str(t.faults)),
        ("game", t.game),
        ("bots", ", ".join(t.bots)),
        ("seats per match", str(t.seats_per_match)),
        ("rounds", str(t.rounds)),
        ("matches", t.formula or str(t.matches_total)),
        ("seed", str(t.seed)),
        ("limit", f"{cfg.limit or 66} bullheads ({'>' if cfg.limit_rule == bot_pb2.TAKE5_LIMIT_MORE_THAN else '>='} "
                  "after a complete hand ends the game)"),
        ("variants", ", ".join(variants) or "none"),
        ("deadline", f"{t.deadline_ms} ms"),
        ("created", _when(t.created_at)),
    ]
    for k, v in rows:
        table.add_row(k, v)
    app.console.print(table)
    _print_standings(app, t.id, standings.entries, t.game)


@tournament.command("standings", short_help="Show a tournament's standings.")
@click.argument("tournament_id", metavar="ID")
@server_option
@json_option
@click.pass_obj
def tournament_standings(app: AppContext, tournament_id: str, server: str, as_json: bool) -> None:
    """Show the standings of one tournament: rank (by points), bot, points (per match, 1 for every opponent
    finished ahead of and 1/2 per tie), matches, mean score (Take 5: bullheads, lower is better), score rate
    (points per pair, 0..1) and Elo performance (mean opponent rating + 400 x (wins - losses) / pairs).

    \b
    Example:
      arena tournament standings t3 --json
    """
    reply = app.arena(server).call("GetStandings", arena_pb2.GetStandingsRequest(id=tournament_id))
    if as_json:
        _print_json({"tournament_id": reply.tournament_id or tournament_id,
                     "entries": [_standing_dict(e) for e in reply.entries]})
        return
    _print_standings(app, reply.tournament_id or tournament_id, reply.entries, "take5")


def _standing_dict(e: Any) -> dict[str, Any]:
    return {"rank": e.rank, "bot": e.bot, "points": e.points, "matches": e.matches, "mean_score": e.mean_score,
            "performance": e.performance, "score_rate": e.score_rate}


def _print_standings(app: AppContext, tournament_id: str, entries: Sequence[Any], game: str) -> None:
    if not entries:
        click.echo(f"no standings for {tournament_id} yet: no match of it has finished")
        return
    table = Table(title=f"Standings of {tournament_id}")
    table.add_column("rank", justify="right")
    table.add_column("bot")
    table.add_column("points", justify="right")
    table.add_column("matches", justify="right")
    table.add_column("mean score" + (" (bullheads)" if game == "take5" else ""), justify="right")
    table.add_column("score rate", justify="right")
    table.add_column("performance (Elo)", justify="right")
    for e in sorted(entries, key=lambda e: (e.rank, -e.points, e.bot)):
        table.add_row(str(e.rank), e.bot, f"{e.points:g}", str(e.matches), f"{e.mean_score:.2f}",
                      f"{e.score_rate:.3f}", f"{e.performance:.0f}")
    app.console.print(table)


@tournament.command("cancel", short_help="Cancel a tournament (queued matches are dropped).")
@click.argument("tournament_id", metavar="ID")
@server_option
@json_option
@click.pass_obj
def tournament_cancel(app: AppContext, tournament_id: str, server: str, as_json: bool) -> None:
    """Cancel a tournament: matches not yet started are dropped; running ones finish and count.

    \b
    Example:
      arena tournament cancel t3
    """
    t = app.arena(server).call("CancelTournament", arena_pb2.CancelTournamentRequest(id=tournament_id))
    if as_json:
        _print_json(_tournament_dict(t))
        return
    click.echo(f"tournament {t.id} {t.state}: {t.matches_done}/{t.matches_total} matches done, "
               f"{t.matches_cancelled} dropped{_failed_note(t)}; running matches finish and count")


def _tournament_dict(t: Any) -> dict[str, Any]:
    cfg = t.config.take5
    return {
        "id": t.id, "game": t.game, "bots": list(t.bots), "seats_per_match": t.seats_per_match, "rounds": t.rounds,
        "seed": t.seed, "matches_total": t.matches_total, "matches_done": t.matches_done,
        "matches_cancelled": t.matches_cancelled, "matches_failed": t.matches_failed, "faults": t.faults,
        "state": t.state, "formula": t.formula, "created_at": t.created_at, "deadline_ms": t.deadline_ms,
        "config": {"limit": cfg.limit or 66,
                   "limit_rule": "more_than" if cfg.limit_rule == bot_pb2.TAKE5_LIMIT_MORE_THAN else "at_least",
                   "known_cards": cfg.known_cards, "draft": cfg.draft},
    }


def _settled(t: Any) -> bool:
    """True when nothing is left to wait for in tournament ``t``: its state is no longer "running", or every match
    is done, dropped by a cancellation or failed (matches_done + matches_cancelled + matches_failed reaches
    matches_total, arena.proto)."""
    return t.state != "running" or t.matches_done + t.matches_cancelled + t.matches_failed >= t.matches_total


def _failed_note(t: Any) -> str:
    """", N failed" when matches of ``t`` failed (given up after repeated platform errors), else ""."""
    return f", {t.matches_failed} failed" if t.matches_failed else ""


def _watch(app: AppContext, client: ArenaClient, t: Any, *, quiet: bool = False) -> Any:
    """Poll GetTournament every POLL_INTERVAL_S behind a rich progress bar until the tournament is settled
    (``_settled``); returns the last Tournament. The bar counts finished and failed matches (failed ones are named
    beside the faults). Ctrl-C (or SIGTERM) stops watching (exit 130 / 143), the tournament keeps running on the
    server."""
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("matches · faults {task.fields[faults]}{task.fields[failed]}"), TimeElapsedColumn())
    console = Console(stderr=True) if quiet else app.console

    def failed(t: Any) -> str:
        return f" · failed {t.matches_failed}" if t.matches_failed else ""

    try:
        with Progress(*columns, console=console, disable=quiet) as progress:
            task = progress.add_task(f"tournament {t.id}", total=t.matches_total or None,
                                     completed=t.matches_done + t.matches_failed, faults=t.faults, failed=failed(t))
            while not _settled(t):
                time.sleep(POLL_INTERVAL_S)
                t = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=t.id))
                progress.update(task, completed=t.matches_done + t.matches_failed, faults=t.faults,
                                failed=failed(t))
    except KeyboardInterrupt as exc:
        error = ArenaInterrupted(f"stopped watching; tournament {t.id} keeps running on the server "
                                 f"(`arena tournament status {t.id} --watch`)")
        if isinstance(exc, Terminated):
            error.exit_code = EXIT_TERMINATED
        raise error from None
    return t


# --- matches -------------------------------------------------------------------------------------------------


@cli.group(short_help="List finished matches and show one turn by turn.")
def match() -> None:
    """List finished matches and show one turn by turn."""


def _summary_dict(m: Any) -> dict[str, Any]:
    return {"match_id": m.match_id, "tournament_id": m.tournament_id, "game": m.game, "seats": list(m.seats),
            "scores": list(m.scores), "ranks": list(m.ranks), "faults": list(m.faults),
            "rating_deltas": list(m.rating_deltas), "finished_at": m.finished_at, "seed": m.seed}


@match.command("list", short_help="List finished matches, newest first.")
@option("--tournament", "tournament_id", default=None, metavar="ID", help="Only the matches of this tournament.")
@option("--bot", "bot_ref", default=None, metavar="NAME[@VERSION]", help="Only the matches of this bot.")
@option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True, help="At most this many.")
@server_option
@json_option
@click.pass_obj
def match_list(app: AppContext, tournament_id: str | None, bot_ref: str | None, limit: int, server: str,
               as_json: bool) -> None:
    """List finished matches, newest first: match id, tournament, every seat's bot with its score and rank,
    faults, the Elo changes the match applied, and when it finished.

    \b
    Example:
      arena match list --tournament t3 --bot heuristic --limit 10
    """
    if bot_ref is not None:
        _bot_ref(click.get_current_context(), None, bot_ref)  # type: ignore[arg-type]
    reply = app.arena(server).call("ListMatches", arena_pb2.ListMatchesRequest(
        tournament_id=tournament_id or "", bot=bot_ref or "", limit=limit))
    if as_json:
        _print_json([_summary_dict(m) for m in reply.matches])
        return
    if not reply.matches:
        click.echo("no finished matches" + (f" of {tournament_id}" if tournament_id else "")
                   + (f" with {bot_ref}" if bot_ref else ""))
        return
    table = Table(title="Finished matches")
    table.add_column("match", no_wrap=True)
    table.add_column("tournament", no_wrap=True)
    table.add_column("seats: bot, score (rank), Elo change", no_wrap=True)
    table.add_column("faults", justify="right")
    table.add_column("finished", no_wrap=True)
    for m in reply.matches:
        seats = []
        for i, bot_id in enumerate(m.seats):
            score = _score(m.scores[i]) if i < len(m.scores) else "?"
            rank = str(m.ranks[i]) if i < len(m.ranks) else "?"
            delta = f", {_delta(m.rating_deltas[i])}" if i < len(m.rating_deltas) else ""
            seats.append(f"{bot_id}, {score} ({rank}){delta}")
        table.add_row(m.match_id, m.tournament_id or "-", "\n".join(seats), str(sum(m.faults)), _when(m.finished_at))
    app.console.print(table)


def _delta(points: float) -> str:
    """An Elo change as "+12.3" / "-4.0" / "±0.0" (never "-0.0")."""
    rounded = round(points, 1) + 0.0
    return "±0.0" if rounded == 0 else f"{rounded:+.1f}"


@match.command("show", short_help="Show one match turn by turn.")
@click.argument("match_id", metavar="ID")
@server_option
@json_option
@click.pass_obj
def match_show(app: AppContext, match_id: str, server: str, as_json: bool) -> None:
    """Show one finished match turn by turn: per hand the rows, per turn every revealed card in resolution order,
    where it went, what its bot took, rule-4 row choices and faults; then the result and the Elo changes.
    --json prints the match record itself (the format `arena replay` checks).

    \b
    Examples:
      arena match show t3-000012
      arena match show t3-000012 --json > match.json && arena replay match.json
    """
    detail = app.arena(server).call("GetMatch", arena_pb2.GetMatchRequest(match_id=match_id))
    try:
        record = json.loads(detail.record_json)
    except json.JSONDecodeError as exc:
        raise ArenaCliError(f"the server sent match {match_id} with a record that is not JSON: {exc}") from None
    if as_json:
        _print_json(record)
        return
    from .render import RenderError, render_match

    try:
        app.console.print(render_match(record))
    except RenderError as exc:
        raise ArenaCliError(f"cannot show match {match_id}: {exc}") from None
    m = detail.summary
    if m.rating_deltas:
        changes = ", ".join(f"{bot_id} {_delta(delta)}" for bot_id, delta in zip(m.seats, m.rating_deltas))
        click.echo(f"Elo changes: {changes}")
    click.echo(f"match {m.match_id or match_id}" + (f" of tournament {m.tournament_id}" if m.tournament_id else "")
               + f", stored {_when(m.finished_at)}")


# --- ladder --------------------------------------------------------------------------------------------------


def _ladder_entries(ladder_msg: Any) -> list[dict[str, Any]]:
    entries = sorted(ladder_msg.entries, key=lambda e: (e.rank, -e.rating, e.bot))
    return [{"rank": e.rank, "bot": e.bot, "rating": e.rating, "matches": e.matches, "wins": e.wins,
             "mean_score": e.mean_score} for e in entries]


def _ladder_table(title: str, entries: Sequence[dict[str, Any]], game: str) -> Table:
    table = Table(title=title)
    table.add_column("rank", justify="right")
    table.add_column("bot")
    table.add_column("rating", justify="right")
    table.add_column("matches", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("mean score" + (" (bullheads)" if game == "take5" else ""), justify="right")
    for e in entries:
        table.add_row(str(e["rank"]), e["bot"], f"{e['rating']:.1f}", str(e["matches"]), str(e["wins"]),
                      f"{e['mean_score']:.2f}")
    return table


def ladder_differences(rebuilt: Sequence[dict[str, Any]], live: Sequence[dict[str, Any]],
                       tolerance: float = 1e-6) -> list[str]:
    """Every way two ladders (lists of entry dicts: bot, rating, matches, wins, mean_score) differ, one sentence
    each; [] when they agree on every bot (ratings and mean scores to ``tolerance``)."""
    a = {e["bot"]: e for e in rebuilt}
    b = {e["bot"]: e for e in live}
    out = []
    for bot_id in sorted(set(a) | set(b)):
        if bot_id not in a:
            out.append(f"{bot_id} is on the live ladder only")
            continue
        if bot_id not in b:
            out.append(f"{bot_id} is on the rebuilt ladder only")
            continue
        for key in ("rating", "mean_score"):
            if abs(a[bot_id][key] - b[bot_id][key]) > tolerance:
                out.append(f"{bot_id}: {key} rebuilt {a[bot_id][key]:.6f}, live {b[bot_id][key]:.6f}")
        for key in ("matches", "wins"):
            if a[bot_id][key] != b[bot_id][key]:
                out.append(f"{bot_id}: {key} rebuilt {a[bot_id][key]}, live {b[bot_id][key]}")
    return out


@cli.command(short_help="Show (or rebuild and check) the Elo ladder of a game.")
@game_option
@option("--rebuild", is_flag=True,
        help="Recompute the ladder from the append-only results log and compare it with the live one "
             "(exit 1 when they differ).")
@server_option
@json_option
@click.pass_obj
def ladder(app: AppContext, game: str, rebuild: bool, server: str, as_json: bool) -> None:
    """Show the Elo ladder of a game: rank, bot (NAME@VERSION), rating (Elo points, start 1500), matches, wins
    (first places, shared ones count) and mean score (Take 5: bullheads per match, lower is better).

    --rebuild recomputes the ladder from the stored results, in the order they were applied, prints it and says
    whether it equals the live ladder (every rating to 1e-6 points, matches, wins, mean score); exit 1 if not.

    \b
    Examples:
      arena ladder --game take5
      arena ladder --rebuild --json
    """
    client = app.arena(server)
    if rebuild:
        _ladder_rebuild(app, client, game, as_json)
        return
    reply = client.call("GetLadder", arena_pb2.GetLadderRequest(game=game))
    entries = _ladder_entries(reply)
    if as_json:
        _print_json({"game": reply.game or game, "entries": entries})
        return
    if not entries:
        click.echo(f"the {game} ladder is empty: run a tournament first (`arena tournament create --all`)")
        return
    app.console.print(_ladder_table(f"{game} ladder (Elo)", entries, game))


def _ladder_rebuild(app: AppContext, client: ArenaClient, game: str, as_json: bool) -> None:
    reply = client.call("RebuildLadder", arena_pb2.RebuildLadderRequest(game=game), timeout=10 * RPC_TIMEOUT_S)
    rebuilt, live = _ladder_entries(reply.rebuilt), _ladder_entries(reply.live)
    differences = ladder_differences(rebuilt, live)
    equal = reply.equal and not differences
    if as_json:
        _print_json({"game": game, "results": reply.results, "equal": equal, "differences": differences,
                     "rebuilt": {"game": reply.rebuilt.game or game, "entries": rebuilt},
                     "live": {"game": reply.live.game or game, "entries": live}})
    else:
        app.console.print(_ladder_table(f"{game} ladder rebuilt from {reply.results} stored results", rebuilt, game))
        if equal:
            click.echo(f"the rebuilt ladder equals the live ladder ({len(rebuilt)} bots, {reply.results} results)")
        for line in differences:
            click.echo(f"  differs: {line}")
    if not equal:
        why = f"{len(differences)} difference(s)" if differences else "the server reports a difference"
        raise ArenaCliError(f"the {game} ladder rebuilt from {reply.results} results differs from the live ladder: "
                            f"{why}")


# --- play / replay -------------------------------------------------------------------------------------------


@cli.group(short_help="Play one local game without Redis.")
def play() -> None:
    """Play one game locally between bots, without Redis or `arena serve` (the referee runs in this process)."""


@play.command("take5", short_help="Play one game of Take 5.")
@option("--bot", "bots", type=BotSpecType(), multiple=True, required=True,
        metavar="HOST:PORT|sample:NAME|FILE.py",
        help="A seat, in seat order (repeat 2..10 times): HOST:PORT of a running bot, sample:NAME "
             "(random, heuristic, montecarlo; started as a separate process and stopped after), or a bot "
             ".py file to start.")
@option("--seed", type=click.IntRange(min=0), default=None,
        help="Seed of the deals; default: a random one, printed and kept in the record.")
@variant_options
@deadline_option
@option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help="Where to save the match record (JSON); default records/<match id>.json.")
@json_option
@click.pass_obj
def play_take5(app: AppContext, bots: Sequence[BotSpec], seed: int | None, variants: Sequence[str], limit: int,
               limit_rule: str, deadline_ms: int, record_path: Path | None, as_json: bool) -> None:
    """Play one game of Take 5 and print the result (seat, bot, bullheads, rank, faults); the record is saved
    for `arena replay`.

    \b
    Examples:
      arena play take5 --bot sample:random --bot sample:heuristic --bot sample:montecarlo --seed 7
      arena play take5 --bot 127.0.0.1:50061 --bot sample:heuristic --limit 33 --record game.json
    """
    if not 2 <= len(bots) <= 10:
        raise click.UsageError(f"Take 5 needs 2..10 --bot seats, got {len(bots)}")
    config = take5_config_of(limit, limit_rule, variants)
    from .referee import SeatSpec, run_match_sync

    if seed is None:
        seed = secrets.randbelow(10**9)
    match_id = f"play-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    path = record_path or Path("records") / f"{match_id}.json"
    started: list[Any] = []
    try:
        endpoints = {spec.value: _bot_info(spec.value, "take5") for spec in bots if spec.kind == "endpoint"}
        started = _start_local_bots([spec for spec in bots if spec.kind != "endpoint"])
        local = iter(started)
        seats = []
        for spec in bots:
            if spec.kind == "endpoint":
                seats.append((endpoints[spec.value], spec.value))
            else:
                proc = next(local)
                seats.append((proc.name, proc.endpoint))
        names = _unique_names([n for n, _ in seats])
        specs = [SeatSpec(name=n, endpoint=e) for n, (_, e) in zip(names, seats, strict=True)]
        with app.console.status(f"playing take5 between {', '.join(names)} (seed {seed})", spinner="dots") \
                if not as_json else _nullcontext():
            record = run_match_sync(match_id, "take5", specs, config, seed=seed, deadline_ms=deadline_ms,
                                    call_deadline_ms=DEFAULTS.call_deadline_ms)
    finally:
        for proc in started:
            proc.stop()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        record.save(path)
    except OSError as exc:
        raise ArenaCliError(f"cannot save the record to {path}: {exc.strerror or exc}") from None
    result = record.result
    if as_json:
        _print_json({"match_id": record.match_id, "seed": seed, "record": str(path), "seats": [
            {"seat": i, "bot": s.name, "endpoint": s.endpoint, "bullheads": result.scores[i],
             "rank": result.ranks[i], "faults": result.faults[i]} for i, s in enumerate(record.seats)]})
        return
    table = Table(title="Take 5 result")
    for col, justify in (("seat", "right"), ("bot", "left"), ("bullheads", "right"), ("rank", "right"),
                         ("faults", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for i, s in enumerate(record.seats):
        table.add_row(str(i), s.name, _score(result.scores[i]), str(result.ranks[i]), str(result.faults[i]))
    app.console.print(table)
    click.echo(f"match {record.match_id}, seed {seed}, {len(record.decisions)} decisions in "
               f"{record.duration_s:.2f} s")
    for fault in record.faults[:5]:
        click.echo(f"fault: seat {fault.seat} hand {fault.hand} turn {fault.turn}: {fault.kind} ({fault.detail})")
    if len(record.faults) > 5:
        click.echo(f"... {len(record.faults) - 5} more faults in the record")
    click.echo(f"record saved to {path}; check it with `arena replay {path}`")


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _score(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _unique_names(names: Sequence[str]) -> list[str]:
    """``names`` with repeats suffixed ``-2``, ``-3``... in seat order (["random", "random"] -> random, random-2)."""
    seen: dict[str, int] = {}
    out = []
    taken = set(names)
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        if seen[n] == 1:
            out.append(n)
            continue
        k = seen[n]
        while f"{n}-{k}" in taken:
            k += 1
        taken.add(f"{n}-{k}")
        out.append(f"{n}-{k}")
    return out


def _start_local_bots(specs: Sequence[BotSpec]) -> list[Any]:
    """Start the sample / file bots of ``specs`` as separate processes (all at once), in order."""
    if not specs:
        return []
    from .local_bots import start_bots

    texts = [f"sample:{s.value}" if s.kind == "sample" else s.value for s in specs]
    try:
        return start_bots(texts)
    except (RuntimeError, OSError, ValueError) as exc:  # BotStartError is a RuntimeError
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        message = lines[0] if lines else type(exc).__name__
        if len(lines) > 2 and lines[1] == "stderr tail:":  # BotStartError: the last stderr line says why
            message += f"; its last stderr line: {lines[-1]}"
        raise ArenaCliError(f"cannot start the bot: {message}") from None


def _bot_info(endpoint: str, game: str) -> str:
    """The name a running bot reports through GetInfo; raises ``ArenaCliError`` when it is unreachable or does not
    play ``game``."""
    channel = grpc.insecure_channel(endpoint)
    try:
        info = bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(),
                                                     timeout=DEFAULTS.call_deadline_ms / 1000)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.UNAVAILABLE:
            raise ArenaCliError(f"cannot reach the bot at {endpoint}: is it running?") from None
        raise ArenaCliError(f"the bot at {endpoint} failed GetInfo: {exc.details()} ({exc.code().name})") from None
    finally:
        channel.close()
    if info.games and game not in info.games:
        raise ArenaCliError(f"the bot at {endpoint} ({info.name}) does not play {game}; it plays "
                            f"{', '.join(info.games)}")
    return info.name if BOT_NAME_RE.match(info.name or "") else endpoint.replace(":", "_")


@cli.command(short_help="Re-simulate a match record; report differences.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def replay(ctx: click.Context, file: Path) -> None:
    """Re-simulate a match record (JSON) with the rules engine and compare: prints "identical", or every
    difference and exits 1.

    \b
    Example:
      arena replay records/play-20250101-120000-ab12cd.json
    """
    from .referee import MatchRecord
    from .referee import replay as replay_record

    try:
        record = MatchRecord.load(file)
    except (ValueError, OSError) as exc:  # RecordError is a ValueError, so is a JSON syntax error
        raise ArenaCliError(f"cannot read the match record {file}: {exc}") from None
    try:
        differences = replay_record(record)
    except ValueError as exc:  # a record the rules engine cannot even follow
        differences = [f"the record cannot be re-simulated: {exc}"]
    if not differences:
        click.echo(f"identical: {file} re-simulates to the same {len(record.decisions)} decisions, faults and result")
        return
    click.echo(f"{len(differences)} difference{'s' if len(differences) != 1 else ''} in {file}:")
    for d in differences:
        click.echo(f"  - {d}")
    ctx.exit(1)


def main() -> None:
    """Entry point of the ``arena`` console script."""
    cli(prog_name="arena")


if __name__ == "__main__":
    main()
