"""A bot as its own process: ``serve(MyBot)``, the command line of a bot's ``__main__`` (``--host``, ``--port``,
``--name``, ``--max-workers``, ``--secret``, ``--tls-cert/--tls-key`` and the bot class's own options), around
``arena_sdk.server.create_server``."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping
from concurrent import futures
from typing import Any

from .bot import Bot, BotDefinitionError
from .definition import decision_method_warnings
from .guard import MAKE_SECRET, secret_problem
from .server import DEFAULT_HOST, DEFAULT_MAX_WORKERS, ServeError, create_server

log = logging.getLogger("arena_sdk")

DEFAULT_PORT = 50100  # `python my_bot.py` without --port; `--port 0` picks a free port
STOP_GRACE_S = 1.0  # seconds in-flight calls get to finish on SIGTERM/SIGINT
SECRET_ENV = "ARENA_BOT_SECRET"  # serve(): the bot secret when --secret is not given
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})  # no warning for a bot without a secret
PARENT_ENV = "ARENA_PARENT_PID"  # serve(): stop once this process is no longer the parent (it died, even by SIGKILL)
TLS_CERT_ENV = "ARENA_BOT_TLS_CERT"  # serve(): the certificate chain (PEM file) when --tls-cert is not given
TLS_KEY_ENV = "ARENA_BOT_TLS_KEY"  # serve(): its private key (PEM file) when --tls-key is not given


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def _port(text: str) -> int:
    """argparse type of ``--port``: an integer 0..65535 (0 = any free port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"the port must be 0..65535, got {port}")
    return port


def _tls_files(cert: str | None, key: str | None) -> tuple[bytes, bytes] | None:
    """(certificate chain, key) PEM bytes of the ``--tls-cert/--tls-key`` files, None when neither is given.
    Raises ``ServeError`` when only one is given or a file cannot be read."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ServeError("--tls-cert and --tls-key go together: give both (PEM files) or neither")
    try:
        with open(cert, "rb") as c, open(key, "rb") as k:
            return c.read(), k.read()
    except OSError as exc:
        raise ServeError(f"cannot read the TLS file {exc.filename}: {exc.strerror}") from None


def bot_secret(given: str | None, environ: Mapping[str, str]) -> str | None:
    """The bot secret of ``serve``: ``given`` (``--secret``) when not None, else env ``ARENA_BOT_SECRET`` when set,
    else None (no secret). Raises ``ServeError`` when the one that counts is no bot secret (``guard.secret_problem``:
    empty or only whitespace, a ``$(cat FILE)`` that failed; not 16..256 characters; a space or a character call
    metadata cannot carry): a bot meant to have a secret never starts without one, or with one the arena would
    refuse to register."""
    source, secret = ("--secret", given) if given is not None else (SECRET_ENV, environ.get(SECRET_ENV))
    if secret is None:
        return None
    problem = secret_problem(secret)
    if problem == "is empty":
        unset = f", or unset {SECRET_ENV} to serve without one" if given is None else ""
        raise ServeError(f"{source} is set but empty: did `$(cat FILE)` fail? Make the secret first, e.g. "
                         f"{MAKE_SECRET}{unset}")
    if problem is not None:
        raise ServeError(f"{source} {problem}; e.g. {MAKE_SECRET}")
    return secret


def _exit_past_stuck_calls(pool: futures.ThreadPoolExecutor, name: str) -> None:
    """After the server stopped: the pool's threads are told to end, and a thread still running a bot's method
    ``STOP_GRACE_S`` later (a ``choose_card`` that never returns) does not keep the process alive: it exits 0 at
    once (``os._exit``, after flushing stdout and stderr), as a stop promises."""
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + STOP_GRACE_S
    serving = [t for t in threading.enumerate() if t.name.startswith(f"bot-{name}_")]  # the pool's threads
    for thread in serving:
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in serving):
        log.warning("%s: a call still runs %.1f s after the stop (a decision method that does not return): exiting "
                    "without waiting for it", name, STOP_GRACE_S)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def serve(bot_cls: type[Bot], argv: list[str] | None = None) -> None:
    """Run ``bot_cls`` as a bot process until SIGTERM or SIGINT, then stop cleanly (the process exits 0).

    Command line (``argv``, default ``sys.argv[1:]``): ``--host H`` (default 127.0.0.1), ``--port N`` (default
    50100; 0 picks a free port), ``--name NAME`` (the name reported in ``GetInfo``, default the class's ``name``;
    to run two instances side by side), ``--max-workers N`` (threads serving calls, default
    ``DEFAULT_MAX_WORKERS``), ``--secret S`` (default: env ``ARENA_BOT_SECRET``; then only calls carrying S, i.e.
    the arena's referee once the bot is registered with ``--bot-secret S``, may start matches and ask decisions;
    see ``create_server``; a bot serving another host than loopback without one warns on stderr), plus the
    options of ``bot_cls.add_arguments``, and ``--tls-cert FILE --tls-key FILE`` (PEM; default: env
    ``ARENA_BOT_TLS_CERT`` / ``ARENA_BOT_TLS_KEY``) to serve TLS. Once the server is ready it prints exactly one
    line to stdout (flushed): ``arena-bot <name> listening on <host>:<port>`` (``tls://<host>:<port>`` over TLS:
    the endpoint to register). Exits with status 2 and a one-line message on stderr when the address cannot be
    bound, the class cannot be served, or the TLS files cannot be read or used. With env ``ARENA_PARENT_PID`` set
    (the arena sets it for the bots it starts itself: house bots, ``arena play``'s sample bots) the bot also stops
    once that process is no longer its parent, so a worker killed with SIGKILL leaves no bot behind.
    """
    parser = argparse.ArgumentParser(
        prog=f"{bot_cls.__module__}" if bot_cls.__module__ != "__main__" else None,
        description=f"Serve the {getattr(bot_cls, 'name', '?')!s} bot (arena.v1.Bot over gRPC).",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=_port, default=DEFAULT_PORT,
        help="port to listen on, 0..65535; 0 picks a free port (default %(default)s)",
    )
    parser.add_argument("--name", default=None, help="bot name reported to the arena (default: the class's name)")
    parser.add_argument(
        "--max-workers", type=int, default=DEFAULT_MAX_WORKERS,
        help="threads serving calls (default %(default)s); one client address is served with at most half of them at "
             "once by calls without the --secret (a stranger holding calls cannot take them all)"
    )
    parser.add_argument(
        "--secret", default=None, metavar="S",
        help=f"answer StartMatch/Decide/EndMatch only to calls carrying S (the arena sends the secret given at "
             f"registration); default: env {SECRET_ENV} (preferred: an argument shows in `ps`)",
    )
    parser.add_argument("--tls-cert", default=None, metavar="FILE",
                        help=f"serve TLS with this certificate chain (PEM; with --tls-key); default: env "
                             f"{TLS_CERT_ENV}")
    parser.add_argument("--tls-key", default=None, metavar="FILE",
                        help=f"the private key (PEM) of --tls-cert; default: env {TLS_KEY_ENV}")
    if isinstance(bot_cls, type) and issubclass(bot_cls, Bot):
        bot_cls.add_arguments(parser)
    args = parser.parse_args(argv)
    options = {k: v for k, v in vars(args).items()
               if k not in ("host", "port", "name", "max_workers", "secret", "tls_cert", "tls_key")}
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s"
        )

    try:
        secret = bot_secret(args.secret, os.environ)
        tls = _tls_files(args.tls_cert or os.environ.get(TLS_CERT_ENV) or None,
                         args.tls_key or os.environ.get(TLS_KEY_ENV) or None)
        server, port = create_server(
            bot_cls, _address(args.host, args.port), options=options, max_workers=args.max_workers, name=args.name,
            secret=secret, tls=tls,
        )
    except (BotDefinitionError, ServeError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None

    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.start()
        name = server.servicer.name  # type: ignore[attr-defined]
        guard = "bot secret on" if secret else "no bot secret: anyone who reaches this port can play it"
        for warning in decision_method_warnings(bot_cls):  # before the ready line: a launcher reading it has these
            print(f"warning: {warning}", file=sys.stderr, flush=True)
        print(f"arena-bot {name} listening on {'tls://' if tls else ''}{args.host}:{port} ({guard})", flush=True)
        if secret is None and args.host not in LOOPBACK_HOSTS:
            print(f"warning: {name} serves {args.host}:{port} without a secret: anyone who reaches it can start "
                  f"matches with it and hold its threads; give --secret S (env {SECRET_ENV}) and register it with "
                  f"--bot-secret S", file=sys.stderr, flush=True)
        # Poll: a signal may be delivered to one of gRPC's threads, which does not wake a blocked main thread;
        # the Python-level handler then runs in the main thread as soon as it returns from a timed wait.
        parent = os.environ.get(PARENT_ENV, "")
        while not stop.wait(0.2):
            if parent.isdigit() and os.getppid() != int(parent):  # the process that started us is gone
                log.info("the process that started this bot (%s) is gone: stopping", parent)
                break
        log.info("stopping %s (grace %.1f s)", name, STOP_GRACE_S)
        server.stop(STOP_GRACE_S).wait()
        _exit_past_stuck_calls(server.pool, name)  # type: ignore[attr-defined]
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
