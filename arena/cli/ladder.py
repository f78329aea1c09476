"""``arena ladder`` (``--method elo|fit``, ``--json``, and ``--rebuild``)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import click
from rich.table import Table

from arena.cli.app import RPC_TIMEOUT_S, AppContext, ArenaClient, cli, print_json
from arena.cli.errors import ArenaCliError
from arena.cli.options import game_option, json_option, option, server_option
from arena.cli.tables import Col, Fit, fit, print_tables
from arena.ratings.groups import group_sections, groups_note, removed_groups
from arena.ratings.margins import MIN_MATCHES
from arena_sdk.pb import arena_pb2


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _optional(msg: Any, name: str) -> float | None:
    return getattr(msg, name) if msg.HasField(name) else None


def _ladder_entries(ladder_msg: Any) -> list[dict[str, Any]]:
    entries = sorted(ladder_msg.entries, key=lambda e: (e.group or math.inf, e.rank, -e.rating, e.bot))
    return [{"rank": e.rank, "bot": e.bot, "rating": e.rating, "margin": _finite(_optional(e, "margin")),
             "low": _finite(_optional(e, "low")), "high": _finite(_optional(e, "high")),
             "los_next": _optional(e, "los_next"), "matches": e.matches, "wins": e.wins,
             "mean_score": e.mean_score, "unbounded": _optional(e, "margin") == math.inf, "owner": e.owner,
             "group": e.group or None, "too_few_matches": e.too_few_matches, "removed": e.removed}
            for e in entries]


def rating_text(rating: float, margin: float | None, unbounded: bool = False, too_few: bool = False) -> str:
    """"1523.4 ± 41.2" (Elo points), "1523.4 (too few matches)" for a bot with too few matches for a margin,
    "1523.4 ± inf" for an unbounded margin (older arenas), "1523.4" when there is none."""
    if too_few:
        return f"{rating:.1f} (too few matches)"
    if unbounded:
        return f"{rating:.1f} ± inf"
    return f"{rating:.1f}" if margin is None else f"{rating:.1f} ± {margin:.1f}"


def los_text(los_next: float | None) -> str:
    """A likelihood of superiority as a percentage with one decimal ("97.3 %"), "-" when there is none; never "100.0 %"
    or "0.0 %" for a value that is not exactly 1 or 0 ("> 99.9 %", "< 0.1 %")."""
    if los_next is None:
        return "-"
    text = f"{100 * los_next:.1f} %"
    if text == "100.0 %" and los_next < 1:
        return "> 99.9 %"
    if text == "0.0 %" and los_next > 0:
        return "< 0.1 %"
    return text


def los_cell(los_next: float | None, too_few: bool, below_too_few: bool) -> str:
    """``los_text``, or "-" when either of the two bots it compares (this line's, ``too_few``, and the next
    line's, ``below_too_few``) has too few matches for its rating to mean much (as the web pages show it)."""
    return "-" if too_few or below_too_few else los_text(los_next)


def _ladder_rows(entries: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The cells of each ladder entry (one group's, in order), one per column of ``_ladder_fit``."""
    rows = []
    for e, below in zip(entries, [*entries[1:], None]):
        few = bool(e.get("too_few_matches"))
        bot = e["bot"] + (" (removed)" if e.get("removed") else "")
        rows.append([str(e["rank"]), bot, rating_text(e["rating"], e.get("margin"), e.get("unbounded", False),
                                                           few),
                     str(e["matches"]), los_cell(e.get("los_next"), few, bool(below and below.get("too_few_matches"))),
                     str(e["wins"]), f"{e['mean_score']:.2f}"])
    return rows


def _ladder_fit(entries: Sequence[dict[str, Any]], game: str, width: int) -> Fit:
    """The columns of a ladder table of ``entries`` kept at ``width`` terminal columns."""
    from arena.render import score_unit

    columns = [Col("rank", "#"), Col("bot", cells="name", justify="left"), Col("rating ± 95 %", "Elo ± 95 %"),
               Col("matches", drop=2), Col("LOS next", "LOS", drop=1), Col("wins", drop=3),
               Col(f"mean {score_unit(game)}", drop=4)]
    return fit(columns, _ladder_rows(entries), width)


def group_tables(title: str, entries: Sequence[dict[str, Any]], game: str, groups: int,
                 width: int) -> tuple[list[Table], str]:
    """One table for a ladder of one group; with more groups, one table per group (entries of group 0, not
    counted yet, in a table of their own), each titled with its group (``arena.ratings.groups.group_sections``);
    every table keeps the same columns for a terminal of ``width`` columns. Also the line naming the columns
    left out ("" when none was)."""
    shown = _ladder_fit(entries, game, width)
    tables: list[Table] = []
    for head, part in group_sections(entries, lambda e: e.get("group") or 0, groups):
        tables.append(shown.table(f"{title}\n{head}" if head and not tables else head or title,
                                  _ladder_rows(part)))
    return tables, shown.note()


def ladder_differences(rebuilt: Sequence[dict[str, Any]], live: Sequence[dict[str, Any]],
                       tolerance: float = 1e-6) -> list[str]:
    """Every way two ladders (lists of entry dicts: bot, rating, matches, wins, mean_score) differ, one sentence
    each; [] when they agree on every bot (ratings and mean scores to ``tolerance``)."""
    a = {e["bot"]: e for e in rebuilt}
    b = {e["bot"]: e for e in live}
    out = []
    for bot_id in sorted(set(a) | set(b)):
        if bot_id not in a:
            out.append(f"{bot_id} is on the live ladder only")
            continue
        if bot_id not in b:
            out.append(f"{bot_id} is on the rebuilt ladder only")
            continue
        for key in ("rating", "mean_score"):
            if abs(a[bot_id][key] - b[bot_id][key]) > tolerance:
                out.append(f"{bot_id}: {key} rebuilt {a[bot_id][key]:.6f}, live {b[bot_id][key]:.6f}")
        for key in ("matches", "wins"):
            if a[bot_id][key] != b[bot_id][key]:
                out.append(f"{bot_id}: {key} rebuilt {a[bot_id][key]}, live {b[bot_id][key]}")
    return out


@cli.command(short_help="Show the ladder of a game with 95 % margins and LOS (or rebuild and check it).")
@game_option
@option("--method", type=click.Choice(["elo", "fit"]), default="elo", show_default=True,
        help="elo: the live Elo (order-dependent), margins from pairwise counts; fit: the batch fit over every "
             "stored result (seat and deal luck taken out), margins from a bootstrap over deals.")
@option("--rebuild", is_flag=True,
        help="Recompute the ladder from the append-only results log and compare it with the live one "
             "(exit 1 when they differ).")
@server_option
@json_option
@click.pass_obj
def ladder(app: AppContext, game: str, method: str, rebuild: bool, server: str, as_json: bool) -> None:
    """Show the ladder of a game: rank, bot (NAME@VERSION), rating ± margin (Elo points; the margin is half the
    width of the 95 % interval), matches, LOS next (likelihood of superiority over the bot on the next line down:
    the chance that it is really the stronger of the two), wins (first places, shared ones count) and mean score
    (the game's score per match, e.g. Take 5 bullheads, Taki cards held: lower is better in both).

    --method elo (default): the live Elo (start 1500), updated after every match in the order results arrive, so
    it is order-dependent; its margin joins the chess tools' (fastchess) 95 % margin of the bot's pairwise results
    against the field (each match of N seats counts as N - 1 two-player games) and the wander of a live rating,
    which every result moves by up to K = 32 (about ± 80-100 Elo however many matches: two equal bots often stand
    100 apart); LOS next comes from the two bots' head-to-head pairwise results. To rank close bots, use --method
    fit; to compare two versions, arena sprt.

    --method fit: the batch fit (Plackett-Luce over whole matches, seat and deal-luck effects taken out, mean
    1500) over every stored result, with rating ± 1.96 bootstrap standard deviations (resampling whole deals)
    and LOS from the bootstrap. It is computed in the background once per change of the stored results and
    cached; an answer that counts fewer results than are stored says so.

    --rebuild recomputes the live ladder from the stored results, in the order they were applied, prints it and
    says whether it equals the live ladder (every rating to 1e-6 points, matches, wins, mean score); exit 1 if not.

    Examples:

    \b
        arena ladder --game take5
        arena ladder --game taki --method fit
        arena ladder --method fit --json
        arena ladder --rebuild --json
    """
    client = app.arena(server)
    if rebuild:
        _ladder_rebuild(app, client, game, as_json)
        return
    reply = client.call("GetLadder", arena_pb2.GetLadderRequest(game=game, method=method))
    entries = _ladder_entries(reply)
    if as_json:
        print_json({"game": reply.game or game, "method": reply.method or method,
                    "results_counted": reply.results_counted, "results_stored": reply.results_stored,
                    "stale": reply.results_counted < reply.results_stored, "refreshing": reply.refreshing,
                    "computed_at": reply.computed_at or None, "replicates": reply.replicates or None,
                    "level": 0.95, "groups": reply.groups,
                    "entries": [{k: v for k, v in e.items() if k != "unbounded"} for e in entries]})
        return
    if not entries:
        if method == "fit" and reply.results_stored:
            click.echo(f"the batch fit of the {game} ladder ({reply.results_stored} stored results) is being "
                       f"computed; ask again shortly, or use --method elo meanwhile")
        else:
            click.echo(f"the {game} ladder is empty: run a tournament first (`arena tournament create --all --game "
                       f"{game}`)")
        return
    if method == "fit":
        title = (f"{game} ladder (batch fit of {reply.results_counted} results, 95 % margins from "
                 f"{reply.replicates} bootstrap replicates over deals)")
    else:
        title = f"{game} ladder (live Elo, order-dependent; 95 % margins and LOS from pairwise counts)"
    print_tables(app.console, *group_tables(title, entries, game, reply.groups, app.console.width))
    gone = removed_groups(entries, lambda e: e.get("group") or 0, lambda e: bool(e.get("removed")))
    for line in (groups_note(reply.groups, gone), too_few_note(entries)):
        if line:
            click.echo(line)
    note = freshness_note(reply.results_counted, reply.results_stored, reply.computed_at, reply.refreshing)
    if note:
        click.echo(note)


def too_few_note(entries: Sequence[dict[str, Any]]) -> str:
    """The line under a ladder with bots that have too few matches for a margin ("" when none has)."""
    few = sum(1 for e in entries if e.get("too_few_matches"))
    if not few:
        return ""
    return (f"{few} bot(s) with too few matches for a margin (fewer than {MIN_MATCHES}): their ratings say "
            f"little yet, so they are ranked after the others")


def freshness_note(counted: int, stored: int, computed_at: float, refreshing: bool) -> str:
    """One line saying what an answer counts when it is behind the stored results ("" when it is current)."""
    if counted >= stored:
        return ""
    age = f", computed {max(0.0, time.time() - computed_at):.0f} s ago" if computed_at else ""
    then = "a refresh is running" if refreshing else "a refresh starts with the next call"
    return f"stale: counts {counted} of {stored} stored results{age}; {then}"


def _ladder_rebuild(app: AppContext, client: ArenaClient, game: str, as_json: bool) -> None:
    reply = client.call("RebuildLadder", arena_pb2.RebuildLadderRequest(game=game), timeout=10 * RPC_TIMEOUT_S)
    rebuilt, live = _ladder_entries(reply.rebuilt), _ladder_entries(reply.live)
    differences = ladder_differences(rebuilt, live)
    equal = reply.equal and not differences
    if as_json:
        print_json({"game": game, "results": reply.results, "equal": equal, "differences": differences,
                     "rebuilt": {"game": reply.rebuilt.game or game, "entries": rebuilt},
                     "live": {"game": reply.live.game or game, "entries": live}})
    else:
        title = f"{game} ladder rebuilt from {reply.results} stored results"
        print_tables(app.console, *group_tables(title, rebuilt, game, 1, app.console.width))
        if equal:
            click.echo(f"the rebuilt ladder equals the live ladder ({len(rebuilt)} bots, {reply.results} results)")
        for line in differences:
            click.echo(f"  differs: {line}")
    if not equal:
        why = f"{len(differences)} difference(s)" if differences else "the server reports a difference"
        raise ArenaCliError(f"the {game} ladder rebuilt from {reply.results} results differs from the live ladder: "
                            f"{why}")
