"""A Take 5 bot that plays as badly as it can see to: the card taking the most bullheads now (a rule-4 card counts
the cheapest row; highest card on ties), and on rule 4 the row with the most bullheads. Against the sample bots it
loses nearly every 2-seat game, so tournaments between them have a known strength order:
``python worst_bot.py --port 0``."""

from __future__ import annotations

from arena_sdk import Take5Bot, Take5View, serve


class WorstBot(Take5Bot):
    name, version = "worst", "1.0"

    def choose_card(self, view: Take5View) -> int:
        def cost(card: int) -> tuple[int, int]:
            taken = view.penalty(card)
            return (min(map(view.row_bullheads, range(4))) if taken is None else taken), card

        return max(view.hand, key=cost)

    def choose_row(self, view: Take5View) -> int:
        return max(range(len(view.rows)), key=view.row_bullheads)


if __name__ == "__main__":
    serve(WorstBot)
