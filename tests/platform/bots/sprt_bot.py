"""Test bot for ``arena sprt``: one NAME ("sprtbot" unless --name says otherwise) at two strengths, each reporting
its own version in GetInfo, so the same bot NAME can be registered as a weak and a strong version:
``--bot-version 1 --play random`` (the random sample bot's play) or ``--bot-version 2 --play heuristic`` (the
heuristic sample bot's play). ``--think-ms N`` makes it wait N ms before each card it chooses (a slower test)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from arena_sdk import serve
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.random_bot import RandomBot

if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--bot-version", default="1")
    parser.add_argument("--play", choices=("random", "heuristic"), default="random")
    parser.add_argument("--think-ms", type=float, default=0.0)
    ours, rest = parser.parse_known_args(sys.argv[1:])
    base = RandomBot if ours.play == "random" else HeuristicBot
    think_s = ours.think_ms / 1000

    def choose_card(self: Any, view: Any) -> Any:
        time.sleep(think_s)
        return base.choose_card(self, view)

    members: dict[str, Any] = {"name": "sprtbot", "version": ours.bot_version, "author": "arena tests"}
    if think_s:
        members["choose_card"] = choose_card
    bot_class = type("SprtBot", (base,), members)
    serve(bot_class, rest)
