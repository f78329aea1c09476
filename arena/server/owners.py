"""Owner accounts at the Arena edge: who may create an owner or add a bot name to one (registration mode and
quotas), and the CreateOwner, GetOwner, ListOwners, RemoveOwner and SetRegistration calls. ``arena.server.servicer``
delegates to these functions; the store side is ``arena.store.owners``.

A new bot NAME registered with an owner's token joins that owner (no new token); without a token it creates a new
owner, whose token the answer carries once, if registration is open. A NAME belongs to one owner in every game and
every letter case: a NAME that another owner holds in any game, in any spelling ("Heuristic" when another owner holds
"heuristic"), is refused, and its owner registers it in the one spelling it holds (checked atomically with the
quotas, ``arena.store.owners``).
Errors: PERMISSION_DENIED (registration closed to a new owner; a token that is no owner of this arena; a NAME of
another owner; GetOwner of another owner), ALREADY_EXISTS (another spelling of a NAME the owner holds),
RESOURCE_EXHAUSTED (a quota, named with who can raise it), INVALID_ARGUMENT (a bad mode, label, id or page token),
NOT_FOUND (an unknown owner id).
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import grpc

from arena.core import limits, sealing
from arena.server import sealed
from arena.server.requests import abort
from arena.store import (
    NameLookAlikeError,
    NameSpellingError,
    NameTakenError,
    OwnerAccount,
    QuotaError,
    Registration,
    Store,
    UnknownOwnerError,
    token_hash,
)
from arena.store.keys import owner_id
from arena.store.owners import ADDRESS_WINDOW_S, public_id
from arena_sdk.games import GAMES
from arena_sdk.pb import arena_pb2
from arena_sdk.peers import peer_address

log = logging.getLogger(__name__)

__all__ = ["Admission", "admit_new_name", "precheck_new_name", "create_owner", "get_owner", "list_owners", "public_id",
           "registration_message", "remove_owner", "set_registration"]

OWNER_TOKEN_BYTES = 32  # of a new owner token (43 URL-safe characters)
DEFAULT_OWNER_PAGE = 100
MAX_PAGE_BYTES = 1024 * 1024  # a ListOwners page ends early past this, far below gRPC's 4 MiB message limit
OWNER_ID_RE = re.compile(r"^o-[0-9a-f]{16}\Z")
LABEL_RE = re.compile(r"^[^\x00-\x1f\x7f]*\Z")  # printable: no control characters
RAISE_HINT = "the arena's organiser can raise it (arena registration set --{flag} N; 0 means no limit)"
QUOTA_TEXT = {
    "max_names_per_owner": ("max-names-per-owner", "owner {who} holds {limit} bot names, the most one owner may hold"),
    "max_owners_per_address": ("max-owners-per-address",
                               "{limit} owners were created by registration from {who} within the last hour, the "
                               "most one client address may create"),
    "max_names_total": ("max-names-total", "this arena holds {limit} bot names, the most it allows in all"),
}


class ArenaServicer(Protocol):
    """What these calls need of ``arena.server.servicer.ArenaServicer``."""

    store: Store

    def owner_key(self, request: Any, context: grpc.ServicerContext) -> str | None: ...

    def is_admin(self, request: Any, context: grpc.ServicerContext) -> bool: ...


def _address_text(client: str) -> str:
    """How a quota refusal names a client address (``arena_sdk.peers.peer_address``)."""
    if client == "loopback":
        return "this machine's loopback addresses (127.0.0.0/8 and ::1 count as one client address)"
    return f"client address {client}"


def new_owner_token() -> str:
    return secrets.token_urlsafe(OWNER_TOKEN_BYTES)


def quota_refusal(context: grpc.ServicerContext, exc: QuotaError, who: str) -> None:
    """RESOURCE_EXHAUSTED naming the quota, its value and who can raise it."""
    flag, text = QUOTA_TEXT[exc.quota]
    abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
          f"{text.format(who=who, limit=exc.limit)} ({exc.quota} = {exc.limit}); {RAISE_HINT.format(flag=flag)}")


@dataclass
class Admission:
    """A new bot NAME admitted for registration: ``key`` (the owner key it will be stored with), ``token`` (the new
    owner's token to return once; "" when NAME joins an existing owner) and ``undo`` (release what was reserved,
    when the registration fails after all)."""

    key: str
    token: str
    undo: Callable[[], None]


def _unknown_owner(context: grpc.ServicerContext, name: str, reg: Registration) -> None:
    abort(context, grpc.StatusCode.PERMISSION_DENIED,
          f"the owner token given is no owner of this arena, so it cannot register {name!r}; pass the token printed "
          f"when your owner was created (arena owner show lists what is saved), or no token to create a new owner"
          + ("" if reg.mode == "open" else " (registration is closed here)"))


def _name_taken(store: Store, context: grpc.ServicerContext, game: str, name: str, key: str | None,
                held: str) -> None:
    """PERMISSION_DENIED: ``name`` is another owner's, which holds it as ``held`` ("" unknown: as ``name``)."""
    spelling = held or name
    games = [g for g in sorted(GAMES) if store.owner_hash(g, spelling)]
    where = f" (registered for {', '.join(games)})" if games else ""
    as_held = f" as {spelling!r}" if spelling != name else ""
    case = ", and names that differ only in letter case are one NAME" if spelling != name else ""
    given = "; the owner token given is another owner's" if key else ""
    abort(context, grpc.StatusCode.PERMISSION_DENIED,
          f"bot name {name!r} is taken by another owner{as_held}{where}: a bot NAME belongs to one owner in every "
          f"game{case}, so registering it for {game} needs that owner's token{given}; choose another name for your "
          f"bot")


def _other_spelling(context: grpc.ServicerContext, exc: NameSpellingError) -> None:
    abort(context, grpc.StatusCode.ALREADY_EXISTS,
          f"your owner holds the bot name {exc.held!r}, and {exc.name!r} differs from it only in letter case: names "
          f"that differ only in letter case are one NAME, so register it as {exc.held!r} (or choose another name)")


def _look_alike(context: grpc.ServicerContext, exc: NameLookAlikeError) -> None:
    abort(context, grpc.StatusCode.PERMISSION_DENIED,
          f"bot name {exc.name!r} reads as {exc.held!r}, another owner's bot NAME: names that read alike (letter "
          f"case; '.', '-' and '_'; 0 and o; 1, l and i; rn and m; vv and w) would let one bot pass for another, so "
          f"they belong to one owner; choose a name of your own")


def _closed(context: grpc.ServicerContext, name: str) -> None:
    abort(context, grpc.StatusCode.PERMISSION_DENIED,
          f"registration of new owners is closed on this arena: registering {name!r} needs an owner token; ask the "
          f"arena's organiser for one (arena owner create LABEL), then register with --token TOKEN")


def precheck_new_name(servicer: ArenaServicer, request: Any, context: grpc.ServicerContext, game: str,
                      name: str) -> None:
    """Before the bot check of a new bot NAME: refuse at once what ``admit_new_name`` would refuse after it (closed
    registration, an unknown owner token, a NAME another owner holds in any game, a quota already used up), reading
    only. Aborts the call with PERMISSION_DENIED, ALREADY_EXISTS or RESOURCE_EXHAUSTED."""
    store = servicer.store
    reg = store.registration()
    key = servicer.owner_key(request, context)
    if not key and reg.mode == "closed":
        _closed(context, name)
    host = peer_address(context.peer() or "")
    try:
        store.check_new_name(key, game, name, host, reg)
    except UnknownOwnerError:
        _unknown_owner(context, name, reg)
    except NameTakenError as exc:
        _name_taken(store, context, game, name, key, exc.held)
    except NameLookAlikeError as exc:
        _look_alike(context, exc)
    except NameSpellingError as exc:
        _other_spelling(context, exc)
    except QuotaError as exc:
        quota_refusal(context, exc, owner_id(key) if key else _address_text(host))


def admit_new_name(servicer: ArenaServicer, request: Any, context: grpc.ServicerContext, game: str,
                   name: str) -> Admission:
    """Reserve the new bot NAME ``name`` of ``game`` (its bot check passed) for the owner this call proves
    (``servicer.owner_key``), or for a new owner when it proves none (open registration only), under the quotas
    and unless another owner holds NAME in any game and letter case, atomically. Aborts the call with
    PERMISSION_DENIED, ALREADY_EXISTS (the owner holds NAME in another letter case) or RESOURCE_EXHAUSTED (nothing
    reserved)."""
    store = servicer.store
    reg = store.registration()
    key = servicer.owner_key(request, context)
    if key:
        try:
            store.add_owner_name(key, game, name, reg)
        except UnknownOwnerError:
            _unknown_owner(context, name, reg)
        except NameTakenError as exc:
            _name_taken(store, context, game, name, key, exc.held)
        except NameSpellingError as exc:
            _other_spelling(context, exc)
        except QuotaError as exc:
            quota_refusal(context, exc, owner_id(key))
        return Admission(key, "", lambda: store.release_owner_name(key, game, name))
    if reg.mode == "closed":
        _closed(context, name)
    token = new_owner_token()
    new_key = token_hash(token)
    host = peer_address(context.peer() or "")
    try:
        store.create_owner(new_key, created_by="registration", first=(game, name), address=host, registration=reg)
    except NameTakenError as exc:
        _name_taken(store, context, game, name, None, exc.held)
    except QuotaError as exc:
        quota_refusal(context, exc, _address_text(host))
    return Admission(new_key, token, lambda: store.drop_owner(new_key))


def registration_message(store: Store) -> arena_pb2.Registration:
    reg = store.registration()
    return arena_pb2.Registration(mode=reg.mode, max_names_per_owner=reg.max_names_per_owner,
                                  max_owners_per_address=reg.max_owners_per_address,
                                  max_names_total=reg.max_names_total, address_window_s=ADDRESS_WINDOW_S,
                                  names_total=store.names_total())


def owner_message(owner: OwnerAccount, reg: Registration) -> arena_pb2.Owner:
    """The ``Owner`` message of ``owner``, without its token (CreateOwner's answer adds it: ``sealed``)."""
    return arena_pb2.Owner(id=owner.id, label=owner.label, created_at=owner.created_at, created_by=owner.created_by,
                           names=[arena_pb2.OwnedName(game=g, name=n) for g, n in owner.names],
                           names_held=len(owner.names), max_names=reg.max_names_per_owner)


def create_owner(servicer: ArenaServicer, request: arena_pb2.CreateOwnerRequest,
                 context: grpc.ServicerContext) -> arena_pb2.Owner:
    """CreateOwner (an organiser call: the gate checked the admin token): a new owner with ``label``; its token is
    in the answer, once."""
    if not LABEL_RE.match(request.label):
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
              f"an owner label may not hold control characters; at most {limits.OWNER_LABEL} printable characters")
    seal = sealed.call_key(servicer.store, request, context)
    sealed.spend_call_key(servicer.store, request, context)
    token = new_owner_token()
    key = token_hash(token)
    servicer.store.create_owner(key, label=request.label, created_by="organiser")
    owner = servicer.store.get_owner(key)
    if owner is None:  # dropped between the two calls: nobody else knows the key
        abort(context, grpc.StatusCode.ABORTED, "the new owner vanished while it was created; try again")
    log.info("owner %s created by the organiser", owner.id)
    message = owner_message(owner, servicer.store.registration())
    sealed.put_owner_token(message, token, seal,
                           sealing.bound_to(sealing.OWNER_TOKEN, "CreateOwner", "", request.label))
    return message


def get_owner(servicer: ArenaServicer, request: arena_pb2.GetOwnerRequest,
              context: grpc.ServicerContext) -> arena_pb2.Owner:
    """GetOwner: the owner the call's token proves, or (with the admin token) the owner ``request.id``."""
    store = servicer.store
    if request.id and not OWNER_ID_RE.match(request.id):
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
              f"bad owner id {request.id!r}: owner ids look like o- and 16 hex digits (BotRecord.owner)")
    key = servicer.owner_key(request, context)
    if request.id and servicer.is_admin(request, context):
        found = store.owner_key_of_id(request.id)
        if found is None:
            abort(context, grpc.StatusCode.NOT_FOUND, f"no owner {request.id} in this arena")
        key = found
    elif not key:
        abort(context, grpc.StatusCode.PERMISSION_DENIED,
              "GetOwner needs the owner's token (owner_token), or the admin token with an owner id")
    elif request.id and request.id != owner_id(key):
        abort(context, grpc.StatusCode.PERMISSION_DENIED,
              f"the owner token given is not the token of owner {request.id}; reading another owner needs the "
              f"admin token")
    owner = store.get_owner(key)
    if owner is None:
        abort(context, grpc.StatusCode.PERMISSION_DENIED, "the owner token given is no owner of this arena")
    return owner_message(owner, store.registration())


def remove_owner(servicer: ArenaServicer, request: arena_pb2.RemoveOwnerRequest,
                 context: grpc.ServicerContext) -> arena_pb2.RemoveOwnerResponse:
    """RemoveOwner (an organiser call): the owner ``request.id``'s bots removed, its token no owner's, its names
    freed but those with stored matches (``Store.remove_owner``); logged."""
    if not OWNER_ID_RE.match(request.id):
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
              f"bad owner id {request.id!r}: owner ids look like o- and 16 hex digits (arena owner list)")
    store = servicer.store
    key = store.owner_key_of_id(request.id)
    if key is None:
        abort(context, grpc.StatusCode.NOT_FOUND, f"no owner {request.id} in this arena (arena owner list)")
    try:
        done = store.remove_owner(key)
    except UnknownOwnerError:
        abort(context, grpc.StatusCode.NOT_FOUND, f"no owner {request.id} in this arena (removed meanwhile)")
    log.warning("owner %s removed by the organiser: %d bots removed, %d names freed, %d kept (with stored matches)",
                done.owner_id, len(done.removed_bots), len(done.released_names), len(done.kept_names))
    return arena_pb2.RemoveOwnerResponse(
        removed_bots=done.removed_bots,
        released_names=[arena_pb2.OwnedName(game=g, name=n) for g, n in done.released_names],
        kept_names=[arena_pb2.OwnedName(game=g, name=n) for g, n in done.kept_names])


def list_owners(servicer: ArenaServicer, request: arena_pb2.ListOwnersRequest,
                context: grpc.ServicerContext) -> arena_pb2.ListOwnersResponse:
    """ListOwners (an organiser call): one page in id order, at most ``page_size`` owners and, past the first owner,
    at most ``MAX_PAGE_BYTES`` (owners holding many names, when the organiser lifted the quotas); the page token is
    the last id of the page before."""
    if request.page_token and not OWNER_ID_RE.match(request.page_token):
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
              "bad page_token: pass the next_page_token of the previous ListOwners answer, or none for the first "
              "page")
    size = min(request.page_size or DEFAULT_OWNER_PAGE, limits.OWNER_PAGE)
    owners, after = servicer.store.list_owners(request.page_token, size)
    reg = servicer.store.registration()
    reply = arena_pb2.ListOwnersResponse(next_page_token=after)
    used = 0
    for k, o in enumerate(owners):
        message = owner_message(o, reg)
        used += message.ByteSize()
        if k and used > MAX_PAGE_BYTES:
            reply.next_page_token = owners[k - 1].id
            break
        reply.owners.append(message)
    return reply


def set_registration(servicer: ArenaServicer, request: arena_pb2.SetRegistrationRequest,
                     context: grpc.ServicerContext) -> arena_pb2.Registration:
    """SetRegistration (an organiser call): change the mode and the quotas given; answer the new settings."""
    quotas = {f: getattr(request, f) if request.HasField(f) else None
              for f in ("max_names_per_owner", "max_owners_per_address", "max_names_total")}
    try:
        servicer.store.set_registration(request.mode or None, **quotas)
    except ValueError as exc:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    reg = servicer.store.registration()
    log.info("registration set: mode %s, %s", reg.mode, ", ".join(f"{f} {v}" for f, v in quotas.items()
                                                                 if v is not None) or "quotas unchanged")
    return registration_message(servicer.store)
