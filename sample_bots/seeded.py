"""Seeded randomness for the sample bots: one ``random.Random`` per match and seat.

With ``--seed S`` each bot object draws from ``random.Random`` seeded with ``"S:<match id>:<seat>"`` at the start
of every match, so a match's choices do not depend on which other matches the process serves at the same time;
without a seed it draws from the operating system's entropy.
"""

from __future__ import annotations

import argparse
import random

from arena_sdk import MatchInfo


class SeededChoices:
    """Mix-in for a bot class (put it before the game's bot class): ``self.rng`` and a ``--seed`` option.

    ``seed``: the bot's seed (an int), or None for entropy."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seed", type=int, default=None, help="seed of the bot's choices (default: random)")

    def on_start(self, match: MatchInfo) -> None:
        if self.seed is not None:
            self.rng = random.Random(f"{self.seed}:{match.match_id}:{match.seat}")
