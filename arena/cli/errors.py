"""Errors of the ``arena`` CLI and the root group that turns every failure into one line on stderr and an exit
code (1 failed operation, 2 bad command line, 130 Ctrl-C, 143 SIGTERM)."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import click
import grpc

from arena.core.text import printable

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
# click >= 8.2 raises NoArgsIsHelpError (a UsageError whose message is the whole help) for a group called without
# a subcommand; older click prints the help itself.
_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(click.exceptions, "NoArgsIsHelpError",
                                                   type("_Never", (click.UsageError,), {}))


class ArenaCliError(click.ClickException):
    """A failed operation: printed as one line ``Error: <message>``, exit code 1."""

    def __init__(self, message: str) -> None:
        # one line, whatever the source message looked like, and no terminal escape of a server's or a bot's text
        super().__init__(printable(" ".join(message.split())))


class ArenaInterrupted(ArenaCliError):
    """Ctrl-C (or SIGTERM) stopped the command: not a failure, so its one line on stderr says what happened and
    what was left (e.g. "stopped watching; tournament t3 keeps running"), without "Error:". Exit code 130 (143
    after SIGTERM)."""

    exit_code = EXIT_INTERRUPTED

    def show(self, file: Any = None) -> None:
        click.echo(self.format_message(), err=True)


class ArenaTerminated(ArenaInterrupted):
    """``ArenaInterrupted`` by SIGTERM: exit code 143."""

    exit_code = EXIT_TERMINATED


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


@contextmanager
def held_interrupts(note: str) -> Iterator[list[KeyboardInterrupt]]:
    """While the block runs, the first Ctrl-C (SIGINT) or SIGTERM is held, not raised: ``note`` is said on stderr
    (why the command finishes first) and a ``KeyboardInterrupt`` (``Terminated`` for SIGTERM) is appended to the
    list the block gets, so that it can end with ``interruption`` once its work is safe; a second signal raises at
    once. For a call whose answer must not be lost (a new owner's token exists only in it). Does nothing outside
    the main thread. The previous handlers come back afterwards."""
    held: list[KeyboardInterrupt] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def handler(signum: int, frame: Any) -> None:
        exc = Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
        if held:
            raise exc
        held.append(exc)
        click.echo(f"\n{note} (press Ctrl-C again to stop now)", err=True)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield held
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def rpc_error(exc: grpc.RpcError, server: str, hints: Mapping[grpc.StatusCode, str] | None = None) -> ArenaCliError:
    """The one-line CLI error for a failed call to the arena server at ``server``.

    UNAVAILABLE (unless the server itself answered it because its Redis is down: then its message) and
    UNIMPLEMENTED say what is really at ``server`` (``not_an_arena``): nothing listening, a Redis server, a bot,
    something else, or an arena referee older than this CLI. DEADLINE_EXCEEDED says the server did not answer in
    time; every other status code gives the server's details (its message is written for people, see
    arena.proto) followed by the code name. ``hints`` adds a sentence for some codes (e.g. where to find an owner
    token after PERMISSION_DENIED).
    """
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    details = exc.details() if callable(getattr(exc, "details", None)) else None
    if code == grpc.StatusCode.UNAVAILABLE and "CERTIFICATE_VERIFY_FAILED" in (details or ""):
        return ArenaCliError(f"the certificate of the server at {server} does not verify against the CA given with "
                             f"--tls-ca (or ARENA_TLS_CA) ({_first(details)}): give the CA that signed it")
    if code == grpc.StatusCode.UNAVAILABLE and any(w in (details or "") for w in _TLS_FAILURES):
        return ArenaCliError(f"no TLS with the server at {server} ({_first(details)}): a plaintext arena needs no "
                             f"--tls-ca (nor ARENA_TLS_CA); a TLS one, the CA that signed its certificate")
    if code == grpc.StatusCode.UNAVAILABLE and "Redis" not in (details or ""):  # else the server answered
        return ArenaCliError(not_an_arena(server) or f"the server at {server} did not answer as an arena referee "
                             f"({details or 'UNAVAILABLE'}); is it the address `arena serve` printed?")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ArenaCliError(f"the arena server at {server} did not answer in time")
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return ArenaCliError(not_an_arena(server) or (
            f"the arena server at {server} does not offer this call ({details or 'UNIMPLEMENTED'}): it is an "
            "older version than this CLI"))
    name = code.name if code is not None else "UNKNOWN"
    hint = (hints or {}).get(code) if code is not None else None
    return ArenaCliError(f"{details or 'the arena server failed'} ({name})" + (f"; {hint}" if hint else ""))


WHERE_THE_REFEREE_IS = ("--server takes the address of `arena serve` (it prints \"arena serve listening on "
                        "HOST:PORT\"; default localhost:50051)")
PROBE_TIMEOUT_S = 1.0


_TLS_FAILURES = ("handshake failed", "WRONG_VERSION_NUMBER", "CERTIFICATE_VERIFY_FAILED", "SSL_ERROR")


def _first(details: str | None) -> str:
    """The first sentence of a gRPC failure's details, cut to 160 characters."""
    text = (details or "").split("\n")[0].strip()
    return text if len(text) <= 160 else text[:159] + "…"


def _serves_tls(host: str, port: int, timeout_s: float) -> bool:
    """Whether the server at ``host``:``port`` completes a TLS handshake (its certificate not checked: only to say
    what it speaks)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as raw, \
                context.wrap_socket(raw, server_hostname=host or None):
            return True
    except (OSError, ValueError):
        return False


def not_an_arena(server: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """What is at ``server`` when it is not an arena referee, as the CLI's one-line error: nothing listening
    (connection refused or no answer), a Redis server (it answers PING), a bot (it answers arena.v1.Bot GetInfo),
    or something that is not gRPC. ``None`` when it answers gRPC but not as a bot: an arena referee, perhaps
    older than this CLI. Probes with a plain TCP connection and one GetInfo call, each within ``timeout_s``."""
    host, _, port = server.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s) as sock:
            sock.settimeout(timeout_s)
            sock.sendall(b"PING\r\n")
            try:
                reply = sock.recv(64)
            except OSError:
                reply = b""
    except (OSError, ValueError):
        return f"cannot reach the arena server at {server}: nothing answers there; is `arena serve` running?"
    if reply[:1] in (b"+", b"-") and (b"PONG" in reply or b"ERR" in reply or b"NOAUTH" in reply):
        return (f"{server} is a Redis server, not an arena referee: {WHERE_THE_REFEREE_IS}; a Redis URL goes to "
                "--redis-url or ARENA_REDIS_URL")
    from arena_sdk.pb import bot_pb2, bot_pb2_grpc

    with grpc.insecure_channel(server) as channel:
        try:
            info = bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=timeout_s)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED and reply == b"":
                return (f"something listens at {server} but answers nothing (the call gave up, and one more "
                        f"probe got no answer in {timeout_s:g} s): an arena referee that is stopped or overloaded, "
                        f"or no gRPC server; {WHERE_THE_REFEREE_IS}")
            if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                if not _listens(host.strip("[]"), int(port), timeout_s):  # it went meanwhile (a referee killed)
                    return (f"cannot reach the arena server at {server}: nothing answers there any more (it "
                            f"stopped while it was asked?); is `arena serve` running?")
                if _serves_tls(host.strip("[]"), int(port), timeout_s):
                    return (f"the server at {server} speaks TLS: give the CLI the CA that signed its certificate "
                            f"with --tls-ca FILE (or ARENA_TLS_CA)")
                return (f"something listens at {server}, but it is not an arena referee (it does not answer "
                        f"gRPC); {WHERE_THE_REFEREE_IS}")
            return None  # a gRPC server that is no bot: a referee
    return (f"{server} is a bot ({info.name or 'no name'} {info.version}), not an arena referee: "
            f"{WHERE_THE_REFEREE_IS}")


def _listens(host: str, port: int, timeout_s: float) -> bool:
    """Whether a TCP connection to ``host:port`` is accepted within ``timeout_s``."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


class ArenaGroup(click.Group):
    """The root group: turns every failure into one line on stderr and an exit code.

    Usage errors print ``Error: <what is wrong> (see `arena ... --help`)`` with exit code 2 instead of click's
    usage block; a group called without a subcommand (``arena``, ``arena bot``) prints its help as click does
    (stderr, exit code 2); ``ClickException``s print their message; Ctrl-C exits 130, SIGTERM 143 (both after the
    same clean-up); an unexpected exception prints its type and message (``ARENA_DEBUG=1`` re-raises it for the
    traceback).
    """

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
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
            click.echo(f"Error: {printable(' '.join(exc.format_message().split()))}{where}", err=True)
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
            message = printable(" ".join(str(exc).split())) or "(no message)"
            click.echo(f"Error: unexpected {type(exc).__name__}: {message} (ARENA_DEBUG=1 shows the traceback)",
                       err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def interruption(message: str, exc: BaseException) -> ArenaInterrupted:
    """The one-line error of a command stopped by ``exc``: ``ArenaTerminated`` (exit 143) for SIGTERM
    (``Terminated``), else ``ArenaInterrupted`` (Ctrl-C, exit 130), saying ``message``."""
    return ArenaTerminated(message) if isinstance(exc, Terminated) else ArenaInterrupted(message)


def interrupted_creating(what: str, exc: KeyboardInterrupt) -> ArenaInterrupted:
    """The error of a Ctrl-C (or SIGTERM: ``ArenaTerminated``) while a create call was under way: the arena may
    have created the ``what`` ("tournament", "SPRT") all the same, and the message says how to find and stop it."""
    message = (f"interrupted while the arena was creating the {what}: it may have been created all the same; "
               f"`arena tournament list` shows it, `arena tournament cancel ID` stops it")
    return interruption(message, exc)
