"""``arena web``: the read-only web pages (ladders, bots, tournaments, matches) of a referee, as one more client of
its Arena gRPC service. ``arena serve --web HOST:PORT`` serves the same pages beside the referee."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from arena.cli.app import AppContext, cli, stop_on_signals
from arena.cli.errors import ArenaCliError
from arena.cli.options import EndpointType, F, check_proxies, option, server_option
from arena.core import limits
from arena.core.config import DEFAULTS

# Every option of `arena web`, in one place (other options of the command are added to this list).
WEB_OPTIONS: list[Callable[[Any], Any]] = [
    option("--listen", type=EndpointType(allow_port_zero=True), default=DEFAULTS.web_listen, show_default=True,
           help="Address to serve the pages on (port 0: a free port, printed). Loopback by default."),
    server_option,
    option("--record", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None, metavar="FILE",
           help="Also show this match record (saved by `arena play --record`) with all hands, at /record."),
    option("--docs", type=click.Path(file_okay=False, path_type=Path), default=None, metavar="FOLDER",
           help="The built documentation site to serve under /docs (default: the site/ folder `make docs` builds "
                "in this checkout; without one, /docs says how to build it)."),
    option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
           help="A host name the pages answer to (the browser's Host header), e.g. the name of a proxy in front; "
                "repeat for several. Default: on a loopback --listen only localhost, 127.0.0.1 and ::1 (other "
                "names get 400, which stops DNS rebinding); on any other address every name."),
    option("--client-at-once", type=click.IntRange(0, 100_000), default=limits.WEB_CLIENT_AT_ONCE,
           show_default=True, metavar="N",
           help="Requests of one client address (an IPv6 /64) answered at once; more get 429. 0: no limit."),
    option("--client-pages-at-once", type=click.IntRange(0, 100_000), default=limits.WEB_CLIENT_PAGES_AT_ONCE,
           show_default=True, metavar="N",
           help="Of those, pages and /api/ answers (not static files) of one client address made at once; more get "
                "429. 0: no such limit."),
    option("--client-rate", default=limits.WEB_CLIENT_RATE, show_default=True, metavar="RATE",
           help="Requests of one client address per time window, e.g. '100/second;3000/minute' (every limit "
                "must have room); beyond it 429 with Retry-After. 'none': no limit. Behind a proxy given by "
                "--trust-proxy, the client is the address the proxy forwards (X-Forwarded-For)."),
    option("--trust-proxy", "trusted_proxies", multiple=True, metavar="ADDRESS", callback=check_proxies,
           help="The address of a reverse proxy in front (repeatable; an IP address or network, e.g. 10.0.0.0/8): "
                "requests from it are counted against the client it names in X-Forwarded-For. Default: none, every "
                "request is its peer's (a header any local process can write is trusted from nobody)."),
    option("--client-connections", type=click.IntRange(1, 100_000), default=limits.WEB_CONNECTIONS_PER_CLIENT,
           show_default=True, metavar="N",
           help="Open connections of one peer address (more are reset at once; a connection silent for "
                f"{limits.WEB_FIRST_REQUEST_S:.0f} s is closed). Behind a proxy, leave room for its connection pool."),
]


def web_options(f: F) -> F:
    """Apply every option of ``WEB_OPTIONS`` to the command ``f``."""
    for decorate in reversed(WEB_OPTIONS):
        f = decorate(f)
    return f


def start_web(app: AppContext, listen: str, server: str, record: Path | None = None, docs: Path | None = None,
              allowed_hosts: tuple[str, ...] = (), client_at_once: int = limits.WEB_CLIENT_AT_ONCE,
              client_rate: str = limits.WEB_CLIENT_RATE,
              client_connections: int = limits.WEB_CONNECTIONS_PER_CLIENT,
              client_pages_at_once: int = limits.WEB_CLIENT_PAGES_AT_ONCE,
              trusted_proxies: tuple[str, ...] = (), web_key: str = "") -> Any:
    """Start the pages of the referee at ``server`` on ``listen`` in a thread; answers the running
    ``arena.web.serving.WebServer`` (``url()``, ``stop()``). ``docs``: the built documentation site for ``/docs``
    (None: the checkout's ``site/``); ``allowed_hosts``: host names answered besides the defaults
    (``arena.web.app.default_allowed_hosts``); ``client_at_once`` and ``client_rate``: each client address's share
    (``arena.web.client_limits.ClientLimits``; 0 and "none": no limit), ``client_pages_at_once`` the pages among
    them; ``client_connections``: open connections
    of one peer address (``arena.web.connections``); ``trusted_proxies``: addresses whose X-Forwarded-For names the
    client (none: every request is its peer's); ``web_key``: the referee's web key, sent with every read so that the
    pages have a share of the referee of their own (``arena.server.shares``). Raises ``ArenaCliError`` when ``listen``
    cannot be bound or ``client_rate`` is not a rate."""
    from arena.web.app import WebOptions, default_allowed_hosts
    from arena.web.client_limits import ClientLimits
    from arena.web.connections import ConnectionLimits
    from arena.web.docs import DEFAULT_DOCS_DIR
    from arena.web.serving import WebServer

    rate = "" if client_rate.strip().lower() in ("", "none", "0") else client_rate.strip()
    try:
        shares = ClientLimits(at_once=client_at_once, rate=rate, pages_at_once=client_pages_at_once)
    except ValueError as exc:
        raise ArenaCliError(f"--client-rate {client_rate!r} is not a rate such as '100/second;3000/minute' "
                            f"({exc})") from None
    options = WebOptions(server=server, tls_ca=app.tls_ca, record=record, docs=docs or DEFAULT_DOCS_DIR,
                         allowed_hosts=default_allowed_hosts(listen, allowed_hosts), client_limits=shares,
                         web_key=web_key)
    web = WebServer(options, listen, connections=ConnectionLimits(per_client=client_connections),
                    trusted_proxies=trusted_proxies)
    try:
        web.start()
    except (OSError, RuntimeError) as exc:
        from arena_sdk.listen import bind_problem

        problem = bind_problem(listen)
        advice = "; choose another HOST:PORT (port 0 picks a free one)" if problem and "in use" in problem else ""
        raise ArenaCliError(f"cannot serve the web pages on {listen}: {problem or exc}{advice}") from None
    return web


@cli.command(short_help="Serve the web pages of a referee (ladders, bots, tournaments, matches).")
@web_options
@click.pass_obj
def web(app: AppContext, /, listen: str, server: str, **extra: Any) -> None:
    """Serve read-only web pages of the referee at --server until SIGTERM or Ctrl-C: the ladder of each game, the
    bots, the tournaments with their live progress, and the matches. JSON mirrors of every page are under /api/;
    the documentation site (built by `make docs`) is under /docs.

    The pages read only what the Arena service's public reads answer, so they show no secret (no token, no hand
    of a running match, no seed before its tournament has ended). While the referee does not answer, pages say so
    (503) and reload by themselves. Each client address has a share of the pages (--client-at-once,
    --client-rate): beyond it, 429 and a page that reloads after the wait.

    Example:

    \b
        arena web --listen 127.0.0.1:8080 --server localhost:50051
    """
    running = start_web(app, listen, server, record=extra.get("record"), docs=extra.get("docs"),
                        allowed_hosts=tuple(extra.get("allowed_hosts") or ()),
                        client_at_once=extra.get("client_at_once", limits.WEB_CLIENT_AT_ONCE),
                        client_rate=extra.get("client_rate", limits.WEB_CLIENT_RATE),
                        client_connections=extra.get("client_connections", limits.WEB_CONNECTIONS_PER_CLIENT),
                        client_pages_at_once=extra.get("client_pages_at_once", limits.WEB_CLIENT_PAGES_AT_ONCE),
                        trusted_proxies=tuple(extra.get("trusted_proxies") or ()),
                        web_key=os.environ.get(limits.WEB_KEY_ENV, ""))
    try:
        with stop_on_signals() as stop:
            click.echo(f"arena web serving {running.url()} (pages of the referee at {server}); stop with Ctrl-C")
            if extra.get("record") is not None:
                click.echo(f"the record {extra['record']}: {running.url().rstrip('/')}/record")
            sys.stdout.flush()
            while not stop.wait(0.5):
                pass
            click.echo("arena web stopping")
    finally:
        running.stop()
