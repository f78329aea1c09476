"""The root ``arena`` group, its shared context (consoles, gRPC clients of the referee) and the printing helpers
every command uses."""

from __future__ import annotations

import collections
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import click
import grpc
from rich.console import Console
from rich.text import Text

from arena.cli.errors import ArenaCliError, ArenaGroup, rpc_error
from arena.cli.options import option
from arena.core import signing, text
from arena.core.config import DEFAULTS
from arena.core.folder_lock import folder_held, serve_address, serve_stopping
from arena.server import auth
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

RPC_TIMEOUT_S = 30.0
STARTING_WAIT_S = 20.0  # how long a call waits for an `arena serve` that holds the data folder but answers nothing yet
SERVE_LOCK_GRACE_S = 4.0  # how long a call that found nothing waits for an `arena serve` to take the data folder
ARENA_SERVICE = arena_pb2.DESCRIPTOR.services_by_name["Arena"].full_name  # "arena.v1.Arena"
POLL_INTERVAL_S = 0.5
PLAIN_EVERY_S = 30.0  # a live display whose output is no terminal (a file, a pipe) writes a plain line this often
REFEREE_AWAY_S = 120.0  # while following, how long a referee that does not answer is waited for (a restart)


def _table_width() -> int | None:
    """Width of the tables: the terminal's (rich's default) on a terminal or with COLUMNS set, else 120 columns
    (rich would fall back to 80 and squeeze bot ids and endpoints)."""
    if os.environ.get("COLUMNS") or sys.stdout.isatty():
        return None
    return 120


class _CallDetails(collections.namedtuple("_CallDetails", ("method", "timeout", "metadata", "credentials",
                                                            "wait_for_ready", "compression")),
                   grpc.ClientCallDetails):
    pass


@dataclass(frozen=True)
class Credential:
    """A token the CLI proves it holds by signing a call (``arena.core.signing``), never by sending it: ``admin``
    (the arena's admin token, else an owner token), ``arena_id`` (the arena it was saved for: a challenge from
    any other arena is not signed; "" for a token given explicitly), ``source`` (where it came from, for
    messages)."""

    token: str = field(repr=False)
    admin: bool = False
    arena_id: str = ""
    source: str = ""


def signed_metadata(channel: grpc.Channel, server: str, method_path: str, request: Any,
                    credential: Credential) -> tuple[tuple[str, str], ...] | None:
    """The ``arena-signature`` metadata proving ``credential`` for one call of ``method_path`` with ``request``:
    a fresh nonce from the server's GetChallenge, then the MAC. None when the server is not the arena the
    credential was saved for (a note says so on stderr; the call then goes unsigned and the server says what is
    missing). Raises ``ArenaCliError`` when the server offers no challenge (no token is ever sent instead)."""
    try:
        challenge = arena_pb2_grpc.ArenaStub(channel).GetChallenge(arena_pb2.GetChallengeRequest(),
                                                                  timeout=RPC_TIMEOUT_S)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
            raise ArenaCliError(
                f"the server at {server} offers no signed calls (GetChallenge): it is no arena, or an arena older "
                f"than this CLI; the {'admin' if credential.admin else 'owner'} token was not sent") from None
        raise rpc_error(exc, server) from None
    if credential.arena_id and challenge.arena_id != credential.arena_id:
        click.echo(f"note: the {'admin' if credential.admin else 'owner'} token {credential.source} belongs to "
                   f"another arena ({credential.arena_id[:8]}), not to the one at {server} "
                   f"({challenge.arena_id[:8] or 'unknown'}); it was not used"
                   + ("" if not credential.admin else ": for that arena, set ARENA_DATA_DIR to the --data-dir of its "
                      "`arena serve` (or give --admin-token)"), err=True)
        return None
    value = signing.sign(credential.token, admin=credential.admin, method=method_path,
                         arena_id=challenge.arena_id, nonce=challenge.nonce,
                         request_bytes=request.SerializeToString(deterministic=True))
    return ((signing.SIGNATURE_METADATA, value),)


class SigningInterceptor(grpc.UnaryUnaryClientInterceptor):
    """Signs organiser calls (``auth.ADMIN_METHODS``) with the admin token: ``resolve()`` gives the
    ``Credential`` (or None: the call goes unsigned and the server says what is missing), asked at the first
    such call. The token itself is never sent."""

    def __init__(self, resolve: Any, channel: grpc.Channel, server: str) -> None:
        self._resolve = resolve
        self._channel = channel
        self._server = server

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        method = client_call_details.method
        name = method.rsplit("/", 1)[-1] if isinstance(method, str) else method.decode().rsplit("/", 1)[-1]
        if name in auth.ADMIN_METHODS:
            credential = self._resolve()
            path = method if isinstance(method, str) else method.decode()
            extra = signed_metadata(self._channel, self._server, path, request, credential) if credential else None
            if extra:
                metadata = list(client_call_details.metadata or ()) + list(extra)
                client_call_details = _CallDetails(method, client_call_details.timeout, metadata,
                                                   client_call_details.credentials,
                                                   client_call_details.wait_for_ready,
                                                   client_call_details.compression)
        return continuation(client_call_details, request)


def admin_signer(channel: grpc.Channel, token: str, server: str = "the arena") -> SigningInterceptor:
    """An interceptor for ``channel`` that signs its organiser calls with the admin ``token`` (tools, tests)."""
    credential = Credential(token, admin=True, source="given")
    return SigningInterceptor(lambda: credential, channel, server)


def cli_data_dir() -> Path:
    """Where the CLI looks for the admin token ``arena serve`` saved: $ARENA_DATA_DIR, else ./.arena."""
    return Path(os.environ.get("ARENA_DATA_DIR") or DEFAULTS.data_dir)


@dataclass
class AppContext:
    """Shared by every command (``ctx.obj``): the consoles, the gRPC clients opened during the command and the
    admin token given to the CLI (``--admin-token`` / ARENA_ADMIN_TOKEN), if any."""

    console: Console = field(default_factory=lambda: Console(highlight=False, width=_table_width()))
    admin_token: str | None = None
    tls_ca: bytes | None = None
    _channels: list[grpc.Channel] = field(default_factory=list)

    def arena(self, server: str) -> ArenaClient:
        """A client of the Arena service at ``server`` ("host:port"), closed when the command ends; over TLS when
        the CLI was given a CA (``--tls-ca``). Its organiser calls are signed with the admin token
        (``admin_credential``)."""
        if self.tls_ca is not None:
            channel = grpc.secure_channel(server, grpc.ssl_channel_credentials(root_certificates=self.tls_ca))
        else:
            channel = grpc.insecure_channel(server)
        self._channels.append(channel)
        resolved: list[Credential | None] = []

        def resolve() -> Credential | None:
            if not resolved:
                resolved.append(self.admin_credential())
            return resolved[0]

        intercepted = grpc.intercept_channel(channel, SigningInterceptor(resolve, channel, server))
        return ArenaClient(server, arena_pb2_grpc.ArenaStub(intercepted), channel)

    def admin_credential(self) -> Credential | None:
        """The admin token to sign organiser calls with: the one given to the CLI (--admin-token /
        ARENA_ADMIN_TOKEN), else the one `arena serve` saved in ``cli_data_dir()``, used only for the arena it was
        saved with (its id); None when there is none (the referee then says what is missing)."""
        if self.admin_token:
            return Credential(self.admin_token, admin=True, source="of --admin-token / $ARENA_ADMIN_TOKEN")
        try:
            saved = auth.read_saved_token(cli_data_dir())
        except auth.AdminTokenError as exc:
            click.echo(f"note: {exc}", err=True)
            return None
        if saved is None:
            return None
        return Credential(saved.token, admin=True, arena_id=saved.arena_id or "-",
                          source=f"in {auth.token_path(cli_data_dir())}")

    def close(self) -> None:
        for channel in self._channels:
            channel.close()
        self._channels.clear()


def no_admin_token(exc: grpc.RpcError) -> dict[grpc.StatusCode, str]:
    """A hint for an organiser call refused for want of the admin token when this CLI found none: where it looked
    (an absolute path: ./.arena is the folder it runs in) and how to point it at the one `arena serve` saved."""
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    details = exc.details() if callable(getattr(exc, "details", None)) else ""
    if code != grpc.StatusCode.UNAUTHENTICATED or "organiser call" not in (details or "") or \
            os.environ.get(auth.ADMIN_TOKEN_ENV):
        return {}
    path = auth.token_path(cli_data_dir()).resolve()
    if path.exists():
        return {}
    where = "ARENA_DATA_DIR" if os.environ.get("ARENA_DATA_DIR") else "./.arena is the folder it runs in"
    return {code: f"this CLI found no admin token at {path} ({where}): run it from the folder `arena serve` runs "
                  f"in, or set ARENA_DATA_DIR to that folder's .arena"}


@dataclass
class ArenaClient:
    """Calls of the referee's Arena service; every ``grpc.RpcError`` becomes a one-line ``ArenaCliError``."""

    server: str
    stub: arena_pb2_grpc.ArenaStub
    channel: grpc.Channel | None = None

    def call(self, method: str, request: Any, timeout: float = RPC_TIMEOUT_S,
             hints: Mapping[grpc.StatusCode, str] | None = None, credential: Credential | None = None,
             passthrough: tuple[grpc.StatusCode, ...] = ()) -> Any:
        """``stub.<method>(request)``, signed with ``credential`` when given (``signed_metadata``); a failure
        raises the one-line ``rpc_error`` (with ``hints``), except one of the codes ``passthrough``, which raises
        the ``grpc.RpcError`` itself."""
        for attempt in range(2):
            try:
                metadata = self.signed(method, request, credential) if credential is not None else None
                return getattr(self.stub, method)(request, timeout=timeout, metadata=metadata)
            except grpc.RpcError as exc:
                if exc.code() in passthrough:
                    raise
                if self._serve_stopping(exc):
                    raise ArenaCliError(
                        f"the `arena serve` of this data folder ({cli_data_dir().resolve()}) is stopping: the "
                        f"matches its workers play finish first (at most a minute); run the command again once it "
                        f"has been started again") from None
                elsewhere = self._serve_elsewhere(exc)
                if elsewhere is not None:
                    raise ArenaCliError(
                        f"no arena referee answers at {self.server}; the `arena serve` "
                        f"of this data folder ({cli_data_dir().resolve()}) listens on {elsewhere}: give --server "
                        f"{elsewhere} (or set ARENA_SERVER)") from None
                if attempt or not self._starting(exc):
                    raise rpc_error(exc, self.server, {**(hints or {}), **no_admin_token(exc)}) from None
        raise AssertionError("unreachable")

    def _serve_stopping(self, exc: grpc.RpcError) -> bool:
        """True when ``exc`` found nothing at a server on this machine while the ``arena serve`` of the CLI's data
        folder says it is stopping (its lock file)."""
        code = exc.code() if hasattr(exc, "code") else None
        return code == grpc.StatusCode.UNAVAILABLE and loopback(self.server) and serve_stopping(cli_data_dir())

    def _serve_elsewhere(self, exc: grpc.RpcError) -> str | None:
        """Where the ``arena serve`` of the CLI's data folder listens (its lock file says) when ``exc`` found
        nothing at a server on this machine with another port: the CLI was pointed at the wrong address (the
        default, or a typo), and waiting for it to start would be in vain; None otherwise."""
        code = exc.code() if hasattr(exc, "code") else None
        if code != grpc.StatusCode.UNAVAILABLE or not loopback(self.server):
            return None
        listening = serve_address(cli_data_dir())
        if listening is None or listening.rpartition(":")[2] == self.server.rpartition(":")[2]:
            return None
        return listening

    def _starting(self, exc: grpc.RpcError) -> bool:
        """True, after waiting (up to ``STARTING_WAIT_S``) until the referee answers, when ``exc`` found nothing at
        the server while an ``arena serve`` holds the CLI's data folder: it is still starting (``arena serve &``
        and the next command at once); the call is then made again."""
        code = exc.code() if hasattr(exc, "code") else None
        if code != grpc.StatusCode.UNAVAILABLE or self.channel is None:
            return False
        if not _serve_holds(cli_data_dir(), loopback(self.server)):
            return False
        try:
            grpc.channel_ready_future(self.channel).result(timeout=STARTING_WAIT_S)
        except grpc.FutureTimeoutError:
            return False
        return True

    def signed(self, method: str, request: Any, credential: Credential) -> tuple[tuple[str, str], ...] | None:
        """The metadata signing ``method(request)`` with ``credential`` (``signed_metadata``); None when it is not
        this arena's."""
        if self.channel is None:
            raise ArenaCliError(f"cannot sign {method}: this client has no channel of its own")
        return signed_metadata(self.channel, self.server, f"/{ARENA_SERVICE}/{method}", request, credential)


def loopback(server: str) -> bool:
    """True when the address ``server`` (HOST:PORT) names this machine's loopback interface."""
    host = server.rpartition(":")[0].strip("[]").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def _serve_holds(folder: Path, local: bool) -> bool:
    """True when an ``arena serve`` holds data folder ``folder``; for a server on this machine (``local``), after
    waiting up to ``SERVE_LOCK_GRACE_S`` for one that may still be importing its modules (``arena serve &`` and the
    next command at once: both start together)."""
    start = time.monotonic()
    said = False
    while not folder_held(folder):
        waited = time.monotonic() - start
        if waited >= (SERVE_LOCK_GRACE_S if local else 0.0):
            return False
        if waited >= 1.0 and not said and sys.stderr.isatty():  # a person waits: not in silence
            click.echo(f"nothing answers yet; waiting up to {SERVE_LOCK_GRACE_S - waited:.0f} s more for an "
                       f"`arena serve` starting in {folder}", err=True)
            said = True
        time.sleep(0.1)
    return True


class PlainLines:
    """Progress for output that is no terminal (a file, a pipe, a CI log), where a live display shows only its last
    state at the end: ``say(text)`` writes ``text`` as a plain line on the first call and then at most once per
    ``every_s`` seconds; nothing when ``console`` is a terminal (its live display shows the progress) or
    ``quiet``."""

    def __init__(self, console: Console, quiet: bool = False, every_s: float = PLAIN_EVERY_S) -> None:
        self.console = console
        self.on = not quiet and not console.is_terminal
        self.every_s = every_s
        self.next = 0.0

    def say(self, text: str) -> None:
        now = time.monotonic()
        if self.on and now >= self.next:
            self.next = now + self.every_s
            self.console.print(Text(f"{time.strftime('%H:%M:%S')} {text}"), soft_wrap=True)


_AWAY = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)  # what a referee going away gives a call


class RefereeAway:
    """Polls that ride out a referee restart (``--watch``, ``--wait``): ``ask`` makes one call; a referee that does
    not answer (UNAVAILABLE), or that cut the call off as it stopped (CANCELLED: the call was under way when the
    server shut down), gives None, for up to ``limit_s`` seconds in a row, and then the one-line error; any other
    failure is that error at once. ``away_s``: how long it has not answered (0 when it did last time)."""

    def __init__(self, client: ArenaClient, limit_s: float = REFEREE_AWAY_S) -> None:
        self.client, self.limit_s = client, limit_s
        self.since: float | None = None

    def ask(self, method: str, request: Any) -> Any | None:
        try:
            reply = getattr(self.client.stub, method)(request, timeout=RPC_TIMEOUT_S)
        except grpc.RpcError as exc:
            now = time.monotonic()
            self.since = now if self.since is None else self.since
            if exc.code() not in _AWAY or now - self.since > self.limit_s:
                raise rpc_error(exc, self.client.server) from None
            return None
        self.since = None
        return reply

    @property
    def away_s(self) -> float:
        return 0.0 if self.since is None else time.monotonic() - self.since

    @property
    def note(self) -> str:
        """"" while the referee answers, else "the referee does not answer (N s); retrying", for progress lines."""
        return f"the referee does not answer ({self.away_s:.0f} s); retrying" if self.since is not None else ""


def redact(url: str) -> str:
    """``url`` with every password in it replaced by *** (``user:password@`` and ``?password=``:
    ``arena.store.redis_urls.redact_url``, imported when asked: ``arena --help`` does not load the store)."""
    from arena.store.redis_urls import redact_url

    return redact_url(url)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))


@contextmanager
def stop_on_signals(second_interrupts: bool = False) -> Iterator[threading.Event]:
    """An event set by SIGTERM or SIGINT while the block runs; the previous handlers come back afterwards. With
    ``second_interrupts``, a second signal once the event is set raises ``KeyboardInterrupt`` where the main thread
    is (a process draining its matches told again: stop now), and later ones are ignored from then on, also after
    the block (the process is ending), so the clean-up that follows (stopping a private Redis, freeing a data
    folder) is not cut short in turn."""
    stop = threading.Event()
    previous: dict[signal.Signals, Any] = {}
    hurried = threading.Event()

    def handler(signum: int, frame: Any) -> None:
        if second_interrupts and stop.is_set():
            hurried.set()
            for sig in previous:
                signal.signal(sig, signal.SIG_IGN)
            raise KeyboardInterrupt
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)
    try:
        yield stop
    finally:
        for sig, old in previous.items() if not hurried.is_set() else ():
            signal.signal(sig, old)


def when(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s).strftime("%Y-%m-%d %H:%M:%S") if epoch_s else "-"


def ago(epoch_s: float, now: float | None = None) -> str:
    """``epoch_s`` as "12 s ago", "3 min ago", "2 h ago" (or the local date past a day); "-" for 0."""
    return text.ago(epoch_s, when, now)


def score_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def delta_text(points: float) -> str:
    """An Elo change as "+12.3" / "-4.0" / "±0.0" (never "-0.0")."""
    rounded = round(points, 1) + 0.0
    return "±0.0" if rounded == 0 else f"{rounded:+.1f}"


@click.group(cls=ArenaGroup, context_settings={"auto_envvar_prefix": "ARENA", "help_option_names": ["-h", "--help"],
                                                "max_content_width": 110})
@click.version_option(package_name="bot-arena", prog_name="arena")
@option("-v", "--verbose", is_flag=True, help="Log what the referee and workers do (INFO) on stderr.")
@option("--admin-token", envvar=auth.ADMIN_TOKEN_ENV, default=None, metavar="TOKEN",
        help="The arena's admin token, sent with organiser calls (tournament create/cancel, ladder --rebuild); env "
             "ARENA_ADMIN_TOKEN. Default: the one `arena serve` saved in $ARENA_DATA_DIR (default .arena)/"
             "admin-token.json, sent only to the arena it belongs to. An argument shows in `ps` to every user of the "
             "machine: prefer the env variable or the saved file.")
@option("--tls-ca", envvar="ARENA_TLS_CA", type=click.Path(dir_okay=False, exists=True, path_type=Path),
        default=None, metavar="FILE",
        help="Talk to the referee over TLS, trusting the CA certificates (PEM) in FILE (for `arena serve "
             "--tls-cert`); env ARENA_TLS_CA. Default: plaintext.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool, admin_token: str | None, tls_ca: Path | None) -> None:
    """Bot arena for multiplayer card games (Take 5!, Taki and any game a package registers).

    A typical session:

    \b
        arena serve                                   # referee + workers + private Redis in ./.arena
        python my_bot.py --port 50061                 # your bot, as its own process
        arena bot register mybot 127.0.0.1:50061      # prints mybot@VERSION and its owner token (saved)
        arena tournament create --all --wait          # round robin between every registered bot
        arena tournament standings t1                 # points, mean score, Elo performance
        arena match show t1-000000                    # one match, turn by turn
        arena ladder                                  # Elo ladder (--rebuild: recompute it from the results)
        arena play take5 --bot sample:random --bot sample:heuristic --bot 127.0.0.1:50061

    Organiser calls (tournament create/cancel, ladder --rebuild) need the arena's admin token: `arena serve` saves
    it in .arena/admin-token.json, where the CLI on the same machine finds it; elsewhere set ARENA_ADMIN_TOKEN.

    Every read takes --json. Every option can come from an environment variable: ARENA_SERVER, ARENA_REDIS_URL,
    ARENA_DATA_DIR, ARENA_TOKEN, ARENA_ADMIN_TOKEN, or else ARENA_COMMAND_OPTION: the command path and the option's
    long name, upper case, - as _ (e.g. ARENA_SERVE_WORKERS=4, ARENA_LADDER_JSON=1,
    ARENA_TOURNAMENT_CREATE_BOTS=a,b,c).
    """
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = AppContext(admin_token=admin_token or None, tls_ca=tls_ca.read_bytes() if tls_ca else None)
    ctx.obj = app
    ctx.call_on_close(app.close)
