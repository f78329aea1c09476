"""Conversions between engine dataclasses and arena.v1 messages: round trips and refusals of bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_sdk import wire
from arena_sdk.games import take5
from arena_sdk.games.take5 import wire as take5_wire
from arena_sdk.pb import bot_pb2


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 10), steps=st.integers(0, 120),
       draft=st.booleans(), known=st.booleans())
def test_views_round_trip_through_protobuf(seed: int, players: int, steps: int, draft: bool, known: bool) -> None:
    state = take5.new_game(players, take5.Take5Config(draft=draft, known_cards=known), seed=seed)
    for i in range(steps):
        if take5.is_over(state):
            break
        seat = take5.pending_seats(state)[0]
        state = take5.apply(state, seat, take5.legal_actions(state, seat)[i % 3 % len(take5.legal_actions(state, seat))])
    for seat in range(players):
        view = take5.observe(state, seat)
        assert take5_wire.view_from_proto(take5_wire.view_to_proto(view), view.kind) == view


def _view(**changes) -> bot_pb2.Take5View:
    msg = bot_pb2.Take5View(seat=0, num_players=2, hand=[5, 9], totals=[0, 0], hand_penalties=[0, 0],
                            rows=[bot_pb2.Take5Row(cards=[c]) for c in (1, 20, 30, 40)])
    for name, value in changes.items():
        if name == "rows":
            del msg.rows[:]
            msg.rows.extend(bot_pb2.Take5Row(cards=r) for r in value)
        else:
            msg.ClearField(name)
            getattr(msg, name).extend(value) if isinstance(value, list) else setattr(msg, name, value)
    return msg


@pytest.mark.parametrize(("changes", "message"), [
    ({"hand": [20, 9]}, "cards twice"),
    ({"rows": [[10, 11, 12, 13, 14, 15], [20], [30], [40]]}, "1..5 ascending"),
    ({"rows": [[3, 2], [20], [30], [40]]}, "1..5 ascending"),
    ({"rows": [[1], [20], [30]]}, "4 rows"),
    ({"hand": list(range(50, 61))}, "at most 10"),
    ({"hand": [0]}, "outside 1..104"),
    ({"seat": 2}, "not below num_players"),
    ({"num_players": 11}, "2..10"),
    ({"totals": [0]}, "must hold 2 values"),
])
def test_inconsistent_views_are_refused(changes: dict, message: str) -> None:
    with pytest.raises(wire.WireError, match=message):
        take5_wire.view_from_proto(_view(**changes), take5.CHOOSE_CARD)


def test_draft_views_may_have_empty_rows() -> None:
    view = take5_wire.view_from_proto(_view(rows=[[], [], [], []], hand=[], draft_pool=[3, 4]), take5.DRAFT_PICK)
    assert view.rows == ((), (), (), ()) and view.draft_pool == (3, 4)


@pytest.mark.parametrize("limit", [0, -1, take5.MAX_LIMIT + 1, True, "66"])
def test_limit_out_of_range_is_refused(limit) -> None:
    with pytest.raises(wire.WireError, match="limit"):
        wire.config_from_dict("take5", {"limit": limit})


def test_configs_round_trip_and_zero_means_default() -> None:
    config = take5.Take5Config(limit=20, limit_rule="more_than", known_cards=True, draft=True)
    assert wire.config_from_proto("take5", wire.config_to_proto("take5", config)) == config
    assert wire.config_from_dict("take5", wire.config_to_dict("take5", config)) == config
    assert wire.config_from_proto("take5", bot_pb2.GameConfig(take5=bot_pb2.Take5Config())).limit == 66
    with pytest.raises(wire.WireError, match="unknown game"):
        wire.config_from_dict("chess", {})


@pytest.mark.parametrize(("kind", "action", "message"), [
    (take5.CHOOSE_CARD, bot_pb2.Take5Action(row=1), "needs Take5Action.card"),
    (take5.CHOOSE_ROW, bot_pb2.Take5Action(card=1), "needs Take5Action.row"),
    (take5.CHOOSE_CARD, bot_pb2.Take5Action(), "set nothing"),
])
def test_actions_of_the_wrong_kind_are_refused(kind: str, action, message: str) -> None:
    with pytest.raises(wire.WireError, match=message):
        wire.action_from_proto("take5", kind, bot_pb2.DecideResponse(take5=action))
    with pytest.raises(wire.WireError, match="no take5 action"):
        wire.action_from_proto("take5", kind, bot_pb2.DecideResponse())


@pytest.mark.parametrize("port", ["70000", "-1", "abc"])
def test_bot_refuses_a_port_out_of_range(port: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "sample_bots.random_bot", "--port", port],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--port" in proc.stderr and proc.stdout == ""
