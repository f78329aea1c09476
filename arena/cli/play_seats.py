"""The seats of ``arena play``: the bots it reaches (HOST:PORT) or starts (a sample bot, a bot file), each checked
as registration checks it (its GetInfo within the limits, the game, the bot secret, the match stream it claims)
before any game starts, so that a bot author learns here what registration would refuse."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import grpc

from arena.cli.errors import ArenaCliError
from arena.cli.options import BOT_NAME_RE
from arena.core.config import DEFAULTS
from arena.core.text import plural, printable
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

PLAYING = "a bot of {game}? play it with `arena play {game}`"  # the hint of a bot of another game (bot_info_refusal)
_TRACEBACK_FILE = re.compile(r'File "([^"]+)", line (\d+)')  # a frame of a Python traceback on a bot's stderr


@dataclass(frozen=True)
class BotSpec:
    """A ``--bot`` of ``arena play``: ``kind`` is "endpoint" (a running bot at HOST:PORT), "sample" (a sample
    bot to start, ``value`` its name) or "file" (a bot .py file to start)."""

    kind: str
    value: str



@contextmanager
def seated(game: str, bots: Sequence[BotSpec], secret: str) -> Iterator[list[Any]]:
    """The ``SeatSpec`` of each of ``bots``, in order, under unique names: a HOST:PORT bot asked its name (GetInfo)
    and checked for ``secret``, a sample or file bot started here (and stopped when the block ends, however it
    ends); every bot's GetInfo checked as registration checks it (``_bot_info``), and a bot other than a sample bot
    that says it serves the match stream checked for it (``_check_streams``). Raises ``ArenaCliError`` for a bot
    that cannot be reached, started, does not play ``game``, or that registration would refuse."""
    from arena.match.record import SeatSpec

    started: list[Any] = []
    try:
        infos = {spec.value: _bot_info(spec.value, game) for spec in bots if spec.kind == "endpoint"}
        secrets_of = {endpoint: _secret_for(endpoint, secret) for endpoint in infos}  # before the game
        local = [spec for spec in bots if spec.kind != "endpoint"]
        started = _start_local_bots(local, secret)
        checked = [(endpoint, info, secrets_of[endpoint], "") for endpoint, info in infos.items()]
        for spec, proc in zip(local, started):  # a started bot must pass too (GetInfo), before any match starts
            who = f"{_spec_text(spec)}: "
            info = _bot_info(proc.endpoint, game, who)
            if spec.kind != "sample":  # the sample bots are the SDK's, which serves the match stream
                checked.append((proc.endpoint, info, secret, who))
        _check_streams(checked)
        seats = []
        started_bots = iter(started)
        for spec in bots:
            if spec.kind == "endpoint":
                seats.append((_seat_name(spec.value, infos[spec.value]), spec.value))
            else:
                proc = next(started_bots)
                seats.append((proc.name, proc.endpoint))
        names = _unique_names([n for n, _ in seats])
        yield [SeatSpec(name=n, endpoint=e, secret=secrets_of.get(e, secret))
               for n, (_, e) in zip(names, seats, strict=True)]
    finally:
        for proc in started:
            proc.stop()


def _spec_text(spec: BotSpec) -> str:
    """``spec`` as given on the command line: "sample:NAME", "FILE.py" or "HOST:PORT"."""
    return f"sample:{spec.value}" if spec.kind == "sample" else spec.value


def _check_streams(bots: Sequence[tuple[str, Any, str, str]]) -> None:
    """Check, all at once, that every bot of ``bots`` (endpoint, its ``BotInfo``, the bot secret it gets, what to
    call it before the refusal: "" or e.g. "bot.py: ") that says ``serves_match_stream`` implements it, as
    registration checks it (``bot_checks.stream_refusal``: a bot that does not would fault at every call of the
    game). Raises ``ArenaCliError`` with the first refusal."""
    from concurrent.futures import ThreadPoolExecutor

    from arena.match.bot_checks import stream_refusal

    claims = [(endpoint, secret, who) for endpoint, info, secret, who in bots if info.serves_match_stream]
    if not claims:
        return
    with ThreadPoolExecutor(max_workers=len(claims)) as pool:
        refusals = list(pool.map(lambda claim: stream_refusal(claim[0], claim[1]), claims))
    for (_endpoint, _secret, who), refusal in zip(claims, refusals):
        if refusal is not None:
            raise ArenaCliError(who + refusal)


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


def _start_local_bots(specs: Sequence[BotSpec], secret: str = "") -> list[Any]:
    """Start the sample / file bots of ``specs`` as separate processes (all at once), in order, with the bot
    secret ``secret`` ("" for none)."""
    if not specs:
        return []
    from arena.match.local_bots import start_bots

    texts = [_spec_text(s) for s in specs]
    if sys.stderr.isatty():  # a second or more on a busy machine: say what is going on
        click.echo(f"starting {plural(len(texts), 'bot process')}: {', '.join(texts)} ...", err=True)
    try:
        started = start_bots(texts, secret=secret)
        for spec, bot in zip(specs, started):  # what a bot file says of itself (a misspelt decision method)
            for warning in bot.warnings(0.2 if spec.kind != "sample" else 0.0):
                click.echo(f"warning: {spec.value}: {printable(warning)}", err=True)
        return started
    except (RuntimeError, OSError, ValueError) as exc:  # BotStartError is a RuntimeError
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        message = lines[0] if lines else type(exc).__name__
        if len(lines) > 2 and lines[1] == "stderr tail:":  # BotStartError: the last stderr line says why
            message += f"; its last stderr line: {lines[-1]}"
            where = [m for m in map(_TRACEBACK_FILE.search, lines[2:]) if m]
            if where:  # a traceback's innermost frame (a SyntaxError's line)
                message += f" ({Path(where[-1].group(1)).name}, line {where[-1].group(2)})"
        raise ArenaCliError(f"cannot start the bot: {message}") from None


def _secret_for(endpoint: str, secret: str) -> str:
    """The bot secret the referee sends the bot at ``endpoint``: "" when it answers match calls without one (then
    ``secret`` never reaches it), else ``secret`` once it accepts it (``arena.server.checks.secret_refusal``, the
    check registration makes). Raises ``ArenaCliError`` when it asks for a secret and ``secret`` is none or another,
    or gives no answer to the check: before the game, not a fault in every call of it."""
    from arena.server.checks import secret_refusal

    refusal = secret_refusal(endpoint, "")
    if refusal is None:
        return ""
    if secret and "only with its bot secret" in refusal:
        refusal = secret_refusal(endpoint, secret)
        if refusal is None:
            return secret
    raise ArenaCliError(refusal.replace(", or RegisterBotRequest.bot_secret)", ")"))


def _bot_info(endpoint: str, game: str, who: str = "") -> bot_pb2.BotInfo:
    """The ``BotInfo`` a running bot reports through GetInfo, read and checked as registration reads and checks it
    (at most ``limits.MAX_BOT_INFO_BYTES``, ``bot_checks.over_limit_refusal``; ``bot_checks.bot_info_refusal``:
    the limits of its fields, ``game`` among its games, a well-formed version), so that a bot author learns here
    what registration would refuse. Raises ``ArenaCliError`` (its message after ``who``, e.g. "sample:random: ")
    when the bot is unreachable, fails GetInfo or is refused."""
    from arena.match.bot_checks import GETINFO_OPTIONS, answer_over_limit, bot_info_refusal, over_limit_refusal

    channel = grpc.insecure_channel(endpoint, options=GETINFO_OPTIONS)
    try:
        info = bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(),
                                                     timeout=DEFAULTS.call_deadline_ms / 1000)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.UNAVAILABLE:
            raise ArenaCliError(f"{who}cannot reach the bot at {endpoint}: is it running?") from None
        if answer_over_limit(exc):
            raise ArenaCliError(who + over_limit_refusal(endpoint, exc.details() or "")) from None
        raise ArenaCliError(f"{who}the bot at {endpoint} failed GetInfo: {exc.details()} ({exc.code().name})") \
            from None
    finally:
        channel.close()
    refusal = bot_info_refusal(endpoint, info, game, other_game=PLAYING)
    if refusal is not None:
        raise ArenaCliError(who + refusal)
    return info


def _seat_name(endpoint: str, info: bot_pb2.BotInfo) -> str:
    """The seat name of the running bot at ``endpoint`` that reported ``info``: its name, or the endpoint when that
    is no bot name."""
    return info.name if BOT_NAME_RE.match(info.name or "") else endpoint.replace(":", "_")
