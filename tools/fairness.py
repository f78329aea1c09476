"""The fairness measurement: how many matches until the batch fit orders bots of known strength
correctly with 95 % confidence, under three deal plans at the same budget.

    python tools/fairness.py                 # the default run (make fairness): a few minutes on 2 cores
    python tools/fairness.py --reps 40       # tighter medians
    python tools/fairness.py --calibrate     # the strength ladder of the bots (a random-deal round robin)

**Bots of known strength order**, the SDK sample bots played in process (``arena_sdk.play_game``). A sample bot
of each kind is too few for 8 bots of distinct strength, so the ladder is made of *noisy heuristics*: the sample
heuristic (``sample_bots.heuristic_bot`` for Take 5, ``sample_bots.taki_heuristic_bot`` for Taki) that plays a
uniformly random legal answer instead with probability p (seeded per match and seat), from p = 1 (the random bot)
to p = 0 (the heuristic). Strength falls as p rises; the p values were chosen with ``--calibrate`` so that
neighbours are roughly evenly spaced in Elo. The Monte Carlo bot is left out: about 1 s per Take 5 match, it
would take the whole budget.

**Deal plans**, all 4-seat tables, every plan playing the same number of matches per step:

* ``duplicate``: the tournament's plan (``arena.tournaments.deal_plan``, "duplicate"): every round, each
  4-subset of the bots plays one table; tables are grouped into deals of up to T = min(k, B // k) tables with
  disjoint bots (8 bots: 2 tables per deal, each hand held by two different bots; 4 bots: T = 1, so every table has
  a deal of its own: no bot may see a deal twice and all four are at every table);
* ``rotate``: seat rotation of one deal by the same bots (trusted self-play): each 4-subset plays its deal four
  times, each bot holding each hand once;
* ``random``: the duplicate plan's tables, each on a fresh deal.

**Stopping rule**: after each step of matches, ``arena.ratings.fit_ratings`` (Plackett-Luce with seat effects and
deal-luck effects, bootstrap over deals) must put the bots in their true order with every two neighbours'
95 % intervals disjoint (``FitResult.separated``). A repetition that does not get there within ``--cap``
matches counts as the cap (the table shows how many did). Checks come every ``step`` matches and then every
10 % more, so a figure is exact to about 10 %.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from arena.ratings import RatedMatch, fit_ratings
from arena_sdk import MatchInfo, play_game
from arena_sdk.games.taki import TakiAction
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.taki_heuristic_bot import TakiHeuristicBot
from sample_bots.taki_random_bot import TakiRandomBot

SEATS = 4
PLANS = ("duplicate", "rotate", "random")


class NoisyTake5(HeuristicBot):
    """The Take 5 heuristic playing a uniformly random card instead with probability ``p`` (and a random row on
    rule 4 with the same probability). Seeded per (seed, match, seat)."""

    def __init__(self, p: float, seed: int) -> None:
        self.p, self.seed = p, seed
        self.rng = random.Random(seed)

    def on_start(self, match: MatchInfo) -> None:
        self.rng = random.Random(f"{self.seed}:{match.match_id}:{match.seat}")

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        if self.rng.random() < self.p:
            return self.rng.choice(view.hand)
        return super().choose_card(view)

    def choose_row(self, view):  # type: ignore[no-untyped-def]
        if self.rng.random() < self.p:
            return self.rng.randrange(len(view.rows))
        return super().choose_row(view)


class NoisyTaki(TakiHeuristicBot):
    """The Taki heuristic playing a uniformly random legal action instead with probability ``p`` (and answering
    a Breaker question at random with the same probability). Seeded per (seed, match, seat)."""

    def __init__(self, p: float, seed: int) -> None:
        super().__init__()
        self.p, self.seed = p, seed
        self.rng = random.Random(seed)
        self.random_bot = TakiRandomBot(seed)

    def on_start(self, match: MatchInfo) -> None:
        self.rng = random.Random(f"{self.seed}:{match.match_id}:{match.seat}")
        self.random_bot.rng = random.Random(f"{self.seed}:r:{match.match_id}:{match.seat}")

    def take_turn(self, view) -> TakiAction:  # type: ignore[no-untyped-def]
        if self.rng.random() < self.p:
            self._feed(view)
            return self.random_bot.take_turn(view)
        return super().take_turn(view)

    def react(self, view) -> bool:  # type: ignore[no-untyped-def]
        if self.rng.random() < self.p:
            self._feed(view)
            return self.random_bot.react(view)
        return super().react(view)


# Noise levels p of each roster, strongest first (the true order). Chosen with --calibrate for roughly even Elo
# gaps between neighbours.
ROSTERS: dict[tuple[str, int], tuple[float, ...]] = {
    ("take5", 4): (0.0, 0.32, 0.6, 1.0),
    ("take5", 8): (0.0, 0.17, 0.32, 0.45, 0.6, 0.73, 0.88, 1.0),
    ("taki", 4): (0.0, 0.26, 0.52, 1.0),
    ("taki", 8): (0.0, 0.14, 0.26, 0.42, 0.52, 0.62, 0.84, 1.0),
}


def bot_label(p: float) -> str:
    return f"p{p:.2f}"


def make_bot(game: str, p: float, seed: int):  # type: ignore[no-untyped-def]
    return NoisyTake5(p, seed) if game == "take5" else NoisyTaki(p, seed)


def play(game: str, seats: Sequence[float], deal_seed: int, match_id: str) -> tuple[int, ...]:
    """Ranks of one match: ``seats`` are the noise levels in seat order; the deal comes from ``deal_seed``."""
    bots = [make_bot(game, p, 1000 + i) for i, p in enumerate(seats)]
    out = play_game(bots, seed=deal_seed, game=game, match_id=match_id)
    return tuple(out.ranks)


@dataclass(frozen=True)
class Table:
    """One match of a plan: noise levels in seat order, the deal's seed and its id."""

    seats: tuple[float, ...]
    deal_seed: int
    deal: str


def plan_stream(plan: str, roster: Sequence[float], rng: random.Random) -> Iterator[Table]:
    """The endless stream of tables of ``plan`` for ``roster`` (module docstring), round after round."""
    b, k = len(roster), SEATS
    per_deal = max(1, min(k, b // k))
    subsets = list(itertools.combinations(range(b), k))
    while True:
        order = subsets[:]
        rng.shuffle(order)
        if plan == "rotate":
            for subset in order:
                seed = rng.getrandbits(63)
                for r in range(k):
                    yield Table(tuple(roster[subset[(i + r) % k]] for i in range(k)), seed, f"d{seed}")
            continue
        # duplicate packing: first fit of the shuffled subsets into deals of <= per_deal disjoint tables
        deals: list[list[tuple[int, ...]]] = []
        for subset in order:
            for d in deals:
                if len(d) < per_deal and all(not set(subset) & set(t) for t in d):
                    d.append(subset)
                    break
            else:
                deals.append([subset])
        for d in deals:
            seed = rng.getrandbits(63)
            for t, subset in enumerate(d):
                seating = list(subset)
                rng.shuffle(seating)
                if plan == "duplicate":
                    yield Table(tuple(roster[i] for i in seating), seed, f"d{seed}")
                else:
                    fresh = rng.getrandbits(63)
                    yield Table(tuple(roster[i] for i in seating), fresh, f"d{fresh}")


def resolved(matches: Sequence[RatedMatch], truth: Sequence[str], replicates: int, seed: int) -> tuple[bool, float]:
    """Whether the fit orders the bots as ``truth`` (best first) with disjoint neighbouring intervals, and the
    deal-luck sd it found (Elo). Cheap screens first: the point fit's order, then a 30-replicate bootstrap that
    must come close (every gap at least 3/4 of the two margins); only then the full bootstrap."""
    point = fit_ratings(matches, replicates=0)
    if list(point.bots) != list(truth):
        return False, point.deal_sd
    luck: bool | float = point.deal_sd if point.luck_effects else False
    quick = fit_ratings(matches, replicates=30, seed=seed, deal_effects=luck)
    if any(quick.ratings[a] - quick.ratings[b] < 0.75 * (quick.margin[a] + quick.margin[b])
           for a, b in zip(truth, truth[1:])):
        return False, point.deal_sd
    fit = fit_ratings(matches, replicates=replicates, seed=seed, deal_effects=luck)
    return list(fit.bots) == list(truth) and fit.separated(), point.deal_sd


def matches_needed(game: str, bots: int, plan: str, rep: int, step: int, cap: int,
                   replicates: int) -> tuple[int, bool, float, float]:
    """One repetition: play ``plan`` until the order is resolved; (matches, resolved, CPU seconds, deal-luck
    sd in Elo at the end)."""
    start = time.process_time()
    roster = ROSTERS[(game, bots)]
    truth = [bot_label(p) for p in roster]
    rng = random.Random(f"{game}:{bots}:{plan}:{rep}")
    stream = plan_stream(plan, roster, rng)
    matches: list[RatedMatch] = []
    target = step
    tau = 0.0
    while len(matches) < cap:
        while len(matches) < min(target, cap):
            t = next(stream)
            mid = f"{rep}-{len(matches)}"
            ranks = play(game, t.seats, t.deal_seed, mid)
            matches.append(RatedMatch(tuple(bot_label(p) for p in t.seats), ranks, deal=t.deal, match_id=mid))
        done, tau = resolved(matches, truth, replicates, rep)
        if done:
            return len(matches), True, time.process_time() - start, tau
        target = max(target + step, math.ceil(target * 1.1 / step) * step)
    return cap, False, time.process_time() - start, tau


def calibrate(game: str, roster: Sequence[float], matches: int, workers: int) -> None:
    """Random-deal matches of random 4-subsets of ``roster``; prints the fitted ladder."""
    rng = random.Random(1)
    tables = []
    for k in range(matches):
        seats = rng.sample(list(roster), SEATS)
        tables.append((game, tuple(seats), rng.getrandbits(63), f"c{k}"))
    with ProcessPoolExecutor(workers) as pool:
        ranks = list(pool.map(_play_args, tables, chunksize=20))
    results = [RatedMatch(tuple(bot_label(p) for p in t[1]), r, match_id=t[3]) for t, r in zip(tables, ranks)]
    fit = fit_ratings(results, replicates=100)
    print(f"{game}: {matches} random-deal matches")
    for s in fit.standings():
        print(f"  {s.bot}  {s.rating:7.1f} +/- {fit.margin[s.bot]:5.1f}  LOS over next {s.los_next}")


def _play_args(args: tuple[str, tuple[float, ...], int, str]) -> tuple[int, ...]:
    return play(*args)


def _needed_args(args: tuple[str, int, str, int, int, int, int]) -> tuple[tuple[str, int, str], tuple[int, bool, float,
                                                                                                     float]]:
    game, bots, plan, rep, step, cap, replicates = args
    return (game, bots, plan), matches_needed(game, bots, plan, rep, step, cap, replicates)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=None, help="repetitions per game, roster and plan")
    parser.add_argument("--games", default="take5,taki", help="comma-separated games (take5,taki)")
    parser.add_argument("--bots", default="4,8", help="comma-separated roster sizes (4,8)")
    parser.add_argument("--plans", default=",".join(PLANS), help="comma-separated plans")
    parser.add_argument("--cap", type=int, default=6000, help="matches at most per repetition")
    parser.add_argument("--replicates", type=int, default=100, help="bootstrap replicates per check")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--progress", action="store_true", help="print each repetition as it ends")
    parser.add_argument("--calibrate", type=int, default=0, metavar="MATCHES",
                        help="instead: fit the 8-bot rosters on this many random-deal matches and print them")
    args = parser.parse_args(argv)
    games = [g for g in args.games.split(",") if g]
    sizes = [int(b) for b in args.bots.split(",") if b]
    plans = [p for p in args.plans.split(",") if p]
    if args.calibrate:
        for game in games:
            calibrate(game, ROSTERS[(game, max(sizes))], args.calibrate, args.workers)
        return 0
    reps = {4: 12, 8: 4} if args.reps is None else {4: args.reps, 8: args.reps}
    steps = {4: 8, 8: 32}
    tasks = [(g, b, p, r, steps[b], args.cap, args.replicates)
             for g in games for b in sizes for r in range(reps[b]) for p in plans]
    started = time.perf_counter()
    results: dict[tuple[str, int, str], list[tuple[int, bool, float, float]]] = {}
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(_needed_args, t) for t in tasks]
        for done, future in enumerate(as_completed(futures), 1):
            key, row = future.result()
            results.setdefault(key, []).append(row)
            if args.progress:
                print(f"  [{done}/{len(tasks)}] {key[0]} {key[1]} bots {key[2]}: {row[0]} matches"
                      f"{'' if row[1] else ' (cap)'}, {row[2]:.0f} s CPU, luck sd {row[3]:.0f} Elo", flush=True)
    cpu = sum(r[2] for rows in results.values() for r in rows)
    print(f"Matches until the batch fit orders the bots correctly with disjoint 95 % intervals "
          f"(4 seats; cap {args.cap}; {time.perf_counter() - started:.0f} s wall, {cpu:.0f} s CPU, "
          f"{args.workers} workers)")
    print(f"{'game':6} {'bots':>4} {'plan':10} {'reps':>4} {'median':>7} {'p90':>7} {'capped':>6} "
          f"{'vs random':>9} {'luck sd':>8}")
    for g in games:
        for b in sizes:
            medians = {p: float(np.median([r[0] for r in results[(g, b, p)]])) for p in plans if (g, b, p) in results}
            for p in plans:
                rows = results.get((g, b, p), [])
                if not rows:
                    continue
                n = np.array([r[0] for r in rows])
                capped = sum(1 for r in rows if not r[1])
                ratio = f"{medians[p] / medians['random']:.2f}" if "random" in medians and p != "random" else ""
                luck = f"{np.median([r[3] for r in rows]):.0f}" if p != "random" else "-"
                print(f"{g:6} {b:>4} {p:10} {len(rows):>4} {np.median(n):>7.0f} {np.percentile(n, 90):>7.0f} "
                      f"{capped:>6} {ratio:>9} {luck:>8}")
    print("vs random: median matches of the plan / median matches on random deals (below 1: fewer needed).")
    print("luck sd: the deal-and-hand luck the fit found (sd of the per-hand effects, Elo points; the Gumbel noise")
    print("of one seat is 1.28 natural-log odds = 223 Elo), median over repetitions at their stopping point.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
