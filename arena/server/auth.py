"""Who may change the arena: proofs of the admin token and of owner tokens, in one place for the referee and the CLI.

- Organiser calls (``ADMIN_METHODS``: CreateTournament, CreateSprt, CancelTournament, RebuildLadder, the owner
  calls CreateOwner, ListOwners, SetRegistration, RemoveOwner) need proof
  of the arena's admin token; UNAUTHENTICATED when none is given, PERMISSION_DENIED when a plain token is wrong.
  RemoveBot also accepts it in place of the bot's owner token (an organiser may remove any bot).
- A bot's own changes (RegisterBot again, UpdateBot, RemoveBot) need proof of its owner token
  (``arena.server.servicer``).
- Every other call is a public read, and no reply, log line or record holds a token or a bot secret.

A proof is a signed call (``arena.core.signing``): the ``arena-signature`` metadata, a MAC over the method, the
arena id, a one-time nonce from GetChallenge (``Challenges``) and the request, under the SHA-256 of the token. The
token itself never travels, so a server that only pretends to be the arena learns nothing it can use. A bad,
expired or replayed signature is UNAUTHENTICATED, with what to do. The plain forms (``authorization: Bearer
TOKEN``, the ``owner_token`` request fields) are still accepted from other clients; the arena CLI never sends them.

Where the admin token comes from: ``arena serve`` takes ``ARENA_ADMIN_TOKEN`` (at least 16 characters) when set;
else it reuses the token saved in ``<data-dir>/admin-token.json`` by an earlier run, or generates one
(``secrets.token_urlsafe(32)``). Either way it saves the token it uses there (mode 0600) with the arena's id, so the
CLI on the same machine finds it: the CLI sends ``ARENA_ADMIN_TOKEN`` when set, else the saved token, and the
saved one only to the arena whose id it was saved with (``GetArenaInfo``), never to another server.
"""

from __future__ import annotations

import hmac
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import grpc

from arena.core import limits, signing
from arena_sdk.guard import metadata_value, secret_matches

ADMIN_METHODS = frozenset({"CreateTournament", "CreateSprt", "CancelTournament", "RebuildLadder", "CreateOwner",
                           "ListOwners", "SetRegistration", "RemoveOwner"})
ADMIN_METADATA = "authorization"  # value "Bearer TOKEN"
BEARER = "Bearer "
ADMIN_TOKEN_ENV = "ARENA_ADMIN_TOKEN"
ADMIN_TOKEN_FILE = "admin-token.json"
ADMIN_TOKEN_BYTES = 32  # of a generated token (43 URL-safe characters)
TOKEN_RE = re.compile(r"^[\x21-\x7e]+\Z")  # visible ASCII: what call metadata can carry


class AdminTokenError(ValueError):
    """An admin token that cannot be used (too short, too long, not visible ASCII), or a broken token file; the
    message says which, and never holds the token."""


def check_token_text(token: str, what: str = "the admin token") -> str:
    """``token`` when it is ``limits.MIN_ADMIN_TOKEN``..``limits.TOKEN`` visible ASCII characters; raises
    ``AdminTokenError`` otherwise."""
    if not limits.MIN_ADMIN_TOKEN <= len(token) <= limits.TOKEN or not TOKEN_RE.match(token):
        raise AdminTokenError(
            f"{what} must be {limits.MIN_ADMIN_TOKEN}..{limits.TOKEN} visible ASCII characters without spaces "
            f"(got {len(token)} characters); e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    return token


def new_admin_token() -> str:
    return secrets.token_urlsafe(ADMIN_TOKEN_BYTES)


def admin_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata carrying ``token``."""
    return ((ADMIN_METADATA, BEARER + token),)


def is_admin_call(context: grpc.ServicerContext, token: str) -> bool:
    """True when the call's metadata holds the admin ``token`` (constant-time comparison)."""
    value = metadata_value(context, ADMIN_METADATA)
    if not token or value is None or not value.startswith(BEARER):
        return False
    return secret_matches(value[len(BEARER):], token)


def admin_refusal(method: str, context: grpc.ServicerContext,
                  token: str) -> tuple[grpc.StatusCode, str] | None:
    """None when the call may go on (an ``ADMIN_METHODS`` call with the plain admin ``token``, or any other
    call); else (UNAUTHENTICATED or PERMISSION_DENIED, a message saying where the token comes from)."""
    if method not in ADMIN_METHODS or is_admin_call(context, token):
        return None
    return _admin_missing(method, context)


def _admin_missing(method: str, context: grpc.ServicerContext) -> tuple[grpc.StatusCode, str]:
    where = (f"the arena CLI signs with ${ADMIN_TOKEN_ENV}, else with the token `arena serve` saved in "
             f"<data-dir>/{ADMIN_TOKEN_FILE} on its machine")
    if metadata_value(context, signing.SIGNATURE_METADATA) is not None:
        return (grpc.StatusCode.PERMISSION_DENIED,
                f"{method} is an organiser call: it needs a call signed with the arena's admin token, not an "
                f"owner's; {where}")
    if metadata_value(context, ADMIN_METADATA) is None:
        return (grpc.StatusCode.UNAUTHENTICATED,
                f"{method} is an organiser call: it needs the arena's admin token, proven by a signed call (see "
                f"proto/arena/v1/arena.proto \"Signed calls\"); {where}")
    return (grpc.StatusCode.PERMISSION_DENIED,
            f"{method}: wrong admin token; it needs the token `arena serve` was started with ({where})")


CHALLENGE_TTL_MS = 60_000  # how long a GetChallenge nonce may sign a call
CLOCK_SKEW_MS = 5_000  # a nonce stamped this far in the future (another referee's clock) is still fresh


class KeyStore(Protocol):
    """What proofs need of the store (``arena.store.credentials.CredentialStore``)."""

    def challenge_key(self) -> bytes: ...
    def use_nonce(self, nonce: str, ttl_ms: int) -> bool: ...
    def owner_key_by_id(self, oid: str) -> str | None: ...
    def arena_id(self) -> str: ...


class Challenges:
    """One-time nonces for signed calls: "<issued ms, hex>.<16 random characters>.<tag>", the tag a truncated
    HMAC-SHA256 under the arena's challenge key, so a nonce needs no storage until it signs a call (a flood of
    GetChallenge calls costs the arena nothing); ``fresh`` checks the tag and the age, the store marks a used one."""

    def __init__(self, store: KeyStore, ttl_ms: int = CHALLENGE_TTL_MS) -> None:
        self.store = store
        self.ttl_ms = ttl_ms
        self._key: bytes | None = None

    def _tag(self, body: str) -> str:
        if self._key is None:
            self._key = self.store.challenge_key()
        return hmac.new(self._key, body.encode(), "sha256").hexdigest()[:32]

    def issue(self, now_ms: int | None = None) -> str:
        """A new nonce (at most ``signing.MAX_NONCE`` characters of ``[A-Za-z0-9_.-]``)."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        body = f"{now_ms:x}.{secrets.token_urlsafe(12)}"
        return f"{body}.{self._tag(body)}"

    def fresh(self, nonce: str, now_ms: int | None = None) -> bool:
        """True when ``nonce`` was issued by this arena less than ``ttl_ms`` ago (it may still have been used)."""
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        body, _, tag = nonce.rpartition(".")
        stamp = body.split(".", 1)[0]
        try:
            issued = int(stamp, 16)
        except ValueError:
            return False
        if not hmac.compare_digest(self._tag(body), tag):
            return False
        return issued - CLOCK_SKEW_MS <= now_ms <= issued + self.ttl_ms


@dataclass(frozen=True)
class CallProof:
    """What a call proves: ``admin`` (it holds the admin token), ``owner_key`` (the ``token_hash`` of an owner
    token it holds, or None), ``signed`` (it proved them by signature, not by sending a token)."""

    admin: bool = False
    owner_key: str | None = None
    signed: bool = False


class Refused(Exception):
    """A call whose proof is refused: ``code`` (a grpc.StatusCode) and ``message``, which never holds a token."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def prove(method_path: str, request: Any, context: grpc.ServicerContext, store: KeyStore,
          challenges: Challenges, admin_token: str) -> CallProof:
    """The ``CallProof`` of one call to ``method_path`` ("/arena.v1.Arena/UpdateBot"): from its ``arena-signature``
    metadata when present (checked, and its nonce used up), else from the plain forms. Raises ``Refused``:
    UNAUTHENTICATED for a malformed, expired or replayed signature, PERMISSION_DENIED for an unknown owner id or a
    signature that does not match the key (a wrong token)."""
    value = metadata_value(context, signing.SIGNATURE_METADATA)
    if value is None:
        token = getattr(request, "owner_token", "")
        return CallProof(admin=is_admin_call(context, admin_token),
                         owner_key=signing.token_hash(token) if token else None)
    sig = signing.parse(value)
    if sig is None:
        raise Refused(grpc.StatusCode.UNAUTHENTICATED,
                      f"the {signing.SIGNATURE_METADATA} metadata is malformed; it must be \"v1 KEY_ID NONCE MAC\" "
                      f"(see proto/arena/v1/arena.proto, \"Signed calls\")")
    if not challenges.fresh(sig.nonce):
        raise Refused(grpc.StatusCode.UNAUTHENTICATED,
                      f"the signature's nonce is expired or was not issued by this arena (a nonce serves "
                      f"{challenges.ttl_ms // 1000} s); ask GetChallenge for a new one and sign again")
    if sig.key_id == signing.ADMIN_KEY_ID:
        key: str | None = signing.token_hash(admin_token)
    else:
        key = store.owner_key_by_id(sig.key_id)
        if key is None:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED,
                          f"{method_path.rsplit('/', 1)[-1]}: wrong owner token: no owner {sig.key_id} in this arena "
                          f"(the token that signed the call belongs to another arena, or was never given here)")
    assert key is not None
    request_bytes = request.SerializeToString(deterministic=True)
    if not signing.verify(key, sig, method_path, store.arena_id(), request_bytes):
        method = method_path.rsplit("/", 1)[-1]
        if sig.key_id == signing.ADMIN_KEY_ID:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED,
                          f"{method}: wrong admin token: the call's signature does not match the token `arena serve` "
                          f"was started with (or the signature is for another arena or method)")
        raise Refused(grpc.StatusCode.PERMISSION_DENIED,
                      f"{method}: wrong owner token: the call's signature does not match owner {sig.key_id}'s token "
                      f"in this arena (or the signature is for another arena or method, or the request changed)")
    if not store.use_nonce(sig.nonce, challenges.ttl_ms + CLOCK_SKEW_MS):
        raise Refused(grpc.StatusCode.UNAUTHENTICATED,
                      "this nonce signed a call already (each signs one call); ask GetChallenge for a new one")
    if sig.key_id == signing.ADMIN_KEY_ID:
        return CallProof(admin=True, signed=True)
    return CallProof(owner_key=key, signed=True)


def admin_proof_refusal(method: str, proof: CallProof,
                        context: grpc.ServicerContext) -> tuple[grpc.StatusCode, str] | None:
    """None when the call may go on (an ``ADMIN_METHODS`` call whose ``proof`` holds the admin token, or any other
    call); else (UNAUTHENTICATED when it offers no admin token, PERMISSION_DENIED when a plain one is wrong, with
    a message saying where the token comes from)."""
    if method not in ADMIN_METHODS or proof.admin:
        return None
    return _admin_missing(method, context)


@dataclass(frozen=True)
class SavedToken:
    """The content of ``<data-dir>/admin-token.json``: the token and the id of the arena it belongs to."""

    token: str
    arena_id: str


def token_path(data_dir: Path) -> Path:
    return Path(data_dir) / ADMIN_TOKEN_FILE


def read_saved_token(data_dir: Path) -> SavedToken | None:
    """The admin token saved in ``data_dir``, or None when there is none. Raises ``AdminTokenError`` for a
    file that cannot be read or is not what ``save_token`` writes."""
    path = token_path(data_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AdminTokenError(f"cannot read the admin token file {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
        token, arena_id = data["token"], data.get("arena_id", "")
        if not isinstance(token, str) or not isinstance(arena_id, str):
            raise TypeError("token and arena_id must be strings")
        check_token_text(token, f"the admin token in {path}")
    except (ValueError, KeyError, TypeError) as exc:
        raise AdminTokenError(f"the admin token file {path} is broken ({type(exc).__name__}); remove it and "
                              f"restart `arena serve` to get a new token") from None
    return SavedToken(token, arena_id)


def save_token(data_dir: Path, saved: SavedToken) -> Path:
    """Write ``saved`` to ``<data_dir>/admin-token.json``, mode 0600 (a temporary file renamed over the old one);
    returns the path. Raises ``AdminTokenError`` when it cannot be written."""
    path = token_path(data_dir)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"arena_id": saved.arena_id, "token": saved.token}, f)
            f.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise AdminTokenError(f"cannot save the admin token in {path}: {exc.strerror or exc}") from None
    return path


def serve_token(data_dir: Path, env_token: str | None) -> tuple[str, str]:
    """The admin token ``arena serve`` uses, and where it comes from: ``"env"`` (``env_token``, from
    ARENA_ADMIN_TOKEN, checked), ``"saved"`` (the one saved in ``data_dir`` by an earlier run) or ``"new"`` (made
    now). Raises ``AdminTokenError``."""
    if env_token:
        return check_token_text(env_token, f"${ADMIN_TOKEN_ENV}"), "env"
    saved = read_saved_token(data_dir)
    if saved is not None:
        return saved.token, "saved"
    return new_admin_token(), "new"
