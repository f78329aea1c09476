"""Owner tokens saved on this machine (``<data-dir>/tokens.json``), filed by the arena they belong to, and the
calls that need one.

An arena is known by its id (``Arena.GetArenaInfo``), not by the address typed: ``localhost:50051``,
``127.0.0.1:50051`` and a host name of the same referee find the same tokens, and a token is never sent to
another arena.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import grpc

from arena.cli.app import RPC_TIMEOUT_S, AppContext, Credential
from arena.cli.errors import ArenaCliError, not_an_arena, rpc_error
from arena.cli.options import option
from arena.core.config import DEFAULTS
from arena_sdk.pb import arena_pb2

TOKEN_FILE = "tokens.json"
TOKEN_FILE_VERSION = 1
HEX_RE = re.compile(r"[0-9a-f]{64}")  # a pinned seal key
ARENA_KEY_PREFIX = "arena:"


@dataclass(frozen=True)
class ArenaRef:
    """The arena a command talks to: ``key`` files its owner tokens ("arena:<id>"; the address itself for a
    referee too old to report an id), ``server`` is the address typed, ``seal_key`` the public key of its sealed
    fields as it presented it (``ArenaInfo.seal_key``; b"" from a referee without them)."""

    key: str
    server: str
    seal_key: bytes = b""

    @property
    def arena_id(self) -> str:
        return self.key.removeprefix(ARENA_KEY_PREFIX) if self.key.startswith(ARENA_KEY_PREFIX) else ""


def resolve_arena(app: AppContext, server: str) -> ArenaRef:
    """Ask the referee at ``server`` who it is (GetArenaInfo). Raises the one-line ``ArenaCliError`` when it
    cannot be reached or is no arena referee (e.g. a bot's port); a referee without GetArenaInfo (older) is filed
    by its address, as before arenas had ids."""
    client = app.arena(server)
    try:  # as every call: it waits for a serve of this data folder still starting, or says where it listens
        info = client.call("GetArenaInfo", arena_pb2.GetArenaInfoRequest(),
                           passthrough=(grpc.StatusCode.UNIMPLEMENTED,))
    except grpc.RpcError as exc:
        if not_an_arena(server) is None:
            return ArenaRef(server, server)
        raise rpc_error(exc, server) from None
    if not info.arena_id:
        return ArenaRef(server, server)
    return ArenaRef(ARENA_KEY_PREFIX + info.arena_id, server, bytes(info.seal_key))


class TokenStore:
    """The owner tokens this machine received, in ``<data-dir>/tokens.json`` (mode 0600), so that later
    ``arena bot register|update|remove|token`` find them.

    Layout: ``{"version": 1, "tokens": {KEY: {GAME: {NAME: TOKEN}}}, "servers": {KEY: ADDRESS}, "owners": {KEY:
    {OWNER_ID: {"token": TOKEN, "label": LABEL}}}, "seal_keys": {KEY: HEX}}``. KEY is "arena:<arena id>"
    (``ArenaRef.key``; files written before arenas had ids use the server address), ADDRESS the address last used
    to reach that arena (shown in messages); ``owners`` (absent in older files) holds the owner tokens ``arena owner
    create`` received, which no bot NAME holds yet; ``seal_keys`` the seal key of each arena when a token of it was
    first saved (``pinned_seal_key``). Writes go to a temporary file in the same folder, created 0600, then renamed
    over the old file, so a crash never leaves half a file.

    A NAME belongs to one owner in every game, so the token of NAME is found whatever game it was filed under
    (``find``): the one of the game asked for first, else the one saved for NAME in another game.
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

    def check(self) -> None:
        """Raise the one-line ``ArenaCliError`` now when the token file cannot be read or is broken."""
        self._load()

    def get(self, key: str, game: str, name: str) -> str | None:
        """The owner token of bot NAME of ``game`` saved under ``key`` (an ``ArenaRef.key``), or None."""
        token = self._load()["tokens"].get(key, {}).get(game, {}).get(name)
        return token if isinstance(token, str) and token else None

    def find(self, key: str, game: str, name: str) -> tuple[str, str] | None:
        """(the game it is filed under, token) of the owner token of bot NAME saved under ``key``: the one of
        ``game``, else one saved for NAME in another game (NAME's owner is the same in every game); None for
        none."""
        return _find(self._load()["tokens"].get(key), game, name)

    def lookup(self, arena: ArenaRef, game: str, name: str) -> str | None:
        """The saved owner token of NAME on ``arena`` (filed under ``game``, else under another game: ``find``):
        the one filed under its id, else one filed under the very address typed by a CLI older than arena ids (then
        re-filed under the id)."""
        found = self.find(arena.key, game, name)
        if found is None and arena.key != arena.server:
            found = self.find(arena.server, game, name)
            if found is not None:
                self.put(arena, found[0], name, found[1], drop_key=arena.server)
        return found[1] if found else None

    def put(self, arena: ArenaRef | str, game: str, name: str, token: str, *, drop_key: str | None = None) -> None:
        """Save (or replace) the owner token of NAME for ``arena`` (an ``ArenaRef``, or a bare key), removing the
        one filed under ``drop_key`` (re-filing); the file is created with mode 0600."""
        key, server = (arena.key, arena.server) if isinstance(arena, ArenaRef) else (arena, arena)
        data = self._load()
        data["version"] = TOKEN_FILE_VERSION
        data["tokens"].setdefault(key, {}).setdefault(game, {})[name] = token
        old = data["tokens"].get(drop_key, {}).get(game, {}) if drop_key else {}
        if isinstance(old, dict) and old.pop(name, None) is not None:
            if not old:
                data["tokens"][drop_key].pop(game)
            if not data["tokens"][drop_key]:
                data["tokens"].pop(drop_key)
        if key != server:
            servers = _servers(data)
            servers[key] = server
            data["servers"] = servers
        if isinstance(arena, ArenaRef):
            _pin(data, arena)
        self._write(data)

    def put_owner(self, arena: ArenaRef, oid: str, token: str, label: str = "") -> None:
        """Save the token of owner ``oid`` (an ``Owner.id``) for ``arena``, with its label."""
        data = self._load()
        data["version"] = TOKEN_FILE_VERSION
        owners: dict[str, Any] = data["owners"] if isinstance(data.get("owners"), dict) else {}
        owners.setdefault(arena.key, {})[oid] = {"token": token, "label": label}
        data["owners"] = owners
        servers = _servers(data)
        servers[arena.key] = arena.server
        data["servers"] = servers
        _pin(data, arena)
        self._write(data)

    def owner_tokens(self, arena: ArenaRef) -> list[tuple[str, str]]:
        """Every distinct owner token saved for ``arena``, as (where it is saved, token): those of
        ``arena owner create`` ("owner LABEL") and those of bot names ("bot GAME/NAME", the first name of each)."""
        data = self._load()
        out: dict[str, str] = {}
        owners: dict[str, Any] = data["owners"] if isinstance(data.get("owners"), dict) else {}
        for entry in (owners.get(arena.key) or {}).values():
            if isinstance(entry, dict) and isinstance(entry.get("token"), str) and entry["token"]:
                out.setdefault(entry["token"], f"owner {entry.get('label') or '(no label)'}")
        for game, names in sorted((data["tokens"].get(arena.key) or {}).items()):
            for name, token in sorted(names.items() if isinstance(names, dict) else ()):
                if isinstance(token, str) and token:
                    out.setdefault(token, f"bot {game}/{name}")
        return [(where, token) for token, where in out.items()]

    def refile(self, old_key: str, arena: ArenaRef) -> int:
        """Move every token saved under ``old_key`` (e.g. an address saved before arenas had ids) to ``arena``,
        keeping a token already filed there; returns how many moved."""
        data = self._load()
        old = data["tokens"].pop(old_key, None)
        if not isinstance(old, dict) or old_key == arena.key:
            return 0
        moved = 0
        for game, names in old.items():
            for name, token in (names.items() if isinstance(names, dict) else ()):
                data["tokens"].setdefault(arena.key, {}).setdefault(game, {}).setdefault(name, token)
                moved += 1
        servers = _servers(data)
        servers[arena.key] = arena.server
        data["servers"] = servers
        self._write(data)
        return moved

    def saved(self, game: str, name: str) -> list[tuple[str, str]]:
        """Every saved owner token of NAME (of ``game``, else of another game: ``find``), one per arena: (where,
        token), ``where`` saying which arena, e.g. "arena 3f2a9c... (last reached at 127.0.0.1:50051)"."""
        data = self._load()
        servers = _servers(data)
        out = []
        for key, games in sorted(data["tokens"].items()):
            found = _find(games, game, name)
            if found is not None:
                out.append((self.describe(key, servers.get(key)), found[1]))
        return out

    def pinned_seal_key(self, key: str) -> bytes:
        """The seal key pinned for the arena of ``key`` (an ``ArenaRef.key``; b"" for none yet): the one it
        presented in this machine's first call to it that sealed and succeeded, or that saved a token of it
        (``pin``, ``put``, ``put_owner``: trust on first use)."""
        pinned = _pins(self._load()).get(key)
        return bytes.fromhex(pinned) if isinstance(pinned, str) and HEX_RE.fullmatch(pinned) else b""

    def pin(self, arena: ArenaRef) -> None:
        """Pin ``arena``'s seal key unless one is pinned for it already."""
        data = self._load()
        if arena.seal_key and arena.key.startswith(ARENA_KEY_PREFIX) and arena.key not in _pins(data):
            _pin(data, arena)
            servers = _servers(data)
            servers[arena.key] = arena.server
            data["servers"] = servers
            data["version"] = TOKEN_FILE_VERSION
            self._write(data)

    def pinned_at(self, server: str) -> list[str]:
        """The keys of the arenas with a pinned seal key last reached at address ``server``."""
        data = self._load()
        return [key for key, where in _servers(data).items() if where == server and key in _pins(data)]

    @staticmethod
    def describe(key: str, server: str | None = None) -> str:
        if key.startswith(ARENA_KEY_PREFIX):
            arena_id = key.removeprefix(ARENA_KEY_PREFIX)
            return f"arena {arena_id[:8]}" + (f" (last reached at {server})" if server else "")
        return f"the arena at {key} (saved before arenas had ids)"

    def _write(self, data: dict[str, Any]) -> None:
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

    def missing(self, arena: ArenaRef, game: str, name: str) -> str:
        """Why no saved token of NAME (in any game) applies to ``arena``, in one clause: the file has none of NAME,
        or only tokens of NAME for other arenas, or one filed under another address before arenas had ids (all
        named)."""
        data = self._load()
        keys = [k for k, games in data["tokens"].items() if k != arena.key and _find(games, game, name) is not None]
        if not keys:
            return f"{self.path} has no token of {name} (it was printed when {name} was first registered)"
        servers = _servers(data)
        legacy = [k for k in keys if not k.startswith(ARENA_KEY_PREFIX)]
        others = [self.describe(k, servers.get(k)) for k in keys if k.startswith(ARENA_KEY_PREFIX)]
        parts = []
        if others:
            parts.append(f"{self.path} holds a token of {name} only for another arena ({'; '.join(others)}), "
                         f"not for this one ({self.describe(arena.key, arena.server)})")
        if legacy:
            parts.append(f"{self.path} holds a token of {name} saved for {', '.join(legacy)} before arenas had "
                         f"ids: if that address is this arena, use it once as --server and the token is filed "
                         f"under this arena from then on")
        return "; ".join(parts) + f"; `arena bot token {name} --all` prints what is saved"


def token_option(f: Any) -> Any:
    return option(
        "--token", envvar="ARENA_TOKEN", default=None, metavar="TOKEN",
        help="Owner token of the bot's NAME; env ARENA_TOKEN (an argument shows in `ps`: prefer the env variable). "
             "Default: the one saved in tokens.json of --data-dir for this arena when NAME was first registered from "
             "this machine.")(f)


def tokens_dir_option(f: Any) -> Any:
    return option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), envvar="ARENA_DATA_DIR",
        default=DEFAULTS.data_dir, show_default=True,
        help="Folder of this machine's owner-token file (tokens.json); env ARENA_DATA_DIR.")(f)


def no_token_error(tokens: TokenStore, arena: ArenaRef, game: str, name: str) -> ArenaCliError:
    return ArenaCliError(
        f"no owner token for {game} bot {name} on {arena.server}: pass --token TOKEN or set ARENA_TOKEN; "
        f"{tokens.missing(arena, game, name)}")


def owner_credential(arena: ArenaRef, token: str | None, saved: str | None) -> Credential | None:
    """The owner token to sign with: ``token`` given (--token / ARENA_TOKEN), else ``saved`` for this arena (then
    used only for this arena's id); None for none."""
    if token:
        return Credential(token, source="of --token / ARENA_TOKEN")
    if saved:
        return Credential(saved, arena_id=arena.arena_id, source="saved for this arena")
    return None


def owner_call(app: AppContext, server: str, method: str, request: Any, token: str | None, tokens: TokenStore,
               game: str, name: str, as_organiser: bool = False, arena: ArenaRef | None = None) -> Any:
    """``Arena.<method>(request)`` signed with NAME's owner token (--token / ARENA_TOKEN, else the one saved for
    this arena; the token itself is never sent, see ``arena.core.signing``); ``as_organiser`` (a call the admin
    token may make in the owner's place, RemoveBot): with the admin token this CLI finds instead.
    Without any token the call is still made, so that an unknown bot is answered NOT_FOUND by the referee; a
    PERMISSION_DENIED answer then becomes "no owner token for ... on SERVER" saying what the token file holds.
    ``arena``: the arena at ``server`` when the caller resolved it already."""
    tokens.check()
    arena = arena or resolve_arena(app, server)
    credential = app.admin_credential() if as_organiser else owner_credential(arena, token,
                                                                                tokens.lookup(arena, game, name))
    client = app.arena(server)
    metadata = client.signed(method, request, credential) if credential else None
    try:
        return getattr(client.stub, method)(request, timeout=RPC_TIMEOUT_S, metadata=metadata)
    except grpc.RpcError as exc:
        if not metadata and exc.code() == grpc.StatusCode.PERMISSION_DENIED:
            error = no_token_error(tokens, arena, game, name)
            if method == "RemoveBot":  # the one owner call the organiser may make in the owner's place
                error = ArenaCliError(f"{error.message}; the organiser may remove it with --as-organiser")
            raise error from None
        raise rpc_error(exc, client.server, token_hints(bool(token), tokens, name)) from None


def token_hints(token_given: bool, tokens: TokenStore, name: str) -> dict[grpc.StatusCode, str]:
    """What to add to a PERMISSION_DENIED answer: where the token that was refused came from."""
    where = "--token / ARENA_TOKEN" if token_given else tokens.path
    return {grpc.StatusCode.PERMISSION_DENIED: f"the token sent came from {where}"}


def _pins(data: dict[str, Any]) -> dict[str, Any]:
    pins = data.get("seal_keys")
    return pins if isinstance(pins, dict) else {}


def _pin(data: dict[str, Any], arena: ArenaRef) -> None:
    """Pin ``arena``'s seal key in ``data`` unless one is pinned for it already (trust on first use)."""
    if arena.seal_key and arena.key.startswith(ARENA_KEY_PREFIX):
        pins = _pins(data)
        pins.setdefault(arena.key, arena.seal_key.hex())
        data["seal_keys"] = pins


def _servers(data: dict[str, Any]) -> dict[str, Any]:
    """The token file's ``servers`` table (arena key -> the address it was last reached at); {} when absent."""
    servers = data.get("servers")
    return servers if isinstance(servers, dict) else {}


def _find(games: Any, game: str, name: str) -> tuple[str, str] | None:
    """``TokenStore.find`` in the tokens of one arena (``{GAME: {NAME: TOKEN}}``; anything else holds none): NAME
    as spelt, in ``game`` first, else NAME in another letter case (one NAME to the arena, which then says which
    spelling its owner holds)."""
    if not isinstance(games, dict):
        return None
    order = [game, *sorted(g for g in games if g != game)]
    for exact in (True, False):
        for g in order:
            names = games.get(g)
            if not isinstance(names, dict):
                continue
            token = names.get(name) if exact else next(
                (t for n, t in sorted(names.items()) if isinstance(n, str) and n.lower() == name.lower()), None)
            if isinstance(token, str) and token:
                return g, token
    return None
