"""The generic rooms name no game (DESIGN.md: a game is a plug-in): core, ratings, store, match, tournaments,
ladder, worker, server and the SDK's server and wire dispatch find games in the registry only. Adding a game must not need an
edit there; this test fails when one of them mentions a registered game's id, title or bot class."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.render import renderer_module
from arena_sdk.games import GAMES

ROOT = Path(__file__).resolve().parent.parent
GENERIC_ROOMS = ("core", "ratings", "store", "match", "tournaments", "ladder", "worker", "server")
GENERIC = [
    *sorted(str(p.relative_to(ROOT)) for room in GENERIC_ROOMS for p in (ROOT / "arena" / room).glob("*.py")
      if p.name != "local_bots.py"),  # the sample bots of each game: declared by the games next
    "sdk/arena_sdk/server.py", "sdk/arena_sdk/bot_process.py", "sdk/arena_sdk/wire.py", "sdk/arena_sdk/local.py",
]


def _names() -> list[str]:
    names = []
    for game in GAMES.values():
        names += [game.info.game, game.info.title.rstrip("!"), game.bot_class.__name__]
    return names


@pytest.mark.parametrize("path", GENERIC)
def test_a_generic_module_names_no_game(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    found = [n for n in _names() if re.search(rf"(?<![A-Za-z]){re.escape(n)}(?![A-Za-z])", text, re.IGNORECASE)]
    assert found == [], f"{path} names {found}: look the game up in the registry instead"


def test_every_registered_game_has_a_renderer_and_cli_options() -> None:
    assert {g for g in GAMES if renderer_module(g)} == set(GAMES)
    assert all(game.config_fields for game in GAMES.values())
