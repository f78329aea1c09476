"""Sample bot: the classic simple heuristic.

Choose card: among the cards that simply extend a row (the target row holds fewer than 5 cards), play the one
with the smallest gap above its row end; avoid sixth cards (rule 3) and cards below every row end (rule 4). When
every card is bad, play the one taking the fewest bullheads (a rule-4 card counts the cheapest row). Rule 4: take
the cheapest row. Draft: the lowest card of the pool.

    python -m sample_bots.heuristic_bot --port 50102
    python sample_bots/heuristic_bot.py --port 0

``heuristic_card(hand, rows)`` is the whole card policy as a plain function, reused by the Monte Carlo bot to
play the other seats in its simulations.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from arena_sdk import Take5Bot, Take5View, bullheads, serve, target_row
from arena_sdk.games.take5 import DECK_SIZE, ROW_CAPACITY

BULLHEADS = (0,) + tuple(bullheads(c) for c in range(1, DECK_SIZE + 1))  # BULLHEADS[card], from the engine


def row_cost(row: Sequence[int]) -> int:
    """Bullheads in ``row``."""
    return sum(BULLHEADS[c] for c in row)


def card_cost(rows: Sequence[Sequence[int]], card: int) -> tuple[bool, int]:
    """How ``card`` fares if it resolved now: ``(safe, value)``.

    Safe (rules 1-2, the target row holds fewer than 5 cards): value = gap between the card and the row end.
    Bad: value = bullheads taken, the full row on rule 3, the cheapest row on rule 4.
    """
    index = target_row(rows, card)  # type: ignore[arg-type]
    if index is None:
        return False, min(row_cost(r) for r in rows)
    row = rows[index]
    if len(row) >= ROW_CAPACITY:
        return False, row_cost(row)
    return True, card - row[-1]


def heuristic_card(hand: Sequence[int], rows: Sequence[Sequence[int]]) -> int:
    """The card of ``hand`` the heuristic plays on ``rows``: the smallest gap to a non-full row end, else the card
    taking the fewest bullheads (``card_cost``; lowest card on ties). Raises ``ValueError`` on an empty hand.

    Only the lowest card going to each row can be best (a higher card to the same row has a larger gap and the
    same cost), so the rules engine's ``target_row`` is asked about at most five cards, not the whole hand.
    """
    if not hand:
        raise ValueError("heuristic_card needs a non-empty hand")
    cards = sorted(hand)
    best_safe: tuple[int, int] | None = None
    bad: list[tuple[int | None, int]] = []  # (row taken, None for rule 4; card), costed only if nothing is safe
    if target_row(rows, cards[0]) is None:  # rule 4 for the lowest card: it takes the cheapest row
        bad.append((None, cards[0]))
    for index, row in enumerate(rows):
        position = bisect_right(cards, row[-1])
        if position == len(cards):
            continue
        card = cards[position]  # the lowest card above this row end ...
        if target_row(rows, card) != index:  # ... goes to a higher row end: no card of the hand goes here
            continue
        if len(row) < ROW_CAPACITY:
            if best_safe is None or (card - row[-1], card) < best_safe:
                best_safe = (card - row[-1], card)
        else:
            bad.append((index, card))
    if best_safe is not None:
        return best_safe[1]
    costs = [row_cost(r) for r in rows]
    return min((min(costs) if index is None else costs[index], card) for index, card in bad)[1]


class HeuristicBot(Take5Bot):
    """Smallest gap to a non-full row end; cheapest row on rule 4 (the base class's default)."""

    name = "heuristic"
    version = "1.0"
    author = "arena sample bots"

    def choose_card(self, view: Take5View) -> int:
        return heuristic_card(view.hand, view.rows)


if __name__ == "__main__":
    serve(HeuristicBot)
