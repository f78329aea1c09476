"""The ladder and standings replies with their honest columns (GetLadder, GetStandings): the servicer validates the
request and calls these; the figures come from the store (live Elo, tournament counters) and from
``arena.ladder.cache`` (pairwise counts, cached fits); the math is ``arena.ratings.ladder``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.ladder.cache import RatingsCache
from arena.ladder.fits import CachedFit
from arena.ratings.ladder import RatedLine, elo_lines
from arena.store import Store, TournamentInfo
from arena.store.keys import name_of
from arena.tournaments.formats import formats
from arena.tournaments.standings import standings
from arena_sdk.pb import arena_pb2

METHODS = ("elo", "fit")


def _owners(store: Store, game: str, bots: list[str]) -> dict[str, str]:
    """Bot id -> the public id of its NAME's owner ("" for none), in one round trip."""
    return dict(zip(bots, store.owner_ids_of([(game, name_of(b)) for b in bots])))


def _interval(entry: Any, margin: float | None, low: float | None, high: float | None,
              los_next: float | None) -> None:
    """Set the optional interval fields of a LadderEntry or StandingsEntry (unset stays unset)."""
    if margin is not None:
        entry.margin = margin
        if low is not None and high is not None:
            entry.low, entry.high = low, high
    if los_next is not None:
        entry.los_next = los_next


def _group_ranks(lines: Sequence[RatedLine]) -> list[int]:
    """Competition rank of each line among the lines of its group (1 = best): by rating, the bots with too few
    matches ranked after the others (the lines' order, ``arena.ratings.ladder.elo_lines``)."""
    return [1 + sum(1 for y in lines if y.group == x.group and (y.too_few_matches, -y.rating) <
                    (x.too_few_matches, -x.rating)) for x in lines]


def ladder_message(store: Store, cache: RatingsCache, game: str, method: str) -> arena_pb2.Ladder:
    """The ``Ladder`` of ``game`` by ``method`` ("elo": live ratings, margins and LOS from the pairwise counts;
    "fit": the cached batch fit, one per connected group, empty while none is computed), group by group, ranked
    within each group (``arena.ratings.ladder``, "Groups"). Raises ``ValueError`` for another method and
    ``StoreError`` when the results log names a missing result."""
    if method not in METHODS:
        raise ValueError(f"unknown ladder method {method!r}; choose elo or fit")
    live = store.ladder(game)
    stats = {e.bot: e for e in live}
    reply = arena_pb2.Ladder(game=game, method=method)
    lines: Sequence[RatedLine]
    if method == "elo":
        pairs = cache.ladder_pairs(game)
        matches = {e.bot: e.matches for e in live}
        lines = elo_lines([(e.bot, e.rating) for e in live], pairs.counts, matches)
        reply.results_counted, reply.results_stored = pairs.counts.results, pairs.stored
        reply.computed_at, reply.refreshing = pairs.computed_at, pairs.refreshing
    else:
        answer = cache.ladder_fit(game)
        reply.results_stored, reply.refreshing = answer.stored, answer.refreshing
        fit = answer.fit
        if fit is None:
            return reply
        lines = fit.lines
        matches = {x.bot: x.matches for x in fit.lines}  # a bot the live ladder no longer lists: as the fit saw it
        reply.results_counted, reply.computed_at, reply.replicates = fit.results, fit.computed_at, fit.replicates
    owners = _owners(store, game, [x.bot for x in lines])
    registered = store.registered_among(game, [x.bot for x in lines])
    for x, rank in zip(lines, _group_ranks(lines)):
        seen = stats.get(x.bot)
        # matches, wins and mean score as stored now, all three alike (a fit may have counted fewer results)
        entry = reply.entries.add(rank=rank, bot=x.bot, rating=x.rating,
                                  matches=seen.matches if seen else matches.get(x.bot, 0),
                                  wins=seen.wins if seen else 0, mean_score=seen.mean_score if seen else 0.0,
                                  owner=owners[x.bot], group=x.group, too_few_matches=x.too_few_matches,
                                  removed=x.bot not in registered)
        _interval(entry, x.margin, x.low, x.high, x.los_next)
    reply.groups = max((x.group for x in lines), default=0)
    return reply


def standings_message(store: Store, cache: RatingsCache, info: TournamentInfo) -> arena_pb2.Standings:
    """The ``Standings`` of a tournament: points order (``arena.tournaments.standings``) with the rating, margin
    and interval of the tournament's batch fit, and the fit's LOS of each line over the next one down."""
    tally = store.tournament_tally(info.game, info.id)
    bots = set(tally) | {o for t in tally.values() for o in t.opponents}
    lines = standings(tally, store.ratings(info.game, sorted(bots)), store.initial_rating)
    fmt = formats().get(info.kind)
    ordered = fmt.standings(store, info, lines) if fmt is not None else None
    order = "points"
    if ordered is not None:
        lines, order = ordered
    answer = cache.tournament_fit(info.game, info.id, info.matches_done, running=info.state == "running")
    fit: CachedFit | None = answer.fit
    by_bot = {x.bot: x for x in fit.lines} if fit else {}
    reply = arena_pb2.Standings(tournament_id=info.id, fit_refreshing=answer.refreshing, order=order)
    if fit is not None:
        reply.fit_matches, reply.fit_computed_at = fit.results, fit.computed_at
    owners = _owners(store, info.game, [s.bot for s in lines])
    for k, s in enumerate(lines):
        entry = reply.entries.add(rank=s.rank, bot=s.bot, points=s.points, matches=s.matches,
                                  mean_score=s.mean_score, performance=s.performance, score_rate=s.score_rate,
                                  byes=s.byes, owner=owners[s.bot])
        if s.tiebreak is not None:
            entry.tiebreak = s.tiebreak
        x = by_bot.get(s.bot)
        if fit is None or x is None:
            continue
        entry.rating, entry.too_few_matches = x.rating, x.too_few_matches
        los_next = fit.los_of(s.bot, lines[k + 1].bot) if k + 1 < len(lines) else None
        _interval(entry, x.margin, x.low, x.high, los_next)
    return reply
