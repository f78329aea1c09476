"""``arena match list|show``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import grpc
from rich.table import Table

from arena.cli.app import AppContext, Credential, cli, delta_text, print_json, score_text, when
from arena.cli.errors import ArenaCliError
from arena.cli.options import check_bot_ref, json_option, option, server_option
from arena.cli.pages import read_pages
from arena.cli.tables import Col, fit, print_tables
from arena.cli.tokens import TokenStore, owner_credential, resolve_arena, tokens_dir_option
from arena.core.limits import MATCH_LIST
from arena.core.text import plural, printable
from arena_sdk.pb import arena_pb2


@cli.group(short_help="List finished matches and show one turn by turn.")
def match() -> None:
    """List finished matches and show one turn by turn."""


def _summary_dict(m: Any) -> dict[str, Any]:
    """A MatchSummary as JSON; its deal (seed, round, deal, table, attempt) only once revealed (else null)."""
    deal = {key: getattr(m, key) if m.revealed else None for key in ("seed", "round", "deal", "table", "attempt")}
    return {"match_id": m.match_id, "tournament_id": m.tournament_id, "game": m.game, "seats": list(m.seats),
            "scores": list(m.scores), "ranks": list(m.ranks), "faults": list(m.faults),
            "rating_deltas": list(m.rating_deltas), "finished_at": m.finished_at, "revealed": m.revealed, **deal}


LIST_DEFAULT = 50  # matches `arena match list` shows without --limit
LIST_MOST = 10000  # the most --limit takes
FAULTS_READ_MOST = 20000  # matches `arena match list --faults` reads at most to find those with a fault


def has_faults(bot_ref: str | None) -> Any:
    """A ``MatchSummary`` predicate: the match charged a fault to a seat of ``bot_ref`` (a NAME: any version of
    it; NAME@VERSION: that one), or to any seat when it is None."""
    def kept(m: Any) -> bool:
        return any(n for bot, n in zip(m.seats, m.faults, strict=False)
                   if bot_ref is None or bot == bot_ref or ("@" not in bot_ref and bot.partition("@")[0] == bot_ref))
    return kept


def more_note(shown: int, limit: int, tournament: Any = None, filters: tuple[str, ...] = ()) -> str:
    """The line said on stderr when ``arena match list`` showed ``shown`` (= ``limit``) matches and more are stored:
    how many in all when it is known (``tournament``: the Tournament message the list is filtered on, whose
    matches_done counts its stored results), and how to see more (the filters not given yet, of ``filters``:
    "tournament", "bot")."""
    of = (f" of the {tournament.matches_done} finished in tournament {tournament.id}"
          if tournament is not None and tournament.matches_done > shown else "")
    head = f"showed the newest {plural(shown, 'match')}{of}; more are stored"
    narrow = [option for name, option in (("tournament", "`--tournament ID`"), ("bot", "`--bot NAME`"))
              if name not in filters]
    if limit < LIST_MOST:
        return (f"{head}: `--limit N` shows up to N (at most {LIST_MOST})"
                + (f"; {' and '.join(narrow)} narrow{'s' if len(narrow) == 1 else ''} the list" if narrow else ""))
    return (f"{head}, past what --limit reaches ({LIST_MOST})"
            + (f": narrow the list with {' or '.join(narrow)}" if narrow else ""))


def _check_known(client: Any, bot_ref: str, faults_only: bool = False) -> None:
    """Raise ``ArenaCliError`` when ``bot_ref`` names no registered bot (with the held spelling of its NAME when
    only the letter case differs): an empty list of its matches is then a mistake, not an answer. With
    ``faults_only`` (an empty list of its matches with a fault), a bot with a stored match is known, registered or
    removed since."""
    if faults_only and client.call("ListMatches", arena_pb2.ListMatchesRequest(bot=bot_ref, limit=1)).matches:
        return
    name, at, version = bot_ref.partition("@")
    named = client.call("ListBots", arena_pb2.ListBotsRequest(name=name))
    if named.held_spelling:
        held = named.held_spelling
        if version:  # that version when the held NAME has it, else the NAME
            ids = {b.bot_id for b in client.call("ListBots", arena_pb2.ListBotsRequest(name=held)).bots}
            held += f"@{version}" if f"{held}@{version}" in ids else ""
        raise ArenaCliError(f"unknown bot {bot_ref}: did you mean {held}? (a NAME's letter case counts here)")
    if not any(bot_ref in (b.name, b.bot_id) for b in named.bots):
        raise ArenaCliError(f"unknown bot {bot_ref}: no bot of that name is registered and no stored match has "
                            "it; `arena bot list` shows the registered bots")


@match.command("list", short_help="List finished matches, newest first.")
@option("--tournament", "tournament_id", default=None, metavar="ID", help="Only the matches of this tournament.")
@option("--bot", "bot_ref", default=None, metavar="NAME[@VERSION]", help="Only the matches of this bot.")
@option("--limit", type=click.IntRange(1, LIST_MOST), default=LIST_DEFAULT, show_default=True, metavar="N",
        help="Show at most this many matches, the newest; when more are stored, a line on stderr says so.")
@option("--faults", "faults_only", is_flag=True,
        help=f"Only matches with a fault (of --bot's seats when --bot is given), from the newest "
             f"{FAULTS_READ_MOST:,} matches of the other filters; `arena match show ID` says what each fault was.")
@server_option
@json_option
@click.pass_obj
def match_list(app: AppContext, tournament_id: str | None, bot_ref: str | None, limit: int, server: str,
               as_json: bool, faults_only: bool = False) -> None:
    """List finished matches, newest first: match id, tournament, every seat's bot with its score and rank,
    faults, the Elo changes the match applied, and when it finished. At most --limit of them (default 50); when
    more are stored, a line on stderr says so and how to see more (stdout, the table or --json, stays the list).

    Examples:

    \b
        arena match list --tournament t3 --bot heuristic --limit 10
        arena match list --tournament t3 --bot heuristic --faults
    """
    if bot_ref is not None:
        check_bot_ref(click.get_current_context(), None, bot_ref)  # type: ignore[arg-type]
    client = app.arena(server)
    size = MATCH_LIST if faults_only else min(limit + 1, MATCH_LIST)  # one more: are more stored?
    read = read_pages(client, "ListMatches", arena_pb2.ListMatchesRequest(
        tournament_id=tournament_id or "", bot=bot_ref or "", limit=size, page_size=size), "matches",
        most=limit + 1, keep=has_faults(bot_ref) if faults_only else None,
        read_most=FAULTS_READ_MOST if faults_only else None)
    matches = read.entries
    more = len(matches) > limit
    matches = matches[:limit]
    if not matches and bot_ref:
        _check_known(client, bot_ref, faults_only)
    note = ""
    if faults_only:
        note = _faults_note(len(matches), more, read.more and len(read.entries) <= limit, read.read)
    elif more:  # its tournament's count is all of them only when no bot is filtered on
        of = client.call("GetTournament", arena_pb2.GetTournamentRequest(id=tournament_id)) \
            if tournament_id and not bot_ref else None
        note = more_note(len(matches), limit, of, tuple(name for name, given in (("tournament", tournament_id),
                                                                               ("bot", bot_ref)) if given))
    if as_json:
        print_json([_summary_dict(m) for m in matches])
        if note:
            click.echo(note, err=True)
        return
    if not matches:
        where = f" of {tournament_id}" if tournament_id else ""
        if faults_only:
            click.echo(f"no finished match{where} with a fault" + (f" of {bot_ref}" if bot_ref else ""))
        else:
            click.echo(f"no finished matches{where}" + (f" with {bot_ref}" if bot_ref else ""))
        if note:
            click.echo(note, err=True)
        return
    columns = [Col("match", justify="left"), Col("tournament", justify="left", drop=2),
               Col("seats: bot, score (rank), Elo change", "seats", cells="words", justify="left"),
               Col("faults"), Col("finished", justify="left", drop=1)]
    rows = []
    for m in matches:
        seats = []
        for i, bot_id in enumerate(m.seats):
            score = score_text(m.scores[i]) if i < len(m.scores) else "?"
            rank = str(m.ranks[i]) if i < len(m.ranks) else "?"
            delta = f", {delta_text(m.rating_deltas[i])}" if i < len(m.rating_deltas) else ""
            seats.append(f"{bot_id}, {score} ({rank}){delta}")
        rows.append([m.match_id, m.tournament_id or "-", "\n".join(seats), str(sum(m.faults)), when(m.finished_at)])
    shown = fit(columns, rows, app.console.width)
    print_tables(app.console, [shown.table("Finished matches", rows)], shown.note())
    if faults_only:
        click.echo(f"each fault's kind, turn and detail: `arena match show {matches[0].match_id}` (while its "
                   f"tournament runs, to its bot's owner: the token saved here, or --token)", err=True)
    if note:
        click.echo(note, err=True)


def _faults_note(shown: int, more: bool, unread: bool, read: int) -> str:
    """The stderr line of ``match list --faults``: more matches with a fault than shown (``more``), or matches left
    unread past ``FAULTS_READ_MOST`` (``unread``, ``read`` of them read); "" when the list is whole."""
    if more:
        return (f"the newest {plural(shown, 'match')} with a fault shown; `--limit N` shows more "
                f"(at most {LIST_MOST})")
    if unread:
        return (f"only the newest {read:,} matches were looked through for faults: narrow the list with "
                f"`--tournament ID` or `--bot NAME` to look further back")
    return ""


@match.command("show", short_help="Show one match (stored, or a record file) turn by turn.")
@click.argument("match_id", metavar="ID|FILE")
@server_option
@json_option
@option("--token", envvar="ARENA_TOKEN", default=None, metavar="TOKEN",
        help="An owner token: the call is signed with it, so the record keeps the notes of that owner's bots "
             "(when the arena shows notes to owners, `arena serve --bot-notes owner`), and a withheld match shows "
             "that owner's bots' faults; env ARENA_TOKEN. Default for a withheld match with faults: the token "
             "saved in tokens.json of --data-dir for one of its seats' NAMEs (an argument shows in `ps`: prefer the "
             "env variable or the saved token).")
@tokens_dir_option
@click.pass_obj
def match_show(app: AppContext, match_id: str, server: str, as_json: bool, token: str | None = None,
               data_dir: Path | None = None) -> None:
    """Show one finished match turn by turn: per hand the rows, per turn every revealed card in resolution order,
    where it went, what its bot took, rule-4 row choices and faults (whole, wrapped); then the result and the Elo
    changes. ID is a match stored on the arena at --server; FILE a match record saved on this machine (`arena
    play --record`, or `arena match show ID --json > FILE`), read without asking the server. --json prints the
    match record itself (the format `arena replay` checks). A match of a tournament that has not ended shows only
    its result (seats, scores, ranks, faults): its deal and decisions stay secret until then, since a bot of the
    tournament could still receive those cards. Its owner sees why their bots faulted (each fault's kind, hand,
    turn and detail), with --token or the token saved when the NAME was registered from this machine.

    Examples:

    \b
        arena match show t3-000012
        arena match show game.json
        arena match show t3-000012 --json > match.json && arena replay match.json
    """
    if Path(match_id).is_file() or match_id.endswith(".json"):
        _show_file(app, Path(match_id), as_json)
        return
    credential = Credential(token, source="of --token / ARENA_TOKEN") if token else None
    ask = arena_pb2.GetMatchRequest(match_id=match_id)
    looks_like_a_file = "/" in match_id or re.search(r"\.[A-Za-z]\w*$", match_id) is not None  # game.jsn
    hints = {grpc.StatusCode.NOT_FOUND: f"nor is there a file {match_id} (from {Path.cwd()}): is the path right?"
             } if looks_like_a_file else None
    detail = app.arena(server).call("GetMatch", ask, credential=credential, hints=hints)
    if detail.withheld and credential is None and any(detail.summary.faults) and data_dir is not None:
        answers = [app.arena(server).call("GetMatch", ask, credential=saved).own_faults  # one per owner token
                   for saved in _saved_credentials(app, server, detail.summary, TokenStore(data_dir))]
        detail.own_faults.extend(merge_own_faults(answers))
    if detail.withheld:
        _show_summary(app, detail, as_json)
        return
    try:
        record = json.loads(detail.record_json)
    except json.JSONDecodeError as exc:
        raise ArenaCliError(f"the server sent match {match_id} with a record that is not JSON: {exc}") from None
    if as_json:
        print_json(record)
        return
    from arena.render import RenderError, render_match

    try:
        app.console.print(render_match(record))
    except RenderError as exc:
        raise ArenaCliError(f"cannot show match {match_id}: {exc}") from None
    m = detail.summary
    if m.rating_deltas:
        changes = ", ".join(f"{bot_id} {delta_text(delta)}" for bot_id, delta in zip(m.seats, m.rating_deltas))
        click.echo(f"Elo changes: {changes}")
    click.echo(f"match {m.match_id or match_id}" + (f" of tournament {m.tournament_id}" if m.tournament_id else "")
               + f", stored {when(m.finished_at)}")


def merge_own_faults(answers: list[Any]) -> list[Any]:
    """The faults of several owners' seats of one match (``answers``: the ``own_faults`` of each owner token's
    GetMatch), in the match's order (by hand, turn, then seat; a seat's faults in the order given). A seat's faults
    are taken whole from the first answer that has any, so two equal faults of one seat (two timeouts in one turn)
    both stay, and a seat two answers prove is not counted twice."""
    faults: list[Any] = []
    seats: set[int] = set()
    for own in answers:
        faults.extend(f for f in own if f.seat not in seats)
        seats.update(f.seat for f in own)
    return sorted(faults, key=lambda f: (f.hand, f.turn, f.seat))


def _saved_credentials(app: AppContext, server: str, m: Any, tokens: TokenStore) -> list[Credential]:
    """The owner tokens saved on this machine for the NAMEs of the seats that faulted in match summary ``m``, one
    credential per distinct token, for this arena; none when none is saved (or the token file cannot be read)."""
    try:
        tokens.check()
    except ArenaCliError:
        return []
    arena = resolve_arena(app, server)
    saved = {tokens.lookup(arena, m.game, bot_id.split("@", 1)[0]) for bot_id, faults in zip(m.seats, m.faults)
             if faults}
    return [c for token in sorted(t for t in saved if t) if (c := owner_credential(arena, None, token)) is not None]


def _show_summary(app: AppContext, detail: Any, as_json: bool) -> None:
    """A match whose record the server withholds: its result only, and why; and the faults of the seats whose
    owner the call proved."""
    m = detail.summary
    own = [{"seat": f.seat, "bot": m.seats[f.seat] if f.seat < len(m.seats) else "?", "kind": f.kind,
            "hand": f.hand, "turn": f.turn, "detail": f.detail} for f in detail.own_faults]
    if as_json:
        print_json({"summary": _summary_dict(m), "record": None, "withheld": detail.withheld, "own_faults": own})
        return
    table = Table(title=f"Match {m.match_id}" + (f" of tournament {m.tournament_id}" if m.tournament_id else ""))
    for col, justify in (("seat", "right"), ("bot", "left"), ("score", "right"), ("rank", "right"),
                         ("faults", "right"), ("Elo change", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for i, bot_id in enumerate(m.seats):
        delta = delta_text(m.rating_deltas[i]) if i < len(m.rating_deltas) else ""
        table.add_row(str(i), bot_id, score_text(m.scores[i]), str(m.ranks[i]), str(m.faults[i]), delta)
    app.console.print(table)
    click.echo(f"record withheld: {detail.withheld}")
    from arena.render import position_text

    for f in own:  # the owner's own bots only; a detail may name that seat's cards
        click.echo(f"fault of your bot {f['bot']} (seat {f['seat']}), {position_text(m.game, f['hand'], f['turn'])}: "
                   f"{f['kind']} ({f['detail']})")


def _show_file(app: AppContext, path: Path, as_json: bool) -> None:
    """``arena match show FILE``: the match record saved in ``path``, told turn by turn (or printed as JSON)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ArenaCliError(f"cannot read the match record {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArenaCliError(f"{path} is not a match record (not JSON: {exc})") from None
    except RecursionError:
        raise ArenaCliError(f"{path} is not a match record (JSON nested too deep)") from None
    except ValueError as exc:  # a number of more digits than Python converts (4300)
        raise ArenaCliError(f"{path} is not a match record ({exc})") from None
    if as_json:
        print_json(record)
        return
    from arena.render import RenderError, render_match

    try:
        app.console.print(render_match(record))
    except RenderError as exc:
        raise ArenaCliError(f"cannot show the match record {path}: {exc}") from None
    match_id = record.get("match_id", "?") if isinstance(record, dict) else "?"
    click.echo(f"match {printable(match_id)} from {path}")
