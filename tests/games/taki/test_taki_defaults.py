"""The documented default action (taki.rules.default_action) in every step of a turn, and the views' steps."""

from __future__ import annotations

from collections import Counter

from arena_sdk.games import taki
from arena_sdk.games.taki import (
    Draw,
    EndTurn,
    PlayCard,
    React,
    TakiConfig,
    TakiDeal,
    TakiState,
)


def _c(token: str) -> int:
    return taki.card_from_token(token)


def _game(hands: list[list[str]], top: list[str], **config: object) -> TakiState:
    dealt = tuple(tuple(_c(t) for t in h) for h in hands)
    first = tuple(_c(t) for t in top)
    rest = Counter(taki.deck()) - Counter(c for h in dealt for c in h) - Counter(first)
    deal = TakiDeal(hands=dealt, draw_pile=first + tuple(sorted(rest.elements())))
    return taki.new_game(len(hands), TakiConfig(hand_size=len(hands[0]), **config), deal=deal)  # type: ignore[arg-type]


def test_default_plays_the_lowest_playable_card_at_a_turn_start_and_facing_a_stack() -> None:
    """The default keeps the game moving: a seat that faults (or forfeited) plays rather than draws."""
    state = _game([["R5", "R+2", "Y3"], ["G1", "G3", "G4"]], ["R1"])
    assert taki.default_action(state, 0) == PlayCard(_c("R5"))
    stacked = taki.apply(state, 0, PlayCard(_c("R+2")))
    assert taki.observe(stacked, 1).step == "stack" and taki.default_action(stacked, 1) == Draw()  # no +2, no King
    answered = _game([["R5", "R+2", "Y3"], ["G+2", "G3", "G4"]], ["R1"])
    stacked = taki.apply(answered, 0, PlayCard(_c("R+2")))
    assert taki.default_action(stacked, 1) == PlayCard(_c("G+2"))


def test_default_draws_when_nothing_can_be_played() -> None:
    state = _game([["Y3", "G7", "B5"], ["G1", "G3", "G4"]], ["R1"])
    assert taki.default_action(state, 0) == Draw()


def test_default_declares_last_card_when_it_may() -> None:
    state = _game([["R5", "Y3"], ["G1", "G3"]], ["R1"])
    assert taki.default_action(state, 0) == PlayCard(_c("R5"), last_card=True)


def test_default_goes_on_with_a_run_and_ends_it_when_nothing_fits() -> None:
    state = _game([["RTAKI", "R5", "KING"], ["G1", "G3", "G4"]], ["R1"])
    in_run = taki.apply(state, 0, PlayCard(_c("RTAKI")))
    assert taki.default_action(in_run, 0).card == _c("R5")  # type: ignore[union-attr]
    only_taki = _game([["RTAKI", "Y5", "G7"], ["G1", "G3", "G4"]], ["R1"])
    assert taki.default_action(taki.apply(only_taki, 0, PlayCard(_c("RTAKI"))), 0) == EndTurn()
    after_king = taki.apply(state, 0, PlayCard(_c("KING")))
    assert isinstance(taki.default_action(after_king, 0), PlayCard)  # the King frees a card: play it


def test_default_after_a_plus_is_the_lowest_playable_card() -> None:
    state = _game([["RPLUS", "R7", "R5", "Y3"], ["G1", "G3", "G4", "G5"]], ["R1"])
    owed = taki.apply(state, 0, PlayCard(_c("RPLUS")))
    assert taki.default_action(owed, 0) == PlayCard(_c("R5"))


def test_default_without_draw_when_playable_is_the_first_play() -> None:
    state = _game([["Y3", "R7", "R5"], ["G1", "G3", "G4"]], ["R1"], draw_when_playable=False)
    assert taki.legal_actions(state, 0) == (PlayCard(_c("R5")), PlayCard(_c("R7")))
    assert taki.default_action(state, 0) == PlayCard(_c("R5"))


def test_default_declines_a_breaker_question() -> None:
    state = _game([["+3", "R5", "Y3"], ["BREAKER", "G3", "G4"]], ["R1"])
    asked = taki.apply(state, 0, PlayCard(_c("+3")))
    view = taki.observe(asked, 1)
    assert (view.kind, view.step, view.legal) == (taki.REACT, "react", (React(False), React(True)))
    assert taki.default_action(asked, 1) == React(False)
    assert taki.observe(asked, 0).kind is None and taki.observe(asked, 0).current_seat == 0


def test_who_is_asked_about_a_breaker_is_invisible_to_the_others() -> None:
    """Seat 2 or seat 3 holds the Breaker: seat 1 (and seat 0, the +3's player) see the same views either way,
    before and after the question is declined (a decline leaves no event)."""
    common = [["+3", "R5", "Y3"], ["G1", "G3", "G4"]]
    asked_2 = _game(common + [["BREAKER", "B1", "B3"], ["B4", "B5", "B6"]], ["R1"])
    asked_3 = _game(common + [["B4", "B1", "B3"], ["BREAKER", "B5", "B6"]], ["R1"])
    asked_2 = taki.apply(asked_2, 0, PlayCard(_c("+3")))
    asked_3 = taki.apply(asked_3, 0, PlayCard(_c("+3")))
    assert taki.pending_seats(asked_2) == (2,) and taki.pending_seats(asked_3) == (3,)
    for seat in (0, 1):
        assert taki.observe(asked_2, seat) == taki.observe(asked_3, seat)
    declined_2 = taki.apply(asked_2, 2, React(False))
    declined_3 = taki.apply(asked_3, 3, React(False))
    for seat in (0, 1):
        assert taki.observe(declined_2, seat).history == taki.observe(declined_3, seat).history
        assert [e.kind for e in taki.observe(declined_2, seat).history][-3:] == ["draw", "draw", "draw"]
