"""The columns of an honest ladder: rating +/- margin and the likelihood of superiority (LOS) over the next line,
for the live Elo and for the batch fit (pure math: no Redis, no clock; ``docs/DESIGN.md``, "Ratings").

**Live Elo** (``elo_lines``; order-dependent: the same results in another order give other ratings, and the
rating has no error bar of its own). Its columns come from honest pairwise counts, the same results seen as
two-player games (in a match of N seats each bot has N - 1 pairwise results: finished ahead = win, tie = draw,
behind = loss; ``PairCounts``):

* margin: two parts, added as independent errors (root of the sum of squares), laid around the live rating (low =
  rating - margin, high = rating + margin), Elo points. (1) The fastchess/cutechess 95 % margin
  (``margins.elo_margin``) of the bot's pairwise W/D/L against the whole field: the uncertainty of its performance
  against the field it met, which shrinks with its matches (it assumes independent pairs: pairs of one match and
  tables of one deal are correlated, so it is too narrow). (2) ``walk_margin``: a live rating never settles, each
  result moves it by up to K, so even after thousands of matches it wanders around the bot's strength (two equal
  bots in 2-seat matches at K = 32 stand about 100 Elo apart as often as not, and up to 160); that part does not
  shrink with matches. Use ``--method fit`` for decisions;
* LOS over the next line down: from the two bots' head-to-head pairwise results (``margins.los``: wins and
  losses of the upper bot against the lower one, ties carry no information) when they finished apart at least
  once; when they never did, the normal approximation from both margins
  ``Phi((R_a - R_b) / sqrt(sd_a^2 + sd_b^2))`` with ``sd = margin / 1.96``; unknown (None) when a margin is
  not finite.

**Batch fit** (``fit_lines``, ``fit_for_ladder``): ``fit.fit_ratings`` (Plackett-Luce with seat and deal-luck
effects, bootstrap over deals): rating +/- 1.96 bootstrap sd, LOS ``FitResult.los``. For large data the fit is
made affordable (``fit_for_ladder``): the deal-luck sd is estimated on a fixed subsample of whole deals and then
held fixed, and the bootstrap replicates shrink with the data (``ladder_replicates``).

**Groups** (``arena.ratings.groups``). Bots that never shared a table, even through a chain of other bots, are in
different connected groups, and results say nothing about how one group stands against another. Both ladders
number the groups (``RatedLine.group``; 1 = the group with the most bots), list them one after the other, rank and
compare (LOS) only within a group, and the batch fit fits each group on its own (``fit_groups``), anchored at mean
1500 in each: ratings of different groups are not comparable. The live Elo's groups come from the pairwise counts.

**Too few matches.** A bot with fewer than ``MIN_MATCHES`` matches gets no margin (``RatedLine.too_few_matches``;
its interval would say mostly that there are few: +/- 590 Elo from a batch fit of 3 matches), and every other
bot gets a finite one: the live Elo's margin of a perfect or nil pairwise record is ``margins.bounded_margin``
(two virtual draws added) instead of infinity; the batch fit's is always finite (its prior).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from arena.ratings.design import RatedMatch
from arena.ratings.elo import K_FACTOR
from arena.ratings.fit import DEFAULT_REPLICATES, FitResult, fit_ratings
from arena.ratings.groups import connected_groups, group_numbers
from arena.ratings.margins import MIN_MATCHES, bounded_margin, los

LEVEL = 0.95
Z95 = NormalDist().inv_cdf(0.5 + LEVEL / 2.0)  # 1.96
TAU_SAMPLE_MATCHES = 2_000  # matches (whole deals) on which the deal-luck sd of a large fit is estimated
REPLICATE_BUDGET = 2_000_000  # bootstrap replicates x matches of one ladder fit
MIN_REPLICATES = 20


@dataclass(frozen=True)
class RatedLine:
    """The honest columns of one ladder line.

    Attributes: bot (bot id); rating (Elo points); margin (half width of the 95 % interval, Elo points, finite;
    None when unknown or with too few matches); low, high (rating -/+ margin, Elo points; None with margin);
    los_next (likelihood of superiority over the next line down in the same group, 0..1; None on a group's last
    line or when unknown); group (the bot's connected group, 1 = the one with the most bots; 0 when unknown: the
    pairwise counts do not count the bot yet); too_few_matches (fewer than ``MIN_MATCHES`` matches: no margin).
    """

    bot: str
    rating: float
    margin: float | None
    low: float | None
    high: float | None
    los_next: float | None
    group: int = 0
    too_few_matches: bool = False


class PairCounts:
    """Pairwise results between bots, counted over whole matches (mutable; ``add`` one match at a time).

    ``ahead[(a, b)]``: times bot a finished ahead of bot b in one match; ``ties[(a, b)]`` with a < b: times they
    tied. ``results``: matches added.
    """

    def __init__(self) -> None:
        self.ahead: dict[tuple[str, str], int] = {}
        self.ties: dict[tuple[str, str], int] = {}
        self.results = 0

    def add(self, seats: Sequence[str], ranks: Sequence[int]) -> None:
        """Count one match: ``seats`` bot ids, ``ranks`` competition ranks (1 = best). Raises ``ValueError``
        when the lengths differ."""
        if len(seats) != len(ranks):
            raise ValueError(f"one rank per seat: {len(seats)} seats, {len(ranks)} ranks")
        for i, a in enumerate(seats):
            for j in range(i + 1, len(seats)):
                b = seats[j]
                if ranks[i] < ranks[j]:
                    self.ahead[(a, b)] = self.ahead.get((a, b), 0) + 1
                elif ranks[i] > ranks[j]:
                    self.ahead[(b, a)] = self.ahead.get((b, a), 0) + 1
                else:
                    key = (a, b) if a < b else (b, a)
                    self.ties[key] = self.ties.get(key, 0) + 1
        self.results += 1

    def head_to_head(self, a: str, b: str) -> tuple[int, int, int]:
        """Wins, draws and losses of ``a`` against ``b`` (pairwise, one per match where both sat)."""
        return (self.ahead.get((a, b), 0), self.ties.get((a, b) if a < b else (b, a), 0),
                self.ahead.get((b, a), 0))

    def against_field(self) -> dict[str, tuple[int, int, int]]:
        """Bot id -> its pairwise wins, draws and losses against every opponent it met."""
        out: dict[str, list[int]] = {}
        for (a, b), n in self.ahead.items():
            out.setdefault(a, [0, 0, 0])[0] += n
            out.setdefault(b, [0, 0, 0])[2] += n
        for (a, b), n in self.ties.items():
            out.setdefault(a, [0, 0, 0])[1] += n
            out.setdefault(b, [0, 0, 0])[1] += n
        return {bot: (w, d, lo) for bot, (w, d, lo) in out.items()}

    def to_dict(self) -> dict[str, Any]:
        """JSON form: {"results": n, "ahead": {"a|b": n}, "ties": {"a|b": n}} (bot ids hold no "|")."""
        return {"results": self.results, "ahead": {f"{a}|{b}": n for (a, b), n in self.ahead.items()},
                "ties": {f"{a}|{b}": n for (a, b), n in self.ties.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairCounts:
        """Inverse of ``to_dict``; raises ``ValueError`` for a malformed document."""
        counts = cls()
        try:
            counts.results = int(data["results"])
            for field, target in (("ahead", counts.ahead), ("ties", counts.ties)):
                for key, n in data[field].items():
                    a, b = key.split("|", 1)
                    target[(a, b)] = int(n)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a pair-counts document: {exc}") from exc
        return counts


def _normal_los(diff: float, margin_a: float | None, margin_b: float | None) -> float | None:
    if margin_a is None or margin_b is None or not (math.isfinite(margin_a) and math.isfinite(margin_b)):
        return None
    sd = math.hypot(margin_a, margin_b) / Z95
    if sd == 0.0:
        return 0.5 if diff == 0 else (1.0 if diff > 0 else 0.0)
    return NormalDist().cdf(diff / sd)


def too_few_matches(matches: int) -> bool:
    """True when ``matches`` (a bot's matches) are fewer than ``MIN_MATCHES``: its line shows no margin."""
    return matches < MIN_MATCHES


def pair_groups(counts: PairCounts) -> dict[str, int]:
    """Bot id -> its connected group (``arena.ratings.groups``) among the bots the pairwise counts count."""
    return group_numbers(connected_groups([*counts.ahead, *counts.ties]))


def _by_group(bots: Sequence[str], groups: Mapping[str, int],
              last: Callable[[str], bool] = lambda bot: False) -> list[int]:
    """Indexes of ``bots`` group by group (1, 2, ..., unknown 0 last), inside a group those ``last`` says after the
    others, the given order kept otherwise."""
    return sorted(range(len(bots)), key=lambda i: (groups.get(bots[i], 0) or math.inf, last(bots[i]), i))


def walk_margin(opponents_per_match: float, k: float = K_FACTOR, level: float = LEVEL) -> float:
    """The half width (Elo points) of the ``level`` interval in which a live Elo rating wanders around the bot's
    strength once settled, for matches of ``opponents_per_match`` (mean N - 1 >= 1) other seats at K = ``k``.

    Near its strength each match moves the rating by ``K/(N-1) * sum_j (S_ij - 1/2)`` plus a pull back of ``K * c``
    per point it is off (``c = ln 10 / 1600``, the slope of the expected score at an even match): an AR(1) walk. A
    finishing rank uniform over 1..N gives ``sum_j S_ij`` the variance ``(N^2 - 1) / 12``, so the walk's stationary
    variance is ``K (N + 1) / (24 c (N - 1))`` (sd 52.7 Elo for N = 2 at K = 32, 39.3 for N = 4; a simulation of
    equal bots gives 40 and 36, a little less as the field's mean is fixed). Raises ``ValueError`` for fewer than one
    opponent per match or a K that is not positive."""
    if not opponents_per_match >= 1 or not k > 0:
        raise ValueError(f"need at least 1 opponent per match and K > 0, got {opponents_per_match}, {k}")
    c = math.log(10.0) / 1600.0
    n = opponents_per_match + 1.0
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    return z * math.sqrt(k * (n + 1.0) / (24.0 * c * (n - 1.0)))


def elo_lines(ladder: Sequence[tuple[str, float]], counts: PairCounts,
              matches: Mapping[str, int]) -> list[RatedLine]:
    """The live-Elo ladder's honest columns (module docstring: margin and LOS from pairwise counts, groups).

    Args:
        ladder: (bot id, live Elo rating) best first.
        counts: pairwise results of the matches counted so far (may lag the live ratings).
        matches: bot id -> its matches on the live ladder (a missing bot counts 0: too few).
    Returns:
        One ``RatedLine`` per entry of ``ladder``, group by group (``RatedLine.group``; bots the counts do not
        count yet, group 0, last), inside a group the bots with too few matches (``too_few_matches``) after the
        others, the order of ``ladder`` kept otherwise; LOS of each line over the next one of its group. A bot
        without pairwise results has margin None; every margin given is finite.
    """
    field = counts.against_field()
    groups = pair_groups(counts)
    margins: dict[str, float | None] = {}
    for bot, _ in ladder:
        w, d, lo = field.get(bot, (0, 0, 0))
        played = matches.get(bot, 0)
        width = bounded_margin(w, d, lo, LEVEL) if w + d + lo else math.nan
        if played and w + d + lo:  # the walk of the live rating itself, at the bot's mean opponents per match
            width = math.hypot(width, walk_margin(max(1.0, (w + d + lo) / played)))
        few = too_few_matches(played)
        margins[bot] = None if few or not math.isfinite(width) else width
    # group by group, and in a group the bots with too few matches after the others (a bot that forfeited its only
    # match is no rival of bots of two thousand yet), the order of ``ladder`` kept otherwise
    order = [ladder[i] for i in _by_group([b for b, _ in ladder], groups,
                                          lambda bot: too_few_matches(matches.get(bot, 0)))]
    out = []
    for k, (bot, rating) in enumerate(order):
        los_next: float | None = None
        group = groups.get(bot, 0)
        if k + 1 < len(order) and group and groups.get(order[k + 1][0]) == group:
            other, other_rating = order[k + 1]
            w, _, lo = counts.head_to_head(bot, other)
            los_next = los(w, lo) if w + lo else _normal_los(rating - other_rating, margins[bot], margins[other])
        m = margins[bot]
        out.append(RatedLine(bot=bot, rating=rating, margin=m, low=None if m is None else rating - m,
                             high=None if m is None else rating + m, los_next=los_next, group=group,
                             too_few_matches=too_few_matches(matches.get(bot, 0))))
    return out


def fit_lines(fit: FitResult, order: Sequence[str] | None = None, group: int = 1) -> list[RatedLine]:
    """The batch fit's columns for the bots ``order`` (default ``fit.bots``, best rating first, those with too few
    matches after the others, as ``elo_lines``), LOS of each over the next one in that order (``FitResult.los``),
    every line marked with ``group`` (the fit is one group's). A bot of ``order`` absent from the fit is left out; a
    bot with too few matches gets no margin."""
    if order is None:
        order = sorted(fit.bots, key=lambda b: too_few_matches(fit.matches[b]))
    bots = [b for b in order if b in fit.ratings]
    has_boot = fit.samples.shape[0] > 0
    out = []
    for k, bot in enumerate(bots):
        few = too_few_matches(fit.matches[bot])
        m = None if few else fit.margin.get(bot)
        nxt = bots[k + 1] if k + 1 < len(bots) else None
        out.append(RatedLine(bot=bot, rating=fit.ratings[bot], margin=m, low=None if m is None else fit.lower.get(bot),
                             high=None if m is None else fit.upper.get(bot),
                             los_next=fit.los(bot, nxt) if nxt is not None and has_boot else None, group=group,
                             too_few_matches=few))
    return out


def ladder_replicates(matches: int) -> int:
    """Bootstrap replicates of a ladder fit over ``matches`` matches: 200 (``DEFAULT_REPLICATES``) up to 10,000
    matches, then ``REPLICATE_BUDGET / matches`` (the bootstrap costs about as much as 200 replicates of 10,000
    matches, ~linear in replicates x matches), at least 20: 100 at 20,000 matches, 20 at 100,000. The margin is
    1.96 bootstrap sd; an sd from R replicates is off by about 1 / sqrt(2 (R - 1)) of itself (5 % at 200, 16 % at
    20), and with 100,000 matches the margins are a few Elo points, so that is well under one point."""
    if matches <= 0:
        return DEFAULT_REPLICATES
    return max(MIN_REPLICATES, min(DEFAULT_REPLICATES, REPLICATE_BUDGET // matches))


def _deal_key(m: RatedMatch) -> str:
    return f"d:{m.deal}" if m.deal is not None else f"m:{m.match_id}"


def tau_sample(matches: Sequence[RatedMatch], size: int = TAU_SAMPLE_MATCHES) -> list[RatedMatch]:
    """A fixed subsample of whole deals (every table of a deal, or a match without a shared deal) with at least
    ``size`` matches (all when there are fewer): the deals in the order of their ids (seeds are hashes, so that
    order is as good as random), independent of the order of ``matches``."""
    if len(matches) <= size:
        return list(matches)
    groups: dict[str, list[RatedMatch]] = {}
    for m in matches:
        groups.setdefault(_deal_key(m), []).append(m)
    out: list[RatedMatch] = []
    for key in sorted(groups):
        out += groups[key]
        if len(out) >= size:
            break
    return out


def fit_for_ladder(matches: Sequence[RatedMatch], *, seed: int = 0,
                   replicates: int | None = None) -> FitResult:
    """The batch fit of a ladder or a tournament: ``fit_ratings`` with seat and deal-luck effects, 95 % bootstrap
    intervals over deals, mean rating 1500.

    Up to ``TAU_SAMPLE_MATCHES`` matches the deal-luck sd is chosen by the fit itself (Laplace marginal likelihood);
    above, it is estimated that way on ``tau_sample`` and held fixed for the full fit (the search costs tens of
    Newton solves, and one variance needs no 100,000 matches). Replicates: ``ladder_replicates`` unless given.
    Raises ``FitError`` (no match, a bad match).
    """
    reps = ladder_replicates(len(matches)) if replicates is None else replicates
    if len(matches) <= TAU_SAMPLE_MATCHES:
        return fit_ratings(matches, replicates=reps, seed=seed, level=LEVEL)
    probe = fit_ratings(tau_sample(matches, TAU_SAMPLE_MATCHES), replicates=0, level=LEVEL)
    deal: bool | float = probe.deal_sd if probe.luck_effects and probe.deal_sd > 0 else True
    if probe.luck_effects == 0:
        deal = True  # no deal was played twice in the sample: let the full fit decide
    return fit_ratings(matches, replicates=reps, seed=seed, level=LEVEL, deal_effects=deal)


def fit_groups(matches: Sequence[RatedMatch], *, seed: int = 0,
               replicates: int | None = None) -> list[FitResult]:
    """The batch fit of a ladder or a tournament, one ``fit_for_ladder`` per connected group of its bots
    (``arena.ratings.groups``; the k-th fit is group k + 1's, mean rating 1500 in each). Replicates: as
    ``fit_for_ladder``, from the number of all ``matches``. Raises ``FitError`` (no match, a bad match)."""
    if not matches:
        return [fit_for_ladder(matches, seed=seed, replicates=replicates)]  # raises the fit's own error
    number = group_numbers(connected_groups(m.bots for m in matches))
    parts: dict[int, list[RatedMatch]] = {}
    for m in matches:
        parts.setdefault(number[m.bots[0]], []).append(m)
    reps = ladder_replicates(len(matches)) if replicates is None else replicates
    return [fit_for_ladder(parts[k], seed=seed, replicates=reps) for k in sorted(parts)]
