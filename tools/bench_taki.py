"""Taki engine speed: complete games per second with uniformly random legal players (pure Python, one core).

Each game: a fresh seed, then until the game is over the pending seat picks uniformly among
``legal_actions`` (declarations and Breaker answers included). Prints games/s, decisions/s and the mean number
of decisions per game at 2, 4 and 10 seats. A script that measures and prints, never a timed test.

Usage: python tools/bench_taki.py [--seconds S] [--seats 2,4,10] [--stairs] [--json]
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

from arena_sdk.games.taki import rules  # noqa: E402
from arena_sdk.games.taki.state import TakiConfig  # noqa: E402


def random_game(num_players: int, rnd: random.Random, config: TakiConfig) -> int:
    """Play one complete game with random legal actions; returns the number of decisions taken."""
    state = rules.new_game(num_players, config, seed=rnd.getrandbits(64))
    pending_seats, legal_actions, apply, choice = rules.pending_seats, rules.legal_actions, rules.apply, rnd.choice
    decisions = 0
    while True:
        seats = pending_seats(state)
        if not seats:
            return decisions
        seat = seats[0]
        state = apply(state, seat, choice(legal_actions(state, seat)))
        decisions += 1


def bench(num_players: int, seconds: float, config: TakiConfig) -> dict:
    rnd = random.Random(num_players)
    games = decisions = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        decisions += random_game(num_players, rnd, config)
        games += 1
    return {
        "seats": num_players,
        "stairs": config.stairs,
        "games": games,
        "seconds": round(elapsed, 2),
        "games_per_s": round(games / elapsed, 1),
        "decisions_per_s": round(decisions / elapsed),
        "decisions_per_game": round(decisions / games, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per seat count (default 3)")
    parser.add_argument("--seats", default="2,4,10", help="comma-separated seat counts (default 2,4,10)")
    parser.add_argument("--stairs", action="store_true", help="play the stairs variant")
    parser.add_argument("--json", action="store_true", help="print one JSON object per line")
    args = parser.parse_args()
    config = TakiConfig(stairs=args.stairs)
    for seats in (int(s) for s in args.seats.split(",")):
        result = bench(seats, args.seconds, config)
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            print(
                f"taki{' stairs' if args.stairs else ''} {seats:2d} seats: {result['games_per_s']:8.1f} games/s "
                f"{result['decisions_per_s']:8d} decisions/s  ({result['decisions_per_game']} decisions/game, "
                f"{result['games']} games in {result['seconds']} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
