"""Sample Taki bot: a uniformly random legal action at every decision, a coin flip on every +3 Breaker question.

Every legal action counts once (``legal_actions(view)``): each card, each named colour of a Change Color, each
"close the run" and "last card" variant, drawing and ending the run or King turn. It therefore draws often, leaves
runs open and forgets to declare "last card" about half the time: the baseline every other Taki bot should beat.

Run it as its own process (``--port 0`` picks a free port; ``--seed`` makes it reproducible):

    python -m sample_bots.taki_random_bot --port 50111 --seed 7
    python sample_bots/taki_random_bot.py --port 0

With a seed, each match and seat gets its own ``random.Random`` (``sample_bots.seeded``).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python sample_bots/taki_random_bot.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena_sdk import TakiBot, TakiView, legal_actions, serve
from arena_sdk.games.taki import TakiAction
from sample_bots.seeded import SeededChoices


class TakiRandomBot(SeededChoices, TakiBot):
    """Uniformly random legal answers. ``seed``: None draws from the operating system's entropy."""

    name = "taki-random"
    version = "1.0"
    author = "arena sample bots"

    def take_turn(self, view: TakiView) -> TakiAction:
        return self.rng.choice(legal_actions(view))

    def react(self, view: TakiView) -> bool:
        return self.rng.random() < 0.5


if __name__ == "__main__":
    serve(TakiRandomBot)
