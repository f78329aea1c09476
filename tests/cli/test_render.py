"""arena.render: a match record told turn by turn (pure; no bots, no Redis).

Records are made here by playing the rules engine with a seeded random policy (and, where asked, faults whose
default action the engine chooses), in exactly the format of ``arena.match.referee.MatchRecord``; every generated record
is first checked with ``arena.match.referee.replay`` so the renderer is tested on records the referee could have written.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from arena.match.record import MatchRecord
from arena.match.replay import replay
from arena.render import RenderError, render_match
from arena.render.take5 import story_of
from arena_sdk import wire
from arena_sdk.games import take5


def make_record(num_players: int, seed: int | None, *, config: take5.Take5Config | None = None,
                deals: tuple[take5.Take5Deal, ...] = (), policy_seed: int = 0, fault_rate: float = 0.0,
                choices: dict[tuple[int, int, int, str], int] | None = None) -> dict[str, Any]:
    """A match record of a game played by a random policy. ``choices`` forces actions:
    (hand, turn, seat, kind) -> card or row. With ``fault_rate`` a decision is a "timeout" fault with the
    engine's default action instead."""
    config = config or take5.Take5Config()
    rng = random.Random(policy_seed)
    state = take5.new_game(num_players, config, seed=seed, deals=deals)
    decisions: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []
    seq = [0] * num_players
    while not take5.is_over(state):
        for seat in take5.pending_seats(state):
            kind = take5.decision_kind(state, seat)
            hand, turn = state.hand_number, state.turn
            forced = (choices or {}).get((hand, turn, seat, kind))
            source = "bot"
            if forced is not None:
                action = wire.action_from_dict("take5", kind, {"row" if kind == take5.CHOOSE_ROW else "card": forced})
            elif rng.random() < fault_rate:
                action, source = take5.default_action(state, seat), "default"
                faults.append({"kind": "timeout", "seat": seat, "hand": hand, "turn": turn,
                               "detail": "Decide: no answer within 50 ms (DEADLINE_EXCEEDED)",
                               "decision": len(decisions)})
            else:
                action = rng.choice(take5.legal_actions(state, seat))
            decisions.append({"seq": seq[seat], "seat": seat, "kind": kind, "hand": hand, "turn": turn,
                              "action": wire.action_to_dict("take5", action), "source": source, "latency_ms": 1.0})
            seq[seat] += 1
            state = take5.apply(state, seat, action)
            if state.phase != "choose" or take5.is_over(state):
                break  # after a rule-4 stop, a completed turn or a draft pick: ask pending_seats again
    outcome = take5.outcome(state)
    counts = [sum(1 for f in faults if f["seat"] == s) for s in range(num_players)]
    record = {
        "version": 1, "match_id": f"t1-m{policy_seed}", "game": "take5", "config": wire.config_to_dict("take5", config),
        "seed": seed, "deals": [wire.deal_to_dict("take5", d) for d in deals],
        "seats": [{"name": f"bot{s}@1.0", "endpoint": f"127.0.0.1:{50100 + s}"} for s in range(num_players)],
        "deadline_ms": 50, "decisions": decisions, "faults": faults,
        "result": {"scores": [float(x) for x in outcome.scores], "ranks": list(outcome.ranks), "faults": counts},
        "started_at": 1_700_000_000.0, "duration_s": 0.5,
    }
    assert replay(MatchRecord.from_dict(record)) == [], "the generated record must replay identically"
    return record


def text_of(record: dict[str, Any]) -> str:
    console = Console(width=140, record=True, file=open("/dev/null", "w"), color_system=None)  # noqa: SIM115
    console.print(render_match(record))
    return console.export_text()


RULE4_DEAL = take5.Take5Deal(hands=((1, 2, 3, 4, 5, 6, 7, 8, 9, 10), (13, 14, 15, 16, 17, 18, 19, 21, 22, 23)),
                             rows=(12, 20, 30, 55))


def test_rule4_choice_that_is_not_the_cheapest_row_is_told() -> None:
    # take5.md rule 4: 5 is below every row end; seat 0 takes row 4 (55: 7 bullheads) though row 1 (12) is cheaper
    record = make_record(2, 9, deals=(RULE4_DEAL,), choices={(0, 0, 0, take5.CHOOSE_CARD): 5,
                                                              (0, 0, 1, take5.CHOOSE_CARD): 13,
                                                              (0, 0, 0, take5.CHOOSE_ROW): 3})
    story = story_of(record)
    first = story.hands[0].turns[0]
    assert first.rows_before == ((12,), (20,), (30,), (55,))
    play5, play13 = first.plays
    assert (play5.seat, play5.card, play5.rule, play5.row, play5.taken, play5.bullheads) == (0, 5, "rule4", 3, (55,), 7)
    assert play5.cheapest_row == 0
    assert (play13.card, play13.rule, play13.row) == (13, "extend", 0)
    assert first.rows_after == ((12, 13), (20,), (30,), (5,))
    text = text_of(record)
    assert "below every row end (rule 4): chooses row 4, takes 55" in text
    assert "cheapest was row 1 (1 bullhead)" in text
    assert "Hand 1 · turn 1" in text and "bot0@1.0 (seat 0)" in text


def test_sixth_card_takes_the_five() -> None:
    deal = take5.Take5Deal(hands=((12, 14, 17, 60, 61, 62, 63, 64, 65, 66), (13, 15, 16, 80, 81, 82, 83, 84, 85, 86)),
                           rows=(10, 50, 70, 90))
    forced = {(0, 0, 0, take5.CHOOSE_CARD): 12, (0, 0, 1, take5.CHOOSE_CARD): 13,
              (0, 1, 0, take5.CHOOSE_CARD): 14, (0, 1, 1, take5.CHOOSE_CARD): 15,
              (0, 2, 0, take5.CHOOSE_CARD): 17, (0, 2, 1, take5.CHOOSE_CARD): 16}
    record = make_record(2, 4, deals=(deal,), choices=forced)
    third = story_of(record).hands[0].turns[2]
    sixth = third.plays[0]
    assert (sixth.seat, sixth.card, sixth.rule) == (1, 16, "sixth")
    assert (sixth.taken, sixth.bullheads) == ((10, 12, 13, 14, 15), 8)
    assert third.rows_after[0] == (16, 17)
    assert "6th card on row 1: takes 10 12 13 14 15" in text_of(record)


def test_faults_are_shown_at_their_turn_with_the_default_action() -> None:
    record = make_record(3, 21, policy_seed=5, fault_rate=0.2)
    assert record["faults"], "the generator should have made faults at this rate"
    story = story_of(record)
    shown = [(t.hand, t.turn, p.seat) for h in story.hands for t in h.turns for p in t.plays
             if p.card_fault is not None] + \
            [(t.hand, t.turn, p.seat) for h in story.hands for t in h.turns for p in t.plays
             if p.row_fault is not None]
    assert sorted(shown) == sorted((f["hand"], f["turn"], f["seat"]) for f in record["faults"])
    text = text_of(record)
    assert "timeout: default card, the lowest in hand" in text
    assert "Faults" in text and "DEADLINE_EXCEEDED" in text


def test_draft_picks_are_listed() -> None:
    config = take5.Take5Config(limit=10, known_cards=True, draft=True)
    record = make_record(2, 3, config=config, policy_seed=2)
    story = story_of(record)
    first = story.hands[0]
    assert len(first.draft) == 20  # 10 picks per seat, alternating
    assert [seat for seat, _, _ in first.draft[:4]] == [0, 1, 0, 1]
    leftovers = set(range(1, 25)) - {card for _, card, _ in first.draft}
    assert sorted(c for row in first.rows_at_start for c in row) == sorted(leftovers)
    assert "Draft (face up, seat order): " in text_of(record)


def test_a_tampered_record_is_told_up_to_the_bad_decision() -> None:
    record = make_record(2, 8, policy_seed=1)
    record["decisions"][7]["action"] = {"card": 105}
    story = story_of(record)
    assert story.stopped is not None and story.stopped.startswith("decision 7")
    assert len(story.hands[0].turns) == 3  # decisions 0..5 are turns 1..3 (two seats, no rule 4 in them)
    assert "cannot be re-simulated further: decision 7" in text_of(record)


@pytest.mark.parametrize("record, fragment", [
    ({"game": "take5"}, "not a match record"),
    ([1, 2], "not a match record"),
])
def test_not_a_record_is_a_render_error(record: Any, fragment: str) -> None:
    with pytest.raises(RenderError, match=fragment):
        render_match(record)


@settings(max_examples=25, deadline=None)
@given(num_players=st.integers(2, 6), seed=st.integers(0, 10**6), policy_seed=st.integers(0, 10**6),
       known_cards=st.booleans(), draft=st.booleans(), limit=st.integers(5, 40),
       fault_rate=st.sampled_from([0.0, 0.1]))
def test_the_story_accounts_for_every_card_and_bullhead(num_players: int, seed: int, policy_seed: int,
                                                        known_cards: bool, draft: bool, limit: int,
                                                        fault_rate: float) -> None:
    config = take5.Take5Config(limit=limit, known_cards=known_cards, draft=draft)
    record = make_record(num_players, seed, config=config, policy_seed=policy_seed, fault_rate=fault_rate)
    story = story_of(record)
    assert story.stopped is None and story.over
    totals = [0] * num_players
    chosen = [d["action"]["card"] for d in record["decisions"] if d["kind"] == take5.CHOOSE_CARD]
    played = []
    for hand in story.hands:
        assert len(hand.turns) == 10 and [t.turn for t in hand.turns] == list(range(10))
        rows = hand.rows_at_start
        for t in hand.turns:
            assert t.rows_before == rows  # each turn starts from the rows the previous one left
            assert [p.card for p in t.plays] == sorted(p.card for p in t.plays)  # lowest card first
            assert len(t.plays) == num_players
            for p in t.plays:
                played.append(p.card)
                ends = [r[-1] for r in p.rows_before]
                assert (p.rule == "rule4") == all(p.card < e for e in ends)
                if p.rule == "sixth":
                    assert len(p.taken) == 5
                assert p.bullheads == sum(take5.bullheads(c) for c in p.taken)
            rows = t.rows_after
        for s in range(num_players):
            totals[s] += hand.penalties[s]
        assert hand.totals is not None and list(hand.totals) == totals
    assert sorted(played) == sorted(chosen)  # every chosen card is revealed exactly once
    assert [float(t) for t in totals] == record["result"]["scores"]


def test_fault_reasons_are_wrapped_never_cut() -> None:
    """Issue 6: a long fault reason is shown whole (wrapped by the terminal), in the turn table and the fault
    list, not cut with an ellipsis."""
    record = make_record(3, 21, policy_seed=5, fault_rate=0.2)
    assert record["faults"]
    reason = ("Decide TAKE5_CHOOSE_CARD: the bot answered after the deadline of 1000 ms; its last words were a "
              "very long explanation that ends with the marker END-OF-REASON")
    record["faults"][0]["detail"] = reason
    console = Console(width=80, record=True, file=open("/dev/null", "w"), color_system=None)  # noqa: SIM115
    console.print(render_match(record))
    text = " ".join(console.export_text().replace("│", " ").split())
    assert "…" not in text
    assert "END-OF-REASON" in text and "very long explanation that ends with the marker" in text
