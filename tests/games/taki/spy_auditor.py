"""What the spy audit (``tests/audit``) knows of Taki's hidden information: the other seats' hands, the draw pile
(order and contents), the seed and the deal, and which seat was asked about a +3 Breaker (``breaker_problems``); the
matches that exercise them, and the tests that its checks catch each leak."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from audit.spy_checks import (
    SEED_BASE,
    Call,
    Counts,
    GameAuditor,
    Plan,
    Run,
    TournamentPlan,
    audit_doctored,
    diff,
    first_call,
    redeal,
    replay_states,
)

from arena.match.record import MatchRecord
from arena_sdk import wire
from arena_sdk.games import GAMES, get_game, taki
from arena_sdk.games.taki.cards import _TOKENS
from arena_sdk.pb import bot_pb2

# What the Breaker check looked at (``Counts.extra``).
QUESTIONS = "declined Breaker questions"
COMPARED = "views of other seats compared after one"
SKIPPED = "Breaker questions not comparable"


_CARD_EVENTS = {"lead", "return", "play", "break"}  # the events that show a card (face up)


class TakiAuditor(GameAuditor):
    """Taki: hidden are the other seats' hands, the draw pile (order and contents), the seed and the deal, and which
    seat was asked about a +3 Breaker (``breaker_problems``)."""

    game = "taki"
    tournament = TournamentPlan(bots=6, seats=3, rounds=1, config=taki.TakiConfig(hand_size=4, turn_cap=40))

    def plans(self, count: int) -> list[Plan]:
        return taki_plans(count)

    def run_problems(self, counts: Counts) -> list[str]:
        return [] if counts.extra[COMPARED] > 0 else [f"no declined Breaker question could be compared: {counts}"]

    def leaky_observe(self, state: Any, seat: int) -> Any:
        """The draw pile's top card, hidden in the turn number."""
        return dataclasses.replace(taki.observe(state, seat), turn=state.turn + 1000 * state.draw_pile[0])

    def checker_cases(self) -> Mapping[str, Callable[[Run], None]]:
        return {"another_seats_card_and_the_draw_pile": another_seats_card_and_the_draw_pile,
                "who_was_asked_about_a_breaker": who_was_asked_about_a_breaker}

    def perturb(self, state: taki.TakiState, seat: int, rng: random.Random) -> taki.TakiState:
        others = [o for o in range(state.num_players) if o != seat]
        pool = redeal([c for o in others for c in state.hands[o]] + list(state.draw_pile), rng)
        hands = list(state.hands)
        for o in others:
            hands[o] = tuple(sorted(pool[: len(hands[o])]))
            pool = pool[len(hands[o]):]
        return dataclasses.replace(state, hands=tuple(hands), draw_pile=tuple(pool), seed=rng.getrandbits(62),
                                   deal=taki.TakiDeal(hands=(), draw_pile=()))

    def view_problems(self, state: taki.TakiState, seat: int, kind: str, view: bot_pb2.TakiView,
                      record: MatchRecord, states: Sequence[Any], index: int) -> list[str]:
        problems = []
        who = f"seat {seat} (turn {state.turn}, {kind})"
        token = taki.card_token
        own_tokens = [_TOKENS[c] for c in state.hands[seat]]
        own = Counter(own_tokens)
        shown = Counter(view.hand) if list(view.hand) != own_tokens else own

        def whose(card: str) -> str:
            holders = [o for o in range(state.num_players) if o != seat and card in {token(c) for c in state.hands[o]}]
            if holders:
                return f"card {card} of seat {holders[0]}'s hand"
            if card in {token(c) for c in state.draw_pile}:
                return f"card {card} of the draw pile"
            return f"card {card}, which it does not hold"

        for card in sorted((shown - own).elements()):
            problems.append(f"{who} is shown {whose(card)} in its hand")
        if own - shown:
            problems.append(f"{who}'s hand lacks {sorted((own - shown).elements())}")
        for action in view.legal:
            if action.HasField("play") and action.play.card not in own:
                problems.append(f"{who} is offered to play {whose(action.play.card)}")
        if view.leading != token(state.discard_pile[-1]):
            problems.append(f"{who} is shown the leading card {view.leading}, it is {token(state.discard_pile[-1])}")
        if view.draw_pile_size != len(state.draw_pile):
            problems.append(f"{who} is shown a draw pile of {view.draw_pile_size}, it holds {len(state.draw_pile)}")
        for e in view.history:
            if e.card and e.kind not in _CARD_EVENTS:
                problems.append(f"{who} is shown the card {e.card} of a {e.kind!r} event of seat {e.seat}: "
                                f"{whose(e.card)}")
        return problems

    def deals(self, record: MatchRecord, final: taki.TakiState) -> list[Any]:
        return [("taki", final.deal.hands, final.deal.draw_pile)]

    def log_deal_problems(self, record: MatchRecord, final: taki.TakiState, seat: int,
                          calls: Sequence[Call]) -> list[str]:
        """A seat plays no card before its first decision, so the hand of its first view holds its dealt hand."""
        first = next((c.message.taki for c in calls if c.method == "Decide" and c.message.seat == seat), None)
        dealt = Counter(_TOKENS[c] for c in final.deal.hands[seat])
        if first is not None and dealt - Counter(first.hand):
            return [f"match {record.match_id}: seat {seat}'s first view shows the hand {list(first.hand)}, which "
                    f"lacks cards the engine dealt it: {sorted((dealt - Counter(first.hand)).elements())}"]
        return []

    def match_problems(self, record: MatchRecord, states: Sequence[Any], views: Mapping[tuple[int, int], Any],
                       counts: Counts) -> list[str]:
        return breaker_problems(record, states, views, counts)


def _without_breakers(state: taki.TakiState, seat: int) -> taki.TakiState | None:
    """``state`` with every +3 Breaker of ``seat`` swapped with a non-Breaker card from the bottom of the draw pile
    (so nobody draws the difference soon); None when the pile has too few cards."""
    hand = list(state.hands[seat])
    pile = list(state.draw_pile)
    spots = [i for i in range(len(pile) - 1, -1, -1) if pile[i] != taki.BREAKER]
    breakers = [i for i, c in enumerate(hand) if c == taki.BREAKER]
    if len(spots) < len(breakers) or len(pile) < 8:
        return None
    for i, spot in zip(breakers, spots):
        hand[i], pile[spot] = pile[spot], hand[i]
    hands = list(state.hands)
    hands[seat] = tuple(sorted(hand))
    return dataclasses.replace(state, hands=tuple(hands), draw_pile=tuple(pile))


def breaker_problems(record: MatchRecord, states: Sequence[Any], views: Mapping[tuple[int, int], Any],
                     counts: Counts) -> list[str]:
    """Taki: for every declined +3 Breaker question (seat X asked), the engine run where X held no Breaker (so was
    never asked) is played from the +3 on with the same actions; the next view each other seat was sent (its
    logged Decide, completed: ``views[(seat, sequence)]``) must equal that seat's view in the run where nobody asked
    X. A run that diverges for another reason (X's later play of the Breaker, another seat drawing the swapped
    card) ends the comparison there."""
    engine = get_game("taki")
    decisions = record.decisions
    problems = []
    for i, d in enumerate(decisions):
        if d["kind"] != taki.REACT or d["action"].get("react") is not False:
            continue
        asked = d["seat"]
        counts.extra[QUESTIONS] += 1
        start = max((j for j in range(i) if decisions[j]["kind"] == taki.TURN
                     and decisions[j]["action"].get("card") == "+3"), default=None)
        alt = _without_breakers(states[start], asked) if start is not None else None
        if alt is None:
            counts.extra[SKIPPED] += 1
            continue
        todo = {s for s in range(len(record.seats)) if s != asked}
        compared = 0
        for k in range(start, len(decisions)):
            dk = decisions[k]
            seat = dk["seat"]
            if seat != asked or dk["kind"] != taki.REACT:  # in the other run nobody asks the asked seat
                if engine.pending_seats(alt) != (seat,) or engine.decision_kind(alt, seat) != dk["kind"]:
                    break  # the other run is elsewhere (the asked seat's later Breaker, a swapped card drawn)
                if k > i and seat in todo and dk["seq"] is not None:
                    todo.discard(seat)
                    sent = views.get((seat, dk["seq"]))
                    if sent is not None:
                        compared += 1
                        unasked = engine.observe(alt, seat)
                        if sent != unasked:
                            problems.append(
                                f"match {record.match_id}: seat {seat}'s view at decision {k} (after seat {asked} "
                                f"was asked about a +3 Breaker and declined) differs from its view had seat {asked} "
                                f"not been asked: {diff(sent, unasked)}")
                if not todo:
                    break
                action = wire.action_from_dict("taki", dk["kind"], dk["action"])
                if action not in engine.legal_actions(alt, seat):
                    break
                alt = engine.apply(alt, seat, action)
            real = states[k + 1]  # (after the asked seat's last answer too: the +3's draws may reach a swapped card)
            if real.mode != "react" and any(alt.hands[s] != real.hands[s] for s in todo):
                break  # (during the real run's questions the other run is ahead: it already drew the +3's cards)
        counts.extra[COMPARED] += compared
        if not compared:
            counts.extra[SKIPPED] += 1
    return problems




# --- the matches the audit plays ---------------------------------------------------------------------------


def breaker_deal(rng: random.Random, seats: int, hand_size: int) -> taki.TakiDeal:
    """A Taki deal in which seat 0 holds both +3 and the other seats hold the +3 Breakers (seat 1 both in a two-seat
    game), so Breaker questions are asked and often declined."""
    cards = list(taki.deck())
    for card in (taki.PLUS3, taki.PLUS3, taki.BREAKER, taki.BREAKER):
        cards.remove(card)
    rng.shuffle(cards)
    special = {0: [taki.PLUS3, taki.PLUS3], 1: [taki.BREAKER], min(2, seats - 1): [taki.BREAKER]}
    if seats == 2:
        special[1] = [taki.BREAKER, taki.BREAKER]
    hands = []
    for seat in range(seats):
        own = special.get(seat, [])
        hands.append(tuple(own + [cards.pop() for _ in range(hand_size - len(own))]))
    return taki.TakiDeal(hands=tuple(hands), draw_pile=tuple(cards))


def taki_plans(count: int) -> list[Plan]:
    """Short Taki games: 2..6 seats, hands of 2..3 cards (4 in some Breaker deals), turn caps 20..40, some stairs,
    some without drawing when playable, and one in five from a deal that makes +3 Breaker questions likely."""
    rng = random.Random(7)
    plans = []
    for i in range(count):
        seats = (2, 3, 2, 4, 3, 2, 5, 3, 2, 6)[i % 10]
        options: dict[str, Any] = {"hand_size": 2 + i % 2, "turn_cap": 20 + 5 * (i % 5)}
        if i % 15 == 0:
            options["stairs"] = True
        if i % 7 == 3:
            options["draw_when_playable"] = False
        deals: tuple[Any, ...] = ()
        if i % 5 == 4:
            options["hand_size"] = 3 + i % 2
            options["turn_cap"] = 40
            deals = (breaker_deal(rng, seats, options["hand_size"]),)
        plans.append(Plan(f"audit-taki-{i:04d}", "taki", seats, taki.TakiConfig(**options),
                          SEED_BASE + rng.getrandbits(46), deals))
    return plans


# --- the checks catch each leak --------------------------------------------------------------------------------


def another_seats_card_and_the_draw_pile(taki_run: Run) -> None:
    """A view showing another seat's card, or a card of the draw pile, is caught."""
    record, call, state = first_call(taki_run, lambda r, c, s, d: d["kind"] == taki.TURN and len(r.seats) >= 3)
    seat = call.message.seat
    other = (seat + 1) % len(record.seats)
    theirs = taki.card_token(state.hands[other][0])
    leaked = bot_pb2.DecideRequest()
    leaked.CopyFrom(call.message)
    leaked.taki.hand.append(theirs)
    problems = audit_doctored(taki_run, record, call, call.doctored(leaked))
    assert any(f"card {theirs} of seat" in p for p in problems), problems
    held = {taki.card_token(c) for h in state.hands for c in h}
    pile = next(taki.card_token(c) for c in state.draw_pile if taki.card_token(c) not in held)
    leaked = bot_pb2.DecideRequest()
    leaked.CopyFrom(call.message)
    leaked.taki.history.append(bot_pb2.TakiEvent(kind="draw", seat=seat, count=1, card=pile, reason="draw"))
    problems = audit_doctored(taki_run, record, call, call.doctored(leaked))
    assert any(f"card {pile} of the draw pile" in p for p in problems), problems


def who_was_asked_about_a_breaker(taki_run: Run) -> None:
    """The Breaker check: a view sent to a seat after another seat declined a +3 Breaker question that tells it so
    (here one more event) differs from the engine run where nobody was asked."""
    for record in taki_run.records:
        states = replay_states(record)
        views = {(d["seat"], d["seq"]): GAMES["taki"].observe(states[i], d["seat"])
                 for i, d in enumerate(record.decisions) if d["seq"] is not None}
        counts = Counts()
        assert breaker_problems(record, states, views, counts) == []
        if not counts.extra[COMPARED]:
            continue
        declined = next(i for i, d in enumerate(record.decisions)
                        if d["kind"] == taki.REACT and d["action"]["react"] is False)
        asked = record.decisions[declined]["seat"]
        later = next(d for d in record.decisions[declined + 1:] if d["seat"] != asked and d["seq"] is not None)
        key = (later["seat"], later["seq"])
        told = dataclasses.replace(views[key], history=(*views[key].history, taki.Event("asked", seat=asked)))
        problems = breaker_problems(record, states, {**views, key: told}, Counts())
        if problems:
            assert f"after seat {asked} was asked about a +3 Breaker" in problems[0], problems
            return
    pytest.fail("no declined Breaker question whose next view of another seat could be doctored")


AUDITOR = TakiAuditor()
