"""Probes of a private ``redis-server`` (``arena.store.redis_server``) and of the ports it may take: whether a Redis
answers at a URL, which process it is, whether it is still loading its data; free ports; the tail of its log."""

from __future__ import annotations

import socket
from pathlib import Path

import redis

from arena.store import listeners


def ping(url: str, timeout: float = 1.0) -> bool:
    """Whether a Redis answers PING at ``url`` (an error answer too, such as MISCONF while its disk is full); False
    when nothing answers, and for no URL at all (a damaged ``redis.url``: a stale one)."""
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout,
                                      **listeners.client_options(url))
    except ValueError:
        return False
    try:
        return bool(client.ping())
    except redis.ResponseError:  # it answers, with an error (MISCONF while its disk is full): it is there
        return True
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def server_pid(url: str, timeout: float = 0.5) -> int | None:
    """Process id of the Redis answering at ``url``, 0 when a Redis answers but refuses the URL's password (not
    ours: ours asks for that password from its first answer on), or None when nothing answers."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout,
                                  **listeners.client_options(url))
    try:
        return int(client.info("server")["process_id"])
    except redis.AuthenticationError:
        return 0
    except redis.ResponseError as exc:  # e.g. "AUTH ... without any password configured": another Redis
        return 0 if "AUTH" in str(exc).upper() else None
    except (redis.RedisError, OSError, KeyError, ValueError):
        return None
    finally:
        client.close()


def loading(url: str, timeout: float = 1.0) -> bool | None:
    """True while the Redis at ``url`` is still loading its data (INFO persistence ``loading:1``; meanwhile
    other commands answer LOADING errors), False once it serves commands, None when it does not answer in time
    (while loading it answers only between chunks of the file)."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout,
                                  **listeners.client_options(url))
    try:
        if int(client.info("persistence")["loading"]):
            return True
        client.ping()
        return False
    except redis.BusyLoadingError:
        return True
    except (redis.RedisError, OSError, KeyError, ValueError):
        return None
    finally:
        client.close()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_is_free(port: int) -> bool:
    """Whether ``port`` on 127.0.0.1 can be bound now (nothing listens on it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as redis-server does: TIME_WAIT is no obstacle
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"
