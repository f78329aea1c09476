"""The ``arena`` command line: run the referee and workers, register bots, run tournaments, read the ladder,
play and replay single games.

Thin by design (STYLE.md habit 9): every command parses its options, calls one platform function or one RPC of
the referee's ``arena.v1.Arena`` service, and prints the answer with rich (tables, progress bars) or as JSON
(``--json`` on the reads). Every option can also come from an environment variable: ``ARENA_SERVER``,
``ARENA_REDIS_URL`` and ``ARENA_DATA_DIR`` are shared by the commands that use them; any other option reads
``ARENA_<COMMAND>_<OPTION>`` (click's ``auto_envvar_prefix``), e.g. ``ARENA_SERVE_WORKERS=4``.

Errors are one line on stderr and a non-zero exit code, never a traceback: 1 for a failed operation, 2 for a bad
command line, 130 after Ctrl-C. Set ``ARENA_DEBUG=1`` to see the traceback of an unexpected error.

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
from collections.abc import Iterator, Sequence
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

from .config import DEFAULTS  # noqa: E402

GAMES = ("take5",)
VARIANTS = ("known-cards", "draft")
LIMIT_RULES = ("at-least", "more-than")
BOT_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
RPC_TIMEOUT_S = 30.0
POLL_INTERVAL_S = 0.5
EXIT_INTERRUPTED = 130


# --- errors ------------------------------------------------------------------------------------------------


class ArenaCliError(click.ClickException):
    """A failed operation: printed as one line ``Error: <message>``, exit code 1."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))  # one line, whatever the source message looked like


class ArenaInterrupted(ArenaCliError):
    """Ctrl-C while the CLI waits on something that goes on without it (a tournament): exit code 130."""

    exit_code = EXIT_INTERRUPTED


def rpc_error(exc: grpc.RpcError, server: str) -> ArenaCliError:
    """The one-line CLI error for a failed call to the arena server at ``server``.

    UNAVAILABLE becomes "cannot reach the arena server at X: is `arena serve` running?", DEADLINE_EXCEEDED says the
    server did not answer in time, every other status code gives the server's details (its message is written for
    people, see arena.proto) followed by the code name.
    """
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    details = exc.details() if callable(getattr(exc, "details", None)) else None
    if code == grpc.StatusCode.UNAVAILABLE:
        return ArenaCliError(f"cannot reach the arena server at {server}: is `arena serve` running?")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ArenaCliError(f"the arena server at {server} did not answer in time")
    name = code.name if code is not None else "UNKNOWN"
    return ArenaCliError(f"{details or 'the arena server failed'} ({name})")


class ArenaGroup(click.Group):
    """The root group: turns every failure into one line on stderr and an exit code.

    Usage errors print ``Error: <what is wrong> (see `arena ... --help`)`` with exit code 2 instead of click's
    usage block; ``ClickException``s print their message; Ctrl-C exits 130; an unexpected exception prints its type
    and message (``ARENA_DEBUG=1`` re-raises it for the traceback).
    """

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
            click.echo(f"Error: {' '.join(exc.format_message().split())}{where}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt, EOFError):
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


# --- parameter types ---------------------------------------------------------------------------------------


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


@dataclass
class AppContext:
    """Shared by every command (``ctx.obj``): the consoles and the gRPC clients opened during the command."""

    console: Console = field(default_factory=lambda: Console(highlight=False))
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

    def call(self, method: str, request: Any, timeout: float = RPC_TIMEOUT_S) -> Any:
        try:
            return getattr(self.stub, method)(request, timeout=timeout)
        except grpc.RpcError as exc:
            raise rpc_error(exc, self.server) from None


def server_option(f: Any) -> Any:
    return click.option(
        "--server", envvar="ARENA_SERVER", default=DEFAULTS.server, show_default=True, metavar="HOST:PORT",
        help="Address of the referee (`arena serve`); env ARENA_SERVER.")(f)


def json_option(f: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts instead of a table.")(f)


def game_option(f: Any) -> Any:
    return click.option("--game", type=click.Choice(GAMES), default="take5", show_default=True,
                        help="Game id.")(f)


def data_dir_option(f: Any) -> Any:
    return click.option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ARENA_DATA_DIR",
        default=DEFAULTS.data_dir, show_default=True,
        help="Folder of the private redis-server (used when ARENA_REDIS_URL is unset); env ARENA_DATA_DIR.")(f)


def redis_url_option(f: Any) -> Any:
    return click.option(
        "--redis-url", envvar="ARENA_REDIS_URL", default=None, metavar="URL",
        help="External Redis, e.g. redis://host:6379/0; env ARENA_REDIS_URL. Unset: the private server of "
             "--data-dir.")(f)


def variant_options(f: Any) -> Any:
    f = click.option("--limit-rule", type=click.Choice(LIMIT_RULES), default="at-least", show_default=True,
                     help="Game end: a total at least (>=) or more than (>) the limit after a complete hand.")(f)
    f = click.option("--limit", type=click.IntRange(min=1), default=66, show_default=True,
                     help="Bullhead limit, checked after each complete hand.")(f)
    f = click.option("--variant", "variants", type=click.Choice(VARIANTS), multiple=True,
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
@click.option("-v", "--verbose", is_flag=True, help="Log what the referee and workers do (INFO) on stderr.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """Bot arena for multiplayer card games (Take 5!).

    \b
    A typical session:
      arena serve                                   # referee + workers + private Redis in ./.arena
      python my_bot.py --port 50061                 # your bot, as its own process
      arena bot register mybot 127.0.0.1:50061
      arena tournament create --all --wait          # round robin between every registered bot
      arena ladder                                  # Elo ladder
      arena play take5 --bot sample:random --bot sample:heuristic --bot 127.0.0.1:50061

    Every option can come from an environment variable: ARENA_SERVER, ARENA_REDIS_URL, ARENA_DATA_DIR, or
    ARENA_<COMMAND>_<OPTION> (e.g. ARENA_SERVE_WORKERS=4).
    """
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = AppContext()
    ctx.obj = app
    ctx.call_on_close(app.close)


# --- serve / worker -----------------------------------------------------------------------------------------


@cli.command(short_help="Run the referee (Arena gRPC service + workers).")
@click.option("--listen", type=EndpointType(allow_port_zero=True), default=DEFAULTS.listen, show_default=True,
              help="Address to serve the Arena gRPC service on (port 0: a free port, printed).")
@click.option("--workers", type=click.IntRange(min=0), default=DEFAULTS.workers, show_default=True,
              help="Workers embedded in this process (0: only separate `arena worker`s run matches).")
@click.option("--concurrency", type=click.IntRange(min=1), default=DEFAULTS.concurrency, show_default=True,
              help="Matches each worker runs at once.")
@data_dir_option
@redis_url_option
@click.pass_obj
def serve(app: AppContext, listen: str, workers: int, concurrency: int, data_dir: Path,
          redis_url: str | None) -> None:
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
            server = ArenaServer(listen, url, workers=workers, concurrency=concurrency)
            port = server.start()
            host = listen.rpartition(":")[0]
            click.echo(f"arena serve listening on {host}:{port}")
            click.echo(f"redis: {_redact(url)} ({source})")
            click.echo(f"workers: {workers} embedded, {concurrency} matches each; stop with Ctrl-C or SIGTERM")
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


def _check_redis(url: str) -> None:
    """Raise ``ArenaCliError`` unless the Redis at ``url`` answers PING."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    except ValueError as exc:  # not a redis:// URL
        raise ArenaCliError(f"bad Redis URL {_redact(url)}: {exc}") from None
    try:
        client.ping()
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


@cli.command(short_help="Run an extra worker for the match queue.")
@click.option("--concurrency", type=click.IntRange(min=1), default=DEFAULTS.concurrency, show_default=True,
              help="Matches this worker runs at once (a match mostly waits on bots).")
@click.option("--name", default=None, help="Worker name in the Redis consumer group (default: host and pid).")
@data_dir_option
@redis_url_option
def worker(concurrency: int, name: str | None, data_dir: Path, redis_url: str | None) -> None:
    """Run an extra worker: take match jobs from Redis, referee them, store the results; until Ctrl-C.

    Redis: --redis-url / ARENA_REDIS_URL, else the private server that `arena serve` runs for --data-dir on this
    machine.

    \b
    Example:
      ARENA_REDIS_URL=redis://10.0.0.5:6379/0 arena worker --concurrency 8 --name box2
    """
    from .redis_server import resolve_redis_url
    from .scheduler import run_worker

    url = redis_url or resolve_redis_url(data_dir)
    if url is None:
        raise ArenaCliError(f"no Redis to work for: set ARENA_REDIS_URL, or run `arena serve --data-dir {data_dir}` "
                            "on this machine first")
    _check_redis(url)
    with _stop_on_signals() as stop:
        label = f"arena worker {name}" if name else "arena worker"
        click.echo(f"{label} working for redis {_redact(url)}, {concurrency} matches at once; "
                   "stop with Ctrl-C or SIGTERM")
        sys.stdout.flush()
        try:
            run_worker(url, concurrency=concurrency, name=name, stop=stop)
        except _redis_errors() as exc:
            raise ArenaCliError(f"cannot use Redis at {_redact(url)}: {exc}") from None


# --- bots ----------------------------------------------------------------------------------------------------


@cli.group(short_help="Register and list bots.")
def bot() -> None:
    """Register and list bots (a bot is a running process serving arena.v1.Bot at HOST:PORT)."""


@bot.command("register", short_help="Register (or update) a bot endpoint.")
@click.argument("name", callback=lambda ctx, param, value: _bot_name(value))
@click.argument("endpoint", type=EndpointType())
@game_option
@server_option
@click.pass_obj
def bot_register(app: AppContext, name: str, endpoint: str, game: str, server: str) -> None:
    """Register the bot at ENDPOINT (HOST:PORT, reachable from the workers) under NAME, its ladder identity.

    Registering an existing name again updates its endpoint and keeps its ladder entry.

    \b
    Example:
      arena bot register mybot 127.0.0.1:50061
    """
    record = app.arena(server).call("RegisterBot", arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint,
                                                                                game=game))
    click.echo(f"registered {record.game} bot {record.name} at {record.endpoint}")


@bot.command("list")
@click.option("--game", type=click.Choice(GAMES), default=None, help="Only the bots of this game.")
@server_option
@json_option
@click.pass_obj
def bot_list(app: AppContext, game: str | None, server: str, as_json: bool) -> None:
    """List the registered bots.

    \b
    Example:
      arena bot list --game take5
    """
    reply = app.arena(server).call("ListBots", arena_pb2.ListBotsRequest(game=game or ""))
    bots = sorted(reply.bots, key=lambda b: (b.game, b.name))
    if as_json:
        _print_json([{"name": b.name, "endpoint": b.endpoint, "game": b.game, "registered_at": b.registered_at}
                     for b in bots])
        return
    if not bots:
        click.echo("no bots registered yet: `arena bot register NAME HOST:PORT`")
        return
    table = Table(title="Registered bots")
    for col in ("bot", "game", "endpoint", "registered"):
        table.add_column(col)
    for b in bots:
        table.add_row(b.name, b.game, b.endpoint, _when(b.registered_at))
    app.console.print(table)


def _when(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s).strftime("%Y-%m-%d %H:%M:%S") if epoch_s else "-"


# --- tournaments ----------------------------------------------------------------------------------------------


@cli.group(short_help="Create and follow round-robin tournaments.")
def tournament() -> None:
    """Create round-robin tournaments and follow their progress."""


def _bot_names(values: Sequence[str]) -> list[str]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    for n in names:
        _bot_name(n)
    return names


@tournament.command("create", short_help="Create a round robin (optionally wait).")
@click.option("--bots", "bot_lists", multiple=True, metavar="A,B,C",
              help="Registered bot names, comma separated (repeatable).")
@click.option("--all", "all_bots", is_flag=True, help="Every registered bot of the game.")
@game_option
@click.option("--seats", type=click.IntRange(2, 10), default=None,
              help="Seats per match, k (2..10); default min(number of bots, 4).")
@click.option("--rounds", type=click.IntRange(min=1), default=DEFAULTS.rounds, show_default=True,
              help="Rounds; each round plays new deals.")
@click.option("--seed", type=click.IntRange(1, 2**64 - 1), default=None,
              help="Tournament seed (every deal derives from it); default: the server picks one and reports it.")
@click.option("--deadline-ms", type=click.IntRange(1, 2**32 - 1), default=DEFAULTS.deadline_ms, show_default=True,
              help="Deadline of each decision, milliseconds.")
@variant_options
@click.option("--wait/--no-wait", default=None,
              help="Show a live progress bar until every match is done. Default: --wait when stdout is a "
                   "terminal, --no-wait otherwise (scripts).")
@server_option
@json_option
@click.pass_obj
def tournament_create(app: AppContext, bot_lists: Sequence[str], all_bots: bool, game: str, seats: int | None,
                      rounds: int, seed: int | None, deadline_ms: int, variants: Sequence[str], limit: int,
                      limit_rule: str, wait: bool | None, server: str, as_json: bool) -> None:
    """Create a round-robin tournament: every SEATS-subset of the bots plays once per seat rotation of the same
    deal (duplicate deals), ROUNDS times with new deals. Matches go to the workers through Redis; ratings update
    as results arrive.

    \b
    Examples:
      arena tournament create --bots random,heuristic,montecarlo --seats 3 --rounds 2 --wait
      arena tournament create --all --variant known-cards --limit 33 --no-wait
    """
    names = _bot_names(bot_lists)
    if all_bots and names:
        raise click.UsageError("give either --bots or --all, not both")
    client = app.arena(server)
    if all_bots:
        reply = client.call("ListBots", arena_pb2.ListBotsRequest(game=game))
        names = sorted(b.name for b in reply.bots)
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
        config=wire.config_to_proto(game, config), deadline_ms=deadline_ms)
    t = client.call("CreateTournament", request)
    if wait is None:
        wait = sys.stdout.isatty() and not as_json
    if as_json and not wait:
        _print_json(_tournament_dict(t))
        return
    if not as_json:
        click.echo(f"tournament {t.id}: {t.matches_total} matches ({len(t.bots)} bots, {t.seats_per_match} seats, "
                   f"{t.rounds} round{'s' if t.rounds != 1 else ''}, seed {t.seed})")
    if not wait:
        click.echo(f"follow it with `arena tournament status {t.id} --watch`")
        return
    t = _watch(app, client, t, quiet=as_json)
    if as_json:
        _print_json(_tournament_dict(t))
    else:
        click.echo(f"tournament {t.id} finished: {t.matches_done}/{t.matches_total} matches, {t.faults} faults; "
                   "see `arena ladder`")


@tournament.command("status", short_help="Show a tournament's progress.")
@click.argument("tournament_id", metavar="ID")
@click.option("--watch", is_flag=True, help="Show a live progress bar until every match is done.")
@server_option
@json_option
@click.pass_obj
def tournament_status(app: AppContext, tournament_id: str, watch: bool, server: str, as_json: bool) -> None:
    """Show a tournament's progress (matches done, faults, state).

    \b
    Example:
      arena tournament status t3 --watch
    """
    client = app.arena(server)
    t = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=tournament_id))
    if watch and t.state != "finished":
        t = _watch(app, client, t, quiet=as_json)
    if as_json:
        _print_json(_tournament_dict(t))
        return
    table = Table(title=f"Tournament {t.id}", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    cfg = t.config.take5
    variants = [v for v, on in (("known-cards", cfg.known_cards), ("draft", cfg.draft)) if on]
    rows = [
        ("state", t.state),
        ("progress", f"{t.matches_done}/{t.matches_total} matches"),
        ("faults", str(t.faults)),
        ("game", t.game),
        ("bots", ", ".join(t.bots)),
        ("seats per match", str(t.seats_per_match)),
        ("rounds", str(t.rounds)),
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


def _tournament_dict(t: Any) -> dict[str, Any]:
    cfg = t.config.take5
    return {
        "id": t.id, "game": t.game, "bots": list(t.bots), "seats_per_match": t.seats_per_match, "rounds": t.rounds,
        "seed": t.seed, "matches_total": t.matches_total, "matches_done": t.matches_done, "faults": t.faults,
        "state": t.state, "created_at": t.created_at, "deadline_ms": t.deadline_ms,
        "config": {"limit": cfg.limit or 66,
                   "limit_rule": "more_than" if cfg.limit_rule == bot_pb2.TAKE5_LIMIT_MORE_THAN else "at_least",
                   "known_cards": cfg.known_cards, "draft": cfg.draft},
    }


def _watch(app: AppContext, client: ArenaClient, t: Any, *, quiet: bool = False) -> Any:
    """Poll GetTournament every POLL_INTERVAL_S behind a rich progress bar until the state is "finished"; returns
    the last Tournament. Ctrl-C stops watching (exit 130), the tournament keeps running on the server."""
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("matches · faults {task.fields[faults]}"), TimeElapsedColumn())
    console = Console(stderr=True) if quiet else app.console
    try:
        with Progress(*columns, console=console, disable=quiet) as progress:
            task = progress.add_task(f"tournament {t.id}", total=t.matches_total or None,
                                     completed=t.matches_done, faults=t.faults)
            while t.state != "finished":
                time.sleep(POLL_INTERVAL_S)
                t = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=t.id))
                progress.update(task, completed=t.matches_done, faults=t.faults)
    except KeyboardInterrupt:
        raise ArenaInterrupted(f"stopped watching; tournament {t.id} keeps running on the server "
                               f"(`arena tournament status {t.id} --watch`)") from None
    return t


# --- ladder --------------------------------------------------------------------------------------------------


@cli.command(short_help="Show the Elo ladder of a game.")
@game_option
@server_option
@json_option
@click.pass_obj
def ladder(app: AppContext, game: str, server: str, as_json: bool) -> None:
    """Show the Elo ladder of a game: rank, bot, rating (Elo points, start 1500), matches, wins (first places,
    shared ones count) and mean score (Take 5: bullheads per match, lower is better).

    \b
    Example:
      arena ladder --game take5
    """
    reply = app.arena(server).call("GetLadder", arena_pb2.GetLadderRequest(game=game))
    entries = sorted(reply.entries, key=lambda e: (e.rank, -e.rating, e.bot))
    if as_json:
        _print_json({"game": reply.game or game, "entries": [
            {"rank": e.rank, "bot": e.bot, "rating": e.rating, "matches": e.matches, "wins": e.wins,
             "mean_score": e.mean_score} for e in entries]})
        return
    if not entries:
        click.echo(f"the {game} ladder is empty: run a tournament first (`arena tournament create --all`)")
        return
    table = Table(title=f"{game} ladder (Elo)")
    table.add_column("rank", justify="right")
    table.add_column("bot")
    table.add_column("rating", justify="right")
    table.add_column("matches", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("mean score" + (" (bullheads)" if game == "take5" else ""), justify="right")
    for e in entries:
        table.add_row(str(e.rank), e.bot, f"{e.rating:.1f}", str(e.matches), str(e.wins), f"{e.mean_score:.2f}")
    app.console.print(table)


# --- play / replay -------------------------------------------------------------------------------------------


@cli.group(short_help="Play one local game without Redis.")
def play() -> None:
    """Play one game locally between bots, without Redis or `arena serve` (the referee runs in this process)."""


@play.command("take5", short_help="Play one game of Take 5.")
@click.option("--bot", "bots", type=BotSpecType(), multiple=True, required=True,
              metavar="HOST:PORT|sample:NAME|FILE.py",
              help="A seat, in seat order (repeat 2..10 times): HOST:PORT of a running bot, sample:NAME "
                   "(random, heuristic, montecarlo; started as a separate process and stopped after), or a bot "
                   ".py file to start.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the deals; default: a random one, printed and kept in the record.")
@variant_options
@click.option("--deadline-ms", type=click.IntRange(min=1), default=DEFAULTS.deadline_ms, show_default=True,
              help="Deadline of each decision, milliseconds.")
@click.option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
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
