"""arena.render.frames: the match viewer's frames per perspective (pure; no bots, no Redis, no browser).

Records are made by ``viewer_records.play_record`` (a game's engine played by a seeded random policy). The
property: no frame of the public or of seat k's perspective holds a card that perspective could not know then.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from viewer_records import play_record

from arena.render.base import RenderError
from arena.render.frames import ALL, PUBLIC, PerspectiveError, build_frames, seat_perspective
from arena_sdk.games import take5, taki
from arena_sdk.games.taki.cards import tokens

NOT_CARDS = frozenset({"seat", "row", "bullheads", "rule", "count", "color", "kind", "reason", "closed",
                       "declared", "play", "close_run", "last_card", "draw", "end_turn"})


def _cards(value: Any, keys: frozenset[str], found: list[Any], under: bool = False) -> list[Any]:
    """Every card under one of ``keys`` anywhere in ``value`` (nested dicts and lists)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in NOT_CARDS:
                _cards(v, keys, found, under or k in keys)
    elif isinstance(value, list):
        for v in value:
            _cards(v, keys, found, under)
    elif under and value is not None and not isinstance(value, bool):
        found.append(value)
    return found


TAKE5_CARD_KEYS = frozenset({"rows", "revealed", "placed", "waiting_row", "hands", "draft_pool", "draft_picks",
                             "action", "card", "taken"})


def _take5_hidden(state: take5.Take5State, viewer: int | None) -> set[int]:
    """Cards ``viewer`` (None: the public) cannot know in ``state``: the other seats' hands and the undealt
    cards (the rules' deck minus the cards in hands, on the rows, in the penalty piles and revealed this turn)."""
    hidden = {c for s, h in enumerate(state.hands) if s != viewer for c in h}
    on_table = ({c for r in state.rows for c in r} | {c for p in state.piles for c in p}
                | {p.card for p in state.revealed})
    in_hands = {c for h in state.hands for c in h}
    undealt = set(take5.deck(state.num_players, state.config)) - on_table - in_hands
    return hidden | undealt


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), players=st.integers(2, 5), policy=st.integers(0, 100))
def test_take5_public_and_seat_frames_hold_no_card_they_could_not_know(seed: int, players: int, policy: int) -> None:
    record, states = play_record("take5", players, seed, policy_seed=policy, config=take5.Take5Config(limit=20))
    for viewer in [None, *range(players)]:
        out = build_frames(record, PUBLIC if viewer is None else seat_perspective(viewer))
        frames = out.frames
        assert out.applied[-1] == len(record["decisions"]) - 1
        for frame, applied in zip(frames, out.applied):
            state = states[applied + 1]  # the state after the frame's decision
            before = states[max(applied, 0)]
            # a reveal's boards are between ``before`` and ``state``: what was hidden in both stays hidden
            if state.hand_number == before.hand_number:
                hidden = _take5_hidden(state, viewer) & _take5_hidden(before, viewer)
            elif frame["board"]["hand_number"] == state.hand_number:  # the next hand, dealt anew
                hidden = _take5_hidden(state, viewer)
            else:  # the last turn of the hand, revealed and placed
                hidden = _take5_hidden(before, viewer) - {p.card for p in state.previous_history[-1].plays}
            if frame["seat"] == viewer:  # its own action, known to it, from the hand it held
                frame = dict(frame, action=None)
            shown = set(_cards(frame, TAKE5_CARD_KEYS, []))
            assert not shown & hidden, (viewer, frame)
            assert set(frame["board"]["hands"]) <= ({str(viewer)} if viewer is not None else set())
            for fault in frame["faults"]:
                assert fault["detail"] == "" or fault["seat"] == viewer


def _taki_seen(states: list[Any], upto: int) -> set[str]:
    """Every card that was in the discard pile (public) in ``states[:upto + 1]``."""
    return {taki.card_token(c) for s in states[:upto + 1] for c in s.discard_pile} | {"BREAKER"}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), policy=st.integers(0, 100))
def test_taki_public_and_seat_frames_hold_no_card_they_could_not_know(seed: int, players: int, policy: int) -> None:
    config = taki.TakiConfig(turn_cap=60)
    record, states = play_record("taki", players, seed, policy_seed=policy, config=config)
    for viewer in [None, *range(players)]:
        out = build_frames(record, PUBLIC if viewer is None else seat_perspective(viewer))
        numbers = [f["decision"] for f in out.frames]
        # the decisions a perspective sees are numbered without gaps: a hidden +3 Breaker question leaves no trace
        assert all(b - a in (0, 1) for a, b in zip(numbers, numbers[1:])) and numbers[0] == -1, (viewer, numbers)
        for frame, applied in zip(out.frames, out.applied):
            after = states[applied + 1]
            board = frame["board"]
            own = board["hands"]
            assert set(own) <= ({str(viewer)} if viewer is not None else set())
            if viewer is not None:
                assert own[str(viewer)] == tokens(after.hands[viewer])
            rest = dict(frame, board={k: v for k, v in board.items() if k != "hands"})
            shown = {v for v in _cards(rest, frozenset({"card", "leading", "discard"}), []) if isinstance(v, str)}
            assert shown <= _taki_seen(states, applied + 1), (viewer, frame)
            assert board["counts"] == [len(h) for h in after.hands]
            if frame["kind"] == taki.REACT and frame["seat"] != viewer:
                assert frame["action"] == {"play": True}  # a declined Breaker question is never shown to others


def test_all_hands_shows_every_hand_and_every_action() -> None:
    record, states = play_record("take5", 3, 7, config=take5.Take5Config(limit=10))
    frames = build_frames(record, ALL).frames
    assert frames[0]["board"]["hands"] == {str(s): list(h) for s, h in enumerate(states[0].hands)}
    chosen = [f for f in frames if f["kind"] == take5.CHOOSE_CARD]
    assert chosen and all(f["action"] is not None for f in chosen)
    assert all(f["faults"][0]["detail"].startswith("secret-detail") for f in frames if f["faults"])


def test_take5_a_reveal_shows_the_cards_together_then_places_them_lowest_first() -> None:
    record, states = play_record("take5", 4, 11, fault_rate=0.0, config=take5.Take5Config(limit=5))
    frames = build_frames(record, PUBLIC).frames
    public_choices = [f for f in frames if f["kind"] == take5.CHOOSE_CARD]
    assert all(f["action"] is None for f in public_choices)  # a chosen card is hidden until the reveal
    reveal = next(i for i, f in enumerate(frames) if f["board"]["revealed"] and f["board"]["placed"] is None
                  and f["board"]["phase"] == "choose")
    cards = [p["card"] for p in frames[reveal]["board"]["revealed"]]
    assert cards == sorted(cards) and len(cards) == 4
    placed = [frames[reveal + 1 + k]["board"]["placed"] for k in range(4)
              if frames[reveal + 1 + k]["board"]["placed"] is not None]
    assert [p["card"] for p in placed] == cards[:len(placed)]
    # the rows shown on the last frame equal the rules' rows at the end
    last = states[-1]
    assert frames[-1]["board"]["rows"] == [list(r) for r in last.rows]
    assert frames[-1]["board"]["totals"] == list(last.totals)
    assert frames[-1]["board"]["hand_end"]["totals"] == list(last.totals)
    # every frame of a turn shares its round: one round per turn played
    assert {f["round"] for f in frames[1:]} == {f"{d['hand']}/{d['turn']}" for d in record["decisions"]}


def test_faults_are_drawn_on_their_turn_with_kind_and_latency() -> None:
    record, _ = play_record("taki", 3, 5, fault_rate=0.3, config=taki.TakiConfig(turn_cap=30))
    frames_out = build_frames(record, PUBLIC)
    frames = frames_out.frames
    with_faults = [f for f in frames if f["faults"]]
    assert len(with_faults) >= 1
    for f in with_faults:
        dec = record["decisions"][frames_out.applied[f["index"]]]
        assert f["faults"][0]["kind"] == "illegal" and f["faults"][0]["latency_ms"] == 3.5
        assert f["source"] == "default" == dec["source"] and f["faults"][0]["detail"] == ""
    json.dumps(build_frames(record, ALL).to_dict())  # JSON-ready


def test_a_bad_perspective_or_record_is_a_clear_error() -> None:
    record, _ = play_record("take5", 2, 3, config=take5.Take5Config(limit=5))
    with pytest.raises(PerspectiveError, match="seat:0..seat:1"):
        build_frames(record, "seat:2")
    with pytest.raises(RenderError, match="not a match record"):
        build_frames({"game": "take5"}, PUBLIC)
    tampered = dict(record, decisions=record["decisions"][:5] + [dict(record["decisions"][5], action={"card": 999})])
    out = build_frames(tampered, PUBLIC)
    assert "decision 5" in out.stopped and out.frames[-1]["decision"] == 4


def test_a_declined_breaker_question_leaves_no_trace_in_the_public_or_another_seats_frames() -> None:
    # seed 5, policy 2: decision 2 is a seat's +3 Breaker question, declined (asked only of a seat holding one)
    record, _ = play_record("taki", 3, 5, policy_seed=2, config=taki.TakiConfig(turn_cap=200))
    asked = record["decisions"][2]
    assert (asked["kind"], asked["action"]) == (taki.REACT, {"react": False})
    for viewer in (None, *(s for s in range(3) if s != asked["seat"])):
        out = build_frames(record, PUBLIC if viewer is None else seat_perspective(viewer))
        numbers = [f["decision"] for f in out.frames]
        plus3 = out.applied.index(2)  # no frame of its own: its effects show in the frame of the +3 that raised it
        assert out.frames[plus3]["action"]["card"] == "+3" and out.frames[plus3]["seat"] == 1
        assert 3 in out.applied
        assert sorted(set(numbers)) == list(range(-1, out.seen)) and out.seen == len(record["decisions"]) - 1
        assert not any(f["kind"] == taki.REACT and f["seat"] == asked["seat"] and f["decision"] <= 2
                       for f in out.frames)
        assert "applied" not in json.dumps(out.to_dict())
    everything = build_frames(record, ALL)
    assert everything.seen == len(record["decisions"]) and [f["decision"] for f in everything.frames][-1] == 131


def test_a_take5_row_choice_is_worded_with_rows_numbered_from_1_as_on_the_board() -> None:
    rows = []
    for seed in range(40):  # a game with a rule-4 row choice
        record, _ = play_record("take5", 4, seed, fault_rate=0.0, config=take5.Take5Config(limit=20))
        rows = [f for f in build_frames(record, PUBLIC).frames if f["kind"] == take5.CHOOSE_ROW]
        if rows:
            break
    assert rows, "no rule-4 row choice in 40 games"
    for f in rows:
        assert f["action_text"] == f"row {f['action']['row'] + 1}"
    chosen = [f for f in build_frames(record, ALL).frames if f["kind"] == take5.CHOOSE_CARD]
    assert chosen and all(f["action_text"] == f"card {f['action']['card']}" for f in chosen)
    hidden = [f for f in build_frames(record, PUBLIC).frames if f["kind"] == take5.CHOOSE_CARD]
    assert hidden and all("action_text" not in f for f in hidden)  # a hidden card is not worded either


def test_a_taki_action_is_worded_for_a_person_not_as_its_fields() -> None:
    """The viewer's step title read "turn — card CHCOLOR, color R": each action is worded now."""
    from arena.render.frames.taki import action_text

    assert action_text({"card": "CHCOLOR", "color": "R", "close_run": False, "last_card": False}) == \
        "plays CHCOLOR, calls red"
    assert action_text({"card": "G5", "color": None, "close_run": True, "last_card": True}) == \
        "plays G5, closes the run, last card"
    assert [action_text(a) for a in ({"draw": True}, {"end_turn": True}, {"play": True})] == \
        ["draws", "ends its turn", "breaks the +3"]
    record, _ = play_record("taki", 3, 5)
    worded = [f["action_text"] for f in build_frames(record, PUBLIC).frames if f.get("action") is not None]
    assert worded and all(w.startswith(("plays ", "draws", "ends its turn", "breaks")) for w in worded)


def test_the_frame_of_a_plus3_waits_for_the_breaker_question_so_it_looks_as_when_nobody_holds_one() -> None:
    # seed 5, policy 2: seat 1 plays a +3 (decision 1), seat 2 is asked about its Breaker and declines (decision 2)
    record, _ = play_record("taki", 3, 5, policy_seed=2, config=taki.TakiConfig(turn_cap=200))
    assert record["decisions"][1]["action"] == {"card": "+3"} and record["decisions"][2]["kind"] == taki.REACT

    def plus3_frames(rec: dict[str, Any], viewer: int | None) -> list[dict[str, Any]]:
        out = build_frames(rec, PUBLIC if viewer is None else seat_perspective(viewer))
        return [f for f in out.frames if f["seat"] == 1 and (f["action"] or {}).get("card") == "+3"]

    for viewer in (None, 0, 1):  # the public, a seat not asked, and the +3's own player
        frame = plus3_frames(record, viewer)[0]  # the first +3 of the game: decision 1
        events = [(e["kind"], e["seat"], e["reason"]) for e in frame["board"]["events"]]
        assert events[0][0] == "play" and ("draw", 2, "+3") in events  # the +3's draws, as with no Breaker out
        assert frame["board"]["current"] != 1  # the turn has moved on, as when nobody is asked
    asked_own = plus3_frames(record, 2)[0]  # the asked seat knows it is asked: its +3 frame comes at once
    assert not any(e["kind"] == "draw" for e in asked_own["board"]["events"])
    # followed live: while the question waits for its answer, the +3 is neither shown nor counted
    live = dict(record, result={"scores": [], "ranks": [], "faults": []})
    for cut, shown in ((2, 0), (3, 1)):
        partial = dict(live, decisions=record["decisions"][:cut])
        for viewer in (None, 0):
            out = build_frames(partial, PUBLIC if viewer is None else seat_perspective(viewer))
            assert len(plus3_frames(partial, viewer)) == shown and out.seen == 1 + shown, (cut, viewer)
            assert out.settled == len(out.frames)
