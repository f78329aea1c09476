"""Sample bot: Monte Carlo sampling over the unseen cards (the strongest of the three sample bots).

For each card of its hand it estimates the bullheads it will take this hand. Many times, it deals the cards it has
not seen (the deck of the hand minus its own hand, the rows and this hand's played and taken cards) at random into
the other seats' hands, and plays the hand out: this turn with the candidate card, later turns with the heuristic
(``heuristic_bot.heuristic_card``) for itself, and the heuristic with a little randomness for the other seats.
Turns are resolved with the rules engine's placement (``take5.target_row``; rules 1-4, a card below every row end
taking the cheapest row). It plays the card with the lowest total. Every candidate card is scored on the same deals
and the same randomness (common random numbers), so the comparison between cards is sharp. In the draft variant
the other hands are known exactly (the draft is public) and only their choices are simulated. Rule 4 and the draft
use the base class's defaults: the cheapest row, the lowest card.

    python -m sample_bots.montecarlo_bot --port 50103 --seed 1
    python sample_bots/montecarlo_bot.py --port 0 --budget-ms 40

Limits per decision: ``--samples`` deals (default ``samples_for(view, horizon)``: about 25 ms of work whatever the
seat count and turn) and a wall-clock cap ``--budget-ms`` (default 40 ms, far below the referee's 1000 ms
deadline, so several matches can share the 2 cores). The sample count normally ends the search, so a decision is
deterministic: its random generator is the SDK's per-decision ``rng``, seeded from the seat seed (or, without one,
``--seed``; ``sample_bots.seeded``) and the decision's place (hand, turn, kind), whatever the order of calls.
Only a decision cut short by the cap (a loaded machine) depends on timing.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a file: python sample_bots/montecarlo_bot.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena_sdk import Take5Bot, Take5View, serve, target_row
from arena_sdk.games import take5
from sample_bots.heuristic_bot import BULLHEADS, heuristic_card
from sample_bots.seeded import SeededChoices

DEFAULT_BUDGET_MS = 40.0
DEFAULT_HORIZON = 10  # turns simulated per deal, the candidate card's turn included (10: to the end of the hand)
MIN_SAMPLES = 4  # samples taken even when the budget is already spent
SAMPLE_WORK = 7000  # simulated seat-turns per decision by default, see samples_for()
MAX_SAMPLES = 300  # deals at most by default (late in a hand, when a deal is cheap)
OPPONENT_NOISE = 0.1  # probability that a simulated other seat plays a random card instead of the heuristic's


def unseen_cards(view: Take5View) -> list[int]:
    """Cards of this hand's deck that ``view``'s seat has not seen: not in its hand, the rows, or this hand's
    history (played or taken), ascending. Outside the draft these are the other seats' cards plus the unused
    ones."""
    seen = set(view.hand)
    for row in view.rows:
        seen.update(row)
    for turn in view.history:
        for play in turn.plays:
            seen.add(play.card)
            seen.update(play.taken)
    seen.update(p.card for p in view.revealed)
    return [c for c in take5.deck(view.num_players, view.config) if c not in seen]


def known_hands(view: Take5View) -> dict[int, list[int]]:
    """Draft variant: every other seat's hand, exactly (its public picks minus the cards it played)."""
    hands: dict[int, list[int]] = {s: [] for s in range(view.num_players) if s != view.seat}
    for pick in view.draft_picks:
        if pick.seat in hands:
            hands[pick.seat].append(pick.card)
    for turn in view.history:
        for play in turn.plays:
            if play.seat in hands and play.card in hands[play.seat]:
                hands[play.seat].remove(play.card)
    return hands


def resolve(rows: list[list[int]], plays: Sequence[tuple[int, int]]) -> dict[int, int]:
    """Resolve one turn in place (rules 4-5): ``plays`` are (card, seat) pairs; lowest card first, each card to
    ``take5.target_row`` of the rows as the cards before left them; a sixth card takes the five (rule 3); a card
    below every row end takes the cheapest row (rule 4, the heuristic choice). Returns the bullheads each seat
    took (seats that took nothing are absent)."""
    taken: dict[int, int] = {}
    for card, seat in sorted(plays):
        index = target_row(rows, card)  # type: ignore[arg-type]
        if index is None:
            costs = [sum(BULLHEADS[c] for c in r) for r in rows]
            index = costs.index(min(costs))
            taken[seat] = taken.get(seat, 0) + costs[index]
            rows[index] = [card]
        elif len(rows[index]) >= take5.ROW_CAPACITY:
            taken[seat] = taken.get(seat, 0) + sum(BULLHEADS[c] for c in rows[index])
            rows[index] = [card]
        else:
            rows[index].append(card)
    return taken


def samples_for(view: Take5View, horizon: int) -> int:
    """Default deals for a card decision of ``view``: as many as fit ``SAMPLE_WORK`` simulated seat-turns (each
    deal simulates every candidate card, over up to ``horizon`` turns, for every seat), between ``MIN_SAMPLES``
    and ``MAX_SAMPLES``. Early in a hand (many candidates, long rollouts) that is few deals, later many more; the
    cost of a decision stays about the same (about 25 ms on the 2-core machine it was tuned on)."""
    k = len(view.hand)
    work = k * min(horizon, k) * view.num_players
    return max(MIN_SAMPLES, min(MAX_SAMPLES, SAMPLE_WORK // max(1, work)))


class MonteCarloBot(SeededChoices, Take5Bot):
    """Monte Carlo card choice over deals of the unseen cards; defaults for rule 4 and the draft.

    Constructor options (also command-line options): ``seed`` (None: not reproducible); ``samples``, deals per
    decision (None: ``samples_for``); ``budget_ms``, wall-clock cap per decision in milliseconds; ``horizon``,
    turns simulated per deal (10: to the end of the hand). Raises ``ValueError`` for samples < 1, budget_ms <= 0
    or horizon < 1.
    """

    name = "montecarlo"
    version = "1.0"
    author = "arena sample bots"

    def __init__(
        self,
        seed: int | None = None,
        samples: int | None = None,
        budget_ms: float = DEFAULT_BUDGET_MS,
        horizon: int = DEFAULT_HORIZON,
    ) -> None:
        if (samples is not None and samples < 1) or budget_ms <= 0 or horizon < 1:
            raise ValueError(
                f"montecarlo needs samples >= 1, budget_ms > 0, horizon >= 1; got {samples}, {budget_ms}, {horizon}"
            )
        self.seed = seed
        self.samples = samples
        self.budget_ms = budget_ms
        self.horizon = horizon
        self.last_samples = 0  # samples taken by the last card decision (for tests and benchmarks)

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seed", type=int, default=None,
                            help="seed of the decisions when the referee gives no seat seed (default: random)")
        parser.add_argument(
            "--samples", type=int, default=None, help="deals per decision (default: samples_for(), about 25 ms of work)"
        )
        parser.add_argument(
            "--budget-ms", type=float, default=DEFAULT_BUDGET_MS, help="time cap per decision, ms (%(default)s)"
        )
        parser.add_argument(
            "--horizon", type=int, default=DEFAULT_HORIZON, help="turns simulated per deal (%(default)s)"
        )

    def choose_card(self, view: Take5View) -> int:
        hand = list(view.hand)
        if len(hand) == 1:
            self.last_samples = 0
            return hand[0]
        started = time.perf_counter()
        deadline = started + self.budget_ms / 1000.0
        rng = self.rng  # this decision's generator, from the seat seed (arena_sdk.rng)
        others = [s for s in range(view.num_players) if s != view.seat]
        exact = known_hands(view) if view.config.draft else None
        pool = unseen_cards(view)
        k = len(hand)
        need = k * len(others)
        scores = dict.fromkeys(hand, 0)
        wanted = self.samples or samples_for(view, self.horizon)
        samples = 0
        while samples < wanted:
            if samples >= MIN_SAMPLES and time.perf_counter() > deadline:
                break
            if exact is not None:
                opp_hands = [list(exact[s]) for s in others]
            else:
                dealt = rng.sample(pool, need) if len(pool) >= need else pool + []
                opp_hands = [sorted(dealt[i * k : (i + 1) * k]) for i in range(len(others))]
            # Common random numbers: every candidate card meets the same deal and the same opponent noise.
            draws = min(self.horizon, k) * len(others)
            noise = [rng.random() for _ in range(draws)]
            picks = [rng.random() for _ in range(draws)]
            first = [self._opponent_card(noise[i], picks[i], h, view.rows) for i, h in enumerate(opp_hands)]
            for card in hand:
                scores[card] += self._rollout(view.rows, hand, card, opp_hands, first, noise, picks)
            samples += 1
        self.last_samples = samples
        return min(hand, key=lambda c: (scores[c], c))

    @staticmethod
    def _opponent_card(noise: float, pick: float, hand: Sequence[int], rows: Sequence[Sequence[int]]) -> int:
        """A simulated other seat's card: random with probability ``OPPONENT_NOISE``, else the heuristic's."""
        if noise < OPPONENT_NOISE:
            return hand[int(pick * len(hand))]
        return heuristic_card(hand, rows)

    def _rollout(
        self,
        rows: Sequence[Sequence[int]],
        hand: Sequence[int],
        card: int,
        opp_hands: Sequence[Sequence[int]],
        first: Sequence[int],
        noise: Sequence[float],
        picks: Sequence[float],
    ) -> int:
        """Bullheads this seat takes over ``horizon`` turns of one deal: ``card`` now, the heuristic afterwards.
        ``first``: the other seats' cards this turn; ``noise``/``picks``: their random draws, turn by turn."""
        me = -1
        table = [list(r) for r in rows]
        mine = [c for c in hand if c != card]
        opp = [[c for c in h if c != f] for h, f in zip(opp_hands, first)]
        plays = [(card, me)] + [(f, i) for i, f in enumerate(first)]
        cost = resolve(table, plays).get(me, 0)
        n = len(opp)
        for turn in range(1, self.horizon):
            if not mine:
                break
            mine_card = heuristic_card(mine, table)
            mine.remove(mine_card)
            plays = [(mine_card, me)]
            for i, h in enumerate(opp):
                c = self._opponent_card(noise[turn * n + i], picks[turn * n + i], h, table)
                h.remove(c)
                plays.append((c, i))
            cost += resolve(table, plays).get(me, 0)
        return cost


if __name__ == "__main__":
    serve(MonteCarloBot)
