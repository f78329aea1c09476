"""Options and parameter types shared by the commands: ``ArenaOption`` (one environment variable per option),
``HOST:PORT`` endpoints, bot names and ``NAME@VERSION`` refs, the shared ``--server``/``--json``/``--game``/... options.
The rule options of each game are in ``game_options``."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from arena.core.config import DEFAULTS, MAX_DEADLINE_MS, MIN_DEADLINE_MS
from arena_sdk.games import game_ids
from arena_sdk.guard import MAKE_SECRET, secret_problem

GAMES = game_ids()  # every registered game, e.g. ("take5", "taki")
BOT_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")

F = TypeVar("F", bound=Callable[..., Any])  # a command function, as click's decorators take and return it


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


def option(*param_decls: str, **attrs: Any) -> Callable[[F], F]:
    """``click.option`` with ``ArenaOption``: every option of the CLI is declared through it."""
    attrs.setdefault("cls", ArenaOption)
    return click.option(*param_decls, **attrs)


def parse_endpoint(value: str, *, allow_port_zero: bool = False, allow_tls: bool = False) -> str:
    """Check a ``host:port`` endpoint (``[v6addr]:port`` for IPv6) and return it stripped; with ``allow_tls``,
    ``tls://host:port`` too (a bot serving TLS).

    Raises ``ValueError`` naming the bad value when the host is empty or the port is not an integer in 1..65535
    (0..65535 with ``allow_port_zero``, for addresses to listen on).
    """
    text = value.strip()
    host, sep, port_text = text.removeprefix("tls://" if allow_tls else "").rpartition(":")
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


class EndpointType(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.3; pyproject allows 8.1
    """A ``HOST:PORT`` parameter, checked by ``parse_endpoint`` (``allow_tls``: a bot's, ``tls://HOST:PORT`` too)."""

    name = "HOST:PORT"

    def __init__(self, allow_port_zero: bool = False, allow_tls: bool = False) -> None:
        self.allow_port_zero = allow_port_zero
        self.allow_tls = allow_tls

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return parse_endpoint(str(value), allow_port_zero=self.allow_port_zero, allow_tls=self.allow_tls)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class ServerType(EndpointType):
    """The ``--server`` address of the referee: ``HOST:PORT``; a host without its port is refused with the port
    to add (the referee's default is 50051)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        if text and (":" not in text or text.endswith(":") or text.endswith("]")):
            host = text.rstrip(":") or "localhost"
            self.fail(f"{text!r} is not HOST:PORT: give the referee's port too, e.g. {host}:50051", param, ctx)
        return super().convert(value, param, ctx)


def check_bot_name(value: str) -> str:
    if not BOT_NAME_RE.match(value):
        raise click.BadParameter(f"{value!r}: a bot name is 1..64 characters of A-Z a-z 0-9 _ . -")
    return value


def check_bot_secret(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """click callback of a ``--bot-secret`` option: ``value``, or None when none is given. Raises
    ``click.BadParameter`` when the secret is no bot secret (``arena_sdk.guard.secret_problem``): empty or only
    whitespace (given so, or its environment variable set but empty, which click reads as unset: a ``$(cat FILE)``
    that failed), not 16..256 characters, or holding a space or a character call metadata cannot carry; so a bot
    meant to have a secret is never registered or played without one, or with one no call can send. The message
    never holds the secret."""
    envvar = param.envvar if isinstance(param.envvar, str) else (
        param.auto_envvar(ctx) if isinstance(param, ArenaOption) else None)
    from_env = ctx.get_parameter_source(param.name or "") == ParameterSource.ENVIRONMENT
    if value is None:
        if envvar is None or os.environ.get(envvar) is None:
            return None
        from_env, value = True, os.environ[envvar]
    problem = secret_problem(value)
    if problem == "is empty":
        given = f"{envvar} is set but" if from_env else "the secret is"
        unset = f", or unset {envvar} for none" if from_env else ""
        raise click.BadParameter(f"{given} empty: did `$(cat FILE)` fail? Make the secret first, e.g. "
                                 f"{MAKE_SECRET}{unset}", ctx, param)
    if problem is not None:
        raise click.BadParameter(f"{envvar if from_env else 'the secret'} {problem}; e.g. {MAKE_SECRET}", ctx, param)
    return value


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


def check_bot_ref(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        split_bot_id(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value.strip()


def server_option(f: F) -> F:
    return option(
        "--server", envvar="ARENA_SERVER", type=ServerType(), default=DEFAULTS.server, show_default=True,
        metavar="HOST:PORT",
        help="Address of the referee (`arena serve`); env ARENA_SERVER.")(f)


def json_option(f: F) -> F:
    return option("--json", "as_json", is_flag=True, help="Print JSON for scripts instead of a table.")(f)


def game_option(f: F) -> F:
    return option("--game", type=click.Choice(GAMES), default=GAMES[0], show_default=True,
                  help=f"Game id: {', '.join(GAMES)}.")(f)


def data_dir_option(f: F) -> F:
    return option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ARENA_DATA_DIR",
        default=DEFAULTS.data_dir, show_default=True,
        help="Folder of the private redis-server (used when ARENA_REDIS_URL is unset); env ARENA_DATA_DIR.")(f)


def redis_url_option(f: F) -> F:
    return option(
        "--redis-url", envvar="ARENA_REDIS_URL", default=None, metavar="URL",
        help="External Redis, e.g. redis://:PASSWORD@host:6379/0; env ARENA_REDIS_URL (a password in an argument "
             "shows in `ps` to every user of the machine: prefer the env variable). Unset: the private server of "
             "--data-dir.")(f)


def bot_ca_option(f: F) -> F:
    return option(
        "--bot-ca", envvar="ARENA_BOT_CA", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
        metavar="FILE",
        help="CA bundle (PEM) that the certificates of bots registered at tls://HOST:PORT are verified against; env "
             "ARENA_BOT_CA. Unset: the system's roots.")(f)


def read_bot_ca(path: Path | None) -> bytes | None:
    """The PEM bytes of ``--bot-ca`` (None when not given). Raises ``click.BadParameter`` naming the file when it
    holds no PEM certificate."""
    if path is None:
        return None
    from arena.match.channels import read_ca_bundle

    try:
        return read_ca_bundle(path)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--bot-ca") from None


DAY_S = 86_400.0


class Seconds(click.FloatRange):
    """A number of seconds within ``min``..``max`` (``click.FloatRange``), and finite: FloatRange lets "nan"
    through (no comparison with it is true), and "inf" past a range without a maximum (a re-attack's ``--bot-recheck
    inf`` left unhealthy bots unchecked for ever, ``nan`` stopped the worker with a bare ValueError)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return number


def check_proxies(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """The addresses of ``--trust-proxy`` (``--web-trust-proxy``): each an IP address or network ("10.0.0.0/8");
    ``click.BadParameter`` naming one that is neither (given to uvicorn as it was, a typo trusted no proxy, without
    a word)."""
    import ipaddress

    for value in values:
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise click.BadParameter(f"{value!r} is no IP address or network (e.g. 10.0.0.7 or 10.0.0.0/8)",
                                     ctx=ctx, param=param) from None
    return values


def visibility_timeout_option(f: F) -> F:
    return option(
        "--visibility-timeout", "visibility_timeout", type=Seconds(min=0, min_open=True, max=DAY_S),
        default=DEFAULTS.visibility_timeout_s, show_default=True, metavar="SECONDS",
        help="A claimed match job whose worker has not refreshed it for this long is taken for dead and reclaimed "
             "by another worker, which runs the match again (the result still counts once).")(f)


def bot_health_options(f: F) -> F:
    """``--unhealthy-after N``, ``--bot-recheck SECONDS`` and ``--max-deferral SECONDS``: how the workers treat a
    bot that stopped answering (``arena.worker.health``, docs/failure-policy.md)."""
    f = option(
        "--max-deferral", "max_deferral", type=Seconds(min=0, max=30 * DAY_S), default=DEFAULTS.max_deferral_s,
        show_default=True, metavar="SECONDS",
        help="The matches of a bot that stopped answering (unhealthy) wait this long for it, deferred; then they are "
             "played anyway and it forfeits them (docs/failure-policy.md). 0: played at once.")(f)
    f = option(
        "--bot-recheck", "bot_recheck", type=Seconds(min=0.1, max=DAY_S),
        default=DEFAULTS.bot_recheck_s, show_default=True, metavar="SECONDS",
        help="Seconds between two GetInfo calls to each unhealthy bot (by one worker of the fleet); one that answers "
             "as registered is healthy again and its deferred matches are queued again.")(f)
    return option(
        "--unhealthy-after", "unhealthy_after", type=click.IntRange(1, 1000), default=DEFAULTS.unhealthy_after,
        show_default=True, metavar="N",
        help="A bot whose matches failed N times in a row (it forfeited, or answered no call) is marked unhealthy "
             "and its matches are deferred (see --max-deferral).")(f)


class MetricsAddressType(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.3; pyproject allows 8.1
    """The ``--metrics`` address: ``HOST:PORT``, or ``PORT`` alone for loopback (``arena.core.metrics``)."""

    name = "HOST:PORT"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from arena.core.metrics import parse_metrics_address

        try:
            parse_metrics_address(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        return str(value).strip()


def metrics_option(f: F) -> F:
    return option("--metrics", type=MetricsAddressType(), default=None,
                  help="Export Prometheus metrics over HTTP at HOST:PORT/metrics (PORT alone: 127.0.0.1, loopback "
                       "only; port 0: a free port, printed); see docs/metrics.md. Default: none.")(f)


def deadline_option(f: F) -> F:
    return option("--deadline-ms", type=click.IntRange(MIN_DEADLINE_MS, MAX_DEADLINE_MS),
                  default=DEFAULTS.deadline_ms, show_default=True, help="Deadline of each decision, milliseconds.")(f)
