"""A uniformly random bot for ANY registered game, built from the game registry alone (the conformance tests'
bot): ``python any_random_bot.py --game taki --seed 3 --port 0``. Each decision method of the game's bot class
answers a seeded-random choice among ``Game.view_legal_actions(view)``."""

from __future__ import annotations

import argparse
import random
from typing import Any

from arena_sdk import MatchInfo, get_game, serve


def random_bot_class(game_id: str) -> type:
    """A bot class of ``game_id`` whose every decision is a random legal action (seeded per match and seat)."""
    game = get_game(game_id)

    def _decide(self: Any, view: Any) -> Any:
        return game.answer_of(self.rng.choice(game.view_legal_actions(view)))

    def _init(self: Any, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def _on_start(self: Any, match: MatchInfo) -> None:
        self.rng = random.Random(f"{self.seed}:{match.match_id}:{match.seat}")

    def _add_arguments(cls: type, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seed", type=int, default=0, help="seed of the random choices")

    namespace: dict[str, Any] = {"name": f"any-random-{game_id}", "version": "1.0", "__init__": _init,
                                 "on_start": _on_start, "add_arguments": classmethod(_add_arguments)}
    namespace.update({method: _decide for method in game.decision_methods.values()})
    return type(f"AnyRandom_{game_id}", (game.bot_class,), namespace)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--game", required=True)
    known, rest = parser.parse_known_args()
    serve(random_bot_class(known.game), rest)
