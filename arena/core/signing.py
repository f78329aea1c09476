"""Signed calls: proof of a token that never travels (proto/arena/v1/arena.proto, "Signed calls").

A client holding a token (the arena's admin token, or an owner token) never sends it. It asks the arena for a
one-time nonce (``Arena.GetChallenge``) and sends, in the call metadata ``arena-signature``, the text
``v1 KEY_ID NONCE MAC``: KEY_ID names the key ("admin", or the owner's public id ``owner_id``), MAC is
HMAC-SHA256 under the key K = SHA-256(token) of the method, the arena id, the nonce and the SHA-256 of the
request's deterministic serialization (``call_text``). The server keeps only K (``token_hash``, as it always
kept of owner tokens), checks the MAC, and takes each nonce once. A server that only pretends to be the arena
receives a MAC over one request and one nonce: it cannot change the request, cannot use it for another call and,
once the nonce is used or expired, cannot use it at all.

Pure functions: no I/O, no grpc.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

SIGNATURE_METADATA = "arena-signature"  # call-metadata key of a signed call
SCHEME = "v1"
ADMIN_KEY_ID = "admin"  # KEY_ID of the arena's admin token
MAX_NONCE = 128  # characters of a nonce
_KEY_ID_RE = re.compile(r"^(admin|o-[0-9a-f]{16})\Z")
_NONCE_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,128}\Z")  # MAX_NONCE characters
_MAC_RE = re.compile(r"^[0-9a-f]{64}\Z")


def token_hash(token: str) -> str:
    """K of ``token``: its SHA-256, hex (64 characters). What the arena keeps of an owner token, and the key of the
    token's signatures."""
    return hashlib.sha256(token.encode()).hexdigest()


def owner_id(key: str) -> str:
    """The public id of the owner whose key is ``key`` (``token_hash`` of its owner token): "o-" and 16 hex
    digits of HMAC-SHA256(key, "arena.v1 owner id"). A client computes it from the token alone; it reveals
    nothing of the key. Raises ``ValueError`` when ``key`` is not hex."""
    return "o-" + hmac.new(bytes.fromhex(key), b"arena.v1 owner id", hashlib.sha256).hexdigest()[:16]


def call_text(method: str, arena_id: str, nonce: str, request_bytes: bytes) -> bytes:
    """What a signature covers: "arena.v1 call", the full method path (e.g. "/arena.v1.Arena/UpdateBot"), the arena
    id, the nonce and the hex SHA-256 of the serialized request, one per line (UTF-8)."""
    digest = hashlib.sha256(request_bytes).hexdigest()
    return f"arena.v1 call\n{method}\n{arena_id}\n{nonce}\n{digest}".encode()


def mac(key: str, method: str, arena_id: str, nonce: str, request_bytes: bytes) -> str:
    """The hex HMAC-SHA256 under ``key`` (hex K) of ``call_text(...)``."""
    return hmac.new(bytes.fromhex(key), call_text(method, arena_id, nonce, request_bytes), hashlib.sha256).hexdigest()


def header(key_id: str, nonce: str, signature: str) -> str:
    """The value of the ``arena-signature`` metadata: "v1 KEY_ID NONCE MAC"."""
    return f"{SCHEME} {key_id} {nonce} {signature}"


def key_id_of(token: str, admin: bool) -> str:
    """KEY_ID of ``token``: "admin" for the admin token, else the owner id of its key."""
    return ADMIN_KEY_ID if admin else owner_id(token_hash(token))


def sign(token: str, *, admin: bool, method: str, arena_id: str, nonce: str, request_bytes: bytes) -> str:
    """The ``arena-signature`` value proving ``token`` for one call (see the module docstring)."""
    return header(key_id_of(token, admin), nonce, mac(token_hash(token), method, arena_id, nonce, request_bytes))


@dataclass(frozen=True)
class Signature:
    """A parsed ``arena-signature`` value: key_id ("admin" or an owner id), nonce, mac (64 hex digits)."""

    key_id: str
    nonce: str
    mac: str


def parse(value: str) -> Signature | None:
    """The ``Signature`` in ``value``, or None when it is not "v1 KEY_ID NONCE MAC" with a well-formed KEY_ID,
    nonce and MAC."""
    parts = value.split(" ")
    if len(parts) != 4 or parts[0] != SCHEME:
        return None
    _, key_id, nonce, signature = parts
    if not (_KEY_ID_RE.match(key_id) and _NONCE_RE.match(nonce) and _MAC_RE.match(signature)):
        return None
    return Signature(key_id, nonce, signature)


def verify(key: str, signature: Signature, method: str, arena_id: str, request_bytes: bytes) -> bool:
    """True when ``signature.mac`` is the MAC of this call under ``key`` (hex K); constant-time comparison."""
    expected = mac(key, method, arena_id, signature.nonce, request_bytes)
    return hmac.compare_digest(expected, signature.mac)
