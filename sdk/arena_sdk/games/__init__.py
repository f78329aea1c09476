"""Rules engines, one module per game, each pure (no I/O). ``GAMES`` maps a game id to its module."""

from __future__ import annotations

from types import ModuleType

from . import take5

GAMES: dict[str, ModuleType] = {take5.GAME_ID: take5}

__all__ = ["GAMES", "take5"]
