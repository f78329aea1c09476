"""The sealed fields of the Arena service on the server's side (``arena.core.sealing``; the proto's "Sealed
fields"): the key of one call from its ``client_seal_key`` (a key used before is refused), a bot secret opened from
``sealed_bot_secret``, and a new owner token answered sealed, each bound to its call (``sealing.bound_to``)."""

from __future__ import annotations

from typing import Any, NoReturn

import grpc

from arena.core import sealing
from arena.server.requests import abort
from arena.store import Store


def call_key(store: Store, request: Any, context: grpc.ServicerContext) -> bytes | None:
    """K of this call (``sealing.arena_call_key``) when the request has a ``client_seal_key``, else None; a key of
    the wrong size, one that gives no shared secret, or one a served call used is INVALID_ARGUMENT. Stores
    nothing: the call marks its key used with ``spend_call_key`` once it is to be served, so that a refused call
    (a stranger's, as many as it likes) leaves nothing in the store."""
    if not request.client_seal_key:
        return None
    try:
        key = sealing.arena_call_key(store.seal_key(), request.client_seal_key)
    except sealing.SealError as exc:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{request.DESCRIPTOR.name}.client_seal_key: {exc}")
    if store.client_seal_key_used(request.client_seal_key):
        _refuse_used(request, context)
    return key


def spend_call_key(store: Store, request: Any, context: grpc.ServicerContext) -> None:
    """Mark the request's ``client_seal_key`` used (kept ``CLIENT_SEAL_KEY_TTL_S``), right before the call changes
    anything; INVALID_ARGUMENT when another call spent it first (two replays at once: one is served). Nothing when
    the request has no key."""
    if request.client_seal_key and not store.use_client_seal_key(request.client_seal_key):
        _refuse_used(request, context)


def _refuse_used(request: Any, context: grpc.ServicerContext) -> NoReturn:
    abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{request.DESCRIPTOR.name}.client_seal_key was used by an "
                                                     f"earlier call: make a fresh key pair for each call")


def open_bot_secret(request: Any, key: bytes | None, bound: bytes, context: grpc.ServicerContext) -> None:
    """Put the bot secret of ``sealed_bot_secret`` (opened with ``key``, bound to ``bound``: ``sealing.bound_to``
    of this call) in the request's ``bot_secret``, where the rest of the call reads it; INVALID_ARGUMENT when it has
    no key, comes with a plain ``bot_secret`` too, or does not open."""
    if not request.sealed_bot_secret:
        return
    name = request.DESCRIPTOR.name
    if key is None:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{name}.sealed_bot_secret needs a client_seal_key")
    if request.bot_secret:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{name}: give bot_secret or sealed_bot_secret, not both")
    try:
        request.bot_secret = sealing.unseal(key, sealing.BOT_SECRET, request.sealed_bot_secret, bound)
    except sealing.SealError as exc:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{name}.sealed_bot_secret: {exc}")
    request.sealed_bot_secret = b""


def put_owner_token(message: Any, token: str, key: bytes | None, bound: bytes) -> None:
    """A new owner's ``token`` in the answer ``message``: sealed (``sealed_owner_token``, bound to ``bound``) when
    the call has a key, else in the clear (``owner_token``)."""
    if key is None:
        message.owner_token = token
    else:
        message.sealed_owner_token = sealing.seal(key, sealing.OWNER_TOKEN, token, bound)
