"""Round robin: every k-subset of the bots plays one table in each of R rounds, on duplicate or unique deals (pure).

With B bots and k seats per match, a round is C(B, k) tables, grouped into deals by ``deals.deal_plan``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from arena.core.config import MAX_DEADLINE_MS, MIN_DEADLINE_MS
from arena.core.errors import TournamentError
from arena.core.seeds import seed_bytes
from arena.core.specs import MatchSpec, match_id, split_bot_ref

if TYPE_CHECKING:
    from arena.store.tournaments import TournamentInfo
from arena.tournaments.deals import DEAL_PLANS, deal_plan, tables_per_deal
from arena.tournaments.formats import Entry, Format, Planned
from arena_sdk.games import GAMES

MAX_MATCHES = 100_000  # a tournament larger than this is refused (it would flood the queue)


def round_robin_size(num_bots: int, seats_per_match: int, rounds: int, deals: str = "duplicate") -> int:
    """Number of matches of a round robin: C(B, k) * R on duplicate or unique deals, C(B, k) * k * R with "rotate"."""
    per_round = math.comb(num_bots, seats_per_match)
    return per_round * (seats_per_match if deals == "rotate" else 1) * rounds


def round_robin_formula(num_bots: int, seats_per_match: int, rounds: int, deals: str = "duplicate",
                        deal_count: int | None = None) -> str:
    """How a round robin's match count follows from its size, for people, e.g.
    ``(4, 3, 2) -> "C(4,3) subsets x 2 rounds = 8"``, ``(4, 3, 2, "rotate") -> "C(4,3) subsets x 3 seat
    rotations x 2 rounds = 24"``; with ``deal_count``, how many deals they are played on and T
    (``tables_per_deal``): ``"... = 8, on 8 deals of at most T = max(1, min(k, B // k)) = 1 table"``, or with
    "unique" ``"... = 8, on 8 unique deals (every table its own deal)"``."""
    total = round_robin_size(num_bots, seats_per_match, rounds, deals)
    subsets = math.comb(num_bots, seats_per_match)
    rotations = f" x {seats_per_match} seat rotations" if deals == "rotate" else ""
    text = (f"C({num_bots},{seats_per_match}) {'subset' if subsets == 1 else 'subsets'}{rotations} x "
            f"{rounds} {'round' if rounds == 1 else 'rounds'} = {total}")
    if deal_count is not None and deals == "unique":
        text += f", on {deal_count} unique {'deal' if deal_count == 1 else 'deals'} (every table its own deal)"
    elif deal_count is not None:
        t = tables_per_deal(num_bots, seats_per_match, deals)
        how = "T = k" if deals == "rotate" else "T = max(1, min(k, B // k))"
        text += (f", on {deal_count} {'deal' if deal_count == 1 else 'deals'} of at most {how} = {t} "
                 f"{'table' if t == 1 else 'tables'}")
    return text


def validate_field(game: str, bots: Sequence[str], seats_per_match: int, rounds: int, seed: int = 0,
                   deadline_ms: int = 1000, deals: str = "duplicate") -> None:
    """Check what every format's request shares; raises ``TournamentError`` naming the first problem found.

    Rules: a known game; at least as many bots as the game's fewest players; bots named NAME or NAME@VERSION
    (``split_bot_ref``), no repeats; the game's player range (see its GameInfo) holds k; k <= B; R >= 1; a deal
    plan of ``DEAL_PLANS``; a tournament seed in 0 .. 2**256-1; a Decide deadline of
    ``MIN_DEADLINE_MS``..``MAX_DEADLINE_MS`` (10..60000) ms.
    """
    if game not in GAMES:
        raise TournamentError(f"unknown game {game!r}; known games: {', '.join(sorted(GAMES))}")
    info = GAMES[game].info
    for name in bots:
        split_bot_ref(name)
    counts: dict[str, int] = {}
    for b in bots:
        counts[b] = counts.get(b, 0) + 1
    dups = sorted(b for b, n in counts.items() if n > 1)
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
    if deals not in DEAL_PLANS:
        raise TournamentError(f"unknown deal plan {deals!r}; choose one of {', '.join(DEAL_PLANS)}")
    seed_bytes(seed)
    if not MIN_DEADLINE_MS <= deadline_ms <= MAX_DEADLINE_MS:
        raise TournamentError(
            f"deadline_ms (of each Decide call) must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms, got {deadline_ms}")


def validate_round_robin(game: str, bots: Sequence[str], seats_per_match: int, rounds: int, seed: int = 0,
                         deadline_ms: int = 1000, deals: str = "duplicate") -> None:
    """Check a round-robin request: ``validate_field``, then at most ``MAX_MATCHES`` matches
    (``round_robin_size``); raises ``TournamentError`` naming the first problem found."""
    validate_field(game, bots, seats_per_match, rounds, seed, deadline_ms, deals)
    total = round_robin_size(len(bots), seats_per_match, rounds, deals)
    if total > MAX_MATCHES:
        raise TournamentError(
            f"{len(bots)} bots, {seats_per_match} seats, {rounds} rounds make {total} matches; "
            f"the limit is {MAX_MATCHES}: use fewer bots or rounds, or other seats per match"
        )


def round_robin(
    tournament_id: str,
    game: str,
    bots: Sequence[str],
    seats_per_match: int,
    rounds: int,
    seed: int,
    config: dict[str, Any] | None = None,
    deadline_ms: int = 1000,
    *,
    deals: str = "duplicate",
    owners: Mapping[str, str] | None = None,
) -> list[MatchSpec]:
    """Expand a round robin into its matches, on the deal plan ``deals`` (see ``deal_plan``, whose order the
    match ids number 0, 1, 2, ...).

    Args:
        tournament_id: e.g. ``"t3"``. game: game id. bots: registered bot names (B of them, no repeats).
        seats_per_match: k. rounds: R. seed: the tournament's secret seed, 0 .. 2**256-1 (only validated here:
            the specs carry no seed; a worker derives each match's deal with ``deal_seed`` when it plays it).
        config: the game's config in JSON form, copied into every spec. deadline_ms: Decide deadline, ms.
        deals: "duplicate", "unique" or "rotate". owners: bot id -> owner key (see ``deal_plan``).
    Returns:
        ``round_robin_size(B, k, R, deals)`` match specs.
    Raises:
        TournamentError: see ``validate_round_robin``.
    """
    validate_round_robin(game, bots, seats_per_match, rounds, seed, deadline_ms, deals)
    return [
        MatchSpec(match_id=match_id(tournament_id, i), game=game, seats=m.seats, config=dict(config or {}),
                  deadline_ms=deadline_ms, tournament=tournament_id, round=m.round, deal=m.deal, table=m.table)
        for i, m in enumerate(deal_plan(bots, seats_per_match, rounds, deals, owners))
    ]


def formula_of(info: TournamentInfo) -> str:
    """How a stored tournament's ``matches_total`` follows from its request, for people: the text its format
    planned (``info.extra["formula"]``, kept at creation), else, for a tournament stored before that, the round
    robin's (``round_robin_formula``)."""
    if "formula" in info.extra:
        return str(info.extra["formula"])
    return round_robin_formula(len(info.bots), info.seats_per_match, info.rounds, info.deals, info.deal_count or None)


class RoundRobin(Format):
    """The round robin (module docstring): planned in full at creation, no controller."""

    name = "round_robin"
    title = "round robin"
    summary = "every SEATS-subset of the bots plays one table a round (the default)"
    option_field = "round_robin"

    def check(self, entry: Entry) -> None:
        validate_round_robin(entry.game, entry.bots, entry.seats, entry.rounds, entry.seed, entry.deadline_ms,
                             entry.deals)

    def plan(self, tournament_id: str, entry: Entry) -> Planned:
        specs = round_robin(tournament_id, entry.game, entry.bots, entry.seats, entry.rounds, entry.seed,
                            entry.config, entry.deadline_ms, deals=entry.deals, owners=entry.owners)
        count = len({(spec.round, spec.deal) for spec in specs})
        return Planned(rounds=entry.rounds, specs=tuple(specs), matches_total=len(specs), deal_count=count,
                       formula=round_robin_formula(len(entry.bots), entry.seats, entry.rounds, entry.deals, count))


FORMAT = RoundRobin()
