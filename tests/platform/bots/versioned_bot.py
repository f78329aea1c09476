"""Test bot for the bot lifecycle: an SDK bot whose GetInfo reports the version and games given on the command
line (``--bot-version 2.0``, ``--games take5,taki``); it plays the lowest card of its hand, after ``--think S``
seconds (default 0), with the name it reports (``--name``) as the decision's note."""

from __future__ import annotations

import argparse
import sys
import time

from arena_sdk import Take5Bot, Take5View, TakiBot, serve


class VersionedBot(Take5Bot, TakiBot):  # both games' bot classes, so it may claim either (--games)
    name = "versioned"
    version = "1.0"
    author = "arena tests"

    think_s = 0.0
    reported = "versioned"

    def choose_card(self, view: Take5View) -> int:
        time.sleep(self.think_s)
        self.note(self.reported)
        return min(view.hand)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--bot-version", default="1.0")
    parser.add_argument("--games", default="take5")
    parser.add_argument("--think", type=float, default=0.0)
    ours, rest = parser.parse_known_args(sys.argv[1:])
    VersionedBot.think_s = ours.think
    if "--name" in rest:
        VersionedBot.reported = rest[rest.index("--name") + 1]
    VersionedBot.version = ours.bot_version
    VersionedBot.games = tuple(g for g in ours.games.split(",") if g)
    serve(VersionedBot, rest)
