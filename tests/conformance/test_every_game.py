"""Conformance: every registered game is played through every path (STYLE.md habit 13, after OpenSpiel's
playthroughs): in process (engine and SDK bot objects), through the referee over real gRPC against SDK bot
processes, and through replay of the record (as a dict and as a file). A game joins these tests by registering.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match.local_bots import BotProcess, start_bots
from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import run_match_sync
from arena.match.replay import replay
from arena_sdk import play_game
from arena_sdk.games import GAMES, Game, get_game
from arena_sdk.games.base import competition_ranks

BOTS_DIR = Path(__file__).resolve().parent.parent / "bots"
sys.path.insert(0, str(BOTS_DIR))
from any_random_bot import random_bot_class  # noqa: E402

GAME_IDS = sorted(GAMES)
SEATS = 3


def _random_game(game: Game, seed: int, players: int) -> tuple[Any, list[tuple[int, Any]]]:
    """A whole game of random legal actions: (final state, [(seat, action)])."""
    rng = random.Random(seed)
    state = game.new_game(players, None, seed=seed)
    actions = []
    while not game.is_over(state):
        pending = game.pending_seats(state)
        assert pending, "a game that is not over has a pending seat"
        for seat in pending:
            legal = game.legal_actions(state, seat)
            assert legal, f"seat {seat} is pending with no legal action"
            assert game.default_action(state, seat) in legal
            view = game.observe(state, seat)
            assert view.kind == game.decision_kind(state, seat)
            assert set(game.view_legal_actions(view)) == set(legal), "a bot's legal actions differ from the engine's"
            assert game.view_from_proto(game.view_to_proto(view), view.kind) == view
            action = rng.choice(legal)
            assert game.action_from_dict(view.kind, game.action_to_dict(action)) == action
            assert game.action_from_proto(view.kind, game.action_to_proto(action)) == action
            actions.append((seat, action))
            state = game.apply(state, seat, action)
    return state, actions


@pytest.mark.parametrize("game_id", GAME_IDS)
@pytest.mark.parametrize("players", [2, 4])
def test_a_seeded_random_game_completes_in_process_and_replays_identically(game_id: str, players: int) -> None:
    game = get_game(game_id)
    final, actions = _random_game(game, seed=players * 7 + 1, players=players)
    outcome = game.outcome(final)
    assert len(outcome.scores) == len(outcome.ranks) == players
    lower = game.info.lower_score_is_better
    assert tuple(outcome.ranks) == competition_ranks(tuple(outcome.scores), lower)
    again = game.new_game(players, None, seed=players * 7 + 1)
    for seat, action in actions:
        again = game.apply(again, seat, action)
    assert again == final and game.outcome(again) == outcome
    config = game.config_from_dict(game.config_to_dict(final.config))
    assert config == final.config == game.config_from_proto(game.config_to_proto(config))


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_sdk_bot_objects_play_a_whole_game_in_process(game_id: str) -> None:
    cls = random_bot_class(game_id)
    outcome = play_game([cls(seed=s) for s in range(SEATS)], seed=11, game=game_id)
    assert sorted(outcome.ranks)[0] == 1 and len(outcome.scores) == SEATS


@pytest.fixture(scope="module")
def bot_processes() -> Iterator[dict[str, list[BotProcess]]]:
    """Per game, SEATS processes of tests/bots/any_random_bot.py serving a random bot of that game."""
    script = str(BOTS_DIR / "any_random_bot.py")
    processes: dict[str, list[BotProcess]] = {}
    try:
        for game_id in GAME_IDS:
            processes[game_id] = start_bots(
                [script] * SEATS, extra_args=["--game", game_id, "--seed", "5"])
        yield processes
    finally:
        for bots in processes.values():
            for bot in bots:
                bot.stop()


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_referee_plays_every_game_over_grpc_and_the_record_replays(
    game_id: str, bot_processes: dict[str, list[BotProcess]], tmp_path: Path
) -> None:
    seats = [SeatSpec(f"r{i}", b.endpoint) for i, b in enumerate(bot_processes[game_id])]
    record = run_match_sync(f"conf-{game_id}", game_id, seats, seed=2024, options=RefereeOptions(deadline_ms=5000))
    assert record.faults == (), f"an SDK bot of {game_id} was charged: {record.faults[:3]}"
    assert all(d["source"] == "bot" for d in record.decisions)
    assert replay(record) == []
    path = tmp_path / "record.json"
    record.save(path)
    loaded = MatchRecord.load(path)
    assert loaded == record and replay(loaded) == []
    # Tampering is found: the result differs from the re-simulation.
    data = record.to_dict()
    data["result"]["ranks"] = list(reversed(data["result"]["ranks"]))
    if data["result"]["ranks"] != record.to_dict()["result"]["ranks"]:
        assert replay(MatchRecord.from_dict(data)) != []
    # The referee's game, re-simulated from the record's actions, ends where the record says.
    game = get_game(game_id)
    state = game.new_game(len(seats), game.config_from_dict(record.config), seed=record.seed)
    for dec in record.decisions:
        state = game.apply(state, dec["seat"], game.action_from_dict(dec["kind"], dec["action"]))
    assert game.is_over(state) and tuple(game.outcome(state).ranks) == record.result.ranks
