"""``arena owner create|show|list`` and ``arena registration show|set``: owner accounts and the organiser's
registration mode and quotas (``arena.server.owners``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import grpc
from rich.table import Table

from arena.cli.app import AppContext, Credential, cli, print_json, when
from arena.cli.errors import ArenaCliError, held_interrupts, interruption
from arena.cli.options import json_option, option, server_option
from arena.cli.seals import bound_to, opened_token, sealer
from arena.cli.tokens import TokenStore, resolve_arena, tokens_dir_option
from arena.core.sealing import OWNER_TOKEN
from arena.core.signing import owner_id, token_hash
from arena.core.text import plural
from arena.render.base import safe
from arena_sdk.pb import arena_pb2

MAX_QUOTA = 2**32 - 1  # the quotas are uint32 on the wire
PAGE_SIZE = 500


def owner_dict(o: Any) -> dict[str, Any]:
    return {"id": o.id, "label": o.label, "created_at": o.created_at, "created_by": o.created_by,
            "names": [f"{n.game}/{n.name}" for n in o.names], "names_held": o.names_held, "max_names": o.max_names}


def registration_dict(r: Any) -> dict[str, Any]:
    return {"mode": r.mode, "max_names_per_owner": r.max_names_per_owner,
            "max_owners_per_address": r.max_owners_per_address, "max_names_total": r.max_names_total,
            "address_window_s": r.address_window_s, "names_total": r.names_total}


def _limit(n: int) -> str:
    return str(n) if n else "no limit"


@cli.group(short_help="Owner accounts: create (organiser), show, list, remove (organiser).")
def owner() -> None:
    """Owner accounts. An owner is one identity with one token and any number of bot names: `arena bot register
    NAME --token TOKEN` adds a new NAME to the owner of TOKEN, and without a token (open registration) creates a
    new owner. No two bots of one owner sit at two tables of one deal.
    """


@owner.command("create", short_help="Create an owner (organiser); prints its token once.")
@click.argument("label", default="")
@tokens_dir_option
@server_option
@json_option
@click.pass_obj
def owner_create(app: AppContext, label: str, data_dir: Path, server: str, as_json: bool) -> None:
    """Create an owner account labelled LABEL (the way owners come to be under closed registration; needs the
    admin token). Its token is printed once and saved in tokens.json of --data-dir; give it to the person it is
    for, who registers with `arena bot register NAME HOST:PORT --token TOKEN`.

    Example:

    \b
        arena owner create "team blue"
    """
    tokens = TokenStore(data_dir)
    tokens.check()
    arena = resolve_arena(app, server)
    seal = sealer(tokens, arena)
    request = arena_pb2.CreateOwnerRequest(label=label, client_seal_key=seal.public if seal else b"")
    with held_interrupts("creating the owner first: its token comes only in the arena's answer") as held:
        try:
            created = app.arena(server).call("CreateOwner", request)
        except KeyboardInterrupt as exc:  # pressed twice: the owner may exist all the same, its token then lost
            raise interruption("interrupted while the arena was creating the owner: it may have been created all "
                               "the same (`arena owner list`); if so, its token is lost with this answer: remove it "
                               "(`arena owner remove OWNER_ID`) and create another", exc) from None
        owner_token = opened_token(created, seal, bound_to(OWNER_TOKEN, "CreateOwner", "", label))
        tokens.put_owner(arena, created.id, owner_token, created.label)
        if as_json:
            data = owner_dict(created)
            data["owner_token"], data["token_file"] = owner_token, str(tokens.path)
            print_json(data)
        else:
            click.echo(f"created owner {created.id}" + (f" ({created.label})" if created.label else ""))
            click.echo(f"owner token: {owner_token}")
            click.echo(f"  shown once; saved in {tokens.path}. Register bots for this owner with "
                       f"`arena bot register NAME HOST:PORT --token TOKEN`")
    if held:
        raise interruption(f"interrupted: owner {created.id} was created all the same, its token saved in "
                           f"{tokens.path.resolve()}", held[0])


@owner.command("show", short_help="Show the owner of a token: id, names, quota use.")
@option("--token", envvar="ARENA_TOKEN", default=None, metavar="TOKEN",
        help="An owner token; env ARENA_TOKEN (an argument shows in `ps`: prefer the env variable). Default: every "
             "owner token saved for this arena in tokens.json of --data-dir.")
@tokens_dir_option
@server_option
@json_option
@click.pass_obj
def owner_show(app: AppContext, token: str | None, data_dir: Path, server: str, as_json: bool) -> None:
    """Show the owner of --token (or of each owner token saved on this machine for this arena): its id, label
    and bot names, and how many names it may hold. The call is signed with the token, which is never sent.

    Examples:

    \b
        arena owner show
        arena owner show --token 9f2c...
    """
    tokens = TokenStore(data_dir)
    tokens.check()
    arena = resolve_arena(app, server)
    if token:
        credentials = [Credential(token, source="of --token / ARENA_TOKEN")]
    else:
        credentials = [Credential(t, arena_id=arena.arena_id, source=f"saved for {where}")
                       for where, t in tokens.owner_tokens(arena)]
    if not credentials:
        raise ArenaCliError(f"{tokens.path} holds no owner token for this arena "
                            f"({TokenStore.describe(arena.key, arena.server)}); pass --token TOKEN or set ARENA_TOKEN")
    client = app.arena(server)
    owners = [client.call("GetOwner", arena_pb2.GetOwnerRequest(), credential=c, hints={
        grpc.StatusCode.PERMISSION_DENIED: f"the token {c.source} (owner {owner_id(token_hash(c.token))})"})
        for c in credentials]
    if as_json:
        print_json([owner_dict(o) for o in owners])
        return
    for o in owners:
        names = ", ".join(f"{n.game}/{n.name}" for n in o.names) or "none yet"
        click.echo(f"owner {o.id}" + (f" ({o.label})" if o.label else "") + f", created {when(o.created_at)} by "
                   f"{o.created_by}: {plural(o.names_held, 'name')} (at most {_limit(o.max_names)}): {names}")


@owner.command("list", short_help="List every owner (organiser).")
@server_option
@json_option
@click.pass_obj
def owner_list(app: AppContext, server: str, as_json: bool) -> None:
    """List every owner of the arena, in id order (needs the admin token; follows every page).

    Example:

    \b
        arena owner list --json
    """
    client = app.arena(server)
    owners: list[Any] = []
    page = ""
    while True:
        answer = client.call("ListOwners", arena_pb2.ListOwnersRequest(page_size=PAGE_SIZE, page_token=page))
        owners.extend(answer.owners)
        page = answer.next_page_token
        if not page:
            break
    if as_json:
        print_json([owner_dict(o) for o in owners])
        return
    table = Table(title=f"{len(owners)} owners")
    for column in ("owner", "label", "created", "by", "names"):
        table.add_column(column)
    for o in owners:
        table.add_row(o.id, safe(o.label or "-"), when(o.created_at), safe(o.created_by),
                      ", ".join(f"{n.game}/{n.name}" for n in o.names) or "-")
    app.console.print(table)


@owner.command("remove", short_help="Remove an owner, its bots, and free its names (organiser).")
@click.argument("owner_id")
@server_option
@json_option
@click.pass_obj
def owner_remove(app: AppContext, owner_id: str, server: str, as_json: bool) -> None:
    """Remove the owner OWNER_ID (from `arena owner list`, or a bot's owner in `arena bot list --json`; needs the
    admin token): every bot version it registered, in every game, is removed (their ladder history and results
    stay, and their matches still queued are forfeited as with `arena bot remove`), its token stops working, and
    its bot names are freed for anyone to register, except a NAME with stored matches, which stays held by nobody
    so that nobody takes over its history. The way to give back the names a squatter took.

    Example:

    \b
        arena owner remove o-3f9a0c1d2e4b5a6f
    """
    done = app.arena(server).call("RemoveOwner", arena_pb2.RemoveOwnerRequest(id=owner_id))
    if as_json:
        print_json({"owner": owner_id, "removed_bots": list(done.removed_bots),
                    "released_names": [f"{n.game}/{n.name}" for n in done.released_names],
                    "kept_names": [f"{n.game}/{n.name}" for n in done.kept_names]})
        return
    click.echo(f"removed owner {owner_id}: {plural(len(done.removed_bots), 'bot')} removed"
               + (f" ({', '.join(done.removed_bots)})" if done.removed_bots else ""))
    if done.released_names:
        click.echo(f"  {plural(len(done.released_names), 'name')} freed: "
                   + ", ".join(f"{n.game}/{n.name}" for n in done.released_names))
    if done.kept_names:
        click.echo(f"  {plural(len(done.kept_names), 'name')} kept held (they have stored matches): "
                   + ", ".join(f"{n.game}/{n.name}" for n in done.kept_names))


@cli.group(short_help="Registration mode and quotas: show, set (organiser).")
def registration() -> None:
    """How owners come to be: "open" (anyone registering a bot without a token creates an owner) or "closed"
    (owners are created by the organiser, `arena owner create`), and the quotas on registrations."""


def _print_registration(r: Any) -> None:
    click.echo(f"registration {r.mode}: names per owner {_limit(r.max_names_per_owner)}; new owners per client "
               f"address and {r.address_window_s // 60} min {_limit(r.max_owners_per_address)}; names in all "
               f"{_limit(r.max_names_total)} ({r.names_total} held now)")


@registration.command("show", short_help="Show the registration mode and quotas.")
@server_option
@json_option
@click.pass_obj
def registration_show(app: AppContext, server: str, as_json: bool) -> None:
    """Show the registration mode and quotas of the arena (public).

    Example:

    \b
        arena registration show
    """
    info = app.arena(server).call("GetArenaInfo", arena_pb2.GetArenaInfoRequest())
    if as_json:
        print_json(registration_dict(info.registration))
        return
    _print_registration(info.registration)


QUOTA = click.IntRange(0, MAX_QUOTA)


@registration.command("set", short_help="Change the registration mode and quotas (organiser).")
@option("--open/--closed", "mode", default=None,
        help="--open: anyone may create an owner by registering a bot; --closed: only the organiser creates owners "
             "(arena owner create). Default: keep.")
@option("--max-names-per-owner", type=QUOTA, default=None, metavar="N",
        help="Bot names one owner may hold (0: no limit). Default: keep.")
@option("--max-owners-per-address", type=QUOTA, default=None, metavar="N",
        help="New owners open registration may create from one client address (an IPv4 host, an IPv6 /64) per "
             "hour (0: no limit). Default: keep.")
@option("--max-names-total", type=QUOTA, default=None, metavar="N",
        help="Bot names in the whole arena (0: no limit). Default: keep.")
@server_option
@json_option
@click.pass_obj
def registration_set(app: AppContext, mode: bool | None, max_names_per_owner: int | None,
                     max_owners_per_address: int | None, max_names_total: int | None, server: str,
                     as_json: bool) -> None:
    """Change the registration mode and any quota (needs the admin token); prints the new settings.

    Examples:

    \b
        arena registration set --closed
        arena registration set --max-names-per-owner 5 --max-names-total 2000
    """
    request = arena_pb2.SetRegistrationRequest(mode="" if mode is None else "open" if mode else "closed")
    for name, value in (("max_names_per_owner", max_names_per_owner),
                        ("max_owners_per_address", max_owners_per_address), ("max_names_total", max_names_total)):
        if value is not None:
            setattr(request, name, value)
    answer = app.arena(server).call("SetRegistration", request)
    if as_json:
        print_json(registration_dict(answer))
        return
    _print_registration(answer)
