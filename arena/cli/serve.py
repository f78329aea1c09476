"""``arena serve``: the referee (Arena gRPC service, embedded workers, private Redis)."""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena.cli.app import AppContext, cli, redact, stop_on_signals
from arena.cli.errors import ArenaCliError
from arena.cli.options import (
    EndpointType,
    bot_ca_option,
    bot_health_options,
    check_proxies,
    data_dir_option,
    metrics_option,
    option,
    read_bot_ca,
    redis_url_option,
    visibility_timeout_option,
)
from arena.core.config import DEFAULTS
from arena.core.limits import MAX_CONCURRENCY, MAX_WORKERS, WEB_KEY_ENV

if TYPE_CHECKING:
    from arena.store.redis_watch import RedisWatch
    from arena.worker.metrics import MetricsExport


@cli.command(short_help="Run the referee (Arena gRPC service + workers).")
@option("--listen", type=EndpointType(allow_port_zero=True), default=DEFAULTS.listen, show_default=True,
        help="Address to serve the Arena gRPC service on (port 0: a free port, printed).")
@option("--workers", type=click.IntRange(0, MAX_WORKERS), default=DEFAULTS.workers, show_default=True,
        help="Workers embedded in this process (0: only separate `arena worker`s run matches).")
@option("--concurrency", type=click.IntRange(1, MAX_CONCURRENCY), default=DEFAULTS.concurrency, show_default=True,
        help="Matches each worker runs at once (all embedded workers share one process: docs/scale.md).")
@visibility_timeout_option
@bot_health_options
@data_dir_option
@redis_url_option
@option("--redis-port", type=click.IntRange(0, 65535), default=0, show_default=True, metavar="PORT",
        help="The port of the private redis-server on 127.0.0.1 (0: the port of the folder's last run when free, else "
             "a free one). Not with --redis-url.")
@option("--tls-cert", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None, metavar="FILE",
        help="Serve over TLS with this certificate chain (PEM); needs --tls-key. Clients: arena --tls-ca FILE.")
@option("--tls-key", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None, metavar="FILE",
        help="The private key (PEM) of --tls-cert.")
@bot_ca_option
@metrics_option
@option("--web", type=EndpointType(allow_port_zero=True), default=None, metavar="HOST:PORT",
        help="Also serve the read-only web pages (as `arena web`) on this address, e.g. 127.0.0.1:8080.")
@option("--web-allowed-host", "web_allowed_hosts", multiple=True, metavar="NAME",
        help="With --web: a host name the pages answer to besides the defaults, e.g. the name of a proxy in front "
             "(repeatable; `arena web --allowed-host`).")
@option("--web-trust-proxy", "web_trusted_proxies", multiple=True, metavar="ADDRESS", callback=check_proxies,
        help="With --web: the address (or network) of a reverse proxy in front, whose X-Forwarded-For names the "
             "client (repeatable; `arena web --trust-proxy`).")
@option("--bot-notes", type=click.Choice(["owner", "public", "hidden"]), default="owner", show_default=True,
        help="Who sees the notes bots attach to their answers, once a match's record is shown: each bot's owner "
             "(`arena match show ID --token T`), everyone (also in the web match viewer), or nobody (kept in the "
             "stored records only).")
@click.pass_obj
def serve(app: AppContext, listen: str, workers: int, concurrency: int, visibility_timeout: float,
          data_dir: Path, redis_url: str | None, tls_cert: Path | None, tls_key: Path | None,
          bot_ca: Path | None, metrics: str | None, web: str | None, bot_notes: str = "owner",
          redis_port: int = 0, max_deferral: float = DEFAULTS.max_deferral_s,
          unhealthy_after: int = DEFAULTS.unhealthy_after, bot_recheck: float = DEFAULTS.bot_recheck_s,
          web_allowed_hosts: tuple[str, ...] = (), web_trusted_proxies: tuple[str, ...] = ()) -> None:
    """Run the referee: the Arena gRPC service plus embedded workers, until SIGTERM or Ctrl-C.

    Redis: --redis-url / ARENA_REDIS_URL when set; else the private redis-server of --data-dir, started here
    (appendonly, so the ladder survives restarts) or taken over from an arena serve of the folder that was killed,
    restarted on the same port should its process die (serve stops with an error when 5 restarts within a minute did
    not keep it running), and stopped on exit.

    Admin token (organiser calls: tournament create/cancel, ladder --rebuild): ARENA_ADMIN_TOKEN when set (at least
    16 characters), else the one an earlier run saved in --data-dir, else a new random one. It is saved in
    admin-token.json of --data-dir (mode 0600) with the arena's id, where the CLI on this machine finds it; it is never
    printed. The default --listen address is loopback only.

    --web HOST:PORT serves the web pages (ladders, bots, tournaments, matches) beside the referee, as a client of
    it like `arena web` (behind a proxy: --web-allowed-host and --web-trust-proxy; `arena web` has every option).

    Bots registered at tls://HOST:PORT are called over TLS, their certificates verified against --bot-ca (env
    ARENA_BOT_CA), else the system's roots; give `arena worker` the same.

    --metrics PORT (or HOST:PORT) exports Prometheus metrics at http://127.0.0.1:PORT/metrics: the Arena RPCs, the
    embedded workers' matches, the queue (docs/metrics.md).

    Example:

    \b
        arena serve --listen 0.0.0.0:50051 --workers 2 --concurrency 4
    """
    from arena.core.folder_lock import SERVE_LISTENING, SERVE_STOPPING, FolderInUse, FolderLock

    # the data folder first, before the server's imports: a CLI command started at the same moment (`arena serve &`
    # and the next command) sees it held and waits for the referee (arena.cli.app: _serve_holds)
    if (web_allowed_hosts or web_trusted_proxies) and web is None:
        raise ArenaCliError("--web-allowed-host and --web-trust-proxy are options of the pages of --web HOST:PORT")
    if redis_port and (redis_url or os.environ.get("ARENA_REDIS_URL")):
        raise ArenaCliError("--redis-port sets the port of the private redis-server; with --redis-url (or "
                            "ARENA_REDIS_URL) the Redis is yours, on its own port")
    lock = FolderLock(data_dir)
    try:
        lock.acquire(f"arena serve --listen {listen}")
    except FolderInUse as exc:
        raise ArenaCliError(str(exc)) from None
    except OSError as exc:
        raise ArenaCliError(f"cannot use --data-dir {data_dir}: {exc}") from None
    try:
        admin_token, token_source, tls, bot_ca_pem = _credentials(app, data_dir, tls_cert, tls_key, bot_ca)
    except BaseException:
        lock.release()
        raise
    from arena.server import auth
    from arena.server.app import ArenaServer
    watch = None  # of the private server started here or taken over: restarted should it die, stopped at the end
    server = None
    exported = None
    pages = None
    hurried: list[bool] = []  # told to stop a second time: stop now
    with stop_on_signals(second_interrupts=True) as stop:
        try:
            url, source, watch = _redis(data_dir, redis_url, stop, redis_port, lock.lost)
            check_redis(url)
            server = ArenaServer(listen, url, workers=workers, concurrency=concurrency,
                                 visibility_timeout_s=visibility_timeout, admin_token=admin_token, tls=tls,
                                 bot_ca=bot_ca_pem, bot_notes=bot_notes, max_deferral_s=max_deferral,
                                 unhealthy_after=unhealthy_after, bot_recheck_s=bot_recheck,
                                 web_key=os.environ.get(WEB_KEY_ENV) or None)
            port = server.start()
            try:
                token_file = auth.save_token(data_dir, auth.SavedToken(admin_token, server.arena_id()))
            except auth.AdminTokenError as exc:
                raise ArenaCliError(f"{exc}; set ARENA_ADMIN_TOKEN for `arena serve` and the CLI instead") from None
            host = listen.rpartition(":")[0]
            pages = start_pages(app, web, host, port, server.web_key, allowed_hosts=web_allowed_hosts,
                                trusted_proxies=web_trusted_proxies)  # before "listening on": scripts wait
            lock.update(f"{SERVE_LISTENING}{host}:{port}")
            click.echo(f"arena serve listening on {host}:{port}" + (" (TLS)" if tls else ""))
            origin = {"env": f"from ARENA_ADMIN_TOKEN, saved in {token_file}",
                      "saved": f"the one an earlier run saved in {token_file}"}.get(token_source,
                                                                                 f"a new one, saved in {token_file}")
            click.echo(f"admin token: {origin} (mode 0600), where the CLI on this machine finds it (elsewhere: "
                       "ARENA_ADMIN_TOKEN)")
            click.echo(f"redis: {redact(url)} ({source})")
            if source == "external" and (kept := keeps_nothing(url)):
                click.echo(f"warning: the Redis at {redact(url)} {kept}: a restart of it loses every bot, tournament "
                           f"and result; turn on appendonly (docs/operators/redis.md)", err=True)
            if metrics is not None:
                exported = start_metrics(metrics, url)
                click.echo(f"metrics: {exported.url} (Prometheus)")
            click.echo(f"workers: {workers} embedded, {concurrency} matches each, jobs of a dead worker reclaimed "
                       f"after {visibility_timeout:g} s; stop with Ctrl-C or SIGTERM" if workers else
                       "workers: none embedded (only separate `arena worker`s run matches, each with its own "
                       "--visibility-timeout); stop with Ctrl-C or SIGTERM")
            sys.stdout.flush()
            while not stop.wait(0.5):
                pass
            lock.update(SERVE_STOPPING)  # a CLI command meanwhile says so, not "nothing answers there"
            _say_stopping(watch, server.drain_s if server is not None and workers else None)
        except KeyboardInterrupt:  # told twice before the clean-up began: it stops now
            if not stop.is_set():
                raise
            hurried.append(True)
        except redis_errors() as exc:
            raise ArenaCliError(f"cannot use Redis: {exc}") from None
        except RuntimeError as exc:  # e.g. the port is taken, redis-server would not start
            raise ArenaCliError(_first_line(str(exc), data_dir / "redis.log")) from None
        finally:
            # each step runs whatever happens to the one before; a second Ctrl-C (KeyboardInterrupt) cuts the
            # step under way short (the embedded workers' drain: their matches are left pending) and the rest
            # runs without waiting for the workers, later signals ignored (stop_on_signals)
            steps = [pages.stop if pages is not None else None, exported.close if exported is not None else None,
                     (lambda: server.stop(join_workers=not hurried)) if server is not None else None,
                     watch.close if watch is not None else None,  # the watch first: the Redis is not restarted
                     lock.release]
            _close(steps, hurried)


def _close(steps: list[Callable[[], object] | None], hurried: list[bool]) -> None:
    """Run each of ``steps`` (None: nothing to do) whatever happens to the one before; a ``KeyboardInterrupt`` (a
    second Ctrl-C) cuts the step under way short and is noted in ``hurried`` (a later step may read it). Says so
    when the serve stopped now; raises the first other exception of a step once every step has run."""
    failed: Exception | None = None
    for step in steps:
        try:
            if step is not None:
                step()
        except KeyboardInterrupt:
            hurried.append(True)
        except Exception as exc:  # noqa: BLE001 - raised once the steps after it (the lock's release) have run
            failed = failed or exc
    if hurried:
        click.echo("arena serve stopped now: the matches its workers were playing are left pending, and played "
                   "again by the next worker after the visibility timeout")
    if failed is not None:
        raise failed


def _redis(data_dir: Path, redis_url: str | None, stop: threading.Event, port: int = 0,
           folder_lost: Callable[[], str | None] | None = None) -> tuple[str, str, RedisWatch | None]:
    """The Redis of ``arena serve``: its URL, where it comes from (printed), and the ``RedisWatch`` (started) of the
    private server of ``data_dir`` when this serve started it (on ``port``; 0: the last run's when free, else a free
    one) or took it over (on its own port), else None. Should that server keep dying, or the folder stop being this
    serve's (``folder_lost``: the folder lock's ``lost``), the watch gives up and sets ``stop``: the serve stops
    with its message (``_say_stopping``)."""
    from arena.store.redis_server import PrivateRedis, resolve_redis_url, take_over_orphan
    from arena.store.redis_watch import RedisWatch

    url = redis_url or resolve_redis_url(data_dir)
    external = bool(redis_url or os.environ.get("ARENA_REDIS_URL"))
    if url is not None and (external or not take_over_orphan(data_dir)):
        return url, "external" if external else (f"private redis-server of {data_dir}, already running; the "
                                                 f"process that started it watches it, not this serve"), None
    # none running, or one whose starter is gone (an arena serve of this folder killed with SIGKILL): this serve
    # takes it over, watched and stopped as one it started; one another live process started stays that one's
    watch = RedisWatch(PrivateRedis(data_dir, port), stopping=stop, on_give_up=lambda _message: stop.set(),
                       folder_lost=folder_lost)
    if url is None:
        url = watch.server.start()
        source = f"private redis-server in {data_dir}, started here; restarted should it die"
    else:
        url = watch.server.adopt(url)
        source = (f"private redis-server of {data_dir}, left running by an arena serve that died; taken over, "
                  f"restarted should it die")
        if port and watch.server.port != port:  # it holds the data: kept where it runs
            source += f"; on its own port {watch.server.port}, not --redis-port {port}"
    return url, source, watch.start()


def _say_stopping(watch: RedisWatch | None, drain_s: float | None = None) -> None:
    """"arena serve stopping" (with embedded workers, ``drain_s``: how long their matches under way may take to
    finish); when the private redis-server kept dying (``RedisWatch.gave_up``), raises ``ArenaCliError`` with what
    to do (exit code 1)."""
    if watch is not None and watch.gave_up:
        click.echo("arena serve stopping: " + ("its data folder is gone" if watch.folder_gone else
                                               "its private redis-server cannot be kept running"))
        raise ArenaCliError(watch.gave_up)
    click.echo("arena serve stopping" + (f": the matches its workers play finish first (at most {drain_s:g} s), "
                                         f"then it stops (Ctrl-C again: stop now)" if drain_s else ""))


def _credentials(app: AppContext, data_dir: Path, tls_cert: Path | None, tls_key: Path | None,
                 bot_ca: Path | None) -> tuple[str, str, tuple[bytes, bytes] | None, bytes | None]:
    """(admin token, where it came from, TLS certificate and key or None, bot CA PEM or None) of ``arena serve``.
    Raises ``ArenaCliError`` for a bad admin token or half a TLS pair."""
    from arena.server import auth

    try:
        admin_token, token_source = auth.serve_token(data_dir, app.admin_token)
    except auth.AdminTokenError as exc:
        raise ArenaCliError(str(exc)) from None
    if (tls_cert is None) != (tls_key is None):
        raise ArenaCliError("--tls-cert and --tls-key go together: give both (PEM files) or neither")
    tls = (tls_cert.read_bytes(), tls_key.read_bytes()) if tls_cert and tls_key else None
    return admin_token, token_source, tls, read_bot_ca(bot_ca)


def start_pages(app: AppContext, web: str | None, host: str, port: int, web_key: str, *,
                allowed_hosts: tuple[str, ...] = (), trusted_proxies: tuple[str, ...] = ()) -> Any:
    """``--web HOST:PORT``: the web pages of this referee (at ``host:port``, its ``web_key``: a share of the
    referee of their own) in a thread, their URL printed; None without --web. ``allowed_hosts`` and
    ``trusted_proxies``: as ``arena web``'s (``start_web``). Raises ``ArenaCliError`` when the address cannot be
    bound."""
    if web is None:
        return None
    from arena.cli.web import start_web

    pages = start_web(app, web, f"{'localhost' if host in ('0.0.0.0', '[::]') else host}:{port}", web_key=web_key,
                      allowed_hosts=allowed_hosts, trusted_proxies=trusted_proxies)
    click.echo(f"web pages: {pages.url()}")
    return pages


def start_metrics(address: str, redis_url: str) -> MetricsExport:
    """``--metrics ADDRESS``: export this process's metrics and the queue's (``arena.worker.metrics.MetricsExport``).
    Raises ``ArenaCliError`` when the address cannot be bound."""
    from arena.worker.metrics import MetricsExport

    try:
        return MetricsExport(address, redis_url)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ArenaCliError(f"cannot serve metrics on {address}: that port is taken (another process listens "
                                f"there): give --metrics another port, or stop what listens there") from None
        raise ArenaCliError(f"cannot serve metrics on {address}: {exc.strerror or exc}") from None


def _first_line(message: str, log_path: Path) -> str:
    """The first line of a multi-line error message (a log tail follows it), pointing at the log instead."""
    lines = message.strip().splitlines() or ["(no message)"]
    if len(lines) == 1:
        return lines[0]
    first = lines[0].strip().removesuffix("log tail:").rstrip(" ;:,")
    return f"{first}; see {log_path}"


REDIS_LOADING_TIMEOUT_S = 120.0  # a restarted Redis answers LOADING while it reads its appendonly file


def check_redis(url: str, loading_timeout_s: float = REDIS_LOADING_TIMEOUT_S) -> None:
    """Raise ``ArenaCliError`` unless the Redis at ``url`` answers PING. A Redis still loading its data (a restart
    with a large appendonly file) is waited for, up to ``loading_timeout_s`` seconds."""
    import redis

    try:
        from arena.store.base import connect

        client = connect(url, {"socket_connect_timeout": 3, "socket_timeout": 3})
    except ValueError as exc:  # not a redis:// URL
        raise ArenaCliError(f"bad Redis URL {redact(url)}: {exc}; a Redis Cluster is redis+cluster://HOST:PORT")\
            from None
    end = time.monotonic() + loading_timeout_s
    try:
        while True:
            try:
                client.ping()
                return
            except redis.BusyLoadingError as exc:
                if time.monotonic() >= end:
                    raise ArenaCliError(f"Redis at {redact(url)} is still loading its data after "
                                        f"{loading_timeout_s:.0f} s: {exc}") from None
                time.sleep(0.2)
            except (redis.RedisError, OSError) as exc:
                if _refuses_password(exc):
                    raise ArenaCliError(f"Redis at {redact(url)} refuses this client: a wrong or missing password "
                                        f"in the URL (redis://:PASSWORD@HOST:PORT/DB; an arena serve's private "
                                        f"Redis keeps its in DATA_DIR/redis.password), or a wrong user ({exc})"
                                        ) from None
                raise ArenaCliError(f"cannot reach Redis at {redact(url)}: {exc}") from None
    finally:
        client.close()


def keeps_nothing(url: str) -> str | None:
    """How the Redis at ``url`` keeps nothing on disk ("keeps no data on disk (appendonly no, no save points)"),
    None when it keeps its data, or when it will not say (CONFIG refused or renamed, as managed Redis services do)."""
    import redis

    from arena.store.base import connect

    client = connect(url, {"socket_connect_timeout": 3, "socket_timeout": 3})
    try:
        config = client.config_get("appendonly") | client.config_get("save")
    except (redis.RedisError, redis.exceptions.RedisClusterException, OSError):
        return None
    finally:
        client.close()
    if config.get("appendonly") == "no" and not (config.get("save") or "").strip():
        return "keeps no data on disk (appendonly no, no save points)"
    return None


def _refuses_password(exc: BaseException) -> bool:
    """Whether a Redis error says the client is not (or wrongly) authenticated: NOAUTH, WRONGPASS, a HELLO refused
    for want of AUTH (redis-py's ``AuthenticationError`` and the servers' texts)."""
    import redis

    text = str(exc)
    return isinstance(exc, redis.AuthenticationError) or any(
        word in text for word in ("NOAUTH", "WRONGPASS", "invalid password", "HELLO must be called with the client "
                                  "already authenticated", "Authentication required"))


def redis_errors() -> tuple[type[BaseException], ...]:
    try:
        import redis.exceptions
    except ImportError:  # pragma: no cover - redis is a dependency
        return ()
    return (redis.exceptions.RedisError,)
