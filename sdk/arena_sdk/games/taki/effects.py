"""What a legal action does: plays, runs, draws, the +3 window and turn ends (internal to the Taki engine).

``rules.apply`` checks legality, copies the state's fields into a working dict ``w`` and calls one of the
``do_*`` functions below; they change ``w`` in place and append the public ``Event``s to ``ev``; ``record``
stores the events. ``w`` is the field dict of the new ``TakiState`` (``thaw``), published only once complete.
Nothing here checks legality again.

Reading numbers refer to taki.md "Readings fixed".
"""

from __future__ import annotations

import random
from typing import Any

from .cards import (
    _TOKENS,
    BREAKER,
    CARD_COLOR,
    CARD_SYMBOL,
    CHCOLOR,
    CHCOLOR_SYMBOL,
    CHDIR,
    COLOR_TOKENS,
    KING,
    PLUS,
    PLUS2,
    PLUS3,
    STOP,
    SUPERTAKI,
    TAKI,
)
from .state import (
    STEP_KING,
    STEP_OVER,
    STEP_PLUS,
    STEP_REACT,
    STEP_RUN,
    STEP_TURN,
    Event,
    RunInfo,
    TakiState,
)

Work = dict[str, Any]

LAST_CARD_PENALTY = 4
PLUS3_DRAW = 3
STAIRS_STAGE_WINS = 1  # emptying the hand at this stage wins the stairs
STAGE_WON = 0


def reshuffle_rng(seed: int, index: int) -> random.Random:
    """The generator of reshuffle number ``index`` (0, 1, ...) of the game with ``seed`` (reading 15):
    ``random.Random("taki:<seed>:reshuffle:<index>")`` (string seeds hash with SHA-512: same in every process)."""
    return random.Random(f"taki:{seed}:reshuffle:{index}")


def thaw(state: TakiState) -> tuple[TakiState, Work]:
    """A new, not yet published state object and its field dict ``w``, a copy of ``state``'s (the caller fills
    ``w`` in, then publishes; ``dataclasses.replace`` would be several times slower on this hot path, and
    ``dict.copy`` is the cheapest way to copy the fields)."""
    new = _new(TakiState)
    w = state.__dict__.copy()
    _setattr(new, "__dict__", w)
    return new, w


def record(w: Work, ev: list[Event], actor: int) -> None:
    """Store this step's events: ``actor`` just decided, so its unseen events restart with them; every other
    seat's grow by them."""
    unseen = w["unseen"]
    if ev:
        batch = tuple(ev)
        grown = [u + batch for u in unseen]
        grown[actor] = batch
        w["unseen"] = tuple(grown)
    else:
        w["unseen"] = unseen[:actor] + ((),) + unseen[actor + 1 :]


_new = object.__new__
_setattr = object.__setattr__


def _event(fields: tuple[object, ...]) -> Event:
    """An ``Event`` from all eight fields in order (``tuple.__new__`` skips the NamedTuple keyword handling)."""
    return _tuple_new(Event, fields)


_tuple_new = tuple.__new__


def _set_hand(w: Work, seat: int, hand: tuple[int, ...]) -> None:
    hands = w["hands"]
    w["hands"] = hands[:seat] + (hand,) + hands[seat + 1 :]


def draw(w: Work, ev: list[Event], seat: int, count: int, reason: str) -> int:
    """Move up to ``count`` cards from the top of the draw pile into ``seat``'s hand; returns how many it took.

    An empty draw pile is refilled lazily from the discard pile minus its top card, shuffled with the game's own
    generator (reading 15); when no card is left anywhere the rest of the draw is forgiven ("Setup and turn")."""
    pile = w["draw_pile"]
    if len(pile) >= count:
        taken = pile[:count]
        w["draw_pile"] = pile[count:]
    else:
        taken = pile
        pile = ()
        need = count - len(taken)
        while need:
            if not pile:
                discard = w["discard_pile"]
                if len(discard) <= 1:
                    break  # nothing anywhere: the rest is forgiven
                cards = list(discard[:-1])
                reshuffle_rng(w["seed"], w["reshuffles"]).shuffle(cards)
                w["reshuffles"] += 1
                w["discard_pile"] = discard[-1:]
                pile = tuple(cards)
                ev.append(Event("reshuffle", count=len(cards)))
            k = min(need, len(pile))
            taken += pile[:k]
            pile = pile[k:]
            need -= k
        w["draw_pile"] = pile
    if taken:
        hands = list(w["hands"])
        hands[seat] = tuple(sorted(hands[seat] + taken))
        w["hands"] = tuple(hands)
        if seat == w["current"]:
            w["last_play"] = False  # a draw that took no card is no change to the hand (reading 13)
            w["declared"] = False
    ev.append(_tuple_new(Event, ("draw", seat, None, len(taken), None, False, False, reason)))
    return len(taken)


def _emptied(w: Work, ev: list[Event], seat: int) -> bool:
    """``seat``'s hand is empty. Plain game: it wins. Stairs: it wins at stage 1, else it moves to the next stage
    and draws that many cards at once (taki.md "stairs", reading 12). Returns True when the game is over."""
    stages = w["stages"]
    if not w["config"].stairs or stages[seat] == STAIRS_STAGE_WINS:
        if stages:
            w["stages"] = stages[:seat] + (STAGE_WON,) + stages[seat + 1 :]
        w["mode"] = STEP_OVER
        w["winner"] = seat
        w["react_seat"] = -1
        ev.append(Event("win", seat))
        return True
    stage = stages[seat] - 1
    w["stages"] = stages[:seat] + (stage,) + stages[seat + 1 :]
    ev.append(Event("stage", seat, count=stage))
    draw(w, ev, seat, stage, "stage")
    return False


def end_turn(w: Work, ev: list[Event], skip: bool = False) -> None:
    """The current seat's turn ends: the "last card" penalty (reading 13), the turn count and cap (reading 14),
    then the next seat in the direction of play (the one after it when ``skip``: a Stop)."""
    cur = w["current"]
    if w["last_play"]:
        if not w["declared"] and len(w["hands"][cur]) == 1:
            draw(w, ev, cur, LAST_CARD_PENALTY, "last card")
        w["last_play"] = False
        w["declared"] = False
    turn = w["turn"] + 1
    w["turn"] = turn
    if turn >= w["config"].turn_cap:
        w["mode"] = STEP_OVER
        ev.append(Event("cap", count=turn))
        return
    step = w["direction"]
    nxt = (cur + step) % w["num_players"]
    if skip:
        ev.append(Event("skip", nxt))
        nxt = (nxt + step) % w["num_players"]
    w["current"] = nxt
    w["mode"] = STEP_TURN


def _act(w: Work, ev: list[Event], seat: int, card: int, emptied: bool) -> None:
    """The action of ``card`` played alone (or carried out after a stairs stage change, reading 12)."""
    sym = CARD_SYMBOL[card]
    if sym == STOP:
        end_turn(w, ev, skip=True)
    elif sym == CHDIR:
        w["direction"] = -w["direction"]
        end_turn(w, ev)
    elif sym == PLUS2:
        w["stack"] += 2
        end_turn(w, ev)
    elif sym == PLUS:
        w["mode"] = STEP_PLUS  # owes a second card (reading 4)
    elif sym == TAKI or card == SUPERTAKI:
        run = RunInfo(w["follow_color"], seat, 1, False, False)
        if emptied:  # stairs: the run ends with its only card, lone, hence open (reading 12)
            w["run"] = run._replace(open=True)
            end_turn(w, ev)
        else:
            w["run"] = run
            w["mode"] = STEP_RUN
    elif card == KING:
        w["stack"] = 0  # cancels the whole stack; nobody draws it
        w["mode"] = STEP_KING
    elif card == PLUS3:
        _plus3(w, ev, seat)
    elif card == BREAKER:  # own turn, no +3 active: its player draws three (taki.md "+3 Breaker")
        draw(w, ev, seat, PLUS3_DRAW, "breaker")
        end_turn(w, ev)
    else:
        end_turn(w, ev)


def finish_run(w: Work, ev: list[Event], run: RunInfo, closed: bool) -> None:
    """The run ends, closed or left open; its last card (the leading card) acts as if played alone, except a TAKI
    or SuperTaki (reading 7). A +2 ends even an open run: the stack is answered first (reading 9)."""
    card = w["discard_pile"][-1]
    w["run"] = None if closed else run._replace(open=True)
    sym = CARD_SYMBOL[card]
    if sym == TAKI or card == SUPERTAKI:
        end_turn(w, ev)
        return
    if sym == PLUS2:
        w["run"] = None
    _act(w, ev, run.seat, card, False)


def _plus_as_final_card(w: Work, ev: list[Event], seat: int) -> None:
    """A Plus that empties the hand makes its player draw one card at once, and the turn ends (reading 4). There
    is always a card to draw: at worst a reshuffle brings back the card the Plus covered."""
    draw(w, ev, seat, 1, "plus")
    end_turn(w, ev)


def do_play(w: Work, ev: list[Event], seat: int, card: int, color: int | None, close: bool, declare: bool) -> None:
    """``seat`` plays ``card`` (already checked legal)."""
    mode = w["mode"]
    hands = list(w["hands"])
    held = list(hands[seat])
    held.remove(card)
    hand = hands[seat] = tuple(held)
    w["hands"] = tuple(hands)
    w["discard_pile"] += (card,)
    w["last_play"] = True
    w["declared"] = declare  # the declaration on the turn's last play is the one that counts (reading 13)
    ccol = CARD_COLOR[card]
    sym = CARD_SYMBOL[card]
    run = w["run"]
    if run is not None and (
        mode == STEP_RUN or (mode == STEP_TURN and (ccol == run.color or card == SUPERTAKI))
    ):  # a card of one's own run, or continuing an open run (readings 6, 9)
        _play_in_run(w, ev, seat, card, color, close, declare, hand, run, mode)
        return
    # A card played alone (or a Plus's owed card, or a King's free card): any open run ends (reading 9).
    if run is not None:
        w["run"] = None
    if ccol >= 0:
        w["follow_color"] = ccol
        w["follow_symbol"] = sym
        named = None
    elif card == SUPERTAKI:  # takes the colour to follow; counts as a TAKI of it (reading 2)
        w["follow_symbol"] = TAKI
        named = COLOR_TOKENS[w["follow_color"]]
    elif card == CHCOLOR:
        w["follow_color"] = color
        w["follow_symbol"] = CHCOLOR_SYMBOL
        named = COLOR_TOKENS[color]  # type: ignore[index]
    else:  # King, +3, Breaker leave what to follow unchanged (reading 2)
        named = None
    ev.append(_tuple_new(Event, ("play", seat, _TOKENS[card], 0, named, False, declare, None)))
    if not hand:
        if sym == PLUS:
            _plus_as_final_card(w, ev, seat)
            return
        if _emptied(w, ev, seat):  # wins before the card's action (reading 12)
            return
        _act(w, ev, seat, card, True)
        return
    if sym < STOP or card == CHCOLOR:  # a number card or a Change Color: the turn simply ends
        end_turn(w, ev)
        return
    _act(w, ev, seat, card, False)


def _play_in_run(
    w: Work,
    ev: list[Event],
    seat: int,
    card: int,
    color: int | None,
    close: bool,
    declare: bool,
    hand: tuple[int, ...],
    run: RunInfo,
    mode: str,
) -> None:
    """A card of one's own run or of a continued open run; the run goes on unless the play closes it, is a Change
    Color, or empties the hand (readings 6-9, 12)."""
    run = RunInfo(run.color, seat, run.cards + 1, run.continued or mode == STEP_TURN, False)
    if card == CHCOLOR:  # ends the run; the named colour leads
        w["follow_color"] = color
        w["follow_symbol"] = CHCOLOR_SYMBOL
        w["run"] = None
        ev.append(_event(("play", seat, "CHCOLOR", 0, COLOR_TOKENS[color], False, declare, None)))  # type: ignore[index]
        if not hand and _emptied(w, ev, seat):
            return
        end_turn(w, ev)
        return
    w["follow_color"] = run.color
    w["follow_symbol"] = TAKI if card == SUPERTAKI else CARD_SYMBOL[card]
    named = COLOR_TOKENS[run.color] if card == SUPERTAKI else None
    ev.append(_event(("play", seat, _TOKENS[card], 0, named, close, declare, None)))
    if not hand:  # the run ends with the card that empties the hand (reading 12)
        closed = close or run.continued
        if CARD_SYMBOL[card] == PLUS:
            w["run"] = None if closed else run._replace(open=True)
            _plus_as_final_card(w, ev, seat)
            return
        if _emptied(w, ev, seat):
            return
        finish_run(w, ev, run, closed)
        return
    if close:
        finish_run(w, ev, run, True)
        return
    w["run"] = run
    w["mode"] = STEP_RUN


def do_draw(w: Work, ev: list[Event], seat: int) -> None:
    """``seat`` draws: the whole +2 stack, one card after an unanswerable Plus (an open run stays open), or one
    card at the start of a turn (ending any open run). The turn ends."""
    if w["mode"] == STEP_PLUS:
        draw(w, ev, seat, 1, "plus")
    elif w["stack"]:
        stack = w["stack"]
        w["stack"] = 0
        draw(w, ev, seat, stack, "stack")
    else:
        w["run"] = None
        draw(w, ev, seat, 1, "draw")
    end_turn(w, ev)


def do_end(w: Work, ev: list[Event], seat: int) -> None:
    """``EndTurn``: after a King the turn ends; in a run the run ends (closed when it continued another's open
    run, else left open: reading 8, 9) and its last card acts."""
    if w["mode"] == STEP_KING:
        ev.append(Event("end", seat))
        end_turn(w, ev)
        return
    run = w["run"]
    ev.append(Event("end", seat, closed=run.continued))
    finish_run(w, ev, run, run.continued)


def _react_order(w: Work, player: int) -> list[int]:
    n = w["num_players"]
    d = w["direction"]
    return [(player + d * i) % n for i in range(1, n)]


def _ask_from(w: Work, ev: list[Event], player: int, start: int) -> None:
    """Ask the next Breaker holder from position ``start`` of the play order after the +3's ``player``; when
    nobody is left to ask, every other seat draws three and the +3 player's turn ends (reading 10)."""
    order = _react_order(w, player)
    hands = w["hands"]
    for seat in order[start:]:
        if BREAKER in hands[seat]:
            w["mode"] = STEP_REACT
            w["react_seat"] = seat
            return
    w["mode"] = STEP_TURN
    w["react_seat"] = -1
    for seat in order:
        draw(w, ev, seat, PLUS3_DRAW, "+3")
    end_turn(w, ev)


def _plus3(w: Work, ev: list[Event], player: int) -> None:
    _ask_from(w, ev, player, 0)


def do_react(w: Work, ev: list[Event], seat: int, play: bool) -> None:
    """The asked seat answers. Declining leaves no public trace; the next holder is asked. Playing the Breaker
    cancels the +3: the +3's player draws three instead (after the reactor's stage change in the stairs) and its
    turn ends (readings 10, 11)."""
    player = w["current"]
    if not play:
        order = _react_order(w, player)
        _ask_from(w, ev, player, order.index(seat) + 1)
        return
    hand = w["hands"][seat]
    i = hand.index(BREAKER)
    hand = hand[:i] + hand[i + 1 :]
    _set_hand(w, seat, hand)
    w["discard_pile"] += (BREAKER,)
    w["mode"] = STEP_TURN
    w["react_seat"] = -1
    ev.append(Event("break", seat, "BREAKER"))
    if not hand and _emptied(w, ev, seat):
        return
    draw(w, ev, player, PLUS3_DRAW, "broken")
    end_turn(w, ev)
