"""Small text helpers for messages people read (pure)."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable

_UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp"})


def printable(text: object) -> str:
    """``str(text)`` without control and format characters (Unicode categories Cc, Cf, Zl, Zp: C0 and C1 controls,
    terminal escapes, line breaks, bidirectional overrides that would reorder what a page or a terminal shows around
    them), so text from outside (a bot's author, error status or note, a record file's match id) cannot move the
    cursor, set a terminal's title or garble a line."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c for c in text if unicodedata.category(c) not in _UNPRINTABLE)


def plural(n: int, word: str) -> str:
    """``n`` and ``word`` in the number it needs: ``plural(1, "block")`` -> "1 block", ``plural(2, "match")`` ->
    "2 matches" (English: "es" after ch, sh, s, x, z; else "s")."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith(('ch', 'sh', 's', 'x', 'z')) else 's'}"


def cut(text: str, most: int) -> str:
    """``text`` as it is when it has at most ``most`` characters, else its first ``most - 1`` and "…" (``most``
    characters in all, so a reader sees it was cut)."""
    return text if len(text) <= most else text[:max(0, most - 1)] + "…"


def ago(epoch_s: float, when: Callable[[float], str], now: float | None = None) -> str:
    """``epoch_s`` (seconds since the Unix epoch) as "12 s ago", "3 min ago", "2 h ago", or past a day as
    ``when(epoch_s)`` (a date); "-" for 0; "now" for a time ahead of ``now`` (default: the clock)."""
    if not epoch_s:
        return "-"
    age = (time.time() if now is None else now) - epoch_s
    if age < 0:
        return "now"
    if age < 120:
        return f"{age:.0f} s ago"
    if age < 7200:
        return f"{age / 60:.0f} min ago"
    if age < 86400:
        return f"{age / 3600:.0f} h ago"
    return when(epoch_s)
