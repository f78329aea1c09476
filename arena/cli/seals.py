"""The sealed fields of the CLI's calls (``arena.core.sealing``; docs/operators/security.md): which calls seal, to
which key, and what an answer may carry.

An arena's seal key is pinned in ``tokens.json`` (``TokenStore.pin``) by the first call to it that sealed and
succeeded (trust on first use). Then nothing secret leaves for a server at that arena's id that presents another key
or none (a downgrade), nor for a server at an address where this machine reached a pinned arena of another id; and
a call that sealed refuses an answer carrying a new owner token in the clear (a relay removed the client's key).
"""

from __future__ import annotations

from typing import Any

from arena.cli.errors import ArenaCliError
from arena.cli.tokens import ARENA_KEY_PREFIX, ArenaRef, TokenStore
from arena.core.sealing import BOT_SECRET, OWNER_TOKEN, ClientSeal, SealError, bound_to


def sealer(tokens: TokenStore, arena: ArenaRef) -> ClientSeal | None:
    """The sealing of one call to ``arena``: None for a referee without sealed fields that this machine never
    sealed to (its secrets then travel in the clear, as before). Raises ``ArenaCliError``, sending nothing, when
    whoever answers is not the arena it says it is, as far as the pins tell: another key than the one pinned for
    its id, no key although one is pinned, or an address where another pinned arena was reached."""
    is_arena = arena.key.startswith(ARENA_KEY_PREFIX)
    pinned = tokens.pinned_seal_key(arena.key) if is_arena else b""
    elsewhere = [k for k in tokens.pinned_at(arena.server) if k != arena.key]
    where = TokenStore.describe(arena.key)
    remedy = (f"nothing secret was sent. If the organiser replaced the arena (its key or its Redis), remove its "
              f"entry from \"seal_keys\" in {tokens.path}")
    if pinned and pinned != arena.seal_key:
        raise ArenaCliError(f"the server at {arena.server} says it is {where}, but presents "
                            f"{'another seal key' if arena.seal_key else 'no seal key'} than this machine pinned for "
                            f"that arena: it may be an impostor relaying to it (a mistyped --server, another user's "
                            f"process on that port); {remedy}")
    if not pinned and elsewhere:
        raise ArenaCliError(f"the server at {arena.server} says it is {where}, but this machine reached "
                            f"{TokenStore.describe(elsewhere[0])} there before, and pinned its seal key: it may be an "
                            f"impostor; {remedy.replace('its entry', 'the old one')}")
    if not arena.seal_key or not is_arena:
        return None
    return ClientSeal(arena.seal_key)


def seal_secret(request: Any, bot_secret: str | None, seal: ClientSeal | None, bound: bytes) -> None:
    """Put ``bot_secret`` (None: none) in a RegisterBot or UpdateBot ``request``: sealed with ``seal`` and bound to
    ``bound`` (``sealing.bound_to`` of the call), with the call's public key, when the arena seals; else in the
    clear."""
    if seal is None:
        request.bot_secret = bot_secret or ""
        return
    request.client_seal_key = seal.public
    if bot_secret:
        request.sealed_bot_secret = seal.seal(BOT_SECRET, bot_secret, bound)


def opened_token(answer: Any, seal: ClientSeal | None, bound: bytes) -> str:
    """The new owner token of ``answer`` (a BotRecord or an Owner): its ``sealed_owner_token`` opened with the
    call's ``seal`` (bound to ``bound``), or its plain ``owner_token`` for a call that did not seal. Raises
    ``ArenaCliError`` when a sealed one does not open, or when a call that sealed is answered a token in the clear:
    whoever answered saw it."""
    if seal is None:
        return str(answer.owner_token)
    if answer.owner_token:
        raise ArenaCliError("the answer carries the new owner token in the clear, though this call asked for it "
                            "sealed: something between this machine and the arena changed the call, and read the "
                            "token; it was not saved. Have the organiser remove that owner (`arena owner remove "
                            "OWNER_ID`), and register again over TLS (--tls-ca) or on the arena's machine")
    if not answer.sealed_owner_token:
        return ""
    try:
        return seal.unseal(OWNER_TOKEN, answer.sealed_owner_token, bound)
    except SealError as exc:
        raise ArenaCliError(f"the owner token of the answer does not open ({exc}); ask the organiser") from None


__all__ = ["bound_to", "opened_token", "seal_secret", "sealer"]
