"""The generic layers name no game (DESIGN.md: a game is a plug-in): the referee, records, scheduler, store,
service and the SDK's server and wire dispatch find games in the registry only. Adding a game must not need an
edit there; this test fails when one of them mentions a registered game's id, title or bot class."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.cli.game_options import GAME_CLIS
from arena.render import RENDERERS
from arena_sdk.games import GAMES

ROOT = Path(__file__).resolve().parent.parent
GENERIC = [
    "arena/referee.py", "arena/running_match.py", "arena/records.py", "arena/scheduler.py", "arena/match_job.py",
    "arena/service.py", "arena/tournaments.py", "arena/arena_server.py", "arena/endpoint_checks.py", "arena/replay_check.py",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "arena" / "store").glob("*.py")),
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
    assert set(RENDERERS) == set(GAMES) == set(GAME_CLIS)
