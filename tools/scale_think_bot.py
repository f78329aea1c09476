"""A bot for the in-flight measurement (``tools/scale_inflight.py``): it answers every decision with a random legal
action after a fixed think time (``--think-ms``, default 500 ms), sleeping, so it holds a serving thread (or a
stream handler) for that long without using CPU. A process serves every seat of every match it is given.

    python tools/scale_think_bot.py --port 0 --think-ms 500 --max-workers 1024
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena_sdk import Take5View, serve  # noqa: E402
from sample_bots.random_bot import RandomBot  # noqa: E402


class ThinkBot(RandomBot):
    """``RandomBot``'s answers, each after ``think_ms`` milliseconds of sleep."""

    name = "think"

    def __init__(self, seed: int | None = None, think_ms: float = 500.0) -> None:
        super().__init__(seed)
        self.think_s = think_ms / 1000

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--think-ms", type=float, default=500.0, help="think time of every decision, ms")

    def choose_card(self, view: Take5View) -> int:
        time.sleep(self.think_s)
        return super().choose_card(view)

    def choose_row(self, view: Take5View) -> int:
        time.sleep(self.think_s)
        return super().choose_row(view)


if __name__ == "__main__":
    serve(ThinkBot)
