"""``arena play`` (one local game, no Redis) and ``arena replay``."""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from arena.cli.app import AppContext, cli, print_json, score_text
from arena.cli.errors import ArenaCliError, interruption
from arena.cli.game_options import config_of, config_options
from arena.cli.options import (
    GAMES,
    check_bot_secret,
    deadline_option,
    json_option,
    option,
    parse_endpoint,
)
from arena.cli.play_seats import BotSpec, seated
from arena.core.config import DEFAULTS
from arena.core.limits import MAX_SEED
from arena.core.text import printable

MAX_GAMES = 100_000  # --games at most


class BotSpecType(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.3; pyproject allows 8.1
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


def _check_record(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """click callback of ``--record``: ``value``, once its folder is known to exist (a typo makes no folders)."""
    if value is not None and not value.parent.is_dir():
        what = "is not a directory" if value.parent.exists() else "does not exist"
        raise click.BadParameter(f"the folder {value.parent} of {value} {what}: create it first, or save the record "
                                 f"into an existing folder", ctx, param)
    return value


def _sample_bot_names() -> Sequence[str] | None:
    try:
        from arena.match.local_bots import SAMPLE_BOTS
    except ImportError:  # the local bot launcher is missing: let start_bot report it later
        return None
    return tuple(SAMPLE_BOTS)


@cli.group(short_help="Play a local game, or a series (--games N), without Redis.")
def play() -> None:
    """Play one game locally between bots, or a series of them with --games N, without Redis or `arena serve` (the
    referee runs in this process)."""


class _GameCommand(click.Command):
    """``arena play GAME``: its help (the sample bots that play the game, examples made from them and the game's
    declared variants) is written when it is read (``--help``, the CLI reference page), so starting the CLI imports
    no sample bot."""

    def __init__(self, *args: Any, game: str, **kwargs: Any) -> None:
        self.game = game
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str:
        return _play_help(self.game)

    @help.setter
    def help(self, value: str | None) -> None:
        """Ignored: the help is always the game's (click's ``__init__`` assigns the docstring's)."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        samples = _game_samples(self.game)
        for param in self.params:
            if param.name == "bots" and isinstance(param, click.Option):
                param.help = _bot_help(self.game, ", ".join(samples) or "none installed")
        super().format_help(ctx, formatter)


def _game_samples(game: str) -> tuple[str, ...]:
    try:
        from arena.match.local_bots import sample_bots_of
    except ImportError:  # the local bot launcher is missing: let start_bot report it later
        return ()
    return sample_bots_of(game)


def _bot_help(game: str, samples: str) -> str:
    from arena_sdk.games import get_game

    info = get_game(game).info
    return (f"A seat, in seat order (repeat {info.min_players}..{info.max_players} times): HOST:PORT of a running "
            f"bot, sample:NAME ({samples}; started as a separate process and stopped after), or a bot .py file to "
            "start.")


def _play_help(game: str) -> str:
    """The help of ``arena play GAME``, its examples made from the game's sample bots and declared variants."""
    from arena_sdk.games import get_game

    g = get_game(game)
    samples = _game_samples(game)
    if samples:
        n = max(g.info.min_players, min(len(samples), g.info.max_players, 3))
        seats = " ".join(f"--bot sample:{samples[i % len(samples)]}" for i in range(n))
        local = f"sample:{samples[0]}"
    else:
        seats = " ".join(f"--bot 127.0.0.1:{50061 + i}" for i in range(g.info.min_players))
        local = "127.0.0.1:50062"
    variants = [f.variant for f in g.config_fields if f.variant]
    variant = f" --variant {variants[0]}" if variants else ""
    return f"""Play one game of {g.info.title} between local bots: print a summary of the game, the standings
    (seat, bot, score, rank, faults) and where the record is saved (for `arena replay` and `arena match show
    FILE`). --show prints the game turn by turn too. --games N plays a series of N games, seats rotated, and prints
    each bot's mean score, mean rank and wins.

    Examples:

    \b
        arena play {game} {seats} --seed 7
        arena play {game} --bot 127.0.0.1:50061 --bot {local}{variant} --record game.json --show
        arena play {game} {seats} --games 100
    """


def _play_command(game: str) -> None:
    """Add ``arena play GAME`` for one registered game: the shared options plus the game's rule options."""
    from arena_sdk.games import get_game

    info = get_game(game).info
    samples = ", ".join(_sample_bot_names() or ())

    @play.command(game, cls=_GameCommand, game=game,
                  short_help=f"Play a game (or --games N) of {info.title.rstrip('!')}.")
    @option("--bot", "bots", type=BotSpecType(), multiple=True, required=True,
            metavar="HOST:PORT|sample:NAME|FILE.py", help=_bot_help(game, samples))
    @option("--seed", type=click.IntRange(0, MAX_SEED), default=None,
            help="Seed of the deals and of every seat's own randomness (its seat seed), so the same seed replays "
                 "the whole game with bots that decide from their view and seat seed alone (a bot with a time cap "
                 "per decision, such as sample:montecarlo, may decide otherwise on a busier machine); default: a "
                 "random one, printed and kept in the record.")
    @config_options(game)
    @deadline_option
    @option("--record", "record_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
            callback=_check_record,
            help="Where to save the match record (JSON), in a folder that exists; default records/MATCH_ID.json "
                 "(records/ is made when missing).")
    @option("--bot-secret", default=None, metavar="SECRET", callback=check_bot_secret,
            help="A bot secret (16..256 characters) for this game, to test a bot started with one (SDK: --secret "
                 "or ARENA_BOT_SECRET) as the arena plays it: the referee sends it with the match calls of every "
                 "seat that asks for one, and the bots started here (sample:NAME, FILE.py) are started with it. A "
                 "HOST:PORT bot that answers without a secret never receives it, but one that is not yours could "
                 "claim to need it: give it only when every HOST:PORT bot is yours. An exported ARENA_BOT_SECRET is "
                 "not read, and the bots started here never inherit it. Default: none.")
    @option("--show", is_flag=True, help="Also print the whole game turn by turn (as `arena match show FILE`).")
    @option("--games", type=click.IntRange(1, MAX_GAMES), default=1, show_default=True,
            help="Play a series of this many games between the same bots (started once), seeds SEED, SEED+1, ... "
                 "and the seats rotated each game so every bot holds every seat; prints each bot's mean score "
                 "(with its 95 % interval), mean rank, wins, faults and forfeits. The records go to "
                 "records/SERIES_ID/.")
    @json_option
    @click.pass_obj
    def command(app: AppContext, /, bots: Sequence[BotSpec], seed: int | None, variants: Sequence[str],
                deadline_ms: int, record_path: Path | None, bot_secret: str | None, show: bool, games: int,
                as_json: bool, **rule_options: Any) -> None:
        config = config_of(game, variants, rule_options)
        _play(app, game, bots, seed, config, deadline_ms, record_path, show, as_json, bot_secret or "", games)


def _play(app: AppContext, game: str, bots: Sequence[BotSpec], seed: int | None, config: Any, deadline_ms: int,
          record_path: Path | None, show: bool, as_json: bool, secret: str = "", games: int = 1) -> None:
    from arena_sdk.games import get_game

    info = get_game(game).info
    if not info.min_players <= len(bots) <= info.max_players:
        raise click.UsageError(f"{info.title} needs {info.min_players}..{info.max_players} --bot seats, "
                               f"got {len(bots)}")
    if games > 1 and (show or record_path is not None):
        raise click.UsageError(f"--games {games} plays a series: --show and --record are for one game (the series "
                               "saves every record under records/SERIES_ID/)")
    from arena.core.seeds import local_seat_seeds
    from arena.match.options import RefereeOptions
    from arena.match.referee import run_match_sync

    if seed is None:
        seed = secrets.randbelow(10**9)
    options = RefereeOptions(deadline_ms=deadline_ms, call_deadline_ms=DEFAULTS.call_deadline_ms)
    if games > 1:
        from arena.cli.play_series import play_series

        with seated(game, bots, secret) as specs:
            play_series(app, game, specs, config, seed, games, options, as_json)
        return
    match_id = f"play-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    path = record_path or Path("records") / f"{match_id}.json"
    try:
        with seated(game, bots, secret) as specs:
            names = [spec.name for spec in specs]
            live = None if as_json else _live_lines(app, game, names)
            with app.console.status(f"playing {game} between {', '.join(names)} (seed {seed})", spinner="dots") \
                    if not as_json else _nullcontext():
                record = run_match_sync(match_id, game, specs, config, seed=seed, options=options,
                                        on_progress=live, seat_seeds=local_seat_seeds(seed, len(specs)))
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated): the bots started here are stopped
        raise interruption("interrupted: the game was stopped before its end; no record was written",
                           exc) from None
    try:
        if record_path is None:  # records/ of the default path; --record names a folder that exists
            path.parent.mkdir(parents=True, exist_ok=True)
        record.save(path)
    except OSError as exc:
        raise ArenaCliError(f"cannot save the record to {path}: {exc.strerror or exc}") from None
    result = record.result
    if as_json:
        print_json({"match_id": record.match_id, "seed": seed, "record": str(path), "seats": [
            {"seat": i, "bot": s.name, "endpoint": s.endpoint, "score": result.scores[i],
             "rank": result.ranks[i], "faults": result.faults[i]} for i, s in enumerate(record.seats)]})
        return
    from arena.render import RenderError, position_text, render_match, summary

    try:
        app.console.print(render_match(record) if show else summary(record))
    except RenderError as exc:  # cannot happen for a record the referee just wrote; the standings still print
        click.echo(f"(cannot tell the game: {exc})")
        show = False
    if not show:  # --show ends with the result table (``render.base.result_table``)
        _print_standings(app, game, record)
    click.echo(f"match {record.match_id}, seed {seed}, {len(record.decisions)} decisions in "
               f"{record.duration_s:.2f} s")
    if record.faults and not show:
        for fault in record.faults[:5]:
            where = position_text(game, fault.hand, fault.turn)
            click.echo(f"fault: {printable(record.seats[fault.seat].name)} (seat {fault.seat}), {where}: "
                       f"{fault.kind} ({printable(fault.detail)})")
        if len(record.faults) > 5:
            click.echo(f"... {len(record.faults) - 5} more faults: `arena match show {path}`")
    click.echo(f"record saved to {path}: `arena match show {path}` tells it turn by turn, "
               f"`arena replay {path}` re-simulates it")


def _print_standings(app: AppContext, game: str, record: Any) -> None:
    """The standings of a match played by ``arena play``: rank, bot, score, seat, faults, forfeit."""
    from arena.render import score_label
    from arena.render.base import forfeit_text, safe

    result = record.result
    table = Table(title="Standings")
    for col, justify in (("rank", "right"), ("bot", "left"), (score_label(game, record.config), "right"),
                         ("seat", "right"), ("faults", "right"), ("forfeit", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for i in sorted(range(len(record.seats)), key=lambda i: (result.ranks[i], i)):
        table.add_row(str(result.ranks[i]), safe(record.seats[i].name), score_text(result.scores[i]), str(i),
                      str(result.faults[i]), forfeit_text(record, i))
    app.console.print(table)


def _live_lines(app: AppContext, game: str, names: Sequence[str]) -> Any:
    """The referee's progress observer for ``arena play``: prints the game's progress lines (a Take 5 hand's
    bullheads, a Taki game's cards held every few turns) while the game runs."""
    from arena.render import RenderError, progress

    def show(before: Any, after: Any) -> None:
        try:
            line = progress(game, before, after, names)
        except RenderError:
            return
        if line is not None:
            app.console.print(line)

    return show


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


class RecordFile(click.Path):
    """FILE of ``arena replay``: an existing record file; a match id given instead is told how to save its record."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            text = str(value)
            if MATCH_REF.fullmatch(text) and not text.endswith(".json") and not Path(text).exists():
                self.fail(f"there is no file {text!r}; to replay the stored match {text}, save its record first "
                          f"(readable once its tournament has ended): `arena match show {text} --json > "
                          f"{text}.json`, then `arena replay {text}.json`", param, ctx)
            raise


MATCH_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # what a match id may look like (no path separator)


@cli.command(short_help="Re-simulate a match record; report differences.")
@click.argument("file", type=RecordFile(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def replay(ctx: click.Context, file: Path) -> None:
    """Re-simulate a match record (JSON) with the rules engine and compare: prints "identical", or every
    difference and exits 1. FILE is a record `arena play` saved, or one saved from the arena: `arena match show ID
    --json > FILE` (once its tournament has ended), or the web viewer's download.

    Example:

    \b
        arena replay records/play-20250101-120000-ab12cd.json
        arena match show t3-000041 --json > t3-000041.json && arena replay t3-000041.json
    """
    from arena.match.record import MatchRecord
    from arena.match.replay import replay as replay_record

    try:
        record = MatchRecord.load(file)
    except (ValueError, OSError) as exc:  # RecordError is a ValueError, so is a JSON syntax error
        raise ArenaCliError(f"cannot read the match record {file}: {printable(exc)}") from None
    try:
        differences = replay_record(record)
    except ValueError as exc:  # a record the rules engine cannot even follow
        differences = [f"the record cannot be re-simulated: {exc}"]
    if not differences:
        click.echo(f"identical: {file} re-simulates to the same {len(record.decisions)} decisions, faults and result")
        return
    click.echo(f"{len(differences)} difference{'s' if len(differences) != 1 else ''} in {file}:")
    for d in differences:  # values of the record in them are the file's: shown without control characters
        click.echo(f"  - {printable(d)}")
    ctx.exit(1)


for _game in GAMES:
    _play_command(_game)
