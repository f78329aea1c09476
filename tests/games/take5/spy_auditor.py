"""What the spy audit (``tests/audit``) knows of Take 5's hidden information: the other seats' hands (except in the
draft, where every pick is public), the cards not dealt this hand, the seats' choices of the turn before the reveal,
the seed and the deals; the matches that exercise them, and the tests that its checks catch each leak."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from audit.spy_checks import (
    SEED_BASE,
    Call,
    GameAuditor,
    Plan,
    Run,
    TournamentPlan,
    audit_doctored,
    first_call,
    redeal,
)

from arena.match.record import MatchRecord
from arena_sdk.games import take5
from arena_sdk.pb import bot_pb2


def _take5_turns_cards(turns: Iterable[Any]) -> set[int]:
    return {c for t in turns for p in t.plays for c in (p.card, *p.taken)}


class Take5Auditor(GameAuditor):
    """Take 5: hidden are the other seats' hands (except in the draft, where every pick is public), the cards not
    dealt this hand, the seats' choices of the turn before the reveal, the seed and the deals."""

    game = "take5"
    # two rounds of 20 matches per 200 audited: its matches are quick, so the outsider reads longer
    tournament = TournamentPlan(bots=6, seats=3, rounds=2, config=take5.Take5Config(limit=1))

    def plans(self, count: int) -> list[Plan]:
        return take5_plans(count)

    def leaky_observe(self, state: Any, seat: int) -> Any:
        """Another seat's hand, hidden in a number field (its card total as that seat's penalty)."""
        view = take5.observe(state, seat)
        other = (seat + 1) % state.num_players
        penalties = list(view.hand_penalties)
        penalties[other] = sum(state.hands[other])
        return dataclasses.replace(view, hand_penalties=tuple(penalties))

    def can_leak(self, record: MatchRecord, call: Call, state: Any, decision: dict) -> bool:
        return not record.config.get("draft")

    def checker_cases(self) -> Mapping[str, Callable[[Run], None]]:
        return {"another_seats_card_and_undealt_cards": another_seats_card_and_undealt_cards,
                "a_choice_before_the_reveal": a_choice_before_the_reveal}

    def perturb(self, state: take5.Take5State, seat: int, rng: random.Random) -> take5.Take5State:
        n = state.num_players
        hands = list(state.hands)
        if not state.config.draft:
            dealt = state.dealt[-1]
            undealt = set(take5.deck(n, state.config)) - {c for h in dealt.hands for c in h} - set(dealt.rows)
            others = [o for o in range(n) if o != seat]
            pool = redeal([c for o in others for c in hands[o]] + sorted(undealt), rng)
            for o in others:
                hands[o] = tuple(sorted(pool[: len(hands[o])]))
                pool = pool[len(hands[o]):]
        chosen = tuple(None if c is None or o == seat else rng.choice(hands[o] or (c,))
                       for o, c in enumerate(state.chosen))
        blank = take5.Take5Deal()
        return dataclasses.replace(state, hands=tuple(hands), chosen=chosen, seed=rng.getrandbits(62),
                                   deals=tuple(blank for _ in state.deals), dealt=tuple(blank for _ in state.dealt))

    def view_problems(self, state: take5.Take5State, seat: int, kind: str, view: bot_pb2.Take5View,
                      record: MatchRecord, states: Sequence[Any], index: int) -> list[str]:
        problems = []
        who = f"seat {seat} (hand {state.hand_number}, turn {state.turn}, {kind})"
        table = set(view.hand) | {c for r in view.rows for c in r.cards} | {p.card for p in view.revealed}
        table |= {c for t in view.history for p in t.plays for c in (p.card, *p.taken)} | {view.resolving_card}
        shown = table | set(view.draft_pool) | {p.card for p in view.draft_picks}
        shown.discard(0)
        table.discard(0)
        own = set(state.hands[seat])
        public = {c for r in state.rows for c in r} | _take5_turns_cards(state.history)
        if state.phase == "row":
            public |= {p.card for p in state.revealed}
        dealt = state.dealt[-1]
        if state.config.draft:
            in_play = set(dealt.pool)
            public |= in_play  # the draft is played face up: the pool and every pick are public
        else:
            in_play = {c for h in dealt.hands for c in h} | set(dealt.rows)
        for card in sorted(shown - own - public):
            holder = [o for o in range(state.num_players) if card in state.hands[o]]
            if holder:
                problems.append(f"{who} sees card {card} of seat {holder[0]}'s hand")
            elif card not in in_play:
                problems.append(f"{who} sees card {card}, which was not dealt this hand")
            else:
                problems.append(f"{who} sees card {card}, which it cannot know")
        if set(view.hand) != own:
            problems.append(f"{who} is shown the hand {sorted(view.hand)}, its hand is {sorted(own)}")
        if kind == take5.CHOOSE_CARD:
            if len(view.revealed) or view.resolving_card:
                problems.append(f"{who} is shown revealed cards {[p.card for p in view.revealed]} before the reveal")
            for other, card in _choices(record).get((state.hand_number, state.turn), {}).items():
                if other != seat and card in table:
                    problems.append(f"{who} sees seat {other}'s choice {card} of this turn before the reveal")
        return problems

    def deals(self, record: MatchRecord, final: take5.Take5State) -> list[Any]:
        return [("take5", h, d.hands, d.rows, d.pool) for h, d in enumerate(final.dealt)]

    def log_deal_problems(self, record: MatchRecord, final: take5.Take5State, seat: int,
                          calls: Sequence[Call]) -> list[str]:
        problems = []
        first: dict[int, Any] = {}
        for c in calls:
            if c.method == "Decide" and c.message.seat == seat:
                first.setdefault(c.message.take5.hand_number, c.message.take5)
        for h, view in first.items():
            deal = final.dealt[h]
            if not deal.pool and view.turn == 0 and tuple(view.hand) != deal.hands[seat]:
                problems.append(f"match {record.match_id}: seat {seat}'s first view of hand {h} shows the hand "
                                f"{list(view.hand)}, the engine dealt {list(deal.hands[seat])}")
        return problems


_CHOICES: dict[int, tuple[MatchRecord, dict[tuple[int, int], dict[int, int]]]] = {}


def _choices(record: MatchRecord) -> dict[tuple[int, int], dict[int, int]]:
    """(hand, turn) -> seat -> the card it chose (Take 5), from the record's decisions (kept for the last record)."""
    cached = _CHOICES.get(id(record))
    if cached is None or cached[0] is not record:
        table: dict[tuple[int, int], dict[int, int]] = {}
        for d in record.decisions:
            if d["kind"] == take5.CHOOSE_CARD:
                table.setdefault((d["hand"], d["turn"]), {})[d["seat"]] = d["action"]["card"]
        _CHOICES.clear()
        cached = _CHOICES[id(record)] = (record, table)
    return cached[1]




# --- the matches the audit plays ---------------------------------------------------------------------------


def take5_plans(count: int) -> list[Plan]:
    """Short Take 5 games (limit 1: one hand, some longer), 2..10 seats (mostly 2-4), every variant."""
    rng = random.Random(5)
    seat_cycle = [2, 3, 2, 2, 4, 2, 3, 2, 2, 5] * 4 + [10] + [2, 3, 2, 2, 4, 2, 3, 2, 6]
    plans = []
    for i in range(count):
        options: dict[str, Any] = {"limit": 1}
        if i % 20 == 3:
            options["draft"] = True
        elif i % 10 == 6:
            options["known_cards"] = True
        elif i % 40 == 9:
            options["limit"] = 3  # several hands: turn 0 of later hands shows the previous hand's history
        plans.append(Plan(f"audit-take5-{i:04d}", "take5", seat_cycle[i % len(seat_cycle)],
                          take5.Take5Config(**options), SEED_BASE + rng.getrandbits(46)))
    return plans


# --- the checks catch each leak --------------------------------------------------------------------------------


def take5_choice(record: MatchRecord, call: Call, state: Any, d: dict) -> bool:
    """A choice of a turn after the first (one card fewer in hand: a doctored view with one more still decodes)
    in a normal game of three seats or more."""
    return (d["kind"] == take5.CHOOSE_CARD and not record.config["draft"] and len(record.seats) >= 3
            and d["turn"] >= 2)


def another_seats_card_and_undealt_cards(take5_run: Run) -> None:
    """A view showing another seat's card, or a card not dealt this hand, is caught."""
    record, call, state = first_call(take5_run, take5_choice)
    seat = call.message.seat
    other = (seat + 1) % len(record.seats)
    assert audit_doctored(take5_run, record, call, call) == []
    leaked = bot_pb2.DecideRequest()
    leaked.CopyFrom(call.message)
    leaked.take5.hand.append(state.hands[other][-1])
    problems = audit_doctored(take5_run, record, call, call.doctored(leaked))
    assert any(f"sees card {state.hands[other][-1]} of seat {other}'s hand" in p for p in problems), problems
    dealt = state.dealt[-1]
    undealt = min(set(range(1, 105)) - {c for h in dealt.hands for c in h} - set(dealt.rows))
    leaked = bot_pb2.DecideRequest()
    leaked.CopyFrom(call.message)
    leaked.take5.rows[0].cards.append(undealt)
    problems = audit_doctored(take5_run, record, call, call.doctored(leaked))
    assert any(f"sees card {undealt}, which was not dealt this hand" in p for p in problems), problems


def a_choice_before_the_reveal(take5_run: Run) -> None:
    """A view showing another seat's choice of this turn before the reveal is caught."""
    record, call, state = first_call(take5_run, take5_choice)
    seat = call.message.seat
    choice = next(d for d in record.decisions if d["kind"] == take5.CHOOSE_CARD and d["seat"] != seat
                  and (d["hand"], d["turn"]) == (state.hand_number, state.turn))
    leaked = bot_pb2.DecideRequest()
    leaked.CopyFrom(call.message)
    leaked.take5.revealed.append(bot_pb2.Take5Pick(seat=choice["seat"], card=choice["action"]["card"]))
    problems = audit_doctored(take5_run, record, call, call.doctored(leaked))
    assert any(f"sees seat {choice['seat']}'s choice {choice['action']['card']} of this turn before the reveal" in p
               for p in problems), problems


AUDITOR = Take5Auditor()
