"""Owner tokens saved on this machine (``<data-dir>/tokens.json``) and the calls that need one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
import grpc

from ..config import DEFAULTS
from .app import RPC_TIMEOUT_S, AppContext
from .errors import ArenaCliError, rpc_error
from .options import option

TOKEN_FILE = "tokens.json"
TOKEN_FILE_VERSION = 1


class TokenStore:
    """The owner tokens this machine received, in ``<data-dir>/tokens.json`` (mode 0600), so that later
    ``arena bot register|update|remove`` find them.

    Layout: ``{"version": 1, "tokens": {SERVER: {GAME: {NAME: TOKEN}}}}``, keyed by the ``--server`` address as
    typed (tokens of one arena are never sent to another). Writes go to a temporary file in the same folder,
    created 0600, then renamed over the old file, so a crash never leaves half a file.
    """

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / TOKEN_FILE

    def _load(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {"version": TOKEN_FILE_VERSION, "tokens": {}}
        except OSError as exc:
            raise ArenaCliError(f"cannot read the token file {self.path}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ArenaCliError(f"the token file {self.path} is not valid JSON ({exc}); fix or remove it") from None
        if not isinstance(data, dict) or not isinstance(data.get("tokens"), dict):
            raise ArenaCliError(f"the token file {self.path} has no \"tokens\" object; fix or remove it")
        return data

    def get(self, server: str, game: str, name: str) -> str | None:
        """The saved owner token of bot NAME of ``game`` on ``server``, or None."""
        token = self._load()["tokens"].get(server, {}).get(game, {}).get(name)
        return token if isinstance(token, str) and token else None

    def put(self, server: str, game: str, name: str, token: str) -> None:
        """Save (or replace) the owner token of NAME; the file is created with mode 0600."""
        data = self._load()
        data["version"] = TOKEN_FILE_VERSION
        data["tokens"].setdefault(server, {}).setdefault(game, {})[name] = token
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o600)  # whatever the umask
            os.replace(tmp, self.path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise ArenaCliError(f"cannot save the owner token in {self.path}: {exc.strerror or exc}") from None


def token_option(f: Any) -> Any:
    return option(
        "--token", envvar="ARENA_TOKEN", default=None, metavar="TOKEN",
        help="Owner token of the bot's NAME; env ARENA_TOKEN. Default: the one saved in <data-dir>/tokens.json "
             "when NAME was first registered from this machine.")(f)


def tokens_dir_option(f: Any) -> Any:
    return option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ARENA_DATA_DIR",
        default=DEFAULTS.data_dir, show_default=True,
        help="Folder of this machine's owner-token file (tokens.json); env ARENA_DATA_DIR.")(f)


def owner_token(token: str | None, tokens: TokenStore, server: str, game: str, name: str) -> str:
    """The owner token of NAME: --token / ARENA_TOKEN, else the token file; ``ArenaCliError`` when neither."""
    if token:
        return token
    saved = tokens.get(server, game, name)
    if saved is None:
        raise ArenaCliError(
            f"no owner token for {game} bot {name} on {server}: pass --token TOKEN or set ARENA_TOKEN (the token "
            f"was printed when {name} was first registered; {tokens.path} on this machine has none)")
    return saved


def owner_call(app: "AppContext", server: str, method: str, request: Any, token: str | None, tokens: TokenStore,
                game: str, name: str) -> Any:
    """``Arena.<method>(request)`` with NAME's owner token (--token / ARENA_TOKEN, else the token file) set in
    ``request.owner_token``. Without any token the call is still made, so that an unknown bot is answered
    NOT_FOUND by the referee; a PERMISSION_DENIED answer then becomes "no owner token for ... on SERVER"."""
    owner = token or tokens.get(server, game, name) or ""
    request.owner_token = owner
    client = app.arena(server)
    try:
        return getattr(client.stub, method)(request, timeout=RPC_TIMEOUT_S)
    except grpc.RpcError as exc:
        if not owner and exc.code() == grpc.StatusCode.PERMISSION_DENIED:
            owner_token(None, tokens, server, game, name)  # raises the "no owner token" error
        raise rpc_error(exc, client.server, token_hints(bool(token), tokens, name)) from None


def token_hints(token_given: bool, tokens: TokenStore, name: str) -> dict[grpc.StatusCode, str]:
    """What to add to a PERMISSION_DENIED answer: where the token that was refused came from."""
    where = "--token / ARENA_TOKEN" if token_given else tokens.path
    return {grpc.StatusCode.PERMISSION_DENIED: f"the token sent came from {where}"}
