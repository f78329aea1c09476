"""``arena sprt V1 V2 [options]`` (= ``arena sprt start``) and ``arena sprt show ID``: is my V2 better than V1?"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from arena.cli.app import POLL_INTERVAL_S, AppContext, ArenaClient, PlainLines, RefereeAway, cli, print_json
from arena.cli.errors import (
    ArenaCliError,
    interrupted_creating,
    interruption,
)
from arena.cli.game_options import config_of, config_options
from arena.cli.options import deadline_option, game_option, json_option, option, server_option, split_bot_id
from arena.cli.sprt_report import (
    all_alike,
    expected_text,
    print_sprt,
    progress_line,
    sprt_dict,
    unit,
    unsettled,
)
from arena.cli.tournament_status import no_worker, queued_after
from arena.core.text import plural
from arena.ratings.score_sprt import expected_blocks
from arena.tournaments.deals import DEALS_HELP
from arena.tournaments.sprt_plan import SCORE, SPRT_DEAL_PLANS, STATISTICS
from arena_sdk.pb import arena_pb2

ELO1 = 5.0  # --elo1 of a test on pairwise points (Elo)
PAIRED_ELO1 = 20.0  # --elo1 of a paired test on the relative score (normalized Elo): about 800 blocks at 5 %/5 %


class _DefaultStart(click.Group):
    """``arena sprt V1 V2 ...`` runs ``arena sprt start V1 V2 ...``: any first word that is not a subcommand (nor
    --help) starts a test."""

    NOT_BOTS = ("stop", "abort", "delete", "remove", "list", "status", "watch")  # commands people reach for

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.NOT_BOTS:
            raise click.UsageError(f"no command {args[0]!r} here: `arena sprt cancel ID` stops a test, `arena sprt "
                                   f"show ID [--watch]` shows one, `arena tournament list` lists them", ctx)
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["start", *args]
        return super().parse_args(ctx, args)


@cli.group(cls=_DefaultStart, short_help="Is my V2 better than V1? A sequential test (SPRT) through the queue.")
def sprt() -> None:
    """Is V2 better than V1? `arena sprt V1 V2` (short for `arena sprt start V1 V2`) plays paired blocks through
    the arena's queue until a sequential probability ratio test decides; `arena sprt show ID` shows one (and
    `--watch` follows it again); `arena sprt cancel ID` stops one.

    The quickest to decide a small difference: a paired test against the arena's house bots (--house). Without
    --house or --field, V1 plays V2 head to head on 2 seats, which takes many more blocks. A test's matches count
    in the test only, not on the public ladder, unless given --ladder.

    Examples:

    \b
        arena sprt mybot@1 mybot@2 --house heuristic,heuristic,heuristic --elo1 40   # paired, 4 seats, off the ladder
        arena sprt mybot@1 mybot@2                          # head to head on 2 seats, elo0 0, elo1 5
        arena sprt mybot@1 mybot@2 --elo0 -5 --elo1 0       # is V2 no worse? (a non-regression test)
        arena sprt mybot@1 mybot@2 --seats 3 --field random,heuristic,montecarlo,random-2
        arena sprt show t7 --watch
        arena sprt cancel t7
    """


def _names(values: Sequence[str], option_name: str) -> list[str]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    for n in names:
        try:
            split_bot_id(n)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=f"'{option_name}'") from None
    return names


def _check_ref(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        split_bot_id(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value.strip()


@sprt.command("start", short_help="Start an SPRT of V2 against V1 and follow it to its verdict.")
@click.argument("v1", metavar="V1", callback=_check_ref)
@click.argument("v2", metavar="V2", callback=_check_ref)
@game_option
@option("--elo0", type=float, default=0.0, show_default=True,
        help="H0: V2 is ELO0 Elo points better than V1 (negative: worse). Normalized Elo in a paired test on the "
             "relative score (see --statistic).")
@option("--elo1", type=float, default=None,
        help="H1: V2 is ELO1 Elo points better; above ELO0: the smallest gain worth finding (halving the gap "
             "ELO1 - ELO0 takes about 4 times the blocks). Normalized Elo in a paired test on the relative score. "
             f"Default: {PAIRED_ELO1:g} in a paired test on the relative score (--house; about "
             f"{expected_blocks(0, PAIRED_ELO1):,.0f} blocks to decide, said at the start), else {ELO1:g}.")
@option("--alpha", type=click.FloatRange(1e-6, 0.5, max_open=True), default=0.05, show_default=True,
        help="Chance of accepting H1 when H0 holds (a false 'better').")
@option("--beta", type=click.FloatRange(1e-6, 0.5, max_open=True), default=0.05, show_default=True,
        help="Chance of accepting H0 when H1 holds (a missed improvement).")
@option("--seats", type=click.IntRange(2, 10), default=None,
        help="Seats per table, k. Default 2 without --field; with one, min(4, 1 + field bots / 2).")
@option("--field", "field_lists", multiple=True, metavar="A,B,C",
        help="Bots for the other seats (repeatable, comma separated; NAME or NAME@VERSION). The two tables of a "
             "block get different field bots, so the field needs at least 2 x (seats - 1) bots, of owners that "
             "can be split over the two tables. Without it: V1 against V2 on 2 seats (your own versions only).")
@option("--house", "house_lists", multiple=True, metavar="A,B",
        help="Paired test with common random numbers: the arena's own house bots for the other seats, in order "
             "(sample names, e.g. heuristic,heuristic,heuristic or house:random; one per other seat, a name may "
             "repeat; montecarlo caps its decisions at 40 ms of wall time, so on a busy machine its games depend on "
             "timing and fewer blocks stay alike). "
             "Each block is one scenario (deal, V1's seat, house bots, every seat's seed) played once with V1 and "
             "once with V2, so far fewer blocks decide a small difference. Not on the public ladder.")
@option("--statistic", type=click.Choice(STATISTICS), default=None,
        help="What a paired test (--house) compares. score (its default): whether V2 ended better, alike or "
             "worse than V1 in the same scenario, by its relative score (how much better its game score is than "
             "the other seats' mean): a paired sign test whose ELO0 and ELO1 are normalized Elo (mean / sd of "
             "that sign, scaled as fishtest's normalized Elo); it decides a small difference in the fewest "
             "matches. points: pairwise points from the ranks, in Elo points, as without --house (the only "
             "choice there).")
@option("--deals", type=click.Choice(SPRT_DEAL_PLANS), default=None,
        help=DEALS_HELP + " With --ladder, an SPRT of two versions of one owner on duplicate deals (the tables of a "
                          "block share the cards) still does not count on the public ladder; on unique deals it "
                          "does.")
@option("--ladder/--off-ladder", default=False, show_default=True,
        help="Whether the test's matches also count on the public ladder. Off by default: an A/B test plays many "
             "matches between two versions, which would fill the ladder (they count in the test only). --ladder "
             "counts them where the deal plan allows (unique deals, or V1 and V2 of two owners; never a paired "
             "test).")
@option("--window", type=click.IntRange(1, 64), default=8, show_default=True,
        help="Blocks in flight (each is 2 matches).")
@option("--max-blocks", type=click.IntRange(1, 20_000), default=5_000, show_default=True,
        help="Stop undecided ('inconclusive') after this many blocks.")
@deadline_option
@config_options()
@option("--wait/--no-wait", default=True, show_default=True,
        help="Follow the test to its verdict (Ctrl-C stops following, not the test); --no-wait only starts it.")
@server_option
@json_option
@click.pass_obj
def sprt_start(app: AppContext, /, v1: str, v2: str, game: str, elo0: float, elo1: float | None, alpha: float,
               beta: float,
               seats: int | None, field_lists: Sequence[str], house_lists: Sequence[str], statistic: str | None,
               deals: str | None, ladder: bool,
               window: int, max_blocks: int,
               deadline_ms: int, variants: Sequence[str], wait: bool, server: str, as_json: bool,
               **rule_options: Any) -> None:
    """Start an SPRT: is V2 better than V1 by ELO1 Elo points (H1) rather than by ELO0 (H0)?

    The arena plays blocks through its queue: one block is two tables, V1 at seat s of one and V2 at seat s of the
    other (s rotating), on one deal of a secret seed (--deals duplicate: both versions get the same cards) or on a
    deal of its own each (--deals unique, the default while registration is open); after each block the
    log-likelihood ratio (LLR) is updated, and the test stops when it leaves [lower, upper] (Wald's bounds from
    ALPHA and BETA): above, H1 (V2 is better); below, H0 (it is not). Without --field the two tables are V1
    against V2 and V2 against V1 (2 seats; on duplicate deals V1 and V2 must be versions of one owner, for they
    see each deal twice).
    With --field the other seats are held by field bots, different ones at the two tables, so no other bot sees
    a deal twice. It prints live progress, then the verdict, the LLR and bounds, the blocks played and the Elo
    estimate of V2 over V1 +/- its 95 % margin. Exit code 0 on a verdict (H1, H0 or inconclusive), 1 when the test
    was cancelled. The test runs on the server: Ctrl-C only stops following it (`arena sprt show ID --watch`
    follows it again; `arena sprt cancel ID` stops it). Its matches count in the test only, not on the public
    ladder, unless given --ladder (then they count, except those of two versions of one owner on duplicate deals,
    which share the cards; the status says which). Needs the admin token.

    Examples:

    \b
        arena sprt mybot@1 mybot@2 --house heuristic,heuristic,heuristic --elo1 40   # paired, 4 seats, off the ladder
        arena sprt mybot@1 mybot@2 --house heuristic,heuristic,heuristic             # paired, --elo1 20 nElo
        arena sprt mybot@1 mybot@2                  # the same as: arena sprt start mybot@1 mybot@2
        arena sprt start mybot@1 mybot@2 --no-wait
        arena sprt mybot@1 mybot@2 --elo0 0 --elo1 10 --alpha 0.05 --beta 0.1 --json
        arena sprt mybot@1 mybot@2 --seats 3 --field random,heuristic,montecarlo,random-2
    """
    field = _names(field_lists, "--field")
    house = [n if n.startswith("house:") else f"house:{n}" for v in house_lists for n in v.split(",") if n.strip()
             for n in [n.strip()]]
    if field and house:
        raise click.UsageError("--house and --field both name the other seats' bots: give one of them")
    if "house:montecarlo" in house and not as_json:
        click.echo("note: house:montecarlo caps each decision at 40 ms of wall time: on a busy machine its choices "
                   "depend on timing, so the two tables of a block can part where V1 and V2 decided alike (fewer "
                   "blocks alike, more matches to decide); house:heuristic is deterministic", err=True)
    if house and ladder and not as_json:  # accepted, as the arena does: said, since it changes nothing
        click.echo("note: --ladder does not apply to a paired test with house bots: its matches are always off the "
                   "public ladder (house bots are not on it)", err=True)
    if statistic == SCORE and not house:
        raise click.UsageError("--statistic score is the paired test's: give --house bots for the other seats")
    if elo1 is None:
        elo1 = PAIRED_ELO1 if house and (statistic or SCORE) == SCORE else ELO1
    if v1 == v2:
        raise click.UsageError(f"V1 and V2 are both {v1}: name two versions, e.g. mybot@1 mybot@2")
    for flag, value in (("--elo0", elo0), ("--elo1", elo1)):
        if not math.isfinite(value):
            raise click.UsageError(f"{flag} must be a finite number (Elo points; normalized Elo with --house), "
                                   f"got {value:g}")
    if not elo0 < elo1:
        raise click.UsageError(f"--elo0 must be below --elo1, got {elo0:g} and {elo1:g} (e.g. --elo0 0 --elo1 5)")
    if v1 in field or v2 in field:
        raise click.UsageError("--field names the other seats' bots: V1 and V2 cannot be in it")
    from arena_sdk import wire

    config = config_of(game, variants, rule_options)
    request = arena_pb2.CreateSprtRequest(
        game=game, v1=v1, v2=v2, field=field, house=house, seats=seats or 0, elo0=elo0, elo1=elo1, alpha=alpha,
        beta=beta,
        window=window, max_blocks=max_blocks, config=wire.config_to_proto(game, config), deadline_ms=deadline_ms,
        deals=deals or "", statistic=statistic or "", off_ladder=not ladder)
    client = app.arena(server)
    try:
        s = client.call("CreateSprt", request)
    except KeyboardInterrupt as exc:  # the arena may have created it already: say how to find it
        raise interrupted_creating("SPRT", exc) from None
    with _detach_on_interrupt(s.tournament.id):
        _started(app, client, s, wait, as_json)


def _started(app: AppContext, client: ArenaClient, s: Any, wait: bool, as_json: bool) -> None:
    tid = s.tournament.id
    if not as_json:
        click.echo(f"SPRT {tid}: {s.v2} (V2) against {s.v1} (V1), {s.seats} seats"
                   + (f", field {', '.join(s.field)}" if s.field else "")
                   + (f", house bots {', '.join(s.house)} (paired, common random numbers)" if s.house else "")
                   + f"; H0 {unit(s)} {s.elo0:g}, H1 {unit(s)} {s.elo1:g}, alpha {s.alpha:g}, beta {s.beta:g}: "
                   f"LLR bounds "
                   f"[{s.lower:.2f}, {s.upper:.2f}]; {s.tournament.deals} deals; seed commitment (SHA-256) "
                   f"{s.tournament.seed_commitment}")
        click.echo(f"ladder: {s.ladder_note}")
        click.echo(expected_text(s))
        ahead = queued_after(client, s.tournament)
        if ahead:  # its blocks wait behind those
            click.echo(f"queued after {ahead}")
        idle = no_worker(client, s.tournament)
        if idle:
            click.echo(idle)
    if not wait:
        if as_json:
            print_json(sprt_dict(s))
        else:
            click.echo(f"follow it with `arena sprt show {tid} --watch`; stop it with `arena sprt cancel {tid}`")
        return
    _finish(app, _follow(app, client, s, quiet=as_json), as_json)


@sprt.command("show", short_help="Show an SPRT (--watch: follow it to its verdict).")
@click.argument("tournament_id", metavar="ID")
@option("--watch", is_flag=True, help="Follow the test with live progress until its verdict (Ctrl-C stops "
                                      "following, not the test).")
@server_option
@json_option
@click.pass_obj
def sprt_show(app: AppContext, tournament_id: str, watch: bool, server: str, as_json: bool) -> None:
    """Show an SPRT: its versions and parameters, blocks played, LLR within its bounds, the Elo estimate of V2 over
    V1 +/- its 95 % margin and, once decided, the verdict. With --watch, follow it until the verdict first (exit
    code 0 on a verdict, 1 when it was cancelled).

    Example:

    \b
        arena sprt show t7 --watch
    """
    client = app.arena(server)
    s = client.call("GetSprt", arena_pb2.GetSprtRequest(id=tournament_id))
    if watch:
        with _detach_on_interrupt(s.tournament.id):
            s = _follow(app, client, s, quiet=as_json)
        _finish(app, s, as_json)
        return
    if as_json:
        print_json(sprt_dict(s))
    else:
        print_sprt(s)


@sprt.command("cancel", short_help="Stop an SPRT (as `arena tournament cancel`).")
@click.argument("tournament_id", metavar="ID")
@server_option
@json_option
@click.pass_context
def sprt_cancel(ctx: click.Context, tournament_id: str, server: str, as_json: bool) -> None:
    """Stop an SPRT: its blocks not yet started are dropped, the matches being played finish and count; the seed is
    revealed once they are over. The same as `arena tournament cancel ID`.

    Example:

    \b
        arena sprt cancel t7
    """
    from arena.cli.tournament import tournament_cancel

    app: AppContext = ctx.obj
    app.arena(server).call("GetSprt", arena_pb2.GetSprtRequest(id=tournament_id))  # an SPRT's id, or it says not
    ctx.invoke(tournament_cancel, tournament_id=tournament_id, server=server, as_json=as_json)


class LiveLine(Progress):
    """The live display of an SPRT: a spinner, "SPRT ID", the LLR as a bar from H0 to H1 and the time since the
    start, with the task's ``line`` field (blocks, LLR, Elo) after the bar when the console has room for it and a bar
    of ``BAR_MIN`` columns, else on a row of its own under them, wrapped between words: a number is never cut."""

    BAR = 40  # columns of the bar when there is room
    BAR_MIN = 16

    def __init__(self, **kwargs: Any) -> None:
        self._bar = BarColumn(bar_width=self.BAR)
        head = (SpinnerColumn(), TextColumn("SPRT {task.description}"), TextColumn("H0"), self._bar)
        self._beside = (*head, TextColumn("H1 · {task.fields[line]}"), TimeElapsedColumn())
        super().__init__(*head, TextColumn("H1"), TimeElapsedColumn(), **kwargs)

    def get_renderables(self) -> Iterable[RenderableType]:
        tasks = [t for t in self.tasks if t.visible]
        if not tasks:  # also while Progress.__init__ makes its Live, before self.console exists
            yield self.make_tasks_table(tasks)
            return
        self._bar.bar_width = self.BAR_MIN
        beside = self._grid(self._beside, tasks)
        spare = self.console.width - Measurement.get(self.console, self.console.options.update_width(10_000),
                                                     beside).maximum
        if spare >= 0:
            self._bar.bar_width = min(self.BAR, self.BAR_MIN + spare)
            yield self._grid(self._beside, tasks)
            return
        self._bar.bar_width = self.BAR
        yield self.make_tasks_table(tasks)
        for t in tasks:
            yield Text(f"  {t.fields.get('line', '')}")

    @staticmethod
    def _grid(columns: Sequence[ProgressColumn], tasks: Sequence[Task]) -> Table:
        """One row of ``columns`` per task (``Progress.make_tasks_table`` with other columns)."""
        grid = Table.grid(*(c.get_table_column().copy() for c in columns), padding=(0, 1))
        for t in tasks:
            grid.add_row(*(c(t) for c in columns))
        return grid


def _over(s: Any) -> bool:
    return bool(s.verdict) or s.tournament.state != "running"


@contextmanager
def _detach_on_interrupt(tid: str) -> Iterator[None]:
    """Ctrl-C (or SIGTERM) inside the block stops following SPRT ``tid`` (exit 130 / 143) with a message saying how
    to follow it again and how to stop it; the test keeps running on the server."""
    try:
        yield
    except KeyboardInterrupt as exc:
        raise interruption(f"stopped following; SPRT {tid} keeps running on the server: `arena sprt show "
                                 f"{tid} --watch` follows it again, `arena sprt cancel {tid}` stops it", exc) from None


SETTLE_WAIT_S = 300.0  # after a verdict, how long `arena sprt` waits for the matches still being played


def _follow(app: AppContext, client: ArenaClient, s: Any, *, quiet: bool = False) -> Any:
    """Poll GetSprt every POLL_INTERVAL_S behind a live line (a bar of the LLR between its bounds) until the test
    has a verdict or its tournament is no longer running, then, after a verdict, until the matches still being
    played have ended (every match of the test settled: its seed is shown then), for at most ``SETTLE_WAIT_S``;
    returns the last ``Sprt``. A referee that does not answer (UNAVAILABLE: restarting) is asked again for up to
    ``REFEREE_AWAY_S`` seconds before the one-line error."""
    tid = s.tournament.id
    console = Console(stderr=True) if quiet else app.console

    def position(x: Any) -> float:
        return float(min(max(x.llr, x.lower), x.upper) - x.lower)

    with LiveLine(console=console, disable=quiet or not console.is_terminal) as progress:  # else plain lines
        task = progress.add_task(tid, total=s.upper - s.lower, completed=position(s),  # type: ignore[arg-type]  # rich takes a float
                                 line=progress_line(s))
        away = RefereeAway(client)  # a referee restarting: the test goes on in Redis and the workers
        settle_by: float | None = None  # after a verdict: until when the matches still being played are waited for
        alike_said = False  # the note that V1 and V2 play alike, written once where no live line shows it
        plain = PlainLines(console, quiet)  # output to a file or a pipe: a plain line now and then
        while True:
            plain.say(f"SPRT {tid}: {progress_line(s)}" + (f" as last seen; {away.note}" if away.note else ""))
            if _over(s):
                if not s.verdict or s.tournament.seed_hex:  # the seed is shown once every match has settled
                    break
                settle_by = settle_by or time.monotonic() + SETTLE_WAIT_S
                if time.monotonic() >= settle_by:
                    break
                progress.update(task, line=f"verdict {s.verdict}; waiting for the {plural(unsettled(s), 'match')} "
                                           f"still being played (the seed is shown once they end)")
            time.sleep(POLL_INTERVAL_S)
            reply = away.ask("GetSprt", arena_pb2.GetSprtRequest(id=tid))
            if reply is None:
                progress.update(task, line=away.note)
                continue
            s = reply
            progress.update(task, completed=position(s), line=progress_line(s))
            if not alike_said and all_alike(s) and (quiet or not console.is_terminal):  # no live line to show it
                click.echo(f"note: after {plural(s.blocks, 'block')} V2 has ended exactly as V1 in every one: V1 "
                           f"and V2 may be the same bot; `arena sprt cancel {tid}` stops the test", err=True)
                alike_said = True
    return s


def _finish(app: AppContext, s: Any, as_json: bool) -> None:
    """Print the outcome of a followed test; ``ArenaCliError`` (exit 1) when it ended without a verdict."""
    if as_json:
        print_json(sprt_dict(s))
    else:
        print_sprt(s)
    if not s.verdict:
        if as_json:
            sys.exit(1)
        raise ArenaCliError(f"SPRT {s.tournament.id} was {s.tournament.state} after {plural(s.blocks, 'block')}, "
                            f"without a verdict")
