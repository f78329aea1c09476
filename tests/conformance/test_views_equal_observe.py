"""Views cost what they carry (issue 9), and a bot still sees exactly the engine's view: a match of every registered
game is refereed over real gRPC against the SDK's server, whose bots keep the history between requests
(``StartMatchResponse.keeps_history``) so that the referee sends only what changed; the typed view a bot object
gets at each of its decisions equals ``observe(state, seat)`` of the engine at that decision, replayed from the
record. A game joins this test by registering."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match.options import RefereeOptions
from arena.match.record import SeatSpec
from arena.match.referee import run_match_sync
from arena_sdk.games import GAMES

BOTS_DIR = Path(__file__).resolve().parent.parent / "bots"
sys.path.insert(0, str(BOTS_DIR))
from view_spy import check_views, spy_servers  # noqa: E402

GAME_IDS = sorted(GAMES)


@pytest.fixture
def spy_server() -> Iterator[Any]:
    with spy_servers() as serve:
        yield serve


@pytest.mark.parametrize("game_id", GAME_IDS)
@pytest.mark.parametrize("players", [2, 4])
def test_every_view_a_bot_gets_equals_observe(game_id: str, players: int, spy_server: Any) -> None:
    endpoint, seen = spy_server(game_id)
    seats = [SeatSpec(f"spy{i}", endpoint) for i in range(players)]
    for seed in (3, 4):
        record = run_match_sync(f"views-{game_id}-{players}-{seed}", game_id, seats, seed=seed,
                                options=RefereeOptions(deadline_ms=5000))
        assert record.faults == ()
        assert check_views(record, seen) == len(record.decisions) > 10
