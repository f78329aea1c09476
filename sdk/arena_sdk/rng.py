"""Seeded randomness of a bot: a generator per match seeded from the seat seed, and a fresh one per decision.

The referee gives each seat a seed for its bot's own randomness (``StartMatchRequest.seat_seed``). Two versions of a
bot facing the same scenario (deal, opponents, seats and seat seeds) then draw the same random numbers (common random
numbers), and a match replays exactly. A generator per decision, derived from the seat seed and the decision's place
in the game (Take 5: hand, turn, kind and draft pick; Taki: the decision's index in the seat's own sequence), keeps
one different choice from shifting the random numbers of every later decision.

Pure: SHA-256 of text, then Python's ``random.Random`` (its integer seeding is the same on every platform and
version of CPython 3).
"""

from __future__ import annotations

import hashlib
import random
import secrets

MAX_SEAT_SEED = 2**63 - 1  # a seat seed: 0 .. 2**63-1


def derive_seed(seat_seed: int, *place: int | str) -> int:
    """The seed of one decision's generator, 0 .. 2**63-1: the first 8 bytes of SHA-256 of
    ``"<seat_seed>/<place 0>/<place 1>/..."`` (big-endian, top bit cleared). ``place``: the decision's place in the
    game, ints and short strings (e.g. ``(hand, turn, kind, pick)``). Raises ``ValueError`` for a seat seed outside
    0 .. 2**63-1."""
    if isinstance(seat_seed, bool) or not isinstance(seat_seed, int) or not 0 <= seat_seed <= MAX_SEAT_SEED:
        raise ValueError(f"a seat seed is a whole number in 0..2**63-1, got {seat_seed!r}")
    text = "/".join([str(seat_seed), *(str(p) for p in place)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") & MAX_SEAT_SEED


def generator(seat_seed: int, *place: int | str) -> random.Random:
    """A ``random.Random`` seeded with ``derive_seed(seat_seed, *place)``; with no ``place``, the match's generator
    (seeded with the seat seed itself). Raises ``ValueError`` like ``derive_seed``."""
    if not place:
        derive_seed(seat_seed)  # the range check
        return random.Random(seat_seed)
    return random.Random(derive_seed(seat_seed, *place))


def entropy_seed() -> int:
    """A seat seed from the operating system's CSPRNG (a bot given no seat seed), 0 .. 2**63-1."""
    return secrets.randbits(63)
