"""Sample Taki bot: a uniformly random legal action at every decision, a coin flip on every +3 Breaker question.

Every legal action counts once (``legal_actions(view)``): each card, each named colour of a Change Color, each
"close the run" and "last card" variant, drawing and ending the run or King turn. It therefore draws often, leaves
runs open and forgets to declare "last card" about half the time: the baseline every other Taki bot should beat.

Run it as its own process (``--port 0`` picks a free port; ``--seed`` makes it reproducible):

    python -m sample_bots.taki_random_bot --port 50111 --seed 7
    python sample_bots/taki_random_bot.py --port 0

With a seed, each bot object draws from ``random.Random`` seeded with (seed, match id, seat), so a match's
choices do not depend on which other matches the process serves at the same time.
"""

from __future__ import annotations

import argparse
import random

from arena_sdk import MatchInfo, TakiBot, TakiView, legal_actions, serve
from arena_sdk.games.taki import TakiAction


class TakiRandomBot(TakiBot):
    """Uniformly random legal answers. ``seed``: None draws from the operating system's entropy."""

    name = "taki-random"
    version = "1.0"
    author = "arena sample bots"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seed", type=int, default=None, help="seed of the bot's choices (default: random)")

    def on_start(self, match: MatchInfo) -> None:
        if self.seed is not None:
            self.rng = random.Random(f"{self.seed}:{match.match_id}:{match.seat}")

    def take_turn(self, view: TakiView) -> TakiAction:
        return self.rng.choice(legal_actions(view))

    def react(self, view: TakiView) -> bool:
        return self.rng.random() < 0.5


if __name__ == "__main__":
    serve(TakiRandomBot)
