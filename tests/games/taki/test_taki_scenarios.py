"""Taki scenario tests driven by the data files in ``scenarios/`` (python-chess's perft files are the model).

Every file is a small game with an explicit deal and the actions of each seat; its expected values were worked
out by hand from ``docs/rules/taki.md``, never by running the engine. Format of a file:

* ``players`` (2..10), optional ``config`` (keyword arguments of ``TakiConfig``; small ``hand_size``s keep the
  positions short), optional ``seed`` (the generator of later chance events), ``covers`` (the rule situations the
  file exercises), ``description``;
* ``hands``: one list of card tokens per seat; ``draw_top``: the first cards of the draw pile, top first (its
  first card starts the discard pile); the rest of the 116-card deck follows in ascending card order (R1, R1, R3,
  ..., then Y, G, B, then SUPERTAKI, KING, +3, BREAKER, CHCOLOR);
* optional ``position``: a mid-game table set up after the start (the cards stay the 116 of the deck):
  ``hands`` (per seat, or ``"rest"`` for the seat that holds every card not placed elsewhere), ``draw_pile`` (top
  first), ``discard_pile`` (bottom first; its coloured top card sets what to follow); the history starts empty;
* ``steps``, each one of:

  - ``{"seat": s, "do": "<action>"}``: the seat must be pending and the action is applied;
  - ``{"seat": s, "refuse": "<action>", "match": "<regex>"}``: the action must raise ``IllegalActionError``
    whose message matches;
  - ``{"expect": {...}}``: values the state must have now (keys in ``_check``; ``note`` is a comment).

Actions are written ``R5``, ``CHCOLOR B`` (named colour), ``R5 close`` (close the run), ``R5 last`` ("last card"),
``R5 close last``, ``draw``, ``end``, ``break`` / ``decline`` (the +3 Breaker question). Events are written
``kind s<seat> <card> <colour> x<count> closed last (<reason>)`` with only the parts the event has, e.g.
``play s0 CHCOLOR B``, ``draw s1 x3 (+3)``, ``skip s2``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena_sdk.games import taki
from arena_sdk.games.base import IllegalActionError
from arena_sdk.games.taki import (
    Draw,
    EndTurn,
    PlayCard,
    React,
    TakiConfig,
    TakiDeal,
    TakiState,
)

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
FILES = sorted(SCENARIOS.glob("*.json"))

# The rule situations taki.md and the brief ask the scenario files to cover.
REQUIRED_COVERAGE = {
    # every action card
    "stop",
    "stop_two_players",
    "change_direction",
    "plus",
    "plus2_stacking",
    "king_cancels_stack",
    "change_color",
    "taki_run",
    "supertaki",
    "plus3",
    "plus3_breaker_reaction",
    "breaker_own_turn",
    # readings
    "other_colour_taki_in_own_run_refused",
    "open_run_continued_by_next",
    "lone_taki_cannot_be_closed",
    "only_last_card_of_run_acts",
    "first_discard_action_ignored",
    "colourless_first_discard_put_back",
    "plus_as_final_card_draws",
    "change_color_refused_on_stack_king_accepted",
    "breaker_only_plus3_player_draws",
    "missing_last_card_costs_four",
    "reshuffle",
    "draw_forgiven_no_card_anywhere",
    "turn_cap_ranking",
    "stairs_stage_change",
    # further situations the files pin down
    "plus3_all_decline",
    "breaker_reactor_wins",
    "stairs_breaker_reactor",
    "final_plus3_nobody_draws",
    "king_final_card_wins",
    "king_free_card",
    "change_color_ends_run",
    "lone_taki_other_colour",
    "open_run_after_stop",
    "open_run_own_continuation",
    "plus2_last_card_of_open_run",
    "run_plus_last_drawn_run_stays_open",
    "run_plus_last_owed_card_ends_open_run",
    "last_card_declared",
    "stairs_plus_final",
    "config_draw_when_playable",
    "config_plus_draw_when_playable",
}

COUNTED = {"draw", "reshuffle", "stage", "cap"}


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        return json.load(f)


def _cards(tokens: list[str]) -> tuple[int, ...]:
    return tuple(taki.card_from_token(t) for t in tokens)


def _tokens(cards: tuple[int, ...] | list[int]) -> list[str]:
    return [taki.card_token(c) for c in cards]


def _deal(data: dict[str, Any]) -> TakiDeal:
    hands = tuple(_cards(h) for h in data["hands"])
    top = _cards(data.get("draw_top", []))
    rest = Counter(taki.deck()) - Counter(c for h in hands for c in h) - Counter(top)
    placed = Counter(c for h in hands for c in h) + Counter(top)
    assert not placed - Counter(taki.deck()), f"the file places more copies than the deck has: {placed - Counter(taki.deck())}"
    return TakiDeal(hands=hands, draw_pile=top + tuple(sorted(rest.elements())))


def _position(state: TakiState, raw: dict[str, Any]) -> TakiState:
    """A mid-game table: the given piles and hands; the seat marked "rest" holds every other card."""
    draw_pile = _cards(raw.get("draw_pile", []))
    discard = _cards(raw["discard_pile"])
    hands: list[tuple[int, ...] | None] = [None if h == "rest" else _cards(h) for h in raw["hands"]]
    placed = Counter(draw_pile) + Counter(discard) + Counter(c for h in hands if h is not None for c in h)
    rest = Counter(taki.deck()) - placed
    assert not placed - Counter(taki.deck()), "the position places more copies than the deck has"
    full = [tuple(sorted(rest.elements())) if h is None else tuple(sorted(h)) for h in hands]
    top = discard[-1]
    assert taki.card_color(top) is not None, "a position's leading card must be coloured"
    return dataclasses.replace(
        state,
        hands=tuple(full),
        draw_pile=draw_pile,
        discard_pile=discard,
        follow_color=taki.card_color(top),
        follow_symbol=taki.card_symbol(top),
        unseen=((),) * state.num_players,
    )


def _start(data: dict[str, Any]) -> TakiState:
    state = taki.new_game(
        data["players"], TakiConfig(**data.get("config", {})), seed=data.get("seed"), deal=_deal(data)
    )
    if "position" in data:
        state = _position(state, data["position"])
    return state


def _action(text: str) -> Any:
    words = text.split()
    head, mods = words[0], words[1:]
    if head == "draw":
        return Draw()
    if head == "end":
        return EndTurn()
    if head in ("break", "decline"):
        return React(head == "break")
    color = None
    for word in mods:
        if word in ("R", "Y", "G", "B"):
            color = taki.color_from_token(word)
        else:
            assert word in ("close", "last"), f"unknown action word {word!r} in {text!r}"
    return PlayCard(taki.card_from_token(head), color, "close" in mods, "last" in mods)


def _event_text(event: taki.Event) -> str:
    parts = [event.kind]
    if event.seat is not None:
        parts.append(f"s{event.seat}")
    if event.card is not None:
        parts.append(event.card)
    if event.color is not None:
        parts.append(event.color)
    if event.kind in COUNTED:
        parts.append(f"x{event.count}")
    if event.closed:
        parts.append("closed")
    if event.declared:
        parts.append("last")
    if event.reason is not None:
        parts.append(f"({event.reason})")
    return " ".join(parts)


def _run_json(run: taki.RunInfo | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "color": taki.color_token(run.color),
        "seat": run.seat,
        "cards": run.cards,
        "continued": run.continued,
        "open": run.open,
    }


def _lists(value: Any) -> Any:
    """Tuples as lists, to compare with JSON."""
    if isinstance(value, (tuple, list)):
        return [_lists(v) for v in value]
    return value


def _sorted_tokens(tokens: list[str]) -> list[str]:
    return _tokens(sorted(_cards(tokens)))


def _check(state: TakiState, expect: dict[str, Any], where: str) -> None:
    pending = taki.pending_seats(state)
    pending_seat = pending[0] if pending else None
    views = [taki.observe(state, s) for s in range(state.num_players)]
    actual: dict[str, Any] = {
        "pending": pending_seat,
        "kind": taki.decision_kind(state, pending_seat) if pending_seat is not None else None,
        "step": views[pending_seat].step if pending_seat is not None else None,
        "counts": [len(h) for h in state.hands],
        "leading": taki.card_token(state.discard_pile[-1]),
        "follow": [taki.color_token(state.follow_color), taki.SYMBOL_TOKENS[state.follow_symbol]],
        "stack": state.stack,
        "run": _run_json(state.run),
        "direction": state.direction,
        "turn": state.turn,
        "over": taki.is_over(state),
        "winner": state.winner,
        "stages": list(state.stages),
        "discard": _tokens(state.discard_pile),
        "draw_pile_size": len(state.draw_pile),
        "discard_pile_size": len(state.discard_pile),
        "reshuffles": state.reshuffles,
    }
    for key, want in expect.items():
        if key == "note":
            continue
        if key == "hands":
            got: Any = {seat: _tokens(state.hands[int(seat)]) for seat in want}
            want = {seat: _sorted_tokens(cards) for seat, cards in want.items()}
        elif key == "draw_top":
            got = _tokens(state.draw_pile[: len(want)])
        elif key == "draw_pile":
            got = _tokens(state.draw_pile)
        elif key == "legal":
            got = [taki.action_text(a) for a in taki.legal_actions(state, pending_seat)]  # type: ignore[arg-type]
        elif key == "history":
            got = {seat: [_event_text(e) for e in views[int(seat)].history] for seat in want}
        elif key == "outcome":
            result = taki.outcome(state)
            got = {"scores": list(result.scores), "ranks": list(result.ranks)}
        elif key == "views":
            got = {seat: {name: _lists(getattr(views[int(seat)], name)) for name in fields} for seat, fields in want.items()}
        elif key in actual:
            got = actual[key]
        else:
            raise AssertionError(f"{where}: unknown expect key {key!r}")
        assert got == want, f"{where}: {key} is {got!r}, expected {want!r}"
    # The views agree with the state on the public table.
    for seat, view in enumerate(views):
        assert view.hand == state.hands[seat]
        assert view.counts == tuple(len(h) for h in state.hands)
        assert view.leading == state.discard_pile[-1]


def _play(data: dict[str, Any], path: Path) -> TakiState:
    state = _start(data)
    for index, step in enumerate(data["steps"]):
        where = f"{path.name} step {index}"
        if "do" in step:
            seat = step["seat"]
            assert taki.pending_seats(state) == (seat,), (
                f"{where}: seat {seat} is not pending (pending: {taki.pending_seats(state)})"
            )
            action = _action(step["do"])
            assert action in taki.legal_actions(state, seat), f"{where}: {step['do']!r} is not listed as legal"
            state = taki.apply(state, seat, action)
        elif "refuse" in step:
            action = _action(step["refuse"])
            assert action not in taki.legal_actions(state, step["seat"]), f"{where}: {step['refuse']!r} is listed"
            with pytest.raises(IllegalActionError, match=step["match"]):
                taki.apply(state, step["seat"], action)
        elif "expect" in step:
            _check(state, step["expect"], where)
        else:
            raise AssertionError(f"{where}: unknown step {step!r}")
    return state


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario(path: Path) -> None:
    _play(_load(path), path)


def test_scenarios_cover_the_required_situations() -> None:
    covered = {tag for path in FILES for tag in _load(path).get("covers", ())}
    assert REQUIRED_COVERAGE <= covered, f"no scenario file covers {sorted(REQUIRED_COVERAGE - covered)}"


def test_scenario_files_replay_identically() -> None:
    """Every file played twice gives equal final states (only the deal, the seed and the actions drive it)."""
    for path in FILES:
        data = _load(path)
        assert _play(data, path) == _play(data, path), path.name


def test_the_action_notation_round_trips() -> None:
    for text in ("R5", "CHCOLOR B", "R+2 close last", "SUPERTAKI close", "draw", "end", "break", "decline"):
        assert taki.action_text(_action(text)) == text
    assert re.fullmatch(r"play s0 CHCOLOR B last", _event_text(taki.Event("play", 0, "CHCOLOR", color="B", declared=True)))
