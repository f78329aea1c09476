"""``arena tournament create|list|status|standings|cancel|verify``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click
import grpc
from rich.table import Table

from arena.cli.app import (
    RPC_TIMEOUT_S,
    AppContext,
    ArenaClient,
    cli,
    no_admin_token,
    print_json,
    when,
)
from arena.cli.bot import bot_dict
from arena.cli.errors import (
    ArenaCliError,
    interrupted_creating,
    rpc_error,
)
from arena.cli.format_option import format_option
from arena.cli.game_options import config_of, config_options
from arena.cli.options import GAMES, deadline_option, game_option, json_option, option, server_option, split_bot_id
from arena.cli.pages import every_page
from arena.cli.tables import Col, fit, print_tables
from arena.cli.tournament_status import faults_text, follow, no_worker, queued_after
from arena.cli.tournament_views import (
    failed_note,
    print_standings,
    rules_text,
    separation_rows,
    settled,
    sprt_of,
    sprt_rows,
    standing_dict,
    swiss_paired,
    swiss_rows,
    tournament_dict,
    waiting_text,
)
from arena.core.config import DEFAULTS
from arena.core.limits import TOURNAMENT_BOTS
from arena.core.text import plural
from arena.tournaments.deals import DEAL_PLANS, DEALS_HELP, ROTATE_WARNING
from arena.tournaments.round_robin import MAX_MATCHES
from arena.tournaments.swiss import FIRST_ROUND
from arena.tournaments.until_separated import MIN_DEALS
from arena_sdk.pb import arena_pb2


@cli.group(short_help="Create, follow and cancel tournaments: round robins and Swiss.")
def tournament() -> None:
    """Create tournaments (round robin, until separated, Swiss), follow their progress and standings, cancel
    them."""


def _bot_names(values: Sequence[str]) -> list[str]:
    """The bots of ``--bots a,b@1.0 --bots c``: NAME (its latest version) or NAME@VERSION, in order."""
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    for n in names:
        try:
            split_bot_id(n)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--bots'") from None
    return names


@tournament.command("create", short_help="Create a tournament (optionally wait, or only count it).")
@option("--bots", "bot_lists", multiple=True, metavar="A,B,C",
        help="Registered bots, comma separated (repeatable): NAME (its latest version) or NAME@VERSION.")
@option("--all", "all_bots", is_flag=True,
        help="The newest version of every registered bot NAME of the game (older versions: name them with --bots).")
@game_option
@option("--seats", type=click.IntRange(2, 10), default=None,
        help="Seats per match, k (2..10); default min(number of bots, 4).")
@format_option
@option("--rounds", type=click.IntRange(1, MAX_MATCHES), default=None,
        help=f"Rounds; each round plays new deals. Default: the format's ({DEFAULTS.rounds} for a round robin; a "
             "Swiss's, see --format).")
@option("--first-round", type=click.Choice(FIRST_ROUND), default=None,
        help="Swiss: how round 1 is ordered: rating (the live ladder, the default) or random (drawn from the "
             "tournament's secret seed).")
@option("--deals", type=click.Choice(DEAL_PLANS), default=None,
        help=DEALS_HELP + " rotate: every seat rotation of one deal by the same bots; each bot sees each of its "
                          "deals k times: trusted self-play only.")
@option("--seed", hidden=True, type=str, default=None, expose_value=False, callback=lambda _ctx, _param, value:
        _refuse_seed() if value is not None else None)
@option("--until-separated", is_flag=True,
        help="Keep adding rounds (new deals) until the tournament's batch fit separates every two bots adjacent by "
             "rating (95 % intervals disjoint, over at least 10 deals), checked whenever every queued match is "
             "settled; starts with --rounds rounds.")
@option("--max-matches", type=click.IntRange(1, MAX_MATCHES), default=None, metavar="N",
        help="With --until-separated: stop at the cap when another round would exceed N matches (at least the "
             "first --rounds rounds' matches). Default: 10 rounds' worth.")
@deadline_option
@config_options()
@option("--dry-run", is_flag=True,
        help="Only validate and count: print the number of matches and its formula, queue nothing.")
@option("--wait/--no-wait", default=None,
        help="Show a live progress bar until every match is done. Default: --wait when stdout is a "
             "terminal, --no-wait otherwise (scripts).")
@server_option
@json_option
@click.pass_obj
def tournament_create(app: AppContext, /, bot_lists: Sequence[str], all_bots: bool, game: str, seats: int | None,
                      format_name: str | None, rounds: int | None, first_round: str | None, deals: str | None,
                      until_separated: bool, max_matches: int | None, deadline_ms: int,
                      variants: Sequence[str], dry_run: bool, wait: bool | None, server: str, as_json: bool,
                      **rule_options: Any) -> None:
    """Create a tournament, by default a round robin: every SEATS-subset of the bots plays one match a round, ROUNDS
    times, on the arena's default deals (--deals): unique deals (every table its own deal) while registration is
    open, duplicate deals once the organiser has closed it (each deal is played at up to T = max(1, min(SEATS,
    BOTS // SEATS)) tables by disjoint sets of bots, so no bot, and no two bots of one owner, ever receives cards
    of one deal twice). The deals come from a secret seed the server draws; its SHA-256 (the commitment) is
    printed now, the seed itself is revealed when the tournament has ended, and `arena tournament verify ID` then
    checks every deal. Matches go to the workers through Redis; ratings update as results arrive. With --dry-run
    nothing is queued: the server only counts the matches and deals and says how.

    With --until-separated the tournament grows: once every queued match is settled, the arena fits the
    tournament's results (the batch fit with deal luck taken out, bootstrap intervals over deals) and finishes it
    when every two bots adjacent by rating have disjoint 95 % intervals over at least 10 deals; otherwise it queues
    one more round on new deals, unless that round would take it past --max-matches (then it finishes at the cap).
    `arena tournament status ID` shows the rounds so far, the last check and why it stopped. Each check is a 95 %
    one, repeated every round: bots of equal strength may pass one by luck, the cap bounds that (`arena sprt`
    answers "is version 2 better?" with controlled error rates).

    With --format swiss the bots play ROUNDS rounds (default ceil(log2(BOTS)) + 2, at 2 seats at most the rounds in
    which every pair can be new) of BOTS // SEATS tables: round 1 ordered by rating (or --first-round random), every
    later round paired by the standings so far (points from the game's ranks, then opponents' mean points) once the
    previous round is settled, avoiding repeat meetings; the BOTS mod SEATS bots left over sit out (a bye, worth
    (SEATS - 1) / 2 points), the fewest byes first.

    Examples:

    \b
        arena tournament create --bots random,heuristic,montecarlo --seats 3 --rounds 2 --dry-run
        arena tournament create --all --format swiss --seats 4 --rounds 6
        arena tournament create --bots random,heuristic,montecarlo --seats 3 --rounds 6 --wait
        arena tournament create --all --variant known-cards --limit 33 --no-wait
        arena tournament create --game taki --bots taki-random,taki-heuristic --seats 2 --rounds 3
        arena tournament create --bots mine@1,mine@2 --seats 2 --deals rotate   # trusted self-play only
        arena tournament create --bots random,heuristic,montecarlo --seats 2 --until-separated --max-matches 60
    """
    names = _bot_names(bot_lists)
    if all_bots and names:
        raise click.UsageError("give either --bots or --all, not both")
    client = app.arena(server)
    if all_bots:
        listed = [bot_dict(b) for b in every_page(client, "ListBots", arena_pb2.ListBotsRequest(game=game), "bots")]
        newest: dict[str, dict[str, Any]] = {}  # NAME -> its newest version (the last registered)
        for bot in listed:
            kept = newest.get(bot["name"])
            if kept is None or (bot.get("registered_at") or 0) >= (kept.get("registered_at") or 0):
                newest[bot["name"]] = bot
        names = sorted(b["bot_id"] for b in newest.values())
        if not names:
            raise ArenaCliError(f"no {game} bots registered: `arena bot register NAME HOST:PORT` first")
        if len(names) > TOURNAMENT_BOTS:
            raise ArenaCliError(f"--all found {len(names)} {game} bots; a tournament takes at most {TOURNAMENT_BOTS}: "
                                f"name them with --bots a,b,c (`arena bot list --game {game}` lists them)")
    if not names:
        raise click.UsageError("name the bots with --bots a,b,c (or use --all)")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise click.UsageError(f"bot named more than once: {', '.join(repeated)}")
    if len(names) < 2:
        raise click.UsageError(f"a tournament needs at least 2 bots, got {len(names)}")
    if seats is not None and seats > len(names):
        raise click.UsageError(f"--seats {seats} needs at least {seats} bots, got {len(names)}")
    if until_separated and format_name not in (None, "until_separated"):
        raise click.UsageError(f"--until-separated is the until_separated format; it does not go with --format "
                               f"{format_name}")
    if until_separated:
        format_name = "until_separated"
    until_separated = format_name == "until_separated"  # --format until_separated too: the older fields below
    if max_matches is not None and format_name != "until_separated":
        raise click.UsageError("--max-matches caps a tournament run --until-separated; add --until-separated")
    if max_matches is not None and max_matches < MIN_DEALS:
        click.echo(f"warning: --max-matches {max_matches}: a separation counts only over {MIN_DEALS} deals or more, "
                   f"so this tournament can only stop at its cap", err=True)
    if first_round is not None and format_name != "swiss":
        raise click.UsageError("--first-round orders round 1 of a Swiss; add --format swiss")
    if format_name == "swiss" and deals == "rotate":
        raise click.UsageError("a Swiss plays duplicate or unique deals, not rotate")
    from arena_sdk import wire

    config = config_of(game, variants, rule_options)
    if deals == "rotate":
        click.echo(f"warning: {ROTATE_WARNING}", err=True)
    request = arena_pb2.CreateTournamentRequest(
        game=game, bots=names, seats_per_match=seats or 0,
        rounds=rounds or 0, deals=deals or "",  # 0: the format's default (Format.default_rounds)
        config=wire.config_to_proto(game, config), deadline_ms=deadline_ms, dry_run=dry_run,
        until_separated=until_separated, max_matches=max_matches or 0)
    if format_name and format_name != "until_separated":  # until separated: the older fields above
        from arena.tournaments.formats import get_format

        getattr(request, get_format(format_name).option_field).SetInParent()  # a format without options too
    if first_round:
        request.swiss.first_round = first_round
    t = _create_tournament(client, request)
    if dry_run:
        if as_json:
            print_json(tournament_dict(t))
            return
        on = (f"in {plural(t.rounds, 'round')}, round 1 on {plural(t.deal_count, 'deal')}" if t.format == "swiss"
              else f"on {plural(t.deal_count, 'deal')}")
        click.echo(f"dry run: {plural(t.matches_total, 'match')} {on} "
                   f"({len(t.bots)} bots, "
                   f"{t.seats_per_match} seats, {t.rounds} round{'s' if t.rounds != 1 else ''}, {t.deals} deals)")
        click.echo(f"formula: {t.formula or '(the server gave none)'}")
        click.echo(f"bots: {', '.join(t.bots)}")  # as resolved (NAME -> NAME@VERSION; --all: every one picked)
        if t.format == "swiss":
            click.echo(_swiss_note(t))
        if t.until_separated:
            click.echo(f"until separated: the first {t.matches_total} matches, then a round at a time up to "
                       f"{t.max_matches} matches")
        click.echo("nothing was queued; run the same command without --dry-run to create it")
        return
    if wait is None:
        wait = sys.stdout.isatty() and not as_json
    if as_json and not wait:
        print_json(tournament_dict(t))
        return
    if not as_json:
        counted = f"{plural(t.matches_total, 'match')} ({t.formula})" if t.formula else (
            f"{plural(t.matches_total, 'match')} ({len(t.bots)} bots, {t.seats_per_match} seats, "
            f"{t.rounds} round{'s' if t.rounds != 1 else ''})")
        if t.format == "swiss":  # the formula says the rounds paired (and queued) so far
            counted = f"{t.formula}; each later round is paired and queued once the previous one is settled"
        click.echo(f"tournament {t.id}: {counted}; seed commitment (SHA-256) {t.seed_commitment}, the seed is "
                   f"revealed when the tournament has ended")
        click.echo(f"bots: {', '.join(t.bots)}")  # a NAME given is its latest version: which one it is
    if not wait:
        click.echo(f"follow it with `arena tournament status {t.id} --watch`")
        return
    t = follow(app, client, t, quiet=as_json)
    if as_json:
        print_json(tournament_dict(t))
    else:
        click.echo(f"tournament {t.id} {t.state}: {t.matches_done}/{t.matches_total} matches{failed_note(t)}, "
                   f"{t.faults} faults; see `arena tournament standings {t.id}` and `arena ladder`")
        if t.stop_reason:
            click.echo(f"stopped: {t.stop_reason}")


def _swiss_note(t: Any) -> str:
    """The dry run's line about a Swiss ("" for other formats)."""
    if t.format != "swiss":
        return ""
    return (f"Swiss: round 1 is queued at creation (ordered by {t.first_round}); each later round is paired when "
            f"the previous one is settled")


BOTS_DOWN_HINT = ("start the bot processes and `arena bot update` their endpoints, or leave them out (--bots "
                  "NAME,...; `arena bot remove NAME` for good)")


def _create_tournament(client: ArenaClient, request: Any) -> Any:
    """CreateTournament; a refusal is the one-line ``rpc_error`` with the server's message, which names the bots
    that do not answer (FAILED_PRECONDITION "bots not answering: ..."), followed by ``BOTS_DOWN_HINT`` then, unless
    the message says what to do already."""
    try:
        return client.stub.CreateTournament(request, timeout=RPC_TIMEOUT_S)
    except KeyboardInterrupt as exc:  # the arena may have created it already: say how to find it
        raise interrupted_creating("tournament", exc) from None
    except grpc.RpcError as exc:
        details = exc.details() if callable(getattr(exc, "details", None)) else None
        advised = "arena bot update" in (details or "")  # the server's message says what to do
        hints = {grpc.StatusCode.FAILED_PRECONDITION: BOTS_DOWN_HINT} \
            if "not answering" in (details or "") and not advised else {}
        raise rpc_error(exc, client.server, {**hints, **no_admin_token(exc)}) from None


@tournament.command("list", short_help="List tournaments, newest first.")
@option("--game", type=click.Choice(GAMES), default=None, help="Only the tournaments of this game.")
@server_option
@json_option
@click.pass_obj
def tournament_list(app: AppContext, game: str | None, server: str, as_json: bool) -> None:
    """List the tournaments, newest first: id, format (round_robin, swiss, sprt, until_separated), state,
    progress, faults, seats, rounds, creation time, bots; at a narrow terminal the last ones are left out first
    (a line says which; --json has every field).

    Example:

    \b
        arena tournament list --json
    """
    tournaments = every_page(app.arena(server), "ListTournaments", arena_pb2.ListTournamentsRequest(game=game or ""),
                             "tournaments")
    if as_json:
        print_json([tournament_dict(t) for t in tournaments])
        return
    if not tournaments:
        click.echo("no tournaments yet: `arena tournament create --all`")
        return
    columns = [Col("id", justify="left"), Col("format", justify="left", drop=2), Col("state", justify="left"),
               Col("game", justify="left", drop=3), Col("progress"), Col("faults", drop=4),
               Col("seats", drop=6), Col("rounds", drop=5), Col("created", justify="left", drop=1),
               Col("bots", cells="words", justify="left", drop=7)]
    rows = []
    for t in tournaments:
        progress = f"{t.matches_done}/{t.matches_total}"
        if t.matches_failed:
            progress += f" ({t.matches_failed} failed)"
        rows.append([t.id, t.format or "round_robin", t.state, t.game, progress, str(t.faults),
                     str(t.seats_per_match), str(t.rounds), when(t.created_at), ", ".join(t.bots)])
    shown = fit(columns, rows, app.console.width)
    print_tables(app.console, [shown.table("Tournaments", rows)], shown.note())


@tournament.command("status", short_help="Show a tournament's progress and standings.")
@click.argument("tournament_id", metavar="ID")
@option("--watch", is_flag=True, help="Show a live progress bar until every match is done.")
@server_option
@json_option
@click.pass_obj
def tournament_status(app: AppContext, tournament_id: str, watch: bool, server: str, as_json: bool) -> None:
    """Show a tournament's progress (matches done, faults, state) and its standings so far (rank, bot, points,
    matches, mean score, Elo performance).

    Example:

    \b
        arena tournament status t3 --watch
    """
    client = app.arena(server)
    t = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=tournament_id))
    if watch and not settled(t):
        t = follow(app, client, t, quiet=as_json)
    standings = client.call("GetStandings", arena_pb2.GetStandingsRequest(id=t.id))
    if as_json:
        data = tournament_dict(t)
        data["standings"] = [standing_dict(e) for e in standings.entries]
        data["fit_matches"] = standings.fit_matches
        print_json(data)
        return
    table = Table(title=f"Tournament {t.id}", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    sprt = sprt_of(client, t)
    progress = f"{t.matches_done}/{t.matches_total} matches"
    if paired := swiss_paired(t):  # matches_total counts every round's matches, paired or not
        progress += f", {paired}"
    notes = []
    if t.matches_failed:
        notes.append(f"{t.matches_failed} failed: given up after repeated platform errors, not rated")
    if t.matches_cancelled:
        why = "after the verdict" if sprt is not None and sprt.verdict else "by the cancellation"
        notes.append(f"{t.matches_cancelled} dropped {why}")
    if notes:
        progress += f" ({'; '.join(notes)})"
    waiting = waiting_text(t)
    rows = [
        ("state", t.state),
        ("progress", progress),
        *([("waiting for", waiting)] if waiting else []),
        *([("queued after", ahead)] if (ahead := queued_after(client, t)) else []),
        *([("workers", idle)] if (idle := no_worker(client, t)) else []),
        ("faults", faults_text(client, t)),
        ("game", t.game),
        ("bots", ", ".join(t.bots)),
        ("seats per match", str(t.seats_per_match)),
        ("format", t.format or "round_robin"),
        ("rounds", str(t.rounds) + (" so far" if t.until_separated and t.state == "running" else "")),
        ("matches", t.formula or str(t.matches_total)),
        *separation_rows(t),
        *sprt_rows(sprt),
        *swiss_rows(t),
        ("deals", f"{t.deals}: {t.deal_count} deals, up to {t.tables_per_deal} "
                  f"table{'s' if t.tables_per_deal != 1 else ''} each"),
        ("seed commitment", t.seed_commitment or "-"),
        ("seed", t.seed_hex or "secret until the tournament has ended"),
        ("rules", rules_text(t)),
        ("deadline", f"{t.deadline_ms} ms"),
        ("created", when(t.created_at)),
    ]
    for k, v in rows:
        table.add_row(k, v)
    app.console.print(table)
    print_standings(app, t.id, standings.entries, t.game, standings)


@tournament.command("standings", short_help="Show a tournament's standings.")
@click.argument("tournament_id", metavar="ID")
@server_option
@json_option
@click.pass_obj
def tournament_standings(app: AppContext, tournament_id: str, server: str, as_json: bool) -> None:
    """Show the standings of one tournament: rank (by points), bot, points (per match, 1 for every opponent
    finished ahead of and 1/2 per tie), matches, mean score (the game's score, e.g. Take 5 bullheads, Taki cards held:
    lower is better in both), score rate
    (points per pair, 0..1), Elo performance (mean opponent rating + 400 x (wins - losses) / pairs), and from the
    batch fit of this tournament's results (deal luck taken out, mean 1500): rating ± margin (half the 95 %
    interval, Elo points) and LOS next (likelihood of superiority over the next line down). The fit is cached per
    number of matches done; while the tournament runs a newer one is computed in the background.

    Example:

    \b
        arena tournament standings t3 --json
    """
    client = app.arena(server)
    reply = client.call("GetStandings", arena_pb2.GetStandingsRequest(id=tournament_id))
    if as_json:
        print_json({"tournament_id": reply.tournament_id or tournament_id, "fit_matches": reply.fit_matches,
                    "fit_computed_at": reply.fit_computed_at or None, "fit_refreshing": reply.fit_refreshing,
                    "entries": [standing_dict(e) for e in reply.entries]})
        return
    game = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=reply.tournament_id or tournament_id)).game
    print_standings(app, reply.tournament_id or tournament_id, reply.entries, game or None, reply)


@tournament.command("cancel", short_help="Cancel a tournament (queued matches are dropped).")
@click.argument("tournament_id", metavar="ID")
@server_option
@json_option
@click.pass_obj
def tournament_cancel(app: AppContext, tournament_id: str, server: str, as_json: bool) -> None:
    """Cancel a tournament: matches not yet started are dropped; running ones finish and count.

    Example:

    \b
        arena tournament cancel t3
    """
    client = app.arena(server)
    before = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=tournament_id))
    t = client.call("CancelTournament", arena_pb2.CancelTournamentRequest(id=tournament_id))
    if as_json:
        data = tournament_dict(t)
        data["matches_dropped_now"] = t.matches_dropped_now
        data["cancelled_now"] = before.state == "running"
        print_json(data)
        return
    what = "SPRT" if t.format == "sprt" else "tournament"
    if before.state != "running":
        click.echo(f"{what} {t.id} was already {before.state}; nothing changed: {t.matches_done}/"
                   f"{t.matches_total} matches done, {t.matches_cancelled} dropped{failed_note(t)}")
        return
    unsettled = t.matches_total - t.matches_done - t.matches_cancelled - t.matches_failed
    click.echo(f"{what} {t.id} cancelled: {t.matches_dropped_now} queued "
               f"match{'es' if t.matches_dropped_now != 1 else ''} dropped; {t.matches_done}/{t.matches_total} done"
               f"{failed_note(t)}" + (f"; {unsettled} already with a worker: those being played finish and count, "
                                      f"those a worker read ahead but has not started are dropped" if unsettled
                                      else ""))


def _refuse_seed() -> None:
    """``--seed`` of ``tournament create`` (hidden, kept to explain itself): always a usage error."""
    raise click.UsageError("a tournament takes no --seed: its deals come from a secret seed the server draws, "
                           "publishes as a commitment and reveals when the tournament has ended (`arena tournament "
                           "verify ID` then checks every deal); `arena play --seed` reproduces a local game")
