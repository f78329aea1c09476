"""Taki errors: illegal actions name the action, the seat and the reason; nothing is changed by a refusal."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from arena_sdk.games import taki
from arena_sdk.games.base import IllegalActionError, RulesError
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
    """A game whose hands are given (all of one size) and whose draw pile starts with ``top``."""
    dealt = tuple(tuple(_c(t) for t in h) for h in hands)
    first = tuple(_c(t) for t in top)
    rest = Counter(taki.deck()) - Counter(c for h in dealt for c in h) - Counter(first)
    deal = TakiDeal(hands=dealt, draw_pile=first + tuple(sorted(rest.elements())))
    return taki.new_game(len(hands), TakiConfig(hand_size=len(hands[0]), **config), deal=deal)  # type: ignore[arg-type]


@pytest.fixture
def start() -> TakiState:
    return _game([["R5", "RTAKI", "Y3"], ["G1", "G3", "BREAKER"], ["B1", "B3", "B4"]], ["R1"])


def test_wrong_seat(start: TakiState) -> None:
    with pytest.raises(IllegalActionError, match=r"PlayCard\(G1\) by seat 1 refused \(turn 0\): it is seat 0's decision, not seat 1's"):
        taki.apply(start, 1, PlayCard(_c("G1")))
    for seat in (3, -1, True, 0.0, "0", None):
        with pytest.raises(IllegalActionError, match="no such seat in a 3-player game"):
            taki.apply(start, seat, Draw())  # type: ignore[arg-type]


def test_card_not_held(start: TakiState) -> None:
    with pytest.raises(IllegalActionError, match=r"PlayCard\(R7\) by seat 0 .*R7 is not in seat 0's hand"):
        taki.apply(start, 0, PlayCard(_c("R7")))
    for bad in (999, -3, "R5", None, 5.0, True):
        with pytest.raises(IllegalActionError, match="is not a Taki card"):
            taki.apply(start, 0, PlayCard(bad))  # type: ignore[arg-type]


def test_non_matching_card(start: TakiState) -> None:
    with pytest.raises(IllegalActionError, match=r"Y3 matches neither the colour to follow \(R\) nor the symbol to follow \(1\)"):
        taki.apply(start, 0, PlayCard(_c("Y3")))


def test_declarations_where_they_do_not_belong(start: TakiState) -> None:
    with pytest.raises(IllegalActionError, match="'last card' may be declared only on a play that leaves exactly one card; this one leaves 2"):
        taki.apply(start, 0, PlayCard(_c("R5"), last_card=True))
    with pytest.raises(IllegalActionError, match="close_run applies only to a card played inside a run"):
        taki.apply(start, 0, PlayCard(_c("R5"), close_run=True))
    with pytest.raises(IllegalActionError, match="a lone TAKI or SuperTaki cannot be closed by its player"):
        taki.apply(start, 0, PlayCard(_c("RTAKI"), close_run=True))
    with pytest.raises(IllegalActionError, match="only a Change Color names a colour; R5 takes color=None"):
        taki.apply(start, 0, PlayCard(_c("R5"), color=2))
    with pytest.raises(IllegalActionError, match="close_run and last_card must be True or False"):
        taki.apply(start, 0, PlayCard(_c("R5"), last_card=1))  # type: ignore[arg-type]


def test_change_color_needs_a_colour() -> None:
    state = _game([["CHCOLOR", "Y3"], ["G1", "G3"]], ["R1"])
    for color in (None, 4, -1, "B", True):
        with pytest.raises(IllegalActionError, match="a Change Color must name a colour 0..3"):
            taki.apply(state, 0, PlayCard(_c("CHCOLOR"), color=color))  # type: ignore[arg-type]
    assert taki.apply(state, 0, PlayCard(_c("CHCOLOR"), color=taki.BLUE, last_card=True)).follow_color == taki.BLUE


def test_wrong_action_kinds(start: TakiState) -> None:
    with pytest.raises(IllegalActionError, match="no \\+3 Breaker question is pending"):
        taki.apply(start, 0, React(True))
    with pytest.raises(IllegalActionError, match="EndTurn ends a run or the turn after a King"):
        taki.apply(start, 0, EndTurn())
    with pytest.raises(IllegalActionError, match="takes a PlayCard, Draw or EndTurn"):
        taki.apply(start, 0, "draw")  # type: ignore[arg-type]


def test_react_answers() -> None:
    state = _game([["+3", "R5", "Y3"], ["G1", "G3", "BREAKER"]], ["R1"])
    state = taki.apply(state, 0, PlayCard(_c("+3")))
    assert taki.decision_kind(state, 1) == taki.REACT and taki.decision_kind(state, 0) is None
    with pytest.raises(IllegalActionError, match="the pending decision is TAKI_REACT, which takes a React"):
        taki.apply(state, 1, PlayCard(_c("G1")))
    with pytest.raises(IllegalActionError, match="React.play must be True or False"):
        taki.apply(state, 1, React(1))  # type: ignore[arg-type]
    assert taki.default_action(state, 1) == React(False)


def test_drawing_inside_a_run_and_after_a_king() -> None:
    state = _game([["RTAKI", "R5", "Y3"], ["G1", "G3", "G4"]], ["R1"])
    in_run = taki.apply(state, 0, PlayCard(_c("RTAKI")))
    with pytest.raises(IllegalActionError, match="no drawing inside one's own run"):
        taki.apply(in_run, 0, Draw())
    state = _game([["KING", "R5", "Y3"], ["G1", "G3", "G4"]], ["R1"])
    after_king = taki.apply(state, 0, PlayCard(_c("KING")))
    with pytest.raises(IllegalActionError, match="no drawing after a King"):
        taki.apply(after_king, 0, Draw())


def test_a_refusal_changes_nothing_and_apply_never_mutates(start: TakiState) -> None:
    before = copy.deepcopy(start)
    with pytest.raises(IllegalActionError):
        taki.apply(start, 0, PlayCard(_c("Y3")))
    after = taki.apply(start, 0, PlayCard(_c("R5")))
    assert start == before and start.hands == before.hands and start.unseen == before.unseen
    assert after != start


def test_the_game_over_refuses_everything() -> None:
    state = _game([["R5"], ["G1"]], ["R1"])
    over = taki.apply(state, 0, PlayCard(_c("R5")))
    assert taki.is_over(over) and taki.pending_seats(over) == ()
    with pytest.raises(IllegalActionError, match="the game is over"):
        taki.apply(over, 1, Draw())
    assert taki.legal_actions(over, 1) == () and taki.decision_kind(over, 1) is None
    with pytest.raises(IllegalActionError, match="no default action for seat 1"):
        taki.default_action(over, 1)


def test_outcome_before_the_end_and_bad_observers(start: TakiState) -> None:
    with pytest.raises(RulesError, match="the game is not over"):
        taki.outcome(start)
    for seat in (3, -1, True, "0"):
        with pytest.raises(RulesError, match="no seat"):
            taki.observe(start, seat)  # type: ignore[arg-type]
    assert taki.legal_actions(start, 1) == () and taki.legal_actions(start, True) == ()  # type: ignore[arg-type]


def test_action_reprs_name_the_card() -> None:
    assert repr(PlayCard(_c("CHCOLOR"), color=3, close_run=False, last_card=True)) == "PlayCard(CHCOLOR, color=B, last_card=True)"
    assert repr(PlayCard(999)) == "PlayCard(999)"
    assert taki.action_text(PlayCard(_c("R+2"), close_run=True, last_card=True)) == "R+2 close last"
