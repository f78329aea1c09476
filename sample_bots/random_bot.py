"""Sample bot: plays a uniformly random card of its hand, takes a random row on rule 4, drafts a random card.

Run it as its own process (``--port 0`` picks a free port; ``--seed`` makes it reproducible):

    python -m sample_bots.random_bot --port 50101 --seed 7
    python sample_bots/random_bot.py --port 0

With a seed, each match and seat gets its own ``random.Random`` (``sample_bots.seeded``).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python sample_bots/random_bot.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena_sdk import Take5Bot, Take5View, serve
from sample_bots.seeded import SeededChoices


class RandomBot(SeededChoices, Take5Bot):
    """Uniformly random legal answers. ``seed``: None draws from the operating system's entropy."""

    name = "random"
    version = "1.0"
    author = "arena sample bots"

    def choose_card(self, view: Take5View) -> int:
        return self.rng.choice(view.hand)

    def choose_row(self, view: Take5View) -> int:
        return self.rng.randrange(len(view.rows))

    def draft_pick(self, view: Take5View) -> int:
        return self.rng.choice(view.draft_pool)


if __name__ == "__main__":
    serve(RandomBot)
