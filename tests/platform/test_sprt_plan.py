"""The block plan of an SPRT (``arena.tournaments.sprt_plan``): who sits where at the two tables of each block; the field's
disjointness, owners, balance and seat rotation; refusals of fields that cannot fill the tables."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.core.specs import match_id
from arena.tournaments.deals import owner_classes
from arena.tournaments.sprt_plan import SprtParams, SprtPlanError, block_specs, check_field, plan_block


def params(field: list[str], seats: int, owners: dict[str, str] | None = None, **kwargs: object) -> SprtParams:
    return SprtParams(v1="me@1", v2="me@2", seats=seats, field=tuple(field),
                      field_owners=owner_classes(field, owners), **kwargs)  # type: ignore[arg-type]


def test_without_a_field_the_block_is_a_game_pair_on_rotating_seats() -> None:
    p = params([], 2)
    seats = []
    for b in range(8):
        block = plan_block(p, b)
        assert block.v1_table[block.seat] == "me@1" and block.v2_table[block.seat] == "me@2"
        assert sorted(block.v1_table) == sorted(block.v2_table) == ["me@1", "me@2"]
        assert block.v1_table == tuple(reversed(block.v2_table))
        seats.append(block.seat)
    assert seats == [0, 0, 1, 1, 0, 0, 1, 1]


def test_without_a_field_only_two_seats() -> None:
    with pytest.raises(SprtPlanError, match="3 seats need a field of at least 4"):
        check_field(params([], 3))


@pytest.mark.parametrize("n, k", [(2, 2), (4, 3), (5, 3), (7, 4), (6, 4), (12, 5), (18, 10)])
def test_field_tables_are_disjoint_balanced_and_rotate_seats(n: int, k: int) -> None:
    field = [f"f{i}@1" for i in range(n)]
    p = params(field, k)
    with_v1: Counter[str] = Counter()
    with_v2: Counter[str] = Counter()
    seat_of_v: Counter[int] = Counter()
    blocks = 2 * k * n  # a whole number of seat cycles and of field windows
    for b in range(blocks):
        block = plan_block(p, b)
        t1, t2 = block.v1_table, block.v2_table
        assert len(t1) == len(t2) == k
        assert t1[block.seat] == "me@1" and t2[block.seat] == "me@2"
        f1 = [x for x in t1 if x != "me@1"]
        f2 = [x for x in t2 if x != "me@2"]
        assert len(set(f1)) == len(set(f2)) == k - 1  # nobody twice at one table
        assert not set(f1) & set(f2), f"block {b}: a field bot at both tables {t1} {t2}"
        with_v1.update(f1)
        with_v2.update(f2)
        seat_of_v[block.seat] += 1
    assert with_v1 == with_v2  # every field bot met V1 exactly as often as V2
    assert set(with_v1) == set(field)  # every field bot plays
    assert len(set(with_v1.values())) == 1  # and equally often (owners all distinct: the windows tile the field)
    assert set(seat_of_v.values()) == {blocks // k}  # V at every seat equally often


def test_owners_never_sit_at_both_tables() -> None:
    field = ["a@1", "a@2", "a@3", "b@1", "b@2", "c@1"]  # three owners by NAME
    p = params(field, 3)
    for b in range(40):
        block = plan_block(p, b)
        o1 = {x.split("@")[0] for x in block.v1_table if not x.startswith("me@")}
        o2 = {x.split("@")[0] for x in block.v2_table if not x.startswith("me@")}
        assert not o1 & o2, f"block {b}: an owner at both tables {block}"


def test_owner_hashes_join_names() -> None:
    field = ["x@1", "y@1", "z@1", "w@1"]
    owners = {"x@1": "h1", "y@1": "h1", "z@1": "h2", "w@1": "h2"}
    p = params(field, 3, owners)
    assert p.field_owners == (0, 0, 1, 1)
    for b in range(12):
        block = plan_block(p, b)
        o1 = {owners[x] for x in block.v1_table if x in owners}
        o2 = {owners[x] for x in block.v2_table if x in owners}
        assert len(o1) == len(o2) == 1 and o1 != o2


@pytest.mark.parametrize("field, k, words", [
    (["a@1", "b@1", "c@1"], 3, "too small: with 3 seats each table of a block has 2 field bots"),
    (["a@1"], 2, "needs at least 2 x 1 = 2 bots, got 1"),
    (["a@1", "a@2", "a@3", "b@1"], 3, "owners cannot be split"),
    (["a@1", "a@2", "a@3", "a@4"], 2, "owners cannot be split"),
    (["a@1", "me@2"], 2, "cannot hold the versions under test: me@2"),
    (["a@1", "a@1", "b@1"], 2, "listed more than once: a@1"),
])
def test_fields_that_cannot_fill_the_tables_are_refused(field: list[str], k: int, words: str) -> None:
    with pytest.raises(SprtPlanError, match=words.replace("(", r"\(")):
        check_field(params(field, k))


def test_same_versions_refused() -> None:
    with pytest.raises(SprtPlanError, match="same bot"):
        check_field(SprtParams(v1="me@1", v2="me@1"))


def test_block_specs_share_a_deal_and_number_matches_by_block() -> None:
    p = params(["a@1", "b@1", "c@1", "d@1"], 3)
    t0, t1 = block_specs("t9", "take5", p, 5, {"limit": 66}, 250)
    assert (t0.match_id, t1.match_id) == (match_id("t9", 10), match_id("t9", 11))
    assert (t0.round, t0.deal, t0.table) == (0, 5, 0) and (t1.round, t1.deal, t1.table) == (0, 5, 1)
    assert t0.seats == plan_block(p, 5).v1_table and t1.seats == plan_block(p, 5).v2_table
    assert t0.tournament == "t9" and t0.deadline_ms == 250 and t0.config == {"limit": 66}


def test_params_round_trip() -> None:
    p = params(["a@1", "b@1"], 2, elo0=-5.0, elo1=10.0, alpha=0.1, beta=0.02, window=3, max_blocks=99)
    data = {**p.to_dict(), "formula": "text"}
    again = SprtParams.from_dict(data)
    assert again == p and again.extra == {"formula": "text"}
    with pytest.raises(SprtPlanError, match="malformed"):
        SprtParams.from_dict({"v1": "a@1"})
