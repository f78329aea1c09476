"""Hypothesis properties of the Taki engine over random games with random legal actions.

Each example draws a player count (2..10), a config (stairs, hand size, turn cap, both draw options), a seed for
the deal and a seed for the actions, and a random player (uniform over the legal actions, or preferring plays),
plays the game to its end and checks along the way:

* the 116 cards are conserved (hands + draw pile + discard pile, as a multiset), and no plain 2 ever exists;
* exactly one seat is pending until the end; its legal actions are never empty, hold no duplicates, contain the
  default action, and are exactly the actions ``apply`` accepts (every listed one is accepted; every other
  candidate is refused with ``IllegalActionError``);
* ``observe`` shows a seat nothing of the other seats' cards or of the draw pile's order (spy: permuting the
  hidden cards changes no view) and its history holds only public events;
* the game ends within the turn cap with one winner (first, alone) or a cap ranking by cards / stage;
* the same seed and actions replay the same game.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from arena_sdk.games import taki
from arena_sdk.games.base import IllegalActionError
from arena_sdk.games.taki import Draw, EndTurn, PlayCard, React, TakiConfig, TakiState

DECK = Counter(taki.deck())
ALL_CARDS = sorted(set(taki.deck()))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

configs = st.builds(
    TakiConfig,
    draw_when_playable=st.booleans(),
    plus_draw_when_playable=st.booleans(),
    turn_cap=st.one_of(st.just(2000), st.integers(1, 200)),
    stairs=st.booleans(),
    hand_size=st.one_of(st.just(8), st.integers(1, 8)),
)


def _candidates(state: TakiState, seat: int) -> list[object]:
    """Every action worth trying: each held card with every declaration combination, and the others."""
    out: list[object] = [Draw(), EndTurn(), React(True), React(False)]
    for card in sorted(set(state.hands[seat])):
        colors = (None, 0, 3) if card == taki.CHCOLOR else (None, 1)
        for color in colors:
            for close in (False, True):
                for last in (False, True):
                    out.append(PlayCard(card, color, close, last))
    out.append(PlayCard(next(c for c in ALL_CARDS if c not in state.hands[seat])))
    return out


def _check_state(state: TakiState, full: bool) -> None:
    cards = [c for h in state.hands for c in h] + list(state.draw_pile) + list(state.discard_pile)
    assert Counter(cards) == DECK, "the 116 cards are not conserved"
    assert all(taki.card_symbol(c) != 2 for c in cards)
    for hand in state.hands:
        assert list(hand) == sorted(hand)
    assert state.stack >= 0 and state.stack % 2 == 0 and state.direction in (1, -1)
    assert state.turn <= state.config.turn_cap
    pending = taki.pending_seats(state)
    if taki.is_over(state):
        assert pending == ()
        return
    assert len(pending) == 1
    seat = pending[0]
    assert [taki.decision_kind(state, s) is not None for s in range(state.num_players)].count(True) == 1
    legal = taki.legal_actions(state, seat)
    assert legal, "no legal action for the pending seat"
    assert len(set(legal)) == len(legal), f"duplicate legal actions {legal}"
    assert taki.default_action(state, seat) in legal
    if full:
        for action in _candidates(state, seat):
            try:
                taki.apply(state, seat, action)  # type: ignore[arg-type]
                accepted = True
            except IllegalActionError:
                accepted = False
            assert accepted == (action in legal), f"{action!r}: accepted={accepted}, listed={action in legal}"
        for action in legal:
            taki.apply(state, seat, action)  # every listed action is accepted


def _check_spy(state: TakiState, rnd: random.Random) -> None:
    """Permute every card a seat cannot see (other hands and the draw pile, sizes kept): its view must not change."""
    n = state.num_players
    for seat in range(n):
        view = taki.observe(state, seat)
        hidden = [c for s, h in enumerate(state.hands) if s != seat for c in h] + list(state.draw_pile)
        rnd.shuffle(hidden)
        hands, i = [], 0
        for s, h in enumerate(state.hands):
            if s == seat:
                hands.append(h)
            else:
                hands.append(tuple(sorted(hidden[i : i + len(h)])))
                i += len(h)
        blind = dataclasses.replace(
            state, hands=tuple(hands), draw_pile=tuple(hidden[i:]), seed=state.seed + 1, deal=taki.deal_game(0, n)
        )
        assert taki.observe(blind, seat) == view, f"seat {seat}'s view depends on hidden cards"
        assert view.hand == state.hands[seat]
        for e in view.history:
            if e.kind in ("draw", "reshuffle"):
                assert e.card is None


def _play(state: TakiState, rnd: random.Random, uniform: bool, check_every: int) -> tuple[TakiState, list[tuple[int, object]]]:
    actions: list[tuple[int, object]] = []
    steps = 0
    limit = (state.config.turn_cap + 1) * 200  # decisions per turn are bounded (a run, a King, the Breaker asks)
    while not taki.is_over(state):
        _check_state(state, full=steps % check_every == 0)
        if steps % (check_every * 3) == 0:
            _check_spy(state, rnd)
        seat = taki.pending_seats(state)[0]
        legal = taki.legal_actions(state, seat)
        if not uniform and len(legal) > 1 and isinstance(legal[-1], (Draw, EndTurn)):
            legal = legal[:-1]
        action = rnd.choice(legal)
        turn = state.turn
        state = taki.apply(state, seat, action)
        assert state.turn in (turn, turn + 1), "a decision completed more than one turn"
        actions.append((seat, action))
        steps += 1
        assert steps < limit, "the game does not end"
    _check_state(state, full=False)
    _check_spy(state, rnd)
    return state, actions


def _check_outcome(state: TakiState) -> None:
    result = taki.outcome(state)
    n = state.num_players
    if state.winner is not None:
        assert result.ranks[state.winner] == 1 and list(result.ranks).count(1) == 1, "the winner is not alone first"
        assert len(state.hands[state.winner]) == 0
        assert state.turn <= state.config.turn_cap
    else:
        assert state.turn == state.config.turn_cap
    held = [len(h) for h in state.hands]
    if state.config.stairs:
        key = [(st, c) for st, c in zip(state.stages, held)]
    else:
        key = [(0, c) for c in held]
    assert list(result.ranks) == [1 + sum(1 for o in key if o < k) for k in key]
    assert len(result.scores) == n


@SETTINGS
@given(
    players=st.integers(2, 10),
    config=configs,
    seed=st.integers(0, 2**256),
    action_seed=st.integers(0, 2**32),
    uniform=st.booleans(),
)
def test_random_games_keep_the_invariants(
    players: int, config: TakiConfig, seed: int, action_seed: int, uniform: bool
) -> None:
    if uniform and config.turn_cap > 300:  # uniform players draw a lot: keep those games short
        config = dataclasses.replace(config, turn_cap=300)
    state, _ = _play(taki.new_game(players, config, seed=seed), random.Random(action_seed), uniform, check_every=7)
    assert taki.is_over(state)
    _check_outcome(state)
    event(f"ended by {'win' if state.winner is not None else 'turn cap'}; stairs={config.stairs}")


@settings(max_examples=25, deadline=None)
@given(players=st.integers(2, 6), seed=st.integers(0, 2**64), action_seed=st.integers(0, 2**32), stairs=st.booleans())
def test_the_same_seed_and_actions_replay_the_same_game(players: int, seed: int, action_seed: int, stairs: bool) -> None:
    config = TakiConfig(stairs=stairs, hand_size=4, turn_cap=400)
    final, actions = _play(taki.new_game(players, config, seed=seed), random.Random(action_seed), False, check_every=50)
    again = taki.new_game(players, config, seed=seed)
    by_deal = taki.new_game(players, config, seed=seed, deal=final.deal)
    for seat, action in actions:
        again = taki.apply(again, seat, action)  # type: ignore[arg-type]
        by_deal = taki.apply(by_deal, seat, action)  # type: ignore[arg-type]
    assert again == final and by_deal == final
    event(f"reshuffles: {min(final.reshuffles, 3)}{'+' if final.reshuffles > 3 else ''}")


def test_a_long_game_with_many_reshuffles_replays_identically() -> None:
    """Uniform players on 2 seats draw a lot: many reshuffles, each from the game's own generator."""
    rnd = random.Random(7)
    state, actions = _play(taki.new_game(2, seed=99), rnd, True, check_every=500)
    assert state.reshuffles >= 2
    again = taki.new_game(2, seed=99)
    for seat, action in actions:
        again = taki.apply(again, seat, action)  # type: ignore[arg-type]
    assert again == state
