"""``arena bot register|update|remove|list|token``."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import click
import grpc

from arena.cli.app import AppContext, cli, loopback, print_json, when
from arena.cli.errors import ArenaCliError, held_interrupts, interruption
from arena.cli.options import (
    GAMES,
    EndpointType,
    check_bot_name,
    check_bot_ref,
    check_bot_secret,
    game_option,
    json_option,
    option,
    server_option,
    split_bot_id,
)
from arena.cli.pages import every_page
from arena.cli.seals import bound_to, opened_token, seal_secret, sealer
from arena.cli.tables import Col, fit, print_tables
from arena.cli.tokens import (
    TokenStore,
    no_token_error,
    owner_call,
    owner_credential,
    resolve_arena,
    token_hints,
    token_option,
    tokens_dir_option,
)
from arena.core.sealing import BOT_SECRET, OWNER_TOKEN
from arena.core.text import plural
from arena_sdk.pb import arena_pb2


def bot_dict(b: Any) -> dict[str, Any]:
    return {"bot_id": b.bot_id or (f"{b.name}@{b.version}" if b.version else b.name), "name": b.name,
            "version": b.version, "endpoint": b.endpoint, "game": b.game, "sdk_version": b.sdk_version,
            "author": b.author, "registered_at": b.registered_at, "updated_at": b.updated_at,
            "has_bot_secret": b.has_bot_secret, "owner": b.owner}


def bot_secret_option(f: Any) -> Any:
    return option(
        "--bot-secret", envvar="ARENA_BOT_SECRET", default=None, metavar="SECRET", callback=check_bot_secret,
        help="The secret the bot was started with (SDK: --secret or ARENA_BOT_SECRET; 16..256 visible ASCII "
             "characters): the referee sends it with every StartMatch, Decide and EndMatch call, so that only the "
             "arena can drive the bot. Env ARENA_BOT_SECRET (set but empty, or shorter than 16 characters: "
             "refused). Default: none (update: keep the current one).")(f)


@cli.group(short_help="Register, update, remove and list bots.")
def bot() -> None:
    """Register, update, remove and list bots (a bot is a running process serving arena.v1.Bot at HOST:PORT).

    A bot's ladder identity is NAME@VERSION: the VERSION comes from the bot itself (its GetInfo). Every NAME
    belongs to an owner (`arena owner`): registering a new NAME without a token creates one, whose token is shown
    once and saved in tokens.json of --data-dir; with --token the NAME joins that token's owner. New versions,
    updates and removals of NAME need its owner's token.
    """


def game_of_bot(endpoint: str, timeout_s: float = 2.0) -> str | None:
    """The one arena game the bot at ``endpoint`` (plaintext HOST:PORT) plays by its GetInfo, asked from this
    machine within ``timeout_s`` seconds; None when it cannot be asked from here (a TLS endpoint, unreachable, no
    answer), or it plays none or several of them."""
    from arena.match.bot_checks import GETINFO_OPTIONS
    from arena_sdk.games import GAMES
    from arena_sdk.pb import bot_pb2, bot_pb2_grpc

    if "://" in endpoint:
        return None
    channel = grpc.insecure_channel(endpoint, options=GETINFO_OPTIONS)
    try:
        info = bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=timeout_s)
    except grpc.RpcError:
        return None
    finally:
        channel.close()
    plays = [g for g in dict.fromkeys(info.games) if g in GAMES]
    return plays[0] if len(plays) == 1 else None


@bot.command("register", short_help="Register a bot endpoint (prints its bot id).")
@click.argument("name", callback=lambda ctx, param, value: check_bot_name(value))
@click.argument("endpoint", type=EndpointType(allow_tls=True))
@game_option
@token_option
@bot_secret_option
@tokens_dir_option
@server_option
@json_option
@click.pass_obj
def bot_register(app: AppContext, name: str, endpoint: str, game: str, token: str | None, bot_secret: str | None,
                 data_dir: Path, server: str, as_json: bool) -> None:
    """Register the bot at ENDPOINT (HOST:PORT, reachable from the workers; tls://HOST:PORT for a bot serving
    TLS) under NAME. The referee first asks the bot for its GetInfo (it must answer and play the game); the bot's
    version makes the ladder identity NAME@VERSION, printed here.

    A new NAME registered with --token (or ARENA_TOKEN) joins the owner of that token: no new token, and no two
    bots of one owner ever sit at two tables of one deal. Without a token (open registration only) it creates a
    new owner, whose token is printed once and saved in tokens.json of --data-dir (mode 0600). Registering NAME
    again (a new version, or a new endpoint) needs its owner's token: --token, ARENA_TOKEN, or the saved one.

    With --bot-secret (or ARENA_BOT_SECRET), the same secret the bot was started with, the referee proves itself
    to the bot on every match call, and nobody else can start, end or probe the bot's matches. A bot started with
    a secret is registered only with it: the arena checks it with the bot first.

    Without --game, a bot this machine reaches that plays one game of the arena is registered for that game (its
    GetInfo says which); else for the default game.

    Examples:

    \b
        arena bot register mybot 127.0.0.1:50061
        arena bot register mybot 10.0.0.7:50061 --token 9f2c...
        arena bot register mybot2 10.0.0.7:50062 --token 9f2c...   # a second name of the same owner
        ARENA_BOT_SECRET=$(cat my.secret) arena bot register mybot 10.0.0.7:50061
        arena bot register mybot tls://bots.example.org:50061
    """
    tokens = TokenStore(data_dir)
    tokens.check()
    if click.get_current_context().get_parameter_source("game") is click.core.ParameterSource.DEFAULT:
        plays = game_of_bot(endpoint)
        if plays is not None and plays != game:
            click.echo(f"the bot at {endpoint} plays {plays}: registering it for {plays} (--game chooses)", err=True)
            game = plays
    arena = resolve_arena(app, server)
    owner = token or tokens.lookup(arena, game, name)
    hints = token_hints(bool(token), tokens, name) if owner else {
        grpc.StatusCode.PERMISSION_DENIED: f"if {name} is yours, pass its owner token with --token or ARENA_TOKEN "
                                            f"({tokens.missing(arena, game, name)})"}
    seal = sealer(tokens, arena)
    request = arena_pb2.RegisterBotRequest(name=name, endpoint=endpoint, game=game)
    seal_secret(request, bot_secret, seal, bound_to(BOT_SECRET, "RegisterBot", game, name))
    # a new owner's token exists only in the answer: a Ctrl-C waits until it is saved (a second one stops at once)
    hold: AbstractContextManager[list[KeyboardInterrupt]] = nullcontext([]) if owner else held_interrupts(
        f"finishing the registration of {name} first: its new owner token comes only in the arena's answer")
    with hold as held:
        try:
            record = app.arena(server).call("RegisterBot", request, hints=hints,
                                            credential=owner_credential(arena, token, owner))
        except KeyboardInterrupt as exc:  # the arena may register it all the same, its new owner token then lost
            raise interruption(
                f"interrupted while the arena was registering {name}: it may be registered all the same "
                f"(`arena bot list`)" + ("" if owner else "; if so, its owner token is lost with this answer, and "
                                         "the organiser can remove the bot and free the name (`arena owner remove "
                                         "OWNER_ID`, the owner in `arena bot list --json`)"), exc) from None
        new_token = opened_token(record, seal, bound_to(OWNER_TOKEN, "RegisterBot", game, name))
        tokens.pin(arena)
        if new_token:
            tokens.put(arena, game, record.name or name, new_token)
        elif (token and tokens.get(arena.key, game, record.name or name) is None
              and token in {t for _, t in tokens.owner_tokens(arena)}):
            tokens.put(arena, game, record.name or name, token)  # a saved owner's new NAME: filed with its token
        _said_registered(record, new_token, tokens, name, bot_secret, as_json)
    if held:
        raise interruption(f"interrupted: {record.name or name} was registered all the same"
                           + (f", its owner token saved in {tokens.path.resolve()}" if new_token else ""), held[0])


def _said_registered(record: arena_pb2.BotRecord, new_token: str, tokens: TokenStore, name: str,
                     bot_secret: str | None, as_json: bool) -> None:
    """What ``bot register`` prints of a registration: ``record`` as JSON, or a line with notes and the new owner
    token (``new_token``, "" when none) and where it is saved."""
    if as_json:
        data = bot_dict(record)
        data["owner_token"] = new_token or None
        data["token_file"] = str(tokens.path) if new_token else None
        print_json(data)
        return
    kept = " (with the bot secret kept for it)" if record.has_bot_secret and not bot_secret else ""
    again = (f" (registered again: first on {when(record.registered_at)}; its ladder history stays)"
             if record.updated_at > record.registered_at else "")
    click.echo(f"registered {record.game} bot {bot_dict(record)['bot_id']} at {record.endpoint}{kept}{again}")
    if not record.has_bot_secret and not loopback(record.endpoint.removeprefix("tls://")):
        click.echo(f"note: the bot has no secret, so anyone who reaches {record.endpoint} may call it: make it think "
                   f"when it should play, hold its threads, knock it out of its matches. Start it with --secret S "
                   f"(or env ARENA_BOT_SECRET) and give the arena the same S: `arena bot update {record.name or name} "
                   f"--bot-secret S` (docs/operators/security.md)", err=True)
    if new_token:
        click.echo(f"owner token of {record.name or name}: {new_token}")
        click.echo(f"  saved in {tokens.path.resolve()} for `arena bot register|update|remove` on this machine; "
                   f"`arena bot token {record.name or name}` prints it again")


@bot.command("update", short_help="Move a bot version to a new endpoint (owner token).")
@click.argument("bot_ref", metavar="NAME[@VERSION]", callback=check_bot_ref)
@click.argument("new_endpoint", metavar="[ENDPOINT]", required=False, type=EndpointType(allow_tls=True))
@option("--endpoint", type=EndpointType(allow_tls=True), default=None,
        help="The new HOST:PORT of the bot (tls://HOST:PORT: it serves TLS); or give it after NAME, as for "
             "`bot register`.")
@game_option
@token_option
@bot_secret_option
@tokens_dir_option
@server_option
@click.pass_obj
def bot_update(app: AppContext, bot_ref: str, new_endpoint: str | None, endpoint: str | None, game: str,
               token: str | None, bot_secret: str | None, data_dir: Path, server: str) -> None:
    """Change the endpoint of a registered bot version (NAME alone: its latest version). The referee checks the
    new endpoint answers GetInfo and plays the game. Needs the owner token of NAME.

    Example:

    \b
        arena bot update mybot@1.2 10.0.0.8:50061
        arena bot update mybot@1.2 --endpoint 10.0.0.8:50061
    """
    if new_endpoint and endpoint and new_endpoint != endpoint:
        raise click.UsageError(f"two endpoints given ({new_endpoint} and --endpoint {endpoint}): give one")
    endpoint = new_endpoint or endpoint
    if not endpoint:
        raise click.UsageError("give the new endpoint: arena bot update NAME[@VERSION] HOST:PORT (or --endpoint "
                               "HOST:PORT)")
    name, _ = split_bot_id(bot_ref)
    tokens = TokenStore(data_dir)
    tokens.check()
    arena = resolve_arena(app, server)
    if bot_secret and not token and tokens.lookup(arena, game, name) is None:  # refused anyway: the secret stays
        raise no_token_error(tokens, arena, game, name)
    request = arena_pb2.UpdateBotRequest(bot=bot_ref, game=game, endpoint=endpoint)
    seal_secret(request, bot_secret, sealer(tokens, arena), bound_to(BOT_SECRET, "UpdateBot", game, bot_ref))
    record = owner_call(app, server, "UpdateBot", request, token, tokens, game, name, arena=arena)
    tokens.pin(arena)
    click.echo(f"updated {record.game} bot {bot_dict(record)['bot_id']}: endpoint {record.endpoint}")


@bot.command("remove", short_help="Remove a bot version or every version (owner token, or --as-organiser).")
@click.argument("bot_ref", metavar="NAME[@VERSION]", callback=check_bot_ref)
@game_option
@token_option
@option("--as-organiser", is_flag=True,
        help="Sign with the arena's admin token instead of NAME's owner token (an organiser may remove any bot, "
             "e.g. one whose owner token was lost).")
@tokens_dir_option
@server_option
@click.pass_obj
def bot_remove(app: AppContext, bot_ref: str, game: str, token: str | None, as_organiser: bool, data_dir: Path,
               server: str) -> None:
    """Remove a bot version (NAME@VERSION) or every version of NAME (NAME alone). Its ladder history stays.
    Needs the owner token of NAME, or --as-organiser with the arena's admin token. To free the NAME too, the
    organiser removes its owner: `arena owner remove OWNER_ID`.

    Examples:

    \b
        arena bot remove mybot@1.0
        arena bot remove mybot
        arena bot remove lost --as-organiser
    """
    name, _ = split_bot_id(bot_ref)
    tokens = TokenStore(data_dir)
    reply = owner_call(app, server, "RemoveBot", arena_pb2.RemoveBotRequest(bot=bot_ref, game=game), token,
                        tokens, game, name, as_organiser=as_organiser)
    removed = list(reply.removed)
    click.echo(f"removed {game} bot{'s' if len(removed) != 1 else ''} {', '.join(removed) or '(none)'}; "
               "ladder history kept")
    _warn_running(app, server, game, removed)


def _warn_running(app: AppContext, server: str, game: str, removed: list[str]) -> None:
    """Say on stderr which running tournaments (of the newest 100 of ``game``) seat a bot just removed: its
    matches left there are played without it, each a forfeit of its seat that counts on the ladder. A failed read
    says nothing (the removal is done)."""
    try:
        running = [t for t in every_page(app.arena(server), "ListTournaments",
                                         arena_pb2.ListTournamentsRequest(game=game), "tournaments", most=100)
                   if t.state == "running" and set(t.bots) & set(removed)]
    except (grpc.RpcError, ArenaCliError):
        return
    for t in running:
        left = t.matches_total - t.matches_done
        click.echo(f"warning: tournament {t.id} is running with {', '.join(sorted(set(t.bots) & set(removed)))}: "
                   f"its matches left there (of {left} left in all) are played without it, each a forfeit of its "
                   f"seat that counts on the ladder; `arena tournament cancel {t.id}` stops them", err=True)


@bot.command("list")
@option("--game", type=click.Choice(GAMES), default=None, help="Only the bots of this game.")
@option("--check/--no-check", default=True, show_default=True,
        help="Have the referee ask every bot's endpoint for its GetInfo now and show whether it answers.")
@server_option
@json_option
@click.pass_obj
def bot_list(app: AppContext, game: str | None, check: bool, server: str, as_json: bool) -> None:
    """List the registered bots: bot id (NAME@VERSION), version, game, endpoint, whether the endpoint answers now
    (asked by the referee, as a tournament would; --no-check skips it), match health (what its last matches say, as
    the workers see them: unhealthy after several failed matches in a row, since when and why; its matches wait
    until it answers again), author, last change.

    Example:

    \b
        arena bot list --game take5 --json
    """
    listed = every_page(app.arena(server), "ListBots",
                        arena_pb2.ListBotsRequest(game=game or "", check_endpoints=check), "bots")
    bots = []
    for b in listed:
        d = bot_dict(b)
        d["health"] = {"state": b.health or "healthy", "consecutive_failures": b.consecutive_failures,
                       "unhealthy_since": b.unhealthy_since or None, "reason": b.health_reason or None}
        if b.endpoint_checked:
            d["answers"] = not b.endpoint_problem
            d["endpoint_problem"] = b.endpoint_problem or None
        bots.append(d)
    bots.sort(key=lambda b: (b["game"], b["name"], b["registered_at"]))
    if as_json:
        print_json(bots)
        return
    if not bots:
        click.echo(f"no {game + ' ' if game else ''}bots registered yet: `arena bot register NAME HOST:PORT"
                   f"{' --game ' + game if game else ''}`")
        return
    checked = any("answers" in b for b in bots)
    columns = [Col("bot id", cells="name", justify="left"), Col("version", cells="name", justify="left", drop=4),
               Col("game", justify="left", drop=1), Col("endpoint", justify="left"),
               *([Col("answers now", cells="words", justify="left")] if checked else []),
               Col("match health", cells="words", justify="left"), Col("author", cells="words", justify="left", drop=3),
               Col("updated", justify="left", drop=2)]
    rows = []
    for b in bots:
        answers = ["-" if "answers" not in b else "yes" if b["answers"] else f"no: {b['endpoint_problem']}"]
        rows.append([b["bot_id"], b["version"] or "-", b["game"], b["endpoint"], *(answers if checked else []),
                     _health_text(b["health"], b.get("answers")), b["author"] or "-",
                     when(b["updated_at"] or b["registered_at"])])
    shown = fit(columns, rows, app.console.width)
    print_tables(app.console, [shown.table("Registered bots", rows)], shown.note())


def _health_text(health: dict[str, Any], answers: bool | None = None) -> str:
    """The match health of a bot (its ``health`` dict of `arena bot list --json`): "healthy", "failing: 2 failed
    matches in a row" (the workers mark a bot unhealthy after ``unhealthy_after`` of them, 3 by default) or
    "unhealthy since 2024-05-01 12:00:00: REASON". When its endpoint does not answer now (``answers`` False; None:
    not asked) a record without failures says only that: "no failed match yet" (it may have played none)."""
    if health["state"] == "unhealthy":
        return f"unhealthy since {when(health['unhealthy_since'] or 0)}: {health['reason'] or '?'}"
    failures = health["consecutive_failures"]
    if failures:
        return f"failing: {plural(failures, 'failed match')} in a row"
    return "no failed match yet" if answers is False else "healthy"


@bot.command("token", short_help="Print the owner token of a bot NAME saved on this machine.")
@click.argument("name", callback=lambda ctx, param, value: check_bot_name(value))
@option("--all", "show_all", is_flag=True,
        help="Print every token of NAME saved on this machine, with its arena, without asking the referee.")
@game_option
@tokens_dir_option
@server_option
@json_option
@click.pass_obj
def bot_token(app: AppContext, name: str, show_all: bool, game: str, data_dir: Path, server: str,
              as_json: bool) -> None:
    """Print the owner token of NAME for the arena at --server, as saved in tokens.json of --data-dir when NAME was
    first registered from this machine (only the token, for `--token "$(arena bot token NAME)"`). --all prints
    every saved token of NAME, one line each with its arena.

    Examples:

    \b
        arena bot token mybot
        arena bot token mybot --all
    """
    tokens = TokenStore(data_dir)
    if show_all:
        saved = tokens.saved(game, name)
        if as_json:
            print_json([{"arena": where, "token": token} for where, token in saved])
            return
        if not saved:
            raise ArenaCliError(f"{tokens.path} has no token of {game} bot {name}")
        for where, saved_token in saved:
            click.echo(f"{saved_token}  {where}")
        return
    arena = resolve_arena(app, server)
    token = tokens.lookup(arena, game, name)
    if token is None:
        raise no_token_error(tokens, arena, game, name)
    if as_json:
        print_json({"name": name, "game": game, "arena_id": arena.arena_id, "server": server, "token": token})
        return
    click.echo(token)
