"""Seeded randomness for the sample bots: the seat seed the referee gives, else the bot's own ``--seed``.

Every sample bot draws its randomness from the SDK's generators (``Bot.rng``, fresh per decision, and
``Bot.match_rng``), seeded with the match's seat seed (``StartMatchRequest.seat_seed``), so that a match replays
exactly and two versions facing the same scenario draw the same numbers. When the referee gives no seat seed and the
bot was started with ``--seed S``, the seat seed is ``arena_sdk.rng.derive_seed(S mod 2**63, match id, seat)``, so
a match's choices do not depend on which other matches the process serves at the same time; with neither, the
generators draw from the operating system's entropy.
"""

from __future__ import annotations

import argparse

from arena_sdk import Bot
from arena_sdk.rng import MAX_SEAT_SEED, derive_seed


class SeededChoices(Bot):
    """Mix-in for a bot class (put it before the game's bot class): a ``--seed`` option used when the referee
    gives no seat seed. ``seed``: the bot's seed (an int), or None."""

    seed: int | None = None

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seed", type=int, default=None,
                            help="seed of the bot's choices when the referee gives no seat seed (default: random)")

    def fallback_seat_seed(self) -> int:
        if self.seed is None:
            return super().fallback_seat_seed()
        match_id, seat = (self.match.match_id, self.match.seat) if self.match is not None else ("", 0)
        return derive_seed(self.seed & MAX_SEAT_SEED, match_id, seat)
