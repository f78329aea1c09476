"""Hypothesis properties of the Take 5 engine over random games with random legal actions.

Each example draws a player count (2..10), a config (limit, limit rule, both variants), a seed for the deals and
a seed for the actions, plays the game to its end and checks after every action:

* cards are conserved: hands + rows + penalty piles + revealed-but-unresolved cards (+ the draft pool) are
  exactly the cards dealt for the hand, each once;
* rows are ascending and hold 1..5 cards (empty only during the draft); hands are ascending;
* rule 4 only ever strikes the lowest card of a turn;
* penalty piles are exactly the cards the plays took, and each total grows by the bullheads the seat took;
* ``observe`` is a function of public information and the seat's own hand only (spy check);
* the game ends, only after a complete hand, and the outcome ranks are standard competition ranks.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from arena_sdk.games import take5
from arena_sdk.games.take5 import ChooseCard, Take5Config, Take5State, Take5View

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ROW_CAPACITY = 5  # take5.md rule 3; deliberately not read from the engine
HAND_SIZE = 10


def _bullheads(card: int) -> int:
    """take5.md "Cards", written out independently of the engine."""
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    return 2 if card % 5 == 0 else 1


configs = st.builds(
    Take5Config,
    limit=st.one_of(st.just(66), st.integers(1, 66)),  # the default often: long, multi-hand games
    limit_rule=st.sampled_from(["at_least", "more_than"]),
    known_cards=st.booleans(),
    draft=st.booleans(),
)


def _dealt_cards(state: Take5State) -> list[int]:
    deal = state.dealt[state.hand_number]
    return sorted(deal.pool) if deal.pool else sorted([c for h in deal.hands for c in h] + list(deal.rows))


def _cards_in_state(state: Take5State) -> list[int]:
    cards = [c for h in state.hands for c in h] + [c for r in state.rows for c in r]
    cards += [c for p in state.piles for c in p] + list(state.draft_pool)
    cards += [p.card for p in state.revealed[state.resolved :]]  # revealed, waiting for a rule-4 choice
    return sorted(cards)


def _taken_by_seat(turns: tuple[take5.Turn, ...], plays: tuple[take5.Play, ...], n: int) -> list[list[int]]:
    taken: list[list[int]] = [[] for _ in range(n)]
    for play in [p for t in turns for p in t.plays] + list(plays):
        taken[play.seat].extend(play.taken)
    return taken


def _view_cards(view: Take5View) -> set[int]:
    cards = set(view.hand) | {c for r in view.rows for c in r} | set(view.draft_pool)
    for turn in view.history:
        for play in turn.plays:
            cards.add(play.card)
            cards.update(play.taken)
    cards.update(p.card for p in view.revealed)
    cards.update(p.card for p in view.draft_picks)
    if view.resolving_card is not None:
        cards.add(view.resolving_card)
    return cards


def _check_spy(state: Take5State) -> None:
    n = state.num_players
    for seat in range(n):
        view = take5.observe(state, seat)
        # Indistinguishability: wipe everything this seat may not know; the view must not change.
        blind = dataclasses.replace(
            state,
            hands=tuple(h if s == seat else () for s, h in enumerate(state.hands)),
            chosen=tuple(c if s == seat else None for s, c in enumerate(state.chosen)),
            seed=None if state.seed is not None else 1,
            deals=(),
            dealt=(),
        )
        assert take5.observe(blind, seat) == view, f"seat {seat}'s view depends on hidden information"
        assert view.hand == state.hands[seat]
        if not state.config.draft:  # in the draft every pick is public, so hands are open by the rules
            others = {c for s, h in enumerate(state.hands) if s != seat for c in h}
            assert not (_view_cards(view) & others), f"seat {seat} sees another seat's cards"


def _check_state(state: Take5State) -> None:
    n = state.num_players
    assert _cards_in_state(state) == _dealt_cards(state), "cards are not conserved"
    for hand in state.hands:
        assert list(hand) == sorted(set(hand))
    if state.phase == "draft":
        assert state.rows == ((),) * 4
        assert [len(h) for h in state.hands] == [sum(1 for p in state.draft_picks if p.seat == s) for s in range(n)]
    else:
        for row in state.rows:
            assert 1 <= len(row) <= ROW_CAPACITY, f"row {row} does not hold 1..5 cards"
            assert list(row) == sorted(set(row)), f"row {row} is not ascending"
        in_hand = HAND_SIZE - state.turn - (1 if state.phase == "row" else 0)
        if state.phase == "over":
            in_hand = 0
        assert all(len(h) == in_hand for h in state.hands)
    if state.phase == "row":
        assert state.resolved == 0, "rule 4 struck a card that is not the lowest of its turn"
        card = state.revealed[0].card
        assert all(r[-1] > card for r in state.rows)
    for seat, card in enumerate(state.chosen):
        assert card is None or card in state.hands[seat]
    taken = _taken_by_seat(state.history, state.current_plays, n)
    assert [sorted(p) for p in state.piles] == [sorted(t) for t in taken], "piles differ from the cards taken"
    for seat in take5.pending_seats(state):
        legal = take5.legal_actions(state, seat)
        assert legal and take5.default_action(state, seat) in legal
        assert take5.decision_kind(state, seat) is not None


def _check_transition(before: Take5State, after: Take5State) -> None:
    n = before.num_players
    if after.hand_number == before.hand_number and after.phase != "over":
        assert after.totals == before.totals, "totals changed mid-hand"
        return
    # A hand ended: its plays are the history of the over state, or previous_history of the new hand.
    turns = after.history if after.phase == "over" else after.previous_history
    assert [t.turn for t in turns] == list(range(HAND_SIZE)), "a hand ended before its tenth turn"
    taken = _taken_by_seat(turns, (), n)
    assert [a - b for a, b in zip(after.totals, before.totals)] == [
        sum(_bullheads(c) for c in t) for t in taken
    ], "a total grew by something else than the bullheads taken"
    limit, rule = after.config.limit, after.config.limit_rule
    reached = [t >= limit if rule == "at_least" else t > limit for t in after.totals]
    assert (after.phase == "over") == any(reached)


def _play(state: Take5State, rng: random.Random, spy_every: int = 1) -> tuple[Take5State, list[tuple[int, object]]]:
    n = state.num_players
    max_hands = n * state.config.limit + 2  # every hand gives someone >= 1 bullhead (10n cards > 16 free places)
    actions: list[tuple[int, object]] = []
    steps = 0
    _check_state(state)
    while not take5.is_over(state):
        pending = take5.pending_seats(state)
        seat = rng.choice(pending)  # any pending seat may answer first
        action = rng.choice(take5.legal_actions(state, seat))
        before = state
        state = take5.apply(state, seat, action)
        actions.append((seat, action))
        steps += 1
        _check_state(state)
        _check_transition(before, state)
        if steps % spy_every == 0:
            _check_spy(state)
        assert state.hand_number < max_hands, "the game does not terminate"
    _check_spy(state)
    return state, actions


@SETTINGS
@given(players=st.integers(2, 10), config=configs, seed=st.integers(0, 2**32), action_seed=st.integers(0, 2**32))
def test_random_games_keep_the_invariants(players: int, config: Take5Config, seed: int, action_seed: int) -> None:
    state, _ = _play(take5.new_game(players, config, seed=seed), random.Random(action_seed), spy_every=3)
    assert take5.is_over(state) and state.turn == HAND_SIZE - 1 and state.hands == ((),) * players
    event(f"hands played: {state.hand_number + 1}")
    event(f"variant: known_cards={config.known_cards} draft={config.draft}")
    result = take5.outcome(state)
    assert result.scores == state.totals
    # Standard competition ranking, from its definition: 1 + the number of strictly better (lower) totals.
    assert list(result.ranks) == [1 + sum(1 for o in state.totals if o < t) for t in state.totals]
    assert min(result.ranks) == 1 and Counter(result.ranks)[1] == state.totals.count(min(state.totals))


@settings(max_examples=40, deadline=None)
@given(players=st.integers(2, 6), config=configs, seed=st.integers(0, 2**32), action_seed=st.integers(0, 2**32))
def test_replays_with_the_seed_or_the_recorded_deals_are_identical(
    players: int, config: Take5Config, seed: int, action_seed: int
) -> None:
    """Same seed + same actions -> same game; the recorded deals alone (no seed) replay it too (duplicate deals)."""
    final, actions = _play(take5.new_game(players, config, seed=seed), random.Random(action_seed), spy_every=50)
    by_seed = take5.new_game(players, config, seed=seed)
    by_deals = take5.new_game(players, config, seed=seed + 1, deals=final.dealt)  # the deals cover the game
    for seat, action in actions:
        by_seed = take5.apply(by_seed, seat, action)  # type: ignore[arg-type]
        by_deals = take5.apply(by_deals, seat, action)  # type: ignore[arg-type]
    assert by_seed == final
    assert (by_deals.totals, by_deals.rows, by_deals.history) == (final.totals, final.rows, final.history)
    assert take5.outcome(by_deals) == take5.outcome(final)


@settings(max_examples=40, deadline=None)
@given(players=st.integers(2, 10), seed=st.integers(0, 2**32), data=st.data())
def test_the_order_of_hidden_choices_does_not_matter(players: int, seed: int, data: st.DataObject) -> None:
    """A turn's result depends on the chosen cards only, never on which seat answered first."""
    state = take5.new_game(players, seed=seed)
    cards = [data.draw(st.sampled_from(h), label=f"card of seat {s}") for s, h in enumerate(state.hands)]
    order = data.draw(st.permutations(range(players)), label="order")
    forward, shuffled = state, state
    for seat in range(players):
        forward = take5.apply(forward, seat, ChooseCard(cards[seat]))
    for seat in order:
        before = shuffled
        shuffled = take5.apply(shuffled, seat, ChooseCard(cards[seat]))
        if shuffled.phase == "choose" and shuffled.turn == 0:
            for other in range(players):  # the choice stays hidden until the reveal
                if other != seat:
                    assert take5.observe(shuffled, other) == take5.observe(before, other)
    assert forward == shuffled
