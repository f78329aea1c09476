"""Test bot: the sample random Take 5 bot that attaches a note to every answer (``Bot.note``): its hand and the
card it plays, with a control character; all but every tenth note are far longer than a note may be."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from arena_sdk import Take5View, serve  # noqa: E402
from sample_bots.random_bot import RandomBot  # noqa: E402


class NotingBot(RandomBot):
    name = "noting"
    calls = 0

    def choose_card(self, view: Take5View) -> int:
        card = super().choose_card(view)
        self.calls += 1
        text = f"hand {list(view.hand)} plays {card}\x1b"
        self.note(text if self.calls % 10 == 0 else text * 100)
        return card

    def choose_row(self, view: Take5View) -> int:
        row = super().choose_row(view)
        self.note(f"rule 4: row {row}")
        return row


if __name__ == "__main__":
    serve(NotingBot)
