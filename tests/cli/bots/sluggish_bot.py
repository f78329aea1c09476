"""The sample random bot, slowed down: it sleeps ``--sleep`` seconds (default 0.2) before every card, so a game
lasts long enough to interrupt. On every card it touches the file ``<--marker-dir>/<its pid>`` (default: the
environment variable SLUGGISH_MARKER_DIR, for bots that `arena play` starts), so a test knows the game is under
way and which process to look for."""

import argparse
import os
import sys
import time
from pathlib import Path

from arena_sdk import Take5View, serve
from sample_bots.random_bot import RandomBot


class SluggishBot(RandomBot):
    name = "sluggish"
    marker_dir: str | None = None
    sleep_s = 0.2

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--marker-dir", default=os.environ.get("SLUGGISH_MARKER_DIR"))
        parser.add_argument("--sleep", type=float, default=0.2)

    def __init__(self, seed: int | None = None, marker_dir: str | None = None, sleep: float = 0.2) -> None:
        super().__init__(seed)
        self.marker_dir = marker_dir
        self.sleep_s = sleep

    def choose_card(self, view: Take5View) -> int:
        if self.marker_dir:
            Path(self.marker_dir, str(os.getpid())).touch()
        time.sleep(self.sleep_s)
        return super().choose_card(view)


if __name__ == "__main__":
    serve(SluggishBot, sys.argv[1:])
