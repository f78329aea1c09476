"""House bots' names and the paired test's block plan (pure: arena.worker.house, arena.tournaments.sprt_plan)."""

from __future__ import annotations

import pytest

from arena.core.specs import is_house_bot
from arena.tournaments.sprt_plan import SprtParams, SprtPlanError, block_specs, plan_block
from arena.worker.house import HouseBotError, check_house_bot, house_names

HOUSE = ("house:heuristic", "house:montecarlo", "house:heuristic")


def test_house_bot_names_are_never_registered_names() -> None:
    assert check_house_bot("house:heuristic") == "heuristic"
    assert "house:montecarlo" in house_names() and all(is_house_bot(n) for n in house_names())
    assert not is_house_bot("heuristic") and not is_house_bot("house:") and not is_house_bot("house:a b")
    with pytest.raises(HouseBotError, match="house:random"):
        check_house_bot("house:grandmaster")


def test_a_paired_block_is_one_scenario_for_v1_and_v2_with_v1s_seat_rotating() -> None:
    params = SprtParams(v1="me@1", v2="me@2", seats=4, house=HOUSE, ladder=False)
    seats = set()
    for b in range(8):
        block = plan_block(params, b)
        assert block.seat == b % 4
        seats.add(block.seat)
        assert block.v1_table[block.seat] == "me@1" and block.v2_table[block.seat] == "me@2"
        others = [n for i, n in enumerate(block.v1_table) if i != block.seat]
        assert others == list(HOUSE) == [n for i, n in enumerate(block.v2_table) if i != block.seat]
        t0, t1 = block_specs("t9", "take5", params, b, {}, 1000)
        assert (t0.deal, t0.table, t1.deal, t1.table) == (b, 0, b, 1) and not t0.rated and not t1.rated
    assert seats == {0, 1, 2, 3}
    assert "do not count on the public ladder" in params.ladder_note and not params.head_to_head
    assert SprtParams.from_dict(params.to_dict()).house == HOUSE


@pytest.mark.parametrize("change, message", [
    ({"house": HOUSE[:2]}, "needs 3 house bots"),
    ({"house": ("heuristic", "house:random", "house:random")}, "house:<sample name>"),
    ({"field": ("a@1", "b@1")}, "takes no field"),
    ({"deals": "unique"}, "duplicate"),
    ({"ladder": True}, "public ladder"),
])
def test_a_paired_plan_refuses_what_would_break_the_pairing(change: dict, message: str) -> None:  # type: ignore[type-arg]
    base = {"v1": "me@1", "v2": "me@2", "seats": 4, "house": HOUSE, "ladder": False}
    with pytest.raises(SprtPlanError, match=message):
        plan_block(SprtParams(**{**base, **change}), 0)
