"""The secret seed of a tournament: its bytes, its public commitment and the deal seeds derived from it (pure).

Deals are secret (STYLE.md habit 14): a tournament's seed is 256 bits from the operating system's CSPRNG (drawn
by the service, never by a client), published as ``seed_commitment`` (SHA-256) at creation and revealed only when
no match of the tournament can be dealt any more. Each match's deal seed is ``deal_seed`` = HMAC-SHA256(tournament
seed, "<tournament>/<round>/<deal>/<attempt>"), computed by the worker when it plays the match; a match played
again after a crash of ours gets the next attempt number, so a fresh deal.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from arena.core.errors import TournamentError

SEED_BITS = 256  # a tournament seed: 256 bits, the HMAC key of its deals
MAX_TOURNAMENT_SEED = 2**SEED_BITS - 1
MAX_SEED = 2**63 - 1  # a match's deal seed (what the game's new_game receives), 0 .. 2**63-1


def seed_bytes(seed: int) -> bytes:
    """The 32 bytes (big-endian) of a tournament seed, 0 .. 2**256-1: the HMAC key of its deals and the preimage of
    its commitment. Raises ``TournamentError`` outside that range."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_TOURNAMENT_SEED:
        raise TournamentError(f"tournament seed must be a whole number in 0..2**{SEED_BITS}-1, got {seed!r}")
    return seed.to_bytes(SEED_BITS // 8, "big")


def seed_hex(seed: int) -> str:
    """A tournament seed as 64 hex digits (how it is revealed)."""
    return seed_bytes(seed).hex()


def seed_commitment(seed: int) -> str:
    """The public commitment to a tournament seed: SHA-256 of its 32 bytes (``seed_bytes``), 64 hex digits.
    Published at creation; anyone holding the revealed seed checks it with ``verify_deals``."""
    return hashlib.sha256(seed_bytes(seed)).hexdigest()


def deal_seed(tournament_seed: int, tournament_id: str, round_: int, deal: int, attempt: int = 0) -> int:
    """Seed of one deal (what the game's ``new_game`` receives), 0 .. 2**63-1: the first 8 bytes of
    HMAC-SHA256(key = ``seed_bytes(tournament_seed)``, message = ``f"{tournament_id}/{round_}/{deal}/{attempt}"``)
    as a big-endian number, top bit cleared.

    Keyed by the secret seed, so nobody can compute a deal from public inputs before the seed is revealed; every
    table of one deal shares it (the table is not in the message); ``attempt`` is how many times the match was
    started before (0 the first time), so a match played again gets a fresh deal.
    """
    message = f"{tournament_id}/{round_}/{deal}/{attempt}".encode()
    digest = hmac.new(seed_bytes(tournament_seed), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def parse_seed_hex(text: str) -> int:
    """Inverse of ``seed_hex``; raises ``TournamentError`` unless ``text`` is 64 hex digits."""
    if not isinstance(text, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raise TournamentError(f"a revealed tournament seed is 64 hex digits, got {text!r}")
    return int(text, 16)


def seat_seed(tournament_seed: int, tournament_id: str, round_: int, deal: int, attempt: int, seat: int) -> int:
    """Seed of one seat's own randomness in a tournament's match (what ``StartMatchRequest.seat_seed`` carries),
    0 .. 2**63-1: the first 8 bytes of HMAC-SHA256(key = ``seed_bytes(tournament_seed)``, message =
    ``f"seat/{tournament_id}/{round_}/{deal}/{attempt}/{seat}"``) as a big-endian number, top bit cleared.

    Keyed like the deal (``deal_seed``: same key, the deal's own message behind a ``seat/`` prefix and the seat), so
    it tells nothing about the deal's cards nor another seat's seed, and every table of one deal gives a seat the same
    seed (common random numbers: two versions facing one scenario draw the same numbers). Checked like the deals once
    the seed is revealed (``arena.tournaments.verify``).
    """
    message = f"seat/{tournament_id}/{round_}/{deal}/{attempt}/{seat}".encode()
    digest = hmac.new(seed_bytes(tournament_seed), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def local_seat_seeds(seed: int, seats: int) -> tuple[int, ...]:
    """Seat seeds of a match outside tournaments whose deal seed is ``seed`` (``arena play --seed``, a match queued
    with its own seed), one per seat, each 0 .. 2**63-1: HMAC-SHA256(key = the seed's 8 bytes, message =
    ``f"seat/{seat}"``), first 8 bytes, top bit cleared. Such a seed is its caller's, not a secret of the arena, so
    the same seed replays the whole match, bots' randomness included. Raises ``TournamentError`` for a seed outside
    0 .. 2**63-1 or a negative seat count."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise TournamentError(f"a match's seed must be a whole number in 0..2**63-1, got {seed!r}")
    if seats < 0:
        raise TournamentError(f"a match has 0 or more seats, got {seats!r}")
    key = seed.to_bytes(8, "big")
    return tuple(int.from_bytes(hmac.new(key, f"seat/{seat}".encode(), hashlib.sha256).digest()[:8], "big") & MAX_SEED
                 for seat in range(seats))
