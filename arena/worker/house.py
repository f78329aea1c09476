"""House bots: the arena's own sample bots, seated by name (``house:<sample name>``, e.g. ``house:heuristic``,
``house:montecarlo``, ``house:random``: one per installed sample bot) without being registered.

A worker process runs each house bot it needs as one child process it starts and owns (``python -m MODULE --port 0``
on loopback, ``arena.match.local_bots``), started the first time a match seats it and stopped when the worker process
ends (``stop_house_bots``, also at exit). The SDK's server makes a fresh bot object per match and seat and drops it
at the match's end, and every house bot draws its randomness from its seat seed, so a house bot keeps nothing from
one match to the next: it may play the same deal any number of times (the deal guarantee is for registered bots).
A house bot is never charged in bot health and, being nobody's bot, never on the public ladder.
"""

from __future__ import annotations

import atexit
import logging
import secrets
import threading

from arena.core.specs import HOUSE_BOT_RE, HOUSE_PREFIX, is_house_bot
from arena.match.local_bots import SAMPLE_BOTS, SAMPLE_PREFIX, BotProcess, start_bot

log = logging.getLogger("arena.worker.loop")

_lock = threading.Lock()
_running: dict[str, tuple[BotProcess, str]] = {}  # sample name -> its child process and the secret it was given


class HouseBotError(ValueError):
    """A ``house:NAME`` that names no installed sample bot; the message lists the house bots there are."""


def house_names() -> tuple[str, ...]:
    """Every house bot's seat name, ``house:<sample name>`` for each installed sample bot, in order of name."""
    return tuple(f"{HOUSE_PREFIX}{name}" for name in sorted(SAMPLE_BOTS))


def check_house_bot(name: str) -> str:
    """The sample name of the house bot ``name`` (``"house:heuristic" -> "heuristic"``). Raises ``HouseBotError``
    when ``name`` is not ``house:`` followed by an installed sample bot's name."""
    m = HOUSE_BOT_RE.match(name) if isinstance(name, str) else None
    if m is None or m.group("sample") not in SAMPLE_BOTS:
        raise HouseBotError(f"{name!r} is not a house bot; house bots: {', '.join(house_names())}")
    return m.group("sample")


def house_endpoint(name: str) -> tuple[str, str]:
    """The ``host:port`` of the house bot ``name``'s process and the bot secret it answers to, started now
    (blocking, up to 15 s) when this process runs none, or when it died. Each process gets a fresh random secret
    (in its environment), so that only this worker's referee can start, play or end its matches: another process
    on the machine that finds its loopback port cannot reset a house bot's match or choose its seat seed. Raises
    ``HouseBotError`` for an unknown house bot and ``arena.match.local_bots.BotStartError`` when its process does
    not start."""
    sample = check_house_bot(name)
    with _lock:
        running = _running.get(sample)
        if running is None or not running[0].running:
            secret = secrets.token_urlsafe(32)
            bot = start_bot(f"{SAMPLE_PREFIX}{sample}", secret=secret)
            running = _running[sample] = (bot, secret)
            log.info("house bot %s started: pid %d at %s", name, bot.process.pid, bot.endpoint)
        return running[0].endpoint, running[1]


def stop_house_bots() -> None:
    """Stop every house bot process this process started (idempotent)."""
    with _lock:
        bots = [bot for bot, _ in _running.values()]
        _running.clear()
    for bot in bots:
        bot.stop()


atexit.register(stop_house_bots)

__all__ = ["HouseBotError", "check_house_bot", "house_endpoint", "house_names", "is_house_bot", "stop_house_bots"]
