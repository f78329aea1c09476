"""Taki engine speed: complete games per second with uniformly random legal players (pure Python, one core).

Each game: a fresh seed, then until the game is over the pending seat asks ``legal_actions`` and picks one at
random. Two random players:

* ``plays`` (default): uniformly among the legal plays (every card and declaration variant, Breaker answers
  included) when there is one, else the one other action (draw, or end the run / the King turn). This is the
  usual "random legal player" of card-game benchmarks; four-seat games take about 100 decisions.
* ``uniform`` (``--uniform``): uniformly among all legal actions, drawing included (drawing is legal at almost
  every turn start, so games run to ~900 decisions and often to the turn cap).

Prints games/s (wall clock), decisions/s, the mean number of decisions per game, and games per CPU second of
this process (steadier than wall clock when other work shares the machine), at 2, 4 and 10 seats. A script
that measures and prints, never a timed test.

Usage: python tools/bench_taki.py [--seconds S] [--seats 2,4,10] [--uniform] [--stairs] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))

from arena_sdk.games.taki import rules
from arena_sdk.games.taki.state import Draw, EndTurn, TakiConfig


def random_game(num_players: int, rnd: random.Random, config: TakiConfig, uniform: bool) -> int:
    """Play one complete game with random legal actions; returns the number of decisions taken."""
    state = rules.new_game(num_players, config, seed=rnd.getrandbits(64))
    pending_seats, legal_actions, apply, rand = rules.pending_seats, rules.legal_actions, rules.apply, rnd.random
    draw_or_end = (Draw, EndTurn)
    decisions = 0
    while True:
        seats = pending_seats(state)
        if not seats:
            return decisions
        seat = seats[0]
        legal = legal_actions(state, seat)
        # legal_actions lists the plays first and Draw / EndTurn (at most one of them) last.
        if not uniform and len(legal) > 1 and type(legal[-1]) in draw_or_end:
            legal = legal[:-1]
        state = apply(state, seat, legal[int(rand() * len(legal))])  # uniform pick, cheaper than rnd.choice
        decisions += 1


def bench(num_players: int, seconds: float, config: TakiConfig, uniform: bool) -> dict:
    rnd = random.Random(num_players)
    games = decisions = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < seconds:
        decisions += random_game(num_players, rnd, config, uniform)
        games += 1
    cpu = time.process_time() - cpu_start
    return {
        "seats": num_players,
        "stairs": config.stairs,
        "player": "uniform" if uniform else "plays",
        "games": games,
        "seconds": round(elapsed, 2),
        "games_per_s": round(games / elapsed, 1),
        "decisions_per_s": round(decisions / elapsed),
        "decisions_per_game": round(decisions / games, 1),
        "cpu_seconds": round(cpu, 2),
        "games_per_cpu_s": round(games / cpu, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per seat count (default 3)")
    parser.add_argument("--seats", default="2,4,10", help="comma-separated seat counts (default 2,4,10)")
    parser.add_argument("--uniform", action="store_true", help="pick uniformly among all legal actions")
    parser.add_argument("--stairs", action="store_true", help="play the stairs variant")
    parser.add_argument("--json", action="store_true", help="print one JSON object per line")
    args = parser.parse_args()
    config = TakiConfig(stairs=args.stairs)
    for seats in (int(s) for s in args.seats.split(",")):
        result = bench(seats, args.seconds, config, args.uniform)
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            print(
                f"taki{' stairs' if args.stairs else ''} ({result['player']} player) {seats:2d} seats: "
                f"{result['games_per_s']:8.1f} games/s "
                f"{result['decisions_per_s']:8d} decisions/s  ({result['decisions_per_game']} decisions/game, "
                f"{result['games']} games in {result['seconds']} s; {result['games_per_cpu_s']} games per CPU s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
