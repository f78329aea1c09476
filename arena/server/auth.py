"""Who may change the arena: the admin token, in one place for the referee and the CLI.

- Organiser calls (``ADMIN_METHODS``: CreateTournament, CreateSprt, CancelTournament, RebuildLadder) need the
  arena's admin token in the call metadata, as ``authorization: Bearer TOKEN``. The referee compares it in
  constant time and answers UNAUTHENTICATED when none is sent, PERMISSION_DENIED when it is wrong. RemoveBot also
  accepts it in place of the bot's owner token (an organiser may remove any bot).
- A bot's own changes (RegisterBot again, UpdateBot, RemoveBot) need its owner token (``arena.server.servicer``).
- Every other call is a public read, and no reply, log line or record holds a token or a bot secret.

Where the admin token comes from: ``arena serve`` takes ``ARENA_ADMIN_TOKEN`` (at least 16 characters) when set;
else it reuses the token saved in ``<data-dir>/admin-token.json`` by an earlier run, or generates one
(``secrets.token_urlsafe(32)``). Either way it saves the token it uses there (mode 0600) with the arena's id, so the
CLI on the same machine finds it: the CLI sends ``ARENA_ADMIN_TOKEN`` when set, else the saved token, and the
saved one only to the arena whose id it was saved with (``GetArenaInfo``), never to another server.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

import grpc

from arena.core import limits
from arena_sdk.guard import metadata_value, secret_matches

ADMIN_METHODS = frozenset({"CreateTournament", "CreateSprt", "CancelTournament", "RebuildLadder"})
ADMIN_METADATA = "authorization"  # value "Bearer TOKEN"
BEARER = "Bearer "
ADMIN_TOKEN_ENV = "ARENA_ADMIN_TOKEN"
ADMIN_TOKEN_FILE = "admin-token.json"
ADMIN_TOKEN_BYTES = 32  # of a generated token (43 URL-safe characters)
TOKEN_RE = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII: what call metadata can carry


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
    if value is None or not value.startswith(BEARER):
        return False
    return secret_matches(value[len(BEARER):], token)


def admin_refusal(method: str, context: grpc.ServicerContext,
                  token: str) -> tuple[grpc.StatusCode, str] | None:
    """None when the call may go on (an ``ADMIN_METHODS`` call with the admin ``token``, or any other call);
    else (UNAUTHENTICATED or PERMISSION_DENIED, a message saying where the token comes from)."""
    if method not in ADMIN_METHODS or is_admin_call(context, token):
        return None
    where = (f"the arena CLI sends ${ADMIN_TOKEN_ENV}, else the token `arena serve` saved in "
             f"<data-dir>/{ADMIN_TOKEN_FILE} on its machine")
    if metadata_value(context, ADMIN_METADATA) is None:
        return (grpc.StatusCode.UNAUTHENTICATED,
                f"{method} is an organiser call: it needs the arena's admin token in the call metadata "
                f"({ADMIN_METADATA}: Bearer TOKEN); {where}")
    return (grpc.StatusCode.PERMISSION_DENIED,
            f"{method}: wrong admin token; it needs the token `arena serve` was started with ({where})")


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
    """The admin token ``arena serve`` uses, and where it comes from ("ARENA_ADMIN_TOKEN", "saved in PATH",
    "generated"): ``env_token`` when given (checked), else the one saved in ``data_dir``, else a new one. Raises
    ``AdminTokenError``."""
    if env_token:
        return check_token_text(env_token, f"${ADMIN_TOKEN_ENV}"), f"${ADMIN_TOKEN_ENV}"
    saved = read_saved_token(data_dir)
    if saved is not None:
        return saved.token, f"kept from {token_path(data_dir)}"
    return new_admin_token(), "generated"
