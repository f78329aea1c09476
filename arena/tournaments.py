"""Tournament formats -> lists of match specs (pure: no Redis, no clock, no global randomness).

Round robin with duplicate deals (issue 2, item 8): with bots B and k seats per match, every k-subset of the bots
plays, once per seat rotation of the SAME deal, in each of R rounds; every round brings new deals derived from the
tournament seed. Rotation r of a subset seats ``subset[(i + r) % k]`` at seat i, so over the k rotations each bot
of the subset holds every seat (and so every hand of the deal) exactly once. Match count: C(B, k) * k * R.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena_sdk.games import GAMES

BOT_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
TOURNAMENT_ID_RE = re.compile(r"^t[1-9][0-9]*$")
MAX_MATCHES = 100_000  # a tournament larger than this is refused (it would flood the queue)
MAX_SEED = 2**63 - 1


class TournamentError(ValueError):
    """A tournament request that cannot be expanded; the message names the bad value and the allowed range."""


@dataclass(frozen=True)
class MatchSpec:
    """One match of a tournament, as queued for the workers.

    Attributes:
        match_id: ``"<tournament>-<index 6 digits>"``, e.g. ``"t3-000041"``; unique, the idempotency key.
        game: game id, e.g. ``"take5"``.
        seats: registered bot names in seat order (seat 0 first).
        seed: seed of the match's deals; every seat rotation of one subset in one round shares it.
        config: the game's config in JSON form (``arena_sdk.wire.config_to_dict``).
        deadline_ms: deadline of every Decide call, milliseconds.
        tournament: id of the tournament, e.g. ``"t3"``.
        round: round number, 0-based. subset: index of the bot subset in sorted combination order.
        rotation: seat rotation r, 0..k-1.
    """

    match_id: str
    game: str
    seats: tuple[str, ...]
    seed: int
    config: dict[str, Any] = field(default_factory=dict)
    deadline_ms: int = 1000
    tournament: str = ""
    round: int = 0
    subset: int = 0
    rotation: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what a job on the stream carries)."""
        return {
            "match_id": self.match_id,
            "game": self.game,
            "seats": list(self.seats),
            "seed": self.seed,
            "config": dict(self.config),
            "deadline_ms": self.deadline_ms,
            "tournament": self.tournament,
            "round": self.round,
            "subset": self.subset,
            "rotation": self.rotation,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MatchSpec":
        """Inverse of ``to_dict``. Raises ``TournamentError`` when a field is missing or of the wrong type."""
        try:
            spec = cls(
                match_id=str(d["match_id"]),
                game=str(d["game"]),
                seats=tuple(str(s) for s in d["seats"]),
                seed=int(d["seed"]),
                config=dict(d.get("config") or {}),
                deadline_ms=int(d["deadline_ms"]),
                tournament=str(d.get("tournament", "")),
                round=int(d.get("round", 0)),
                subset=int(d.get("subset", 0)),
                rotation=int(d.get("rotation", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TournamentError(f"malformed match spec {d!r}: {exc}") from exc
        if not spec.match_id or len(spec.seats) < 2:
            raise TournamentError(f"malformed match spec {d!r}: needs a match_id and at least 2 seats")
        return spec


def match_id(tournament_id: str, index: int) -> str:
    """Match id of the ``index``-th match (0-based) of a tournament: ``"t3", 41 -> "t3-000041"``."""
    return f"{tournament_id}-{index:06d}"


def deal_seed(tournament_seed: int, round_: int, subset: int) -> int:
    """Seed of the deals of one subset in one round, derived from the tournament seed (0 .. 2**63-1).

    Deterministic and independent of Python's hash randomisation (BLAKE2b of the three numbers), so the same
    tournament seed always gives the same deals, and different rounds or subsets get unrelated deals.
    """
    digest = hashlib.blake2b(f"{tournament_seed}:{round_}:{subset}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & MAX_SEED


def round_robin_size(num_bots: int, seats_per_match: int, rounds: int) -> int:
    """Number of matches of a round robin: C(B, k) * k * R."""
    return math.comb(num_bots, seats_per_match) * seats_per_match * rounds


def validate_round_robin(game: str, bots: Sequence[str], seats_per_match: int, rounds: int, seed: int = 0,
                         deadline_ms: int = 1000) -> None:
    """Check a round-robin request; raises ``TournamentError`` naming the first problem found.

    Rules: a known game; at least as many bots as the game's fewest players; bot names of 1..64 characters of [A-Za-z0-9_.-], no repeats; the game's player range
    (Take 5: 2..10) holds k; k <= B; R >= 1; at most ``MAX_MATCHES`` matches; a seed in 0 .. 2**63-1; a Decide
    deadline of at least 1 ms.
    """
    if game not in GAMES:
        raise TournamentError(f"unknown game {game!r}; known games: {', '.join(sorted(GAMES))}")
    info = GAMES[game].INFO
    for name in bots:
        if not isinstance(name, str) or not BOT_NAME_RE.match(name):
            raise TournamentError(f"bad bot name {name!r}: use 1..64 characters of A-Z a-z 0-9 _ . -")
    dups = sorted({b for b in bots if list(bots).count(b) > 1})
    if dups:
        raise TournamentError(f"bots listed more than once: {', '.join(dups)}")
    if len(bots) < info.min_players:
        raise TournamentError(f"a {info.title} tournament needs at least {info.min_players} bots, got {len(bots)}")
    if not info.min_players <= seats_per_match <= info.max_players:
        raise TournamentError(
            f"{info.title} is played by {info.min_players}..{info.max_players} seats, "
            f"got {seats_per_match} seats per match"
        )
    if seats_per_match > len(bots):
        raise TournamentError(
            f"{seats_per_match} seats per match need at least {seats_per_match} bots, got {len(bots)}"
        )
    if rounds < 1:
        raise TournamentError(f"rounds must be at least 1, got {rounds}")
    total = round_robin_size(len(bots), seats_per_match, rounds)
    if total > MAX_MATCHES:
        raise TournamentError(
            f"{len(bots)} bots, {seats_per_match} seats, {rounds} rounds make {total} matches; "
            f"the limit is {MAX_MATCHES}: use fewer bots or rounds, or other seats per match"
        )
    if not 0 <= seed <= MAX_SEED:
        raise TournamentError(f"tournament seed must be in 0..{MAX_SEED}, got {seed}")
    if deadline_ms < 1:
        raise TournamentError(f"deadline must be at least 1 ms, got {deadline_ms}")


def round_robin(
    tournament_id: str,
    game: str,
    bots: Sequence[str],
    seats_per_match: int,
    rounds: int,
    seed: int,
    config: dict[str, Any] | None = None,
    deadline_ms: int = 1000,
) -> list[MatchSpec]:
    """Expand a round robin with duplicate deals into its matches.

    Order: round, then subset (``itertools.combinations`` of the bots sorted by name), then rotation; match ids
    number them 0, 1, 2, ... in that order. Every rotation of one subset in one round shares the seed
    ``deal_seed(seed, round, subset)`` (duplicate deals).

    Args:
        tournament_id: e.g. ``"t3"``. game: game id. bots: registered bot names (B of them, no repeats).
        seats_per_match: k. rounds: R. seed: tournament seed, 0 .. 2**63-1.
        config: the game's config in JSON form, copied into every spec. deadline_ms: Decide deadline, ms.
    Returns:
        ``C(B, k) * k * R`` match specs.
    Raises:
        TournamentError: see ``validate_round_robin``.
    """
    validate_round_robin(game, bots, seats_per_match, rounds, seed, deadline_ms)
    k = seats_per_match
    specs: list[MatchSpec] = []
    for round_ in range(rounds):
        for subset_index, subset in enumerate(itertools.combinations(sorted(bots), k)):
            seed_ = deal_seed(seed, round_, subset_index)
            for rotation in range(k):
                specs.append(
                    MatchSpec(
                        match_id=match_id(tournament_id, len(specs)),
                        game=game,
                        seats=tuple(subset[(i + rotation) % k] for i in range(k)),
                        seed=seed_,
                        config=dict(config or {}),
                        deadline_ms=deadline_ms,
                        tournament=tournament_id,
                        round=round_,
                        subset=subset_index,
                        rotation=rotation,
                    )
                )
    return specs
