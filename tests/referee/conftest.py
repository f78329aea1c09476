"""Fixtures of the referee tests: sample bots and misbehaving test bots (tests/bots/*.py) as real processes,
and helpers that walk a match record through the rules engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match.local_bots import BotProcess, start_bot, started_bots
from arena.match.record import MatchRecord, SeatSpec
from arena_sdk import wire
from arena_sdk.games import GAMES

BOTS_DIR = Path(__file__).resolve().parent.parent / "bots"


@pytest.fixture(scope="session")
def sample_bots() -> Iterator[dict[str, BotProcess]]:
    """Sample bots running for the whole session, by role: "random1", "random2", "heuristic", "montecarlo"
    (bots are stateless across matches: the SDK makes one object per match and seat)."""
    roles = ["random1", "random2", "heuristic", "montecarlo"]
    specs = ["sample:random", "sample:random", "sample:heuristic", "sample:montecarlo"]
    with started_bots(specs) as bots:
        yield dict(zip(roles, bots))


@pytest.fixture
def seats_of(sample_bots: dict[str, BotProcess]) -> Callable[..., list[SeatSpec]]:
    """``seats_of("random1", "heuristic", ...)`` -> SeatSpecs of the session's sample bots."""

    def _seats(*roles: str) -> list[SeatSpec]:
        return [SeatSpec(sample_bots[r].name, sample_bots[r].endpoint) for r in roles]

    return _seats


@pytest.fixture
def test_bot() -> Iterator[Callable[..., BotProcess]]:
    """Factory ``test_bot("slow_bot", "--at", "1,4") -> BotProcess``: starts tests/bots/<script>.py with the
    given extra arguments as a separate process; every bot started is stopped after the test."""
    started: list[BotProcess] = []

    def _start(script: str, *args: str) -> BotProcess:
        bot = start_bot(str(BOTS_DIR / f"{script}.py"), extra_args=args)
        started.append(bot)
        return bot

    try:
        yield _start
    finally:
        for bot in started:
            bot.stop()


def seat(bot: BotProcess) -> SeatSpec:
    return SeatSpec(bot.name, bot.endpoint)


def walk(record: MatchRecord) -> Iterator[tuple[Any, dict]]:
    """(state before the decision, decision) for every decision of ``record``, applying the recorded actions."""
    engine = GAMES[record.game]
    config = wire.config_from_dict(record.game, record.config)
    deals = tuple(wire.deal_from_dict(record.game, d) for d in record.deals)
    state = engine.new_game(len(record.seats), config, seed=record.seed, deals=deals)
    for dec in record.decisions:
        yield state, dec
        state = engine.apply(state, dec["seat"], wire.action_from_dict(record.game, dec["kind"], dec["action"]))


def final_state(record: MatchRecord) -> Any:
    """The engine state after the record's last decision."""
    engine = GAMES[record.game]
    state = None
    for state, dec in walk(record):
        pass
    assert state is not None
    return engine.apply(state, dec["seat"], wire.action_from_dict(record.game, dec["kind"], dec["action"]))
