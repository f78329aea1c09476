"""Swiss pairing vs random pairing: how well does the final order recover bots of known strength?

    python tools/swiss_fairness.py              # the default run (make fairness-swiss)
    python tools/swiss_fairness.py --reps 200   # tighter means

Bots of known strength (no game engine): B bots with Elo evenly spaced over 0..800 (natural-log odds =
Elo * ln 10 / 400). A table's ranks are a Plackett-Luce draw: each seat's total is the bot's strength plus standard
Gumbel noise, and the seats finish in the order of the totals.

Both designs play R = ceil(log2 B) + 2 rounds of k-seat tables (B mod k byes per round):

* ``swiss``: round 1 seats a random (seeded) order; later rounds are ``pair_round`` on the ``swiss_standings``
  order; the final order is the ``swiss_standings`` order;
* ``random``: each round a random partition into tables of k (random byes); the final order is ``swiss_standings``
  over those rounds (same points and tiebreak).

The table shows the mean Spearman rho of each final order against the true strength order (+/- standard error),
how often Swiss >= random in a repetition, and the same for the order of the batch fit (``fit_ratings``, no
bootstrap) over each design's matches.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.ratings import RatedMatch, fit_ratings
from arena.tournaments.swiss_pairing import SwissRound, pair_round, swiss_standings

ELO_SPAN = 800.0


def strengths_of(num_bots: int) -> dict[str, float]:
    """Bot id -> strength in natural-log odds, Elo evenly spaced over 0..800; id b00 is the weakest."""
    elos = np.linspace(0.0, ELO_SPAN, num_bots)
    return {f"b{i:02d}": float(e) * math.log(10) / 400 for i, e in enumerate(elos)}


def play(rng: np.random.Generator, strengths: dict[str, float], seats: Sequence[str]) -> tuple[int, ...]:
    """Ranks (1 = best) of one table, a Plackett-Luce draw: strength + standard Gumbel noise, highest total first."""
    totals = np.array([strengths[b] for b in seats]) + rng.gumbel(size=len(seats))
    ranks = np.empty(len(seats), dtype=int)
    ranks[np.argsort(-totals)] = np.arange(1, len(seats) + 1)
    return tuple(int(r) for r in ranks)


def random_round(rng: np.random.Generator, bots: Sequence[str], k: int) -> SwissRound:
    """A random partition of ``bots`` into tables of k; the B mod k left over sit out."""
    perm = [str(b) for b in rng.permutation(list(bots))]
    n = len(perm) // k * k
    return SwissRound(tuple(tuple(perm[i:i + k]) for i in range(0, n, k)), tuple(perm[n:]))


@dataclass(frozen=True)
class Outcome:
    """One design's run: the final order (best first) and the matches played (seats, ranks)."""

    order: list[str]
    results: list[tuple[tuple[str, ...], tuple[int, ...]]]


def run_design(rng: np.random.Generator, strengths: dict[str, float], k: int, rounds: int, swiss: bool) -> Outcome:
    """Play ``rounds`` rounds, Swiss-paired (``swiss``) or randomly paired; the final ``swiss_standings`` order."""
    bots = sorted(strengths)
    first = [str(b) for b in rng.permutation(bots)]
    history: list[SwissRound] = []
    results: list[tuple[tuple[str, ...], tuple[int, ...]]] = []
    standing = first
    for _ in range(rounds):
        rnd = pair_round(standing, k, history) if swiss else random_round(rng, bots, k)
        history.append(rnd)
        results.extend((t, play(rng, strengths, t)) for t in rnd.tables)
        standing = [line.bot for line in swiss_standings(bots, k, results, history, first)]
    return Outcome(standing, results)


def rho(order: Sequence[str], strengths: dict[str, float]) -> float:
    """Spearman rho of ``order`` (best first) against the true strength order."""
    return float(spearmanr([-i for i in range(len(order))], [strengths[b] for b in order]).statistic)


def fit_order(results: Sequence[tuple[tuple[str, ...], tuple[int, ...]]]) -> list[str]:
    """The batch fit's order (best first), no bootstrap, no deal effects."""
    fit = fit_ratings([RatedMatch(s, r, match_id=f"m{i:04d}") for i, (s, r) in enumerate(results)],
                      replicates=0, deal_effects=False)
    return sorted(fit.ratings, key=lambda b: -fit.ratings[b])


@dataclass(frozen=True)
class Comparison:
    """Per repetition rho of each design's final order (and of the fit's order when asked)."""

    num_bots: int
    k: int
    rounds: int
    matches: int
    swiss: list[float]
    random: list[float]
    swiss_fit: list[float]
    random_fit: list[float]


def compare(num_bots: int, k: int, reps: int, seed: int = 0, fit: bool = False) -> Comparison:
    """``reps`` seeded repetitions of both designs for B bots at k seats, R = ceil(log2 B) + 2 rounds."""
    strengths = strengths_of(num_bots)
    rounds = math.ceil(math.log2(num_bots)) + 2
    out: dict[str, list[float]] = {"s": [], "r": [], "sf": [], "rf": []}
    matches = 0
    for rep in range(reps):
        for name, swiss in (("s", True), ("r", False)):
            o = run_design(np.random.default_rng([seed, num_bots, k, rep, int(swiss)]), strengths, k, rounds, swiss)
            matches = len(o.results)
            out[name].append(rho(o.order, strengths))
            if fit:
                out[name + "f"].append(rho(fit_order(o.results), strengths))
    return Comparison(num_bots, k, rounds, matches, out["s"], out["r"], out["sf"], out["rf"])


def _mean_se(xs: Sequence[float]) -> str:
    if not xs:
        return "-"
    a = np.asarray(xs)
    se = float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else 0.0
    return f"{a.mean():.3f} +/- {se:.3f}"


def _share(a: Sequence[float], b: Sequence[float]) -> str:
    return f"{np.mean([x >= y for x, y in zip(a, b)]):.0%}" if a else "-"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--seats", type=int, default=4)
    p.add_argument("--bots", type=int, nargs="+", default=[16, 24, 32])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-fit", action="store_true", help="skip the batch fit's order")
    args = p.parse_args(argv)
    head = ("B", "k", "rounds", "matches/design", "rho swiss", "rho random", "swiss>=random",
            "rho fit swiss", "rho fit random", "fit swiss>=random")
    print(" | ".join(head))
    for b in args.bots:
        c = compare(b, args.seats, args.reps, args.seed, fit=not args.no_fit)
        row = (str(c.num_bots), str(c.k), str(c.rounds), str(c.matches), _mean_se(c.swiss), _mean_se(c.random),
               _share(c.swiss, c.random), _mean_se(c.swiss_fit), _mean_se(c.random_fit),
               _share(c.swiss_fit, c.random_fit))
        print(" | ".join(row), flush=True)
    print(f"({args.reps} repetitions each; Elo 0..{ELO_SPAN:.0f} evenly spaced; Spearman rho vs true order)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
