"""Sample bot: plays a uniformly random card of its hand, takes a random row on rule 4, drafts a random card.

Run it as its own process (``--port 0`` picks a free port; ``--seed`` makes it reproducible):

    python -m sample_bots.random_bot --port 50101 --seed 7
    python sample_bots/random_bot.py --port 0

With a seed, each bot object draws from ``random.Random`` seeded with (seed, match id, seat), so a match's
choices do not depend on which other matches the process serves at the same time.
"""

from __future__ import annotations

import argparse
import random

from arena_sdk import MatchInfo, Take5Bot, Take5View, serve


class RandomBot(Take5Bot):
    """Uniformly random legal answers. ``seed``: None draws from the operating system's entropy."""

    name = "random"
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

    def choose_card(self, view: Take5View) -> int:
        return self.rng.choice(view.hand)

    def choose_row(self, view: Take5View) -> int:
        return self.rng.randrange(len(view.rows))

    def draft_pick(self, view: Take5View) -> int:
        return self.rng.choice(view.draft_pool)


if __name__ == "__main__":
    serve(RandomBot)
