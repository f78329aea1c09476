"""Tournament formats -> lists of match specs, and tournament standings (pure: no Redis, no clock, no global
randomness).

Round robin with duplicate deals (issue 2, item 8): with bots B and k seats per match, every k-subset of the bots
plays, once per seat rotation of the SAME deal, in each of R rounds; every round brings new deals derived from the
tournament seed. Rotation r of a subset seats ``subset[(i + r) % k]`` at seat i, so over the k rotations each bot
of the subset holds every seat (and so every hand of the deal) exactly once. Match count: C(B, k) * k * R.

Bots are named by their ladder identity ``NAME@VERSION`` (a bot id); ``NAME`` alone is accepted where the caller
resolves it (the service turns it into the latest registered version before expanding).

Standings of one tournament (issue 3, item 4) decompose every match into pairs, like the ladder's Elo: in a match,
a bot scores 1 point per opponent it finished ahead of and 1/2 per opponent it tied with (its pairwise wins and
ties); ``standings`` ranks the bots by points and adds the Elo performance.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.config import MAX_DEADLINE_MS, MIN_DEADLINE_MS
from arena_sdk.games import GAMES

BOT_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
VERSION_RE = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")
BOT_REF_RE = re.compile(r"^(?P<name>[A-Za-z0-9_.-]{1,64})(@(?P<version>[A-Za-z0-9_.+-]{1,64}))?$")
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
        game: game id (a key of the game registry).
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
    def from_dict(cls, d: dict[str, Any]) -> MatchSpec:
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


def bot_id(name: str, version: str) -> str:
    """Ladder identity of a bot version: ``"heur", "1.2" -> "heur@1.2"``."""
    return f"{name}@{version}"


def split_bot_ref(ref: str) -> tuple[str, str | None]:
    """``"NAME@VERSION" -> (NAME, VERSION)``, ``"NAME" -> (NAME, None)``.

    Raises ``TournamentError`` when ``ref`` is neither: NAME is 1..64 characters of [A-Za-z0-9_.-], VERSION 1..64
    of [A-Za-z0-9_.+-].
    """
    m = BOT_REF_RE.match(ref) if isinstance(ref, str) else None
    if m is None:
        raise TournamentError(f"bad bot name {ref!r}: use NAME or NAME@VERSION, NAME 1..64 characters of "
                              f"A-Z a-z 0-9 _ . - and VERSION 1..64 of A-Z a-z 0-9 _ . + -")
    return m.group("name"), m.group("version")


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


def round_robin_formula(num_bots: int, seats_per_match: int, rounds: int) -> str:
    """How a round robin's match count follows from its size, for people:
    ``(4, 3, 2) -> "C(4,3) subsets x 3 seat rotations x 2 rounds = 24"``."""
    total = round_robin_size(num_bots, seats_per_match, rounds)
    subsets = math.comb(num_bots, seats_per_match)
    return (f"C({num_bots},{seats_per_match}) {'subset' if subsets == 1 else 'subsets'} x "
            f"{seats_per_match} seat rotations x {rounds} {'round' if rounds == 1 else 'rounds'} = {total}")


def validate_round_robin(game: str, bots: Sequence[str], seats_per_match: int, rounds: int, seed: int = 0,
                         deadline_ms: int = 1000) -> None:
    """Check a round-robin request; raises ``TournamentError`` naming the first problem found.

    Rules: a known game; at least as many bots as the game's fewest players; bots named NAME or NAME@VERSION
    (``split_bot_ref``), no repeats; the game's player range
    (see its GameInfo) holds k; k <= B; R >= 1; at most ``MAX_MATCHES`` matches; a seed in 0 .. 2**63-1; a Decide
    deadline of ``MIN_DEADLINE_MS``..``MAX_DEADLINE_MS`` (10..60000) ms.
    """
    if game not in GAMES:
        raise TournamentError(f"unknown game {game!r}; known games: {', '.join(sorted(GAMES))}")
    info = GAMES[game].info
    for name in bots:
        split_bot_ref(name)
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
    if not MIN_DEADLINE_MS <= deadline_ms <= MAX_DEADLINE_MS:
        raise TournamentError(
            f"deadline_ms (of each Decide call) must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms, got {deadline_ms}")


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


# --- standings -------------------------------------------------------------------------------------------------


@dataclass
class BotTally:
    """One bot's counts over the matches of one tournament.

    Attributes:
        matches: matches played. score_sum: sum of its game scores (lower is better).
        half_points: pairwise points x 2 (2 per opponent finished ahead of, 1 per tie): whole numbers, exact.
        pairs: opponents met, counted once per match (a 4-seat match is 3 pairs).
        wins / losses: pairs where it finished ahead of / behind the opponent (ties are neither).
        opponents: pairs per opponent bot id.
    """

    matches: int = 0
    score_sum: float = 0.0
    half_points: int = 0
    pairs: int = 0
    wins: int = 0
    losses: int = 0
    opponents: dict[str, int] = field(default_factory=dict)


def tally_match(tally: dict[str, BotTally], seats: Sequence[str], scores: Sequence[float],
                ranks: Sequence[int]) -> None:
    """Add one match to ``tally`` (bot id -> ``BotTally``, updated in place).

    Args: seats: bot ids in seat order (distinct). scores: game score per seat. ranks: competition rank per seat,
    1 = best (lower rank = finished ahead). Raises ``ValueError`` when the lengths differ.
    """
    if not len(seats) == len(scores) == len(ranks):
        raise ValueError(f"one score and one rank per seat: {len(seats)} seats, {len(scores)} scores, "
                         f"{len(ranks)} ranks")
    for i, bot in enumerate(seats):
        t = tally.setdefault(bot, BotTally())
        t.matches += 1
        t.score_sum += float(scores[i])
        for j, opponent in enumerate(seats):
            if i == j:
                continue
            t.pairs += 1
            t.opponents[opponent] = t.opponents.get(opponent, 0) + 1
            if ranks[i] < ranks[j]:
                t.wins += 1
                t.half_points += 2
            elif ranks[i] == ranks[j]:
                t.half_points += 1
            else:
                t.losses += 1


@dataclass(frozen=True)
class StandingsLine:
    """One bot's line of a tournament's standings.

    Attributes:
        rank: standard competition rank by points (1, 2, 2, 4), 1 = best.
        bot: bot id. points: pairwise points (1 per opponent finished ahead of, 1/2 per tie).
        matches: matches played. mean_score: game score per match (lower is better).
        performance: Elo performance, points: mean opponent rating + 400 * (wins - losses) / pairs.
        score_rate: points / pairs, 0..1. pairs, wins, losses: see ``BotTally``.
    """

    rank: int
    bot: str
    points: float
    matches: int
    mean_score: float
    performance: float
    score_rate: float
    pairs: int
    wins: int
    losses: int


def standings(tally: dict[str, BotTally], ratings: dict[str, float], initial_rating: float) -> list[StandingsLine]:
    """Rank the bots of ``tally`` (only bots that played) by points.

    Args:
        tally: bot id -> its counts in the tournament (``tally_match``).
        ratings: current rating of each bot (the live ladder), Elo points; a bot absent from it counts as
            ``initial_rating``.
    Returns:
        Lines sorted by points (best first), then score rate, then bot id; equal points share a rank (1, 2, 2, 4).
        The Elo performance of a bot is the mean rating of the opponents it met (weighted by pairs) plus
        400 * (pairwise wins - pairwise losses) / pairs.
    """
    lines = []
    for bot, t in tally.items():
        if t.matches == 0 or t.pairs == 0:
            continue
        opp_sum = sum(n * ratings.get(opp, initial_rating) for opp, n in t.opponents.items())
        points = t.half_points / 2
        lines.append((bot, points, t, opp_sum / t.pairs + 400.0 * (t.wins - t.losses) / t.pairs))
    lines.sort(key=lambda x: (-x[1], -x[1] / x[2].pairs, x[0]))
    out = []
    for bot, points, t, performance in lines:
        rank = 1 + sum(1 for other in lines if other[1] > points)
        out.append(StandingsLine(rank=rank, bot=bot, points=points, matches=t.matches,
                                 mean_score=t.score_sum / t.matches, performance=performance,
                                 score_rate=points / t.pairs, pairs=t.pairs, wins=t.wins, losses=t.losses))
    return out
