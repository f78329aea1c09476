"""Checks of Arena requests: each aborts the call with INVALID_ARGUMENT and a sentence naming the bad field
and what is allowed."""

from __future__ import annotations

import logging
import re
from typing import NoReturn

import grpc

from arena.core.errors import TournamentError
from arena.core.specs import TOURNAMENT_ID_RE, split_bot_ref
from arena_sdk.games import GAMES
from arena_sdk.guard import secret_problem

log = logging.getLogger(__name__)

ENDPOINT_RE = re.compile(r"^(?:tls://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})\Z")  # tls://: over TLS
# hosts that gRPC reads as the scheme of a target URI ("unix:1234" is a socket file, "unix-abstract:..." an abstract
# socket): an endpoint is a network HOST:PORT, never one of these
GRPC_SCHEMES = frozenset({"unix", "unix-abstract", "vsock", "dns", "ipv4", "ipv6", "xds", "google-c2p"})


def known_games() -> str:
    return ", ".join(sorted(GAMES))


def abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    context.abort(code, message)
    raise AssertionError("unreachable")  # context.abort raises


def check_game(game: str, context: grpc.ServicerContext) -> None:
    if not game:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"game is required; known games: {known_games()}")
    if game not in GAMES:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"unknown game {game!r}; known games: {known_games()}")


def check_endpoint(endpoint: str, context: grpc.ServicerContext) -> None:
    m = ENDPOINT_RE.match(endpoint)
    if not m or not 1 <= int(m.group(2)) <= 65535:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
               f"bad endpoint {endpoint!r}: expected HOST:PORT with a port 1..65535, e.g. 127.0.0.1:50061 (or "
               f"tls://HOST:PORT for a bot serving TLS)")
    if m.group(1).lower() in GRPC_SCHEMES:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
               f"bad endpoint {endpoint!r}: {m.group(1)!r} is not a host name (gRPC reads it as a URI scheme); "
               f"give a network HOST:PORT, e.g. 127.0.0.1:50061")


def check_tournament_id(tournament_id: str, context: grpc.ServicerContext) -> None:
    if not TOURNAMENT_ID_RE.match(tournament_id):
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
               f"bad tournament id {tournament_id!r}: ids look like t1, t2, ...")


def check_bot_secret(secret: str, field: str, context: grpc.ServicerContext) -> None:
    """INVALID_ARGUMENT unless ``secret`` is empty (none / keep) or a bot secret (``arena_sdk.guard.secret_problem``:
    16..256 visible ASCII characters, what call metadata can carry, as ``arena.core.limits`` says too); the
    message never holds the secret."""
    problem = secret_problem(secret) if secret else None
    if problem is not None:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT,
              f"{field} {problem}; e.g. python -c 'import secrets; print(secrets.token_hex(16))'")


def split_ref(ref: str, context: grpc.ServicerContext) -> tuple[str, str | None]:
    try:
        return split_bot_ref(ref)
    except TournamentError as exc:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))
