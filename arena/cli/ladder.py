"""``arena ladder`` (and ``--rebuild``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click
from rich.table import Table

from arena_sdk.pb import arena_pb2

from .app import RPC_TIMEOUT_S, AppContext, ArenaClient, cli, print_json
from .errors import ArenaCliError
from .options import game_option, json_option, option, server_option


def _ladder_entries(ladder_msg: Any) -> list[dict[str, Any]]:
    entries = sorted(ladder_msg.entries, key=lambda e: (e.rank, -e.rating, e.bot))
    return [{"rank": e.rank, "bot": e.bot, "rating": e.rating, "matches": e.matches, "wins": e.wins,
             "mean_score": e.mean_score} for e in entries]


def _ladder_table(title: str, entries: Sequence[dict[str, Any]], game: str) -> Table:
    table = Table(title=title)
    table.add_column("rank", justify="right")
    table.add_column("bot")
    table.add_column("rating", justify="right")
    table.add_column("matches", justify="right")
    table.add_column("wins", justify="right")
    from ..render import score_label

    table.add_column(f"mean score ({score_label(game)})", justify="right")
    for e in entries:
        table.add_row(str(e["rank"]), e["bot"], f"{e['rating']:.1f}", str(e["matches"]), str(e["wins"]),
                      f"{e['mean_score']:.2f}")
    return table


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


@cli.command(short_help="Show (or rebuild and check) the Elo ladder of a game.")
@game_option
@option("--rebuild", is_flag=True,
        help="Recompute the ladder from the append-only results log and compare it with the live one "
             "(exit 1 when they differ).")
@server_option
@json_option
@click.pass_obj
def ladder(app: AppContext, game: str, rebuild: bool, server: str, as_json: bool) -> None:
    """Show the Elo ladder of a game: rank, bot (NAME@VERSION), rating (Elo points, start 1500), matches, wins
    (first places, shared ones count) and mean score (the game's score per match, lower is better: Take 5
    bullheads, Taki cards held).

    --rebuild recomputes the ladder from the stored results, in the order they were applied, prints it and says
    whether it equals the live ladder (every rating to 1e-6 points, matches, wins, mean score); exit 1 if not.

    \b
    Examples:
      arena ladder --game take5
      arena ladder --game taki
      arena ladder --rebuild --json
    """
    client = app.arena(server)
    if rebuild:
        _ladder_rebuild(app, client, game, as_json)
        return
    reply = client.call("GetLadder", arena_pb2.GetLadderRequest(game=game))
    entries = _ladder_entries(reply)
    if as_json:
        print_json({"game": reply.game or game, "entries": entries})
        return
    if not entries:
        click.echo(f"the {game} ladder is empty: run a tournament first (`arena tournament create --all`)")
        return
    app.console.print(_ladder_table(f"{game} ladder (Elo)", entries, game))


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
        app.console.print(_ladder_table(f"{game} ladder rebuilt from {reply.results} stored results", rebuilt, game))
        if equal:
            click.echo(f"the rebuilt ladder equals the live ladder ({len(rebuilt)} bots, {reply.results} results)")
        for line in differences:
            click.echo(f"  differs: {line}")
    if not equal:
        why = f"{len(differences)} difference(s)" if differences else "the server reports a difference"
        raise ArenaCliError(f"the {game} ladder rebuilt from {reply.results} results differs from the live ladder: "
                            f"{why}")
