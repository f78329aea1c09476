"""The game registry: one ``Game`` plug-in per game id (STYLE.md habit 13, after OpenSpiel's registered games).

Generic code (referee, scheduler, store, service, SDK server, CLI) asks ``get_game(game_id)`` or iterates
``GAMES`` and never imports a game by name. A game is one package under ``arena_sdk/games/`` whose ``plugin``
module builds a ``Game`` instance; it joins the arena by being listed in ``_BUILTIN`` (or by ``register`` from
outside the SDK), and the conformance tests then play it through every path.
"""

from __future__ import annotations

import importlib

from .base import Game, GameInfo, IllegalActionError, Outcome, RulesError, WireError

GAMES: dict[str, Game] = {}

# Packages of the games shipped with the SDK; each has a ``plugin`` module defining ``GAME``.
_BUILTIN = ("take5", "taki")


def register(game: Game) -> Game:
    """Add ``game`` to the registry under ``game.info.game`` and return it. Raises ``ValueError`` when another
    game already holds that id, and ``TypeError`` for an object that is not a ``Game``."""
    if not isinstance(game, Game):
        raise TypeError(f"register() needs a Game instance, got {game!r}")
    gid = game.info.game
    existing = GAMES.get(gid)
    if existing is not None and existing is not game:
        raise ValueError(f"game id {gid!r} is already registered by {type(existing).__name__}")
    GAMES[gid] = game
    return game


def get_game(game_id: object) -> Game:
    """The registered game ``game_id``. Raises ``WireError`` (a ``ValueError``) naming the known games when there
    is none."""
    game = GAMES.get(game_id) if isinstance(game_id, str) else None
    if game is None:
        raise WireError(f"unknown game {game_id!r}; known games: {', '.join(sorted(GAMES))}")
    return game


def game_ids() -> tuple[str, ...]:
    """Every registered game id, in registration order."""
    return tuple(GAMES)


for _name in _BUILTIN:
    register(importlib.import_module(f".{_name}.plugin", __name__).GAME)

from . import take5, taki  # noqa: E402  - ``from arena_sdk.games import take5`` gives the Take 5 engine

__all__ = [
    "GAMES",
    "Game",
    "GameInfo",
    "IllegalActionError",
    "Outcome",
    "RulesError",
    "WireError",
    "game_ids",
    "get_game",
    "register",
    "take5",
    "taki",
]
