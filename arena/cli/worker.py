"""``arena worker``: an extra worker for the match queue; ``arena worker list``."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import click

from arena.cli.app import AppContext, ago, cli, print_json, redact, stop_on_signals, when
from arena.cli.errors import ArenaCliError
from arena.cli.options import (
    bot_ca_option,
    bot_health_options,
    data_dir_option,
    json_option,
    metrics_option,
    option,
    read_bot_ca,
    redis_url_option,
    server_option,
    visibility_timeout_option,
)
from arena.cli.pages import every_page
from arena.cli.serve import check_redis, redis_errors, start_metrics
from arena.cli.tables import Col, fit, print_tables
from arena.core.config import DEFAULTS
from arena.core.limits import MAX_CONCURRENCY
from arena.core.text import plural
from arena_sdk.pb import arena_pb2


@cli.group(short_help="Run an extra worker for the match queue (or list the workers).",
           invoke_without_command=True)
@option("--concurrency", type=click.IntRange(1, MAX_CONCURRENCY), default=DEFAULTS.concurrency, show_default=True,
        help="Matches this worker runs at once (a match mostly waits on bots; one process holds a few hundred: "
             "docs/scale.md).")
@option("--name", default=None, help="Worker name in the Redis consumer group (default: host and pid).")
@visibility_timeout_option
@bot_health_options
@data_dir_option
@redis_url_option
@bot_ca_option
@metrics_option
@click.pass_context
def worker(ctx: click.Context, concurrency: int, name: str | None, visibility_timeout: float,
           data_dir: Path, redis_url: str | None, bot_ca: Path | None, metrics: str | None,
           max_deferral: float = DEFAULTS.max_deferral_s,
           unhealthy_after: int = DEFAULTS.unhealthy_after,
           bot_recheck: float = DEFAULTS.bot_recheck_s) -> None:
    """Run an extra worker: take match jobs from Redis, referee them, store the results; until Ctrl-C.
    `arena worker list` shows the workers that are alive instead.

    Redis: --redis-url / ARENA_REDIS_URL, else the private server that `arena serve` runs for --data-dir on this
    machine. Bots at tls://HOST:PORT: their certificates are verified against --bot-ca (env ARENA_BOT_CA), else the
    system's roots. --metrics PORT (or HOST:PORT) exports Prometheus metrics at http://127.0.0.1:PORT/metrics: its
    matches, decisions, faults, the queue (docs/metrics.md).

    Examples:

    \b
        ARENA_REDIS_URL=redis://10.0.0.5:6379/0 arena worker --concurrency 8 --name box2
        arena worker list
    """
    if ctx.invoked_subcommand is not None:
        return
    from arena.store.redis_server import resolve_redis_url
    from arena.worker.loop import run_worker
    from arena.worker.settings import WorkerSettings

    url = redis_url or resolve_redis_url(data_dir)
    if url is None:
        from arena.core.folder_lock import folder_held

        if folder_held(data_dir):  # an arena serve runs there, on a Redis of no data folder (an external one)
            raise ArenaCliError(f"the arena serve of {data_dir} keeps no private Redis there (it uses an external "
                                f"one, or is still starting its own): give this worker the --redis-url or "
                                f"ARENA_REDIS_URL it was given, or try again in a moment")
        raise ArenaCliError(f"no Redis to work for: set ARENA_REDIS_URL, or run `arena serve --data-dir {data_dir}` "
                            "on this machine first")
    bot_ca_pem = read_bot_ca(bot_ca)
    check_redis(url)
    exported = start_metrics(metrics, url) if metrics is not None else None
    with stop_on_signals(second_interrupts=True) as stop:
        label = f"arena worker {name}" if name else "arena worker"
        click.echo(f"{label} working for redis {redact(url)}, {plural(concurrency, 'match')} at once, jobs of a dead "
                   f"worker reclaimed after {visibility_timeout:g} s (or the longest visibility timeout of the live "
                   f"workers, when longer: theirs must not be taken); stop with Ctrl-C or SIGTERM")
        if exported is not None:
            click.echo(f"{label} metrics: {exported.url} (Prometheus)")
        sys.stdout.flush()

        def say_stopping() -> None:  # as `arena serve` does, at once: draining the running matches takes a while
            if stop.wait():
                click.echo(f"{label} stopping: the matches it runs finish first (Ctrl-C again: stop now)")
                sys.stdout.flush()

        sayer = threading.Thread(target=say_stopping, daemon=True)
        sayer.start()
        try:
            # a URL found in the data directory is looked up again after Redis errors: `arena serve` may have been
            # restarted and its private Redis may listen on another port now
            resolve = None if redis_url else (lambda: resolve_redis_url(data_dir))
            settings = WorkerSettings(concurrency=concurrency, visibility_timeout_s=visibility_timeout,
                                      bot_ca=bot_ca_pem, max_deferral_s=max_deferral,
                                      unhealthy_after=unhealthy_after, bot_recheck_s=bot_recheck)
            try:
                run_worker(url, settings, name=name, stop=stop, resolve_url=resolve)
            except KeyboardInterrupt:  # told again while it drains: its matches are cancelled, left pending
                if not stop.is_set():
                    raise
                click.echo(f"{label} stopped now: the matches it was playing are left pending, and played again by "
                           f"the next worker after the visibility timeout")
                return
            if stop.is_set():
                sayer.join(1.0)
            click.echo(f"{label} stopped")
        except redis_errors() as exc:
            raise ArenaCliError(f"cannot use Redis at {redact(url)}: {exc}") from None
        finally:
            if exported is not None:
                exported.close()


@worker.command("list", short_help="List the workers and what they run.")
@option("--all", "show_all", is_flag=True, help="Also the workers whose heartbeat stopped.")
@server_option
@json_option
@click.pass_obj
def worker_list(app: AppContext, show_all: bool, server: str, as_json: bool) -> None:
    """List the workers that sent a heartbeat recently: name, host, pid, alive, concurrency, the matches it runs
    now, matches done since it started, last heartbeat. A dead (or stopped) worker is listed too while match jobs
    are still claimed under its name (another worker takes them back once unrefreshed for the visibility
    timeout); --all lists every dead one.

    Example:

    \b
        arena worker list --json
    """
    listed = every_page(app.arena(server), "ListWorkers", arena_pb2.ListWorkersRequest(), "workers")
    now = time.time()
    workers = [w for w in listed if show_all or w.alive or w.jobs_held]
    workers.sort(key=lambda w: (not w.alive, w.name))
    if as_json:
        print_json([{"name": w.name, "host": w.host, "pid": w.pid, "alive": w.alive, "started_at": w.started_at,
                      "last_seen": w.last_seen, "concurrency": w.concurrency, "running": list(w.running),
                      "matches_done": w.matches_done, "jobs_held": w.jobs_held} for w in workers])
        return
    if not workers:
        hidden = len(listed) - len(workers)
        click.echo("no worker is alive: start `arena worker` (or `arena serve --workers N`)"
                   + (f"; {hidden} dead worker(s) hidden, see --all" if hidden else ""))
        return
    hidden = len(listed) - len(workers)
    columns = [Col("name", cells="name", justify="left"), Col("host", justify="left", drop=3),
               Col("pid", drop=4), Col("alive", justify="left"), Col("concurrency", "conc."),
               Col("running", cells="words", justify="left"), Col("done"), Col("last seen", justify="left", drop=1),
               Col("started", justify="left", drop=2)]
    rows = [[w.name, w.host, str(w.pid), _alive_text(w), str(w.concurrency),
             (", ".join(w.running) or "-") if w.alive else "-", str(w.matches_done), ago(w.last_seen, now),
             when(w.started_at)] for w in workers]
    shown = fit(columns, rows, app.console.width)
    note = shown.note() + (f"\n{hidden} dead worker(s) with no match left to take back hidden, see --all" if hidden
                           else "")
    print_tables(app.console, [shown.table("Workers", rows)], note.strip())


def _alive_text(w: arena_pb2.WorkerInfo) -> str:
    """"yes"; for a dead worker, "no", and how many of its matches wait to be taken back by another worker."""
    if w.alive:
        return "yes"
    return f"no: {plural(w.jobs_held, 'match')} to take back" if w.jobs_held else "no"
