"""Small text helpers for messages people read (pure)."""

from __future__ import annotations


def plural(n: int, word: str) -> str:
    """``n`` and ``word`` in the number it needs: ``plural(1, "block")`` -> "1 block", ``plural(2, "match")`` ->
    "2 matches" (English: "es" after ch, sh, s, x, z; else "s")."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith(('ch', 'sh', 's', 'x', 'z')) else 's'}"
