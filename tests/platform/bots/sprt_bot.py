"""Test bot for ``arena sprt``: one NAME ("sprtbot" unless --name says otherwise) at two strengths, each reporting
its own version in GetInfo, so the same bot NAME can be registered as a weak and a strong version:
``--bot-version 1 --play random`` (the random sample bot's play) or ``--bot-version 2 --play heuristic`` (the
heuristic sample bot's play)."""

from __future__ import annotations

import argparse
import sys

from arena_sdk import serve
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.random_bot import RandomBot

if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--bot-version", default="1")
    parser.add_argument("--play", choices=("random", "heuristic"), default="random")
    ours, rest = parser.parse_known_args(sys.argv[1:])
    base = RandomBot if ours.play == "random" else HeuristicBot
    bot_class = type("SprtBot", (base,), {"name": "sprtbot", "version": ours.bot_version, "author": "arena tests"})
    serve(bot_class, rest)
