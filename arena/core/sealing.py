"""Sealed fields: the two things a client and the arena exchange that a relay must not read (proto/arena/v1/arena.proto,
"Sealed fields"): a bot secret the client sends (RegisterBot, UpdateBot) and a new owner token the arena answers
(RegisterBot of a new NAME, CreateOwner).

Scheme "v1". The arena holds one X25519 key pair, made once with its id and kept in its Redis (``Store.seal_key``);
``GetArenaInfo`` gives its public key (``ArenaInfo.seal_key``, 32 bytes), which the CLI pins per arena id the first
time it sees it (trust on first use, as ssh does with host keys). For one call the client makes a fresh X25519 pair
and sends its public key (``client_seal_key``); client and arena each compute K = HKDF-SHA256 (no salt, info
"arena.v1 seal" + the client's public key + the arena's public key, 32 bytes) of their X25519 shared secret. A sealed
field is a 12-byte random nonce followed by ChaCha20-Poly1305(K, nonce, the field's UTF-8 text, associated data
``bound_to``: the field's name, the call's method, game and bot name), so it opens for that one call only, and the
arena refuses a client key it has seen before (``Store.use_client_seal_key``): a sealed field captured from one call
opens in no other. A relay sees two public keys and sealed bytes; without the arena's private key or the client's
it reads neither field, and a changed byte makes the field fail to open.

Built on the ``cryptography`` package (its X25519, HKDF and ChaCha20Poly1305); no I/O.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_BYTES = 32  # an X25519 public or private key
NONCE_BYTES = 12
TAG_BYTES = 16
BOT_SECRET = "bot_secret"  # the associated data of a sealed bot secret
OWNER_TOKEN = "owner_token"  # and of a sealed owner token
MAX_SEALED_BYTES = NONCE_BYTES + 256 + TAG_BYTES  # a sealed field of at most 256 bytes of text


class SealError(ValueError):
    """A key of the wrong size, or a sealed field that does not open (sealed for another key, cut or changed)."""


def new_private_key() -> bytes:
    """A fresh X25519 private key (32 raw bytes)."""
    return X25519PrivateKey.generate().private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                                     serialization.NoEncryption())


def public_key(private: bytes) -> bytes:
    """The X25519 public key (32 raw bytes) of ``private``. Raises ``SealError`` for a key of another size."""
    return _private(private).public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _private(private: bytes) -> X25519PrivateKey:
    if len(private) != KEY_BYTES:
        raise SealError(f"an X25519 private key is {KEY_BYTES} bytes, got {len(private)}")
    return X25519PrivateKey.from_private_bytes(private)


def _public(public: bytes) -> X25519PublicKey:
    if len(public) != KEY_BYTES:
        raise SealError(f"an X25519 public key is {KEY_BYTES} bytes, got {len(public)}")
    return X25519PublicKey.from_public_bytes(public)


def call_key(private: bytes, peer: bytes, client_public: bytes, arena_public: bytes) -> bytes:
    """K of one call: HKDF-SHA256 of the X25519 shared secret of ``private`` and ``peer`` (the other side's
    public key), info "arena.v1 seal" + ``client_public`` + ``arena_public``. Raises ``SealError`` for keys of the
    wrong size, and for a peer key that gives no shared secret (a low-order point)."""
    mine, theirs = _private(private), _public(peer)
    try:
        shared = mine.exchange(theirs)
    except ValueError as exc:  # cryptography refuses an all-zero shared secret
        raise SealError(f"no shared secret with that key: {exc}") from None
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                info=b"arena.v1 seal" + client_public + arena_public).derive(shared)


def bound_to(field: str, method: str, game: str, name: str) -> bytes:
    """The associated data of a sealed field: the field's name, the call's method name ("RegisterBot",
    "UpdateBot", "CreateOwner"), its game and the bot it names (RegisterBotRequest.name, UpdateBotRequest.bot; the
    label for CreateOwner), one per line: a sealed field opens for that one call only."""
    return f"{field}\n{method}\n{game}\n{name}".encode()


def seal(key: bytes, field: str, text: str, bound: bytes = b"") -> bytes:
    """``text`` sealed under ``key`` for ``field`` (``BOT_SECRET`` or ``OWNER_TOKEN``): nonce + ciphertext + tag,
    with associated data ``bound`` (``bound_to``; the field's name alone when empty)."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + ChaCha20Poly1305(key).encrypt(nonce, text.encode(), bound or field.encode())


def unseal(key: bytes, field: str, sealed: bytes, bound: bytes = b"") -> str:
    """The text of ``sealed`` (``seal``'s output for ``field`` and ``bound``). Raises ``SealError`` when it does not
    open (sealed for another key, call or field, or changed)."""
    if not NONCE_BYTES + TAG_BYTES <= len(sealed) <= MAX_SEALED_BYTES:
        raise SealError(f"a sealed {field} is {NONCE_BYTES + TAG_BYTES}..{MAX_SEALED_BYTES} bytes, got {len(sealed)}")
    try:
        opened = ChaCha20Poly1305(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], bound or field.encode())
    except InvalidTag:
        raise SealError(f"the sealed {field} does not open: sealed for another key or call, or changed on the "
                        f"way") from None
    try:
        return opened.decode()
    except UnicodeDecodeError:
        raise SealError(f"the sealed {field} is not UTF-8 text") from None


class ClientSeal:
    """The client's side of one call to the arena whose public key is ``arena_public``: ``public`` goes in the
    request's ``client_seal_key``; ``seal`` and ``unseal`` work with the call's key."""

    def __init__(self, arena_public: bytes) -> None:
        private = new_private_key()
        self.public = public_key(private)
        self.key = call_key(private, arena_public, self.public, arena_public)

    def seal(self, field: str, text: str, bound: bytes = b"") -> bytes:
        return seal(self.key, field, text, bound)

    def unseal(self, field: str, sealed: bytes, bound: bytes = b"") -> str:
        return unseal(self.key, field, sealed, bound)


def arena_call_key(arena_private: bytes, client_public: bytes) -> bytes:
    """The arena's K for a call whose ``client_seal_key`` is ``client_public``. Raises ``SealError``."""
    return call_key(arena_private, client_public, client_public, public_key(arena_private))
