"""The A/B test measurement (``make ab-tests``): matches until the SPRT decides and its error rates, for
(a) the SPRT against a field, (b) the head-to-head SPRT and (c) the paired test with house bots and common random
numbers, for Take 5 and Taki, for a pair of versions with a small and one with a large strength difference.

    python tools/ab_tests.py                  # the default run: a few minutes on 2 cores
    python tools/ab_tests.py --blocks 600     # more measured blocks per mode and pair

**Versions.** V1 and V2 are the game's sample heuristic that plays a uniformly random legal answer instead with
probability p, drawn from the SDK's per-decision generator (``Bot.rng``, seeded from the seat seed), so that common
random numbers reach them: "rule", one rule changed, both p = 0.05 (Take 5: V1 takes the row with the fewest cards
on rule 4 instead of the fewest bullheads; Taki: V1 keeps no belief of the colours the other seats lack); Taki only,
both p = 0.05 and one rule changed: "keep", V1 without the bonus for rescue cards still held, "stack", V1 never
answers a +2 stack (it draws it); "small", V1 p = 0.15, V2 p = 0.05; "large", V1 p = 1 (random play), V2 p = 0 (the
heuristic).

**Modes**, one block = two games on one deal (played in process, ``arena_sdk.play_game``, as the arena's workers
would play them, the block plan as in ``arena.tournaments.sprt_plan``):

* (a) field: 4 seats, V1 at seat s of one table and V2 at seat s of the other, s rotating; the other seats held by
  two groups of field bots of equal make-up (heuristics with p = 0, 0.3, 0.6), one group per table; every seat of
  every table gets seeds of its own (no common random numbers);
* (b) head to head: 2 seats, V1 against V2 and V2 against V1 on the same deal, seeds of their own;
* (c) paired: 4 seats, the house bots ``house:heuristic``, ``house:heuristic``, ``house:random`` in the other seats
  in this order (``--house``: one house bot per seat besides V1's), V1's seat s rotating, both tables with the same
  seat seeds (``arena.core.seeds.local_seat_seeds`` of the block's seed): the same scenario for V1 and V2.

**The SPRT on the measured outcome distribution.** Each mode gives, per pair, the empirical distribution of its
block outcomes h (``arena.ratings.sprt.block_outcome``). Its true difference as that mode sees it is the
distribution's Elo estimate (``arena.ratings.sprt.estimate``; head to head with its own model); the test is
elo0 = 0 against elo1 = that estimate, alpha = beta = 5 %, so every mode tests "V2 is better by what it is" against
"it is not better". 2,000 SPRTs per case draw blocks from the empirical distribution (bootstrap) until the LLR
leaves Wald's bounds (``arena.ratings.sprt.llr_counts``): their mean block count (times 2: matches) and their
false-negative rate; and 2,000 draw from the distribution tilted exponentially to mean mu(elo0) (the closest
distribution under H0): their false-positive rate (``--sims`` SPRTs each; standard error of a 5 % rate: 0.5 point
at 2,000). The progress lines also give the mean overshoot of the LLR beyond Wald's bound at the verdict.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from arena.core.seeds import local_seat_seeds
from arena.ratings import score_sprt, sprt
from arena.ratings.sprt import SprtState, block_outcome
from arena_sdk import play_game
from arena_sdk.games import GAMES
from arena_sdk.games.take5 import Take5View
from arena_sdk.games.taki.bot import legal_actions
from arena_sdk.games.taki.state import Draw, PlayCard
from arena_sdk.rng import entropy_seed
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.random_bot import RandomBot
from sample_bots.taki_heuristic_bot import DEFAULT_WEIGHTS, TakiHeuristicBot
from sample_bots.taki_random_bot import TakiRandomBot

# (V1, V2) as (p, variant): "" the heuristic with noise p; "rule" the same with one rule changed (Take 5: on
# rule 4 take the row with the fewest cards, not the fewest bullheads; Taki: no colour tracking of the other seats);
# "keep" (Taki only): V1 without the bonus for rescue cards still held (King, Change Color, +3 Breaker, +3, SuperTaki);
# "stack" (Taki only): V1 never answers a +2 stack (it draws the stack where it would have played a +2 or a King)
PAIRS = {"rule": ((0.05, "rule"), (0.05, "")), "small": ((0.15, ""), (0.05, "")), "large": ((1.0, ""), (0.0, "")),
         "keep": ((0.05, "keep"), (0.05, "")), "stack": ((0.05, "stack"), (0.05, ""))}
TAKI_ONLY = ("keep", "stack")  # pairs with a Taki rule only
FIELD = (0.0, 0.3, 0.6)
MODES = ("field", "head-to-head", "paired")
SIM_TESTS = 2000
MAX_SIM_BLOCKS = 20_000


class NoisyTake5(HeuristicBot):
    """The Take 5 heuristic playing a random card with probability ``p``, drawn from the SDK's ``self.rng``;
    variant "rule": on rule 4 it takes the row with the fewest cards (lowest index on ties)."""

    def __init__(self, p: float, variant: str = "") -> None:
        self.p, self.variant = p, variant

    def choose_row(self, view: Take5View) -> int:
        if self.variant == "rule":
            return min(range(len(view.rows)), key=lambda r: (len(view.rows[r]), r))
        return super().choose_row(view)

    def choose_card(self, view: Take5View) -> int:
        if self.rng.random() < self.p:
            return self.rng.choice(view.hand)
        return super().choose_card(view)


class NoisyTaki(TakiHeuristicBot):
    """The Taki heuristic playing a random legal action with probability ``p``, drawn from ``self.rng``; variant
    "rule": without its belief of which colours the other seats lack (``track_colors`` off); variant "keep":
    without the bonus for rescue cards still held (``Weights.keep`` empty), so it spends a King, Change Color, +3
    or SuperTaki whenever that play scores as well as a plain card, instead of holding it; variant "stack": facing
    a +2 stack it draws the stack where the heuristic would answer it with a +2 or a King."""

    def __init__(self, p: float, variant: str = "") -> None:
        super().__init__()
        self.p, self.variant = p, variant
        self.track_colors = variant != "rule"
        if variant == "keep":
            self.weights = replace(DEFAULT_WEIGHTS, keep=())

    def take_turn(self, view):  # type: ignore[no-untyped-def]
        self._feed(view)
        if self.rng.random() < self.p:
            return self.rng.choice(legal_actions(view))
        action = super().take_turn(view)
        if self.variant == "stack" and view.stack and isinstance(action, PlayCard) and Draw() in view.legal:
            return Draw()
        return action


def noisy(game: str, version: tuple[float, str]):  # type: ignore[no-untyped-def]
    p, variant = version
    return NoisyTake5(p, variant) if game == "take5" else NoisyTaki(p, variant)


HOUSE = ("heuristic", "heuristic", "random")  # the paired mode's house bots, seats in order (--house)


def house(game: str):  # type: ignore[no-untyped-def]
    kinds = {"heuristic": HeuristicBot, "random": RandomBot} if game == "take5" else {
        "heuristic": TakiHeuristicBot, "random": TakiRandomBot}
    return [kinds[name]() for name in HOUSE]


def ranks(game: str, bots: list, deal: int, seat_seeds: Sequence[int], match_id: str) -> tuple[int, ...]:  # type: ignore[type-arg]
    return play_game(bots, seed=deal, seat_seeds=tuple(seat_seeds), match_id=match_id, game=game).ranks


def block(args: tuple[str, str, str, int]) -> tuple[int, float | None]:
    """One block of ``mode`` for ``pair``, block number ``b``: its outcome h (half points of V2 over V1) and, in the
    paired mode, its relative-score difference (else None): at each table, how far V's final score is better than
    the mean of the other seats' (in the game's score units, the sign of ``lower_score_is_better`` taken out), V2's
    table minus V1's. The SPRT uses h; the other is printed for comparison (``--modes paired``)."""
    game, pair, mode, b = args
    p1, p2 = PAIRS[pair]
    deal = 1_000_003 * b + 17
    if mode == "head-to-head":
        r0 = ranks(game, [noisy(game, p1), noisy(game, p2)], deal, [entropy_seed(), entropy_seed()], "t0")
        r1 = ranks(game, [noisy(game, p2), noisy(game, p1)], deal, [entropy_seed(), entropy_seed()], "t1")
        return block_outcome(r0, r1, 0), None
    s = b % 4
    if mode == "field":
        tables = []
        for p in (p1, p2):
            others = iter([noisy(game, (q, "")) for q in FIELD])
            bots = [noisy(game, p) if seat == s else next(others) for seat in range(4)]
            tables.append(ranks(game, bots, deal, [entropy_seed() for _ in range(4)], "t"))
        return block_outcome(tables[0], tables[1], s), None
    k = len(HOUSE) + 1  # paired: the same scenario, seat seeds included, at both tables; V1's seat rotates
    s = b % k
    seeds = local_seat_seeds(deal, k)
    results = []
    for p in (p1, p2):
        others = iter(house(game))
        bots = [noisy(game, p) if seat == s else next(others) for seat in range(k)]
        results.append(play_game(bots, seed=deal, seat_seeds=tuple(seeds), match_id="t", game=game))
    sign = -1.0 if GAMES[game].info.lower_score_is_better else 1.0
    ahead = [sign * (r.scores[s] - (sum(r.scores) - r.scores[s]) / (k - 1)) for r in results]
    return block_outcome(results[0].ranks, results[1].ranks, s), ahead[1] - ahead[0]


def information(values: Sequence[float]) -> float:
    """(mean / sd)^2 of a block statistic: the information per block about its sign; the blocks a test needs to
    decide scale as its inverse. nan for fewer than 2 blocks or no spread."""
    x = np.asarray(values, dtype=float)
    return float((x.mean() / x.std()) ** 2) if x.size > 1 and x.std() > 0 else math.nan


def tilt(freqs: np.ndarray, values: np.ndarray, mu: float) -> np.ndarray:
    """``freqs`` tilted exponentially (p_i proportional to f_i e^(t a_i)) to mean ``mu`` (bisection on t)."""
    lo, hi = -200.0, 200.0
    for _ in range(200):
        t = (lo + hi) / 2
        w = freqs * np.exp(t * (values - values.max() if t > 0 else values - values.min()))
        mean = float((w * values).sum() / w.sum())
        lo, hi = (t, hi) if mean < mu else (lo, t)
    return w / w.sum()


def simulate(probs: np.ndarray, seats: int, elo1: float, h2h: bool, rng: np.random.Generator,
             tests: int = SIM_TESTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``tests`` SPRTs (elo0 0, elo1, 5 %/5 %) drawing blocks from ``probs``: (verdicts +1/-1/0, blocks, the LLR
    at the end: beyond Wald's bound by its overshoot)."""
    return _run(probs, lambda counts: sprt.llr_counts(counts, seats, 0.0, elo1, head_to_head=h2h), rng, tests)


def simulate_score(probs: np.ndarray, nelo1: float, rng: np.random.Generator,
                   tests: int = SIM_TESTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``tests`` SPRTs of the paired test on the relative score (``arena.ratings.score_sprt``: nelo0 0, ``nelo1``,
    5 %/5 %) drawing blocks from the trinomial ``probs`` (V2 worse, alike, better): as ``simulate``."""
    return _run(probs, lambda counts: score_sprt.llr_counts(counts, 0.0, nelo1), rng, tests)


def _run(probs: np.ndarray, llr_of: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator,
         tests: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``tests`` SPRTs side by side, one block per step drawn from ``probs`` (a category per block), each stopped
    when ``llr_of`` its counts (tests, categories) leaves Wald's bounds at 5 %/5 %."""
    width = len(probs)
    counts = np.zeros((tests, width))
    verdict = np.zeros(tests, dtype=int)
    blocks = np.zeros(tests, dtype=int)
    final = np.zeros(tests)
    lower, upper = sprt.bounds(0.05, 0.05)
    running = np.arange(tests)
    for _ in range(MAX_SIM_BLOCKS):
        if running.size == 0:
            break
        counts[running, rng.choice(width, size=running.size, p=probs)] += 1
        blocks[running] += 1
        llr = llr_of(counts[running])
        decided = np.where(llr >= upper, 1, np.where(llr <= lower, -1, 0))
        verdict[running] = decided
        final[running] = llr
        running = running[decided == 0]
    return verdict, blocks, final


def case_score(outcomes: list[float], rng: np.random.Generator, tests: int = SIM_TESTS) -> dict[str, float]:
    """The paired test on the relative score (``arena.ratings.score_sprt``) on the measured block outcomes d: its
    true difference is the nElo estimate of their signs; SPRTs with nelo0 = 0 and nelo1 = that estimate on the
    empirical trinomial (false negatives) and on it tilted exponentially to no difference, P(worse) = P(better)
    (false positives)."""
    state = score_sprt.ScoreState.of(Counter(outcomes))
    worse, alike, better = score_sprt.sign_counts(state)
    n = state.blocks
    probs = np.array([worse, alike, better], dtype=float) / n
    nelo, margin = score_sprt.estimate(state)
    out = {"measured": n, "elo": nelo, "margin": margin, "zero": alike / n, "better": better / n, "worse": worse / n}
    if not math.isfinite(nelo) or nelo <= 0 or worse == 0:
        out.update(matches=math.nan, fn=math.nan, fp=math.nan)
        return out
    k = 0.5 * math.log(probs[0] / probs[2])  # the tilt p_i e^(k a_i) with equal worse and better
    null = probs * np.exp(k * score_sprt.SIGNS)
    out.update(rates(simulate_score(probs, nelo, rng, tests), simulate_score(null / null.sum(), nelo, rng, tests)))
    return out


def rates(under_h1: tuple[np.ndarray, np.ndarray, np.ndarray],
          under_h0: tuple[np.ndarray, np.ndarray, np.ndarray]) -> dict[str, float]:
    """The figures of simulated SPRTs (``simulate``'s verdicts, blocks, final LLRs) on the measured distribution
    (``under_h1``) and on it tilted to no difference (``under_h0``): matches to decide (2 per block), false-negative
    and false-positive rates (with the latter's standard error), undecided shares and mean overshoots."""
    verdict1, blocks1, final1 = under_h1
    verdict0, blocks0, final0 = under_h0
    fp = float(np.mean(verdict0 == 1))
    return dict(matches=2 * float(blocks1.mean()), fn=float(np.mean(verdict1 == -1)), fp=fp,
                fp_se=math.sqrt(fp * (1 - fp) / verdict0.size), matches_h0=2 * float(blocks0.mean()),
                undecided=float(np.mean(verdict1 == 0)), undecided_h0=float(np.mean(verdict0 == 0)),
                overshoot=overshoot(verdict1, final1), overshoot_h0=overshoot(verdict0, final0))


def overshoot(verdict: np.ndarray, final: np.ndarray) -> float:
    """Mean LLR beyond Wald's bound at the verdict, over the decided tests (natural log units)."""
    lower, upper = sprt.bounds(0.05, 0.05)
    over = np.where(verdict == 1, final - upper, lower - final)[verdict != 0]
    return float(over.mean()) if over.size else math.nan


def case(game: str, pair: str, mode: str, outcomes: list[int], rng: np.random.Generator,
         tests: int = SIM_TESTS) -> dict[str, float]:
    seats = 2 if mode == "head-to-head" else len(HOUSE) + 1 if mode == "paired" else 4
    h2h = mode == "head-to-head"
    m = 2 * (seats - 1)
    state = SprtState(seats, tuple(outcomes.count(h) for h in range(-m, m + 1)))
    elo, margin = sprt.estimate(state, head_to_head=h2h)
    freqs = np.array(state.counts, dtype=float) / state.blocks
    values = (np.arange(2 * m + 1) - m) / m
    out = {"measured": state.blocks, "elo": elo, "margin": margin,
           "zero": outcomes.count(0) / len(outcomes), "sd": float(np.std(np.array(outcomes) / m))}
    if not math.isfinite(elo) or elo <= 0:
        out.update(matches=math.nan, fn=math.nan, fp=math.nan)
        return out
    null = tilt(freqs, values, sprt.expected_outcome(0.0, h2h))
    out.update(rates(simulate(freqs, seats, elo, h2h, rng, tests), simulate(null, seats, elo, h2h, rng, tests)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    global HOUSE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=300, help="measured blocks per game, pair and mode")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--games", default="take5,taki")
    parser.add_argument("--pairs", default=",".join(PAIRS), help="version pairs: " + ", ".join(PAIRS))
    parser.add_argument("--modes", default=",".join(MODES), help="modes: " + ", ".join(MODES))
    parser.add_argument("--house", default=",".join(HOUSE),
                        help="the paired mode's house bots (heuristic, random), one per seat besides V1's")
    parser.add_argument("--sims", type=int, default=SIM_TESTS,
                        help="simulated SPRTs per error rate (standard error of a 5 %% rate: 0.5 point at 2,000)")
    args = parser.parse_args(argv)
    HOUSE = tuple(args.house.split(","))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    rng = np.random.default_rng(20261203)
    rows = []
    t0 = time.time()
    with ProcessPoolExecutor(args.workers) as pool:
        for game in args.games.split(","):
            for pair in args.pairs.split(","):
                if game != "taki" and pair in TAKI_ONLY:
                    continue
                for mode in args.modes.split(","):
                    jobs = [(game, pair, mode, b) for b in range(args.blocks)]
                    played = list(pool.map(block, jobs, chunksize=8))
                    outcomes = [h for h, _ in played]
                    result = case(game, pair, mode, outcomes, rng, args.sims)
                    m = 2 if mode == "head-to-head" else 2 * len(HOUSE) if mode == "paired" else 6
                    scores = [r for _, r in played if r is not None]
                    print(f"{game:5} {pair:5} {mode:12} information per block, (mean/sd)^2: pairwise points "
                          f"{information([h / m for h in outcomes]):.5f}"
                          + (f", relative score {information(scores):.5f}, its sign "
                             f"{information(np.sign(scores).tolist()):.5f}" if scores else ""), flush=True)
                    rows.append((game, pair, mode, result))
                    if scores:
                        scored = case_score(scores, rng, args.sims)
                        rows.append((game, pair, "paired score", scored))
                        print(f"{game:5} {pair:5} paired score: V2 better in {100 * scored['better']:.1f} %, alike "
                              f"{100 * scored['zero']:.1f} %, worse {100 * scored['worse']:.1f} % of the blocks; "
                              f"nElo {scored['elo']:+.0f} ± {scored['margin']:.0f}, matches to decide "
                              f"{scored['matches']:.0f}, FN {100 * scored['fn']:.1f} %, FP {100 * scored['fp']:.1f} % "
                              f"(± {100 * scored.get('fp_se', math.nan):.1f}), undecided H1/H0 "
                              f"{100 * scored.get('undecided', math.nan):.1f}/"
                              f"{100 * scored.get('undecided_h0', math.nan):.1f} %", flush=True)
                    print(f"{game:5} {pair:5} {mode:12} measured {result['measured']} blocks: Elo "
                          f"{result['elo']:+.0f} ± {result['margin']:.0f}, identical {100 * result['zero']:.0f} %, "
                          f"matches to decide {result['matches']:.0f}, FN {100 * result['fn']:.1f} %, "
                          f"FP {100 * result['fp']:.1f} % (± {100 * result.get('fp_se', math.nan):.1f}), "
                          f"overshoot H1/H0 {result.get('overshoot', math.nan):.2f}/"
                          f"{result.get('overshoot_h0', math.nan):.2f}, undecided H1/H0 "
                          f"{100 * result.get('undecided', math.nan):.1f}/"
                          f"{100 * result.get('undecided_h0', math.nan):.1f} %  ({time.time() - t0:.0f} s)",
                          flush=True)
    print(f"\nmeasured at commit {commit}, {args.blocks} blocks per case, {args.sims} simulated SPRTs per rate\n")
    print("| game | difference | mode | Elo seen (95 %; paired score: nElo) | blocks alike | matches to decide (H1) | "
          "false negatives | false positives |")
    print("|---|---|---|---|---|---|---|---|")
    for game, pair, mode, r in rows:
        print(f"| {game} | {pair} | {mode} | {r['elo']:+.0f} ± {r['margin']:.0f} | {100 * r['zero']:.0f} % | "
              f"{r['matches']:.0f} | {100 * r['fn']:.1f} % | {100 * r['fp']:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
