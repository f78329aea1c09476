"""Registering bots. ``RegisterBot``: a bot version registered (or registered again) under its NAME after its
GetInfo check; a new NAME claimed for an owner (the token's, or a new one in open registration, under the quotas of
``arena.server.owners``; a NAME belongs to one owner in every game and every letter case, so a NAME another owner
holds in another game or spelling is refused there, atomically); at most ``limits.VERSIONS_PER_NAME`` versions per
NAME and game, and ``limits.VERSIONS_PER_OWNER`` per owner and game over all its names, counted in the same atomic
step as the write. ``UpdateBot``: a version's endpoint, after the same
check. ``RemoveBot``: by its owner or the organiser; its ladder history stays. The servicer forwards to these
functions."""

from __future__ import annotations

import difflib
import hmac
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import grpc

from arena.core import limits, sealing
from arena.core.specs import BOT_NAME_RE
from arena.server import owners as owner_service
from arena.server import sealed
from arena.server.admission import Caller, caller_of
from arena.server.replies import bot_message
from arena.server.requests import abort, check_bot_secret, check_endpoint, check_game, split_ref
from arena.store import OwnershipError, Store, VersionsExhausted
from arena.store.owners import REMOVED_OWNER
from arena_sdk.games import GAMES
from arena_sdk.pb import arena_pb2, bot_pb2

log = logging.getLogger("arena.server.servicer")  # the servicer's logger: one name for operators' filters


class ArenaServicer(Protocol):
    """What a registration needs of ``arena.server.servicer.ArenaServicer``."""

    store: Store

    def owner_key(self, request: Any, context: grpc.ServicerContext) -> str | None: ...

    def is_admin(self, request: Any, context: grpc.ServicerContext) -> bool: ...

    verify_bots: bool

    def bot_info(self, endpoint: str, game: str, name: str, caller: Caller,
                 context: grpc.ServicerContext,
                 secret_of: Callable[[str], tuple[str, bool]] | None = None) -> bot_pb2.BotInfo: ...


def check_owner(store: Store, game: str, name: str, key: str | None, action: str,
                context: grpc.ServicerContext) -> None:
    """PERMISSION_DENIED unless ``key`` (``owner_key``) is NAME's owner key (an unowned NAME needs none)."""
    stored = store.owner_hash(game, name)
    if stored is None:
        return
    if stored == REMOVED_OWNER:
        abort(context, grpc.StatusCode.PERMISSION_DENIED,
              f"bot name {name!r} ({game}) was an owner's that the organiser removed; its stored matches keep it "
              f"out of use: choose another name")
    if not key:
        abort(context, grpc.StatusCode.PERMISSION_DENIED,
              f"{action} needs the owner token of bot {name!r} ({game}), which its first registration "
              f"returned; none was given")
    if not hmac.compare_digest(key.encode(), stored.encode()):
        abort(context, grpc.StatusCode.PERMISSION_DENIED,
              f"{action}: wrong owner token for bot {name!r} ({game}); it needs the owner token that the "
              f"first registration of {name} returned")


def register_bot(servicer: ArenaServicer, request: arena_pb2.RegisterBotRequest,
                 context: grpc.ServicerContext) -> arena_pb2.BotRecord:
    """The answer of ``RegisterBot`` (see the proto and the module docstring)."""
    game, name, endpoint = request.game, request.name, request.endpoint
    check_game(game, context)
    if not BOT_NAME_RE.match(name):
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
              f"bad bot name {name!r}: use 1..64 characters of A-Z a-z 0-9 _ . -")
    check_endpoint(endpoint, context)
    seal = sealed.call_key(servicer.store, request, context)
    sealed.open_bot_secret(request, seal, sealing.bound_to(sealing.BOT_SECRET, "RegisterBot", game, name), context)
    check_bot_secret(request.bot_secret, "RegisterBotRequest.bot_secret", context)
    key = servicer.owner_key(request, context)
    stored = servicer.store.owner_hash(game, name)
    owned = stored is not None
    if stored == REMOVED_OWNER:
        check_owner(servicer.store, game, name, key, "registering it", context)  # says why, and refuses
    if owned and not servicer.store.bot_versions(game, name) and not (
            key and hmac.compare_digest(key.encode(), (stored or "").encode())):
        given = " (the token given is not it)" if key else ""
        abort(context, grpc.StatusCode.PERMISSION_DENIED,
              f"the name {name} is reserved by its owner (all its versions were removed); pass its owner "
              f"token{given}")
    admission = None
    if owned:
        check_owner(servicer.store, game, name, key,
                    f"bot name {name!r} is registered already: registering it again or a new version", context)
        servicer.store.adopt_owner(stored or "", game, name)  # a per-name owner becomes an account on first sight
    else:  # a new NAME: joins the owner of the token given, or makes a new owner (mode and quotas)
        owner_service.precheck_new_name(servicer, request, context, game, name)
    caller = caller_of(key, stored, lambda: servicer.is_admin(request, context))

    def secret_of(version: str) -> tuple[str, bool]:  # the one given, else the one a registered NAME@VERSION keeps
        kept = servicer.store.get_bot(game, f"{name}@{version}") if owned and not request.bot_secret else None
        return (request.bot_secret, False) if request.bot_secret else \
            (kept.secret, True) if kept is not None and kept.secret else ("", False)

    try:
        info = servicer.bot_info(endpoint, game, name, caller, context, secret_of)
        if not owned and not getattr(context, "is_active", lambda: True)():  # its client left during the check
            log.info("RegisterBot of %s (%s): the client left during the bot check; nothing registered (a new "
                     "owner's token would have gone to nobody)", name, game)
            return arena_pb2.BotRecord()  # answered to nobody
        sealed.spend_call_key(servicer.store, request, context)
        if not owned:
            admission = owner_service.admit_new_name(servicer, request, context, game, name)
        bot, claimed = servicer.store.register_bot_claim(
            game, name, endpoint, version=info.version, sdk_version=info.sdk_version, author=info.author,
            owner_hash=stored if admission is None else admission.key, secret=request.bot_secret,
            checked=servicer.verify_bots, max_versions=limits.VERSIONS_PER_NAME,
            max_owner_versions=limits.VERSIONS_PER_OWNER)
    except VersionsExhausted as exc:  # NAME, or its owner, holds the most versions (counted with the write)
        if admission is not None:  # a new NAME of an owner at its quota of versions: not reserved either
            admission.undo()
        abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
    except OwnershipError:
        if admission is not None:
            admission.undo()
        abort(context, grpc.StatusCode.PERMISSION_DENIED,
              f"bot name {name!r} ({game}) was just registered by someone else; registering it needs the "
              f"owner token its first registration returned")
    except BaseException:
        if admission is not None:
            admission.undo()
        raise
    log.info("registered bot %s (%s) at %s%s", bot.bot_id, bot.game, bot.endpoint,
             " (new owner)" if claimed and admission is not None and admission.token else "")
    message = bot_message(bot, owner_service.public_id(stored if admission is None else admission.key))
    if claimed and admission is not None and admission.token:
        sealed.put_owner_token(message, admission.token, seal,
                               sealing.bound_to(sealing.OWNER_TOKEN, "RegisterBot", game, name))
    return message


def update_bot(servicer: ArenaServicer, request: arena_pb2.UpdateBotRequest,
               context: grpc.ServicerContext) -> arena_pb2.BotRecord:
    """The answer of ``UpdateBot`` (see the proto)."""
    game = request.game
    check_game(game, context)
    name, _version = split_ref(request.bot, context)
    check_endpoint(request.endpoint, context)
    sealed.open_bot_secret(request, sealed.call_key(servicer.store, request, context),
                           sealing.bound_to(sealing.BOT_SECRET, "UpdateBot", game, request.bot), context)
    check_bot_secret(request.bot_secret, "UpdateBotRequest.bot_secret", context)
    bot = servicer.store.get_bot(game, request.bot)
    if bot is None:
        abort(context, grpc.StatusCode.NOT_FOUND, not_found(servicer.store, game, name, request.bot))
    key = servicer.owner_key(request, context)
    check_owner(servicer.store, game, name, key, f"updating {bot.bot_id}", context)
    caller = caller_of(key, servicer.store.owner_hash(game, name), lambda: servicer.is_admin(request, context))
    info = servicer.bot_info(request.endpoint, game, name, caller, context,
                             lambda _version: (request.bot_secret, False) if request.bot_secret else (bot.secret, True))
    if servicer.verify_bots and info.version != bot.version:
        abort(context, grpc.StatusCode.FAILED_PRECONDITION,
              f"the bot at {request.endpoint} reports version {info.version!r}, not {bot.version!r}: register "
              f"it as a new version of {name} instead (`arena bot register {name} {request.endpoint}`)")
    sealed.spend_call_key(servicer.store, request, context)
    updated = servicer.store.update_bot(game, bot.bot_id, request.endpoint, sdk_version=info.sdk_version,
                                        author=info.author, secret=request.bot_secret)
    if updated is None:
        abort(context, grpc.StatusCode.NOT_FOUND, f"bot {bot.bot_id} was removed meanwhile")
    log.info("updated bot %s (%s): endpoint %s", updated.bot_id, game, updated.endpoint)
    return bot_message(updated, owner_service.public_id(servicer.store.owner_hash(game, name)))


def remove_bot(servicer: ArenaServicer, request: arena_pb2.RemoveBotRequest,
               context: grpc.ServicerContext) -> arena_pb2.RemoveBotResponse:
    """The answer of ``RemoveBot`` (see the proto)."""
    game = request.game
    check_game(game, context)
    name, version = split_ref(request.bot, context)
    registered = servicer.store.bot_versions(game, name)
    if not registered or (version is not None and version not in registered):
        abort(context, grpc.StatusCode.NOT_FOUND, not_found(servicer.store, game, name, request.bot))
    if not servicer.is_admin(request, context):  # an organiser may remove any bot
        key = servicer.owner_key(request, context)
        check_owner(servicer.store, game, name, key, f"removing {request.bot}", context)
    removed = servicer.store.remove_bot(game, request.bot)
    log.info("removed bots %s (%s); their ladder history stays", removed, game)
    return arena_pb2.RemoveBotResponse(removed=removed)


def spelt(store: Store, refs: Sequence[str], game: str = "") -> str:
    """Bot refs (NAME or NAME@VERSION) that name no bot, for a NOT_FOUND message: "faulty (did you mean Faulty? a
    NAME's letter case counts here)" for one whose NAME is held in another letter case; with ``game``, "mine@1 (did
    you mean mine@1.0? versions of mine: 1.0, 2.0)" for a VERSION that NAME lacks in ``game`` (the one that starts
    with it, or the versions alone when none or several do; at most 10 shown, the latest); with ``game``,
    "lowrsk (did you mean lowrisk?)" for a NAME close to one registered for ``game`` (``difflib``: bot names are
    public); else as given; comma separated."""
    out = []
    names: list[str] | None = None
    for ref in refs:
        name, at, version = ref.partition("@")
        held = store.held_spelling(name) if BOT_NAME_RE.match(name) else ""
        if held and held != name:
            out.append(f"{ref} (did you mean {held}{at}{version}? a NAME's letter case counts here)")
            continue
        versions = store.bot_versions(game, name) if game and at and held else []
        if versions:
            near = [v for v in versions if v.startswith(version)]
            shown = ", ".join(versions[-10:]) + (f" and {len(versions) - 10} older" if len(versions) > 10 else "")
            guess = f"did you mean {name}@{near[0]}? " if len(near) == 1 else ""
            out.append(f"{ref} ({guess}versions of {name}: {shown})")
            continue
        if game and not held:
            names = store.bot_names(game) if names is None else names
            close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
            if close:
                out.append(f"{ref} (did you mean {close[0]}{at}{version}?)")
                continue
        out.append(ref)
    return ", ".join(out)


def not_registered(store: Store, refs: Sequence[str], game: str) -> str:
    """The NOT_FOUND message of a tournament or SPRT whose ``refs`` are not registered for ``game``: which (``spelt``)
    and, when every one of them is registered for one other game, that game ("they are registered for GAME: give
    --game GAME"): the CLI's --game has a default, which a bot author of another game easily leaves as it is."""
    elsewhere = {g for g in GAMES if g != game and all(store.resolve_bot(g, ref) for ref in refs)}
    hint = (f"; {'it is' if len(refs) == 1 else 'they are'} registered for {min(elsewhere)}: give --game "
            f"{min(elsewhere)}" if len(elsewhere) == 1 else "; register them first (arena bot register NAME HOST:PORT)")
    return f"not registered for {game}: {spelt(store, refs, game)}{hint}"


def not_found(store: Store, game: str, name: str, ref: str) -> str:
    """The NOT_FOUND message for bot ``ref`` (NAME or NAME@VERSION) of ``game``; when no version of NAME is registered
    for it but some are for one other game, it says to give that game (the CLI's --game has a default)."""
    versions = store.bot_versions(game, name)
    if not versions:
        elsewhere = [g for g in GAMES if g != game and store.bot_versions(g, name)]
        hint = f"; it is registered for {elsewhere[0]}: give --game {elsewhere[0]}" if len(elsewhere) == 1 else ""
        return f"no bot named {spelt(store, [name])} is registered for {game}{hint}"
    return f"no bot {ref} registered for {game} (registered versions of {name}: {', '.join(versions)})"
