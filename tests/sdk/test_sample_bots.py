"""The sample bots' decision logic, in-process against the rules engine: legality, the heuristic's choices, the
Monte Carlo simulation against the engine, determinism, the time budget, and the strength order."""

from __future__ import annotations

from dataclasses import replace
from statistics import mean

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_sdk import MatchInfo, Take5Bot, decide, play_game
from arena_sdk.games import take5
from sample_bots.heuristic_bot import HeuristicBot, card_cost, heuristic_card
from sample_bots.montecarlo_bot import (
    MAX_SAMPLES,
    MIN_SAMPLES,
    MonteCarloBot,
    known_hands,
    resolve,
    samples_for,
    unseen_cards,
)
from sample_bots.random_bot import RandomBot

FULL = (10, 11, 12, 13, 14)  # a full row: 3 + 5 + 1 + 1 + 1 = 11 bullheads


def attach(bot: Take5Bot, match_id: str, seat: int, n: int = 4) -> Take5Bot:
    bot.begin_match(MatchInfo(match_id, "take5", seat, n, (), take5.Take5Config()))
    bot.on_start(bot.match)  # type: ignore[arg-type]
    return bot


# --- the heuristic -------------------------------------------------------------------------------------------


def test_heuristic_plays_the_smallest_gap_above_a_row_end() -> None:
    rows = ((10,), (20,), (30,), (40,))
    assert heuristic_card((12, 25, 41), rows) == 41  # gaps 2, 5, 1
    assert card_cost(rows, 25) == (True, 5)


def test_heuristic_avoids_the_sixth_card() -> None:
    rows = (FULL, (30,), (50,), (70,))
    assert card_cost(rows, 15) == (False, 11)
    assert heuristic_card((15, 45), rows) == 45  # 15 has gap 1 but would be the sixth card


def test_heuristic_takes_the_fewest_bullheads_when_every_card_is_bad() -> None:
    rows = (FULL, (20, 21, 22, 23, 24), (55,), (66,))  # 11, 11, 7, 5 bullheads
    assert card_cost(rows, 1) == (False, 5)  # rule 4 counts the cheapest row
    assert heuristic_card((1, 15, 25), rows) == 1
    assert heuristic_card((15, 25), rows) == 15  # equal cost: the lower card
    assert heuristic_card((15, 60), rows) == 60  # 60 goes onto 55 safely
    with pytest.raises(ValueError, match="non-empty hand"):
        heuristic_card((), rows)


def _reference_heuristic(hand: tuple[int, ...], rows: list[tuple[int, ...]]) -> int:
    """The heuristic's definition, card by card: the safe card with the smallest gap, else the cheapest card."""
    costs = {card: card_cost(rows, card) for card in hand}
    safe = [(value, card) for card, (ok, value) in costs.items() if ok]
    bad = [(value, card) for card, (ok, value) in costs.items() if not ok]
    return min(safe or bad)[1]


@settings(max_examples=200, deadline=None)
@given(st.permutations(range(1, 105)), st.lists(st.integers(1, 5), min_size=4, max_size=4), st.integers(1, 10))
def test_heuristic_card_matches_its_card_by_card_definition(cards: list[int], lengths: list[int], size: int) -> None:
    rows, i = [], 0
    for length in lengths:
        rows.append(tuple(sorted(cards[i : i + length])))
        i += length
    hand = tuple(sorted(cards[i : i + size]))
    assert heuristic_card(hand, rows) == _reference_heuristic(hand, rows)


def test_heuristic_bot_takes_the_cheapest_row_on_rule_4() -> None:
    rows = (FULL, (20, 21, 22, 23, 24), (55,), (66,))
    view = take5.Take5View(0, 2, take5.Take5Config(), 0, 0, (2,), rows, (0, 0), (0, 0),
                           kind=take5.CHOOSE_ROW, resolving_card=1)
    assert HeuristicBot().choose_row(view) == 3


# --- every bot answers legally in every variant --------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        take5.Take5Config(),
        take5.Take5Config(known_cards=True),
        take5.Take5Config(draft=True),
        take5.Take5Config(draft=True, known_cards=True, limit=30),
    ],
)
def test_sample_bots_play_complete_games_legally(config: take5.Take5Config) -> None:
    bots = [RandomBot(seed=1), HeuristicBot(), MonteCarloBot(seed=1, samples=6), RandomBot(seed=2)]
    outcome = play_game(bots, config, seed=17)  # raises IllegalAnswerError on any illegal answer
    assert len(outcome.scores) == 4
    assert max(outcome.scores) >= config.limit  # the game only ends at the limit


# --- the Monte Carlo bot -------------------------------------------------------------------------------------


@st.composite
def turn_setups(draw: st.DrawFn) -> tuple[list[tuple[int, ...]], list[int]]:
    n = draw(st.integers(2, 10))
    lengths = draw(st.lists(st.integers(1, 5), min_size=4, max_size=4))
    cards = draw(st.permutations(range(1, 105)))
    rows, i = [], 0
    for length in lengths:
        rows.append(tuple(sorted(cards[i : i + length])))
        i += length
    return rows, list(cards[i : i + n])


@settings(max_examples=150, deadline=None)
@given(turn_setups())
def test_simulated_turn_resolves_like_the_engine(setup: tuple[list[tuple[int, ...]], list[int]]) -> None:
    rows, plays = setup
    n = len(plays)
    state = replace(take5.new_game(n, seed=0), rows=tuple(rows), hands=tuple((c,) for c in plays))
    for seat, card in enumerate(plays):
        state = take5.apply(state, seat, take5.ChooseCard(card))
    while state.phase == "row":  # rule 4: the cheapest row, lowest index on ties, as the simulation assumes
        (seat,) = take5.pending_seats(state)
        state = take5.apply(state, seat, take5.default_action(state, seat))
    table = [list(r) for r in rows]
    taken = resolve(table, [(card, seat) for seat, card in enumerate(plays)])
    assert tuple(tuple(r) for r in table) == state.rows
    engine_taken = {s: sum(take5.bullheads(c) for c in pile) for s, pile in enumerate(state.piles) if pile}
    assert taken == engine_taken


def _after_one_turn(n: int, config: take5.Take5Config, seed: int) -> take5.Take5State:
    state = take5.new_game(n, config, seed=seed)
    for seat in range(n):
        state = take5.apply(state, seat, take5.ChooseCard(state.hands[seat][seat]))
    while state.phase == "row":
        (seat,) = take5.pending_seats(state)
        state = take5.apply(state, seat, take5.default_action(state, seat))
    return state


def test_unseen_cards_are_the_cards_the_seat_has_not_seen() -> None:
    state = _after_one_turn(4, take5.Take5Config(), seed=21)
    view = take5.observe(state, 2)
    unseen = set(unseen_cards(view))
    assert len(unseen) == 104 - 9 - 4 - 4  # deck - own hand - row starters - cards played this turn
    assert {c for s in (0, 1, 3) for c in state.hands[s]} <= unseen
    assert not unseen & (set(view.hand) | {c for row in view.rows for c in row})
    # with known cards (variant 1) every card is in play: the unseen cards are exactly the other hands
    state = _after_one_turn(4, take5.Take5Config(known_cards=True), seed=21)
    view = take5.observe(state, 2)
    assert set(unseen_cards(view)) == {c for s in (0, 1, 3) for c in state.hands[s]}


def test_draft_hands_are_known_exactly() -> None:
    config = take5.Take5Config(draft=True)
    state = take5.new_game(3, config, seed=8)
    while state.phase == "draft":
        (seat,) = take5.pending_seats(state)
        state = take5.apply(state, seat, take5.default_action(state, seat))
    for seat in range(3):
        state = take5.apply(state, seat, take5.ChooseCard(state.hands[seat][-1]))
    while state.phase == "row":
        (seat,) = take5.pending_seats(state)
        state = take5.apply(state, seat, take5.default_action(state, seat))
    view = take5.observe(state, 1)
    assert known_hands(view) == {0: list(state.hands[0]), 2: list(state.hands[2])}


def test_montecarlo_is_deterministic_given_its_seed() -> None:
    views = [take5.observe(take5.new_game(4, seed=s), s % 4) for s in range(6)]
    a = attach(MonteCarloBot(seed=9, samples=20, budget_ms=1e6), "m", 0)
    b = attach(MonteCarloBot(seed=9, samples=20, budget_ms=1e6), "m", 0)
    forward = [decide(a, v).card for v in views]
    backward = [decide(b, v).card for v in reversed(views)][::-1]
    assert forward == backward  # each decision depends on (seed, match, seat, hand, turn), not on call order
    assert all(card in v.hand for card, v in zip(forward, views))
    assert a.last_samples == 20


def test_montecarlo_stops_at_its_time_budget() -> None:
    bot = MonteCarloBot(seed=1, samples=10**6, budget_ms=1)
    view = take5.observe(take5.new_game(10, seed=4), 3)
    assert bot.choose_card(view) in view.hand
    assert MIN_SAMPLES <= bot.last_samples < 10**6


def test_default_sample_count_grows_as_the_hand_shrinks() -> None:
    state = take5.new_game(4, seed=2)
    counts = []
    for _ in range(9):
        counts.append(samples_for(take5.observe(state, 0), horizon=10))
        for seat in range(4):
            state = take5.apply(state, seat, take5.ChooseCard(state.hands[seat][0]))
        while state.phase == "row":
            (seat,) = take5.pending_seats(state)
            state = take5.apply(state, seat, take5.default_action(state, seat))
    assert counts == sorted(counts) and counts[0] < counts[-1]
    assert MIN_SAMPLES <= counts[0] and counts[-1] <= MAX_SAMPLES


def test_montecarlo_rejects_bad_options() -> None:
    with pytest.raises(ValueError, match="samples >= 1"):
        MonteCarloBot(samples=0)
    with pytest.raises(ValueError, match="horizon >= 1"):
        MonteCarloBot(horizon=0)


# --- the random bot ------------------------------------------------------------------------------------------


def _random_cards(seed: int, match_id: str) -> list[int]:
    bot = attach(RandomBot(seed=seed), match_id, 1)
    return [bot.choose_card(take5.observe(take5.new_game(4, seed=s), 1)) for s in range(12)]


def test_random_bot_is_reproducible_per_seed_and_match() -> None:
    assert _random_cards(3, "m1") == _random_cards(3, "m1")
    assert _random_cards(3, "m1") != _random_cards(3, "m2")
    assert _random_cards(3, "m1") != _random_cards(4, "m1")


# --- strength order ------------------------------------------------------------------------------------------


ONE_HAND = take5.Take5Config(limit=1)  # the game ends after its first hand


def test_strength_order_random_heuristic_montecarlo() -> None:
    """Mean bullheads per hand over fixed deals (deterministic: seeded bots, no time budget reached).

    Random against the heuristic in 3-seat hands; the Monte Carlo bot (with a reduced sample count, to stay
    fast) against the heuristic in 4-seat hands, two seats each, on the same deal with the seats swapped."""
    taken: dict[str, list[float]] = {"random": [], "heuristic": [], "montecarlo": []}
    for deal in range(8):
        outcome = play_game([RandomBot(seed=deal), HeuristicBot(), HeuristicBot()], ONE_HAND, seed=deal)
        taken["random"].append(outcome.scores[0])
    duel: dict[str, list[float]] = {"heuristic": [], "montecarlo": []}
    for deal in range(12):
        for mc_seats in ((0, 2), (1, 3)):
            bots: list[Take5Bot] = [
                MonteCarloBot(seed=deal, samples=30, horizon=3, budget_ms=1e6) if s in mc_seats else HeuristicBot()
                for s in range(4)
            ]
            outcome = play_game(bots, ONE_HAND, seed=deal)
            for s in range(4):
                duel["montecarlo" if s in mc_seats else "heuristic"].append(outcome.scores[s])
    taken["heuristic"], taken["montecarlo"] = duel["heuristic"], duel["montecarlo"]
    means = {name: mean(values) for name, values in taken.items()}
    assert means["random"] > means["heuristic"] > means["montecarlo"], means
