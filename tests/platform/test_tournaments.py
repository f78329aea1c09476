"""Round robin: counts, ids, spec round trip and validation (the deal plan and the secret seed are tested in
test_deal_plan.py)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.errors import TournamentError
from arena.core.specs import BotTally, MatchSpec, bot_id, match_id, split_bot_ref
from arena.tournaments.round_robin import (
    MAX_MATCHES,
    round_robin,
    round_robin_formula,
    round_robin_size,
    validate_round_robin,
)
from arena.tournaments.standings import standings, tally_match

BOTS = ["delta", "alpha", "charlie", "bravo", "echo"]


def test_three_bots_three_seats_one_round_is_one_table_of_one_deal() -> None:
    specs = round_robin("t1", "take5", ["c", "a", "b"], 3, 1, seed=42, config={"limit": 20})
    assert len(specs) == 1 and sorted(specs[0].seats) == ["a", "b", "c"]
    assert specs[0].match_id == "t1-000000"
    assert (specs[0].round, specs[0].deal, specs[0].table, specs[0].seed) == (0, 0, 0, 0)  # no seed is queued
    assert all(s.config == {"limit": 20} and s.game == "take5" and s.tournament == "t1" for s in specs)


def test_rotate_is_three_rotations_of_one_deal() -> None:
    specs = round_robin("t1", "take5", ["c", "a", "b"], 3, 1, seed=42, deals="rotate")
    assert [s.seats for s in specs] == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    assert [s.match_id for s in specs] == ["t1-000000", "t1-000001", "t1-000002"]
    assert [(s.round, s.deal, s.table) for s in specs] == [(0, 0, 0), (0, 0, 1), (0, 0, 2)]


def test_count_is_combinations_times_rounds() -> None:
    specs = round_robin("t7", "take5", BOTS, 3, 2, seed=1)
    assert len(specs) == math.comb(5, 3) * 2 == 20 == round_robin_size(5, 3, 2)
    assert len({s.match_id for s in specs}) == 20
    assert specs[-1].match_id == "t7-000019"
    assert len(round_robin("t7", "take5", BOTS, 3, 2, seed=1, deals="rotate")) == 60 == round_robin_size(
        5, 3, 2, "rotate")
    subsets = {frozenset(s.seats) for s in specs if s.round == 0}
    assert subsets == {frozenset(c) for c in itertools.combinations(BOTS, 3)}


def test_the_plan_does_not_depend_on_the_seed_or_the_order_of_the_bots() -> None:
    a = round_robin("t1", "take5", BOTS, 4, 1, seed=123)
    b = round_robin("t1", "take5", list(reversed(BOTS)), 4, 1, seed=124)
    assert a == b


def test_spec_json_round_trip_and_older_jobs() -> None:
    spec = round_robin("t3", "take5", BOTS, 2, 1, seed=7, config={"limit": 30}, deadline_ms=250)[4]
    assert MatchSpec.from_dict(spec.to_dict()) == spec
    assert spec.deadline_ms == 250
    old = {"match_id": "t1-000004", "game": "take5", "seats": ["a", "b"], "seed": 9, "deadline_ms": 1000,
           "tournament": "t1", "round": 1, "subset": 2, "rotation": 1}
    assert MatchSpec.from_dict(old) == MatchSpec("t1-000004", "take5", ("a", "b"), 9, {}, 1000, "t1", 1, 2, 1)
    with pytest.raises(TournamentError, match="malformed"):
        MatchSpec.from_dict({"match_id": "t1-000000"})


def test_match_id_format() -> None:
    assert match_id("t12", 41) == "t12-000041"


@pytest.mark.parametrize(
    ("game", "bots", "k", "rounds", "message"),
    [
        ("chess", ["a", "b"], 2, 1, "unknown game 'chess'"),
        ("take5", ["a", "b", "a"], 2, 1, "more than once: a"),
        ("take5", ["a", "b"], 1, 1, "2..10 seats"),
        ("take5", ["a"], 2, 1, "tournament needs at least 2 bots, got 1"),
        ("take5", [f"b{i}" for i in range(12)], 11, 1, "2..10 seats"),
        ("take5", ["a", "b"], 3, 1, "at least 3 bots, got 2"),
        ("take5", ["a", "b"], 2, 0, "rounds must be at least 1"),
        ("take5", ["a", "b c"], 2, 1, "bad bot name 'b c'"),
        ("take5", ["a", ""], 2, 1, "bad bot name ''"),
        ("take5", [f"b{i}" for i in range(30)], 10, 1, f"the limit is {MAX_MATCHES}"),
    ],
)
def test_bad_requests_are_refused_with_the_reason(game: str, bots: list[str], k: int, rounds: int,
                                                  message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        validate_round_robin(game, bots, k, rounds)
    with pytest.raises(ValueError):  # TournamentError is a ValueError
        round_robin("t1", game, bots, k, rounds, seed=1)


def test_bad_seed_plan_and_deadline() -> None:
    with pytest.raises(TournamentError, match="seed"):
        round_robin("t1", "take5", ["a", "b"], 2, 1, seed=-1)
    with pytest.raises(TournamentError, match="seed"):
        round_robin("t1", "take5", ["a", "b"], 2, 1, seed=2**256)
    round_robin("t1", "take5", ["a", "b"], 2, 1, seed=2**256 - 1)
    with pytest.raises(TournamentError, match="unknown deal plan 'shuffle'; choose one of duplicate, unique, rotate"):
        round_robin("t1", "take5", ["a", "b"], 2, 1, seed=1, deals="shuffle")
    for bad in (0, 9, 60001):
        with pytest.raises(TournamentError, match=f"deadline_ms .* must be 10..60000 ms, got {bad}"):
            round_robin("t1", "take5", ["a", "b"], 2, 1, seed=1, deadline_ms=bad)
    assert [s.deadline_ms for s in round_robin("t1", "take5", ["a", "b"], 2, 2, seed=1, deadline_ms=10)] == [10, 10]
    assert round_robin("t1", "take5", ["a", "b"], 2, 1, seed=1, deadline_ms=60000)[0].deadline_ms == 60000


# -- bot references, formula, standings (pure) -----------------------------------------------------------------


def test_bot_references_and_formula() -> None:
    assert split_bot_ref("heur") == ("heur", None)
    assert split_bot_ref("heur@1.2.0+build-7") == ("heur", "1.2.0+build-7")
    assert bot_id("heur", "1.2") == "heur@1.2"
    for bad in ("", "a b", "a@", "@1", "a@1@2", "a@1 2", "x" * 65, "a@" + "1" * 65):
        with pytest.raises(TournamentError, match="bad bot name"):
            split_bot_ref(bad)
    validate_round_robin("take5", ["a@1", "a@2", "b"], 3, 1)  # versions of one NAME may meet
    assert round_robin_formula(4, 3, 2) == "C(4,3) subsets x 2 rounds = 8"
    assert round_robin_formula(4, 3, 2, "rotate") == "C(4,3) subsets x 3 seat rotations x 2 rounds = 24"
    assert round_robin_formula(5, 4, 1, "rotate") == "C(5,4) subsets x 4 seat rotations x 1 round = 20"
    assert round_robin_formula(2, 2, 3) == "C(2,2) subset x 3 rounds = 3"
    assert round_robin_formula(4, 3, 2, deal_count=8) == (
        "C(4,3) subsets x 2 rounds = 8, on 8 deals of at most T = max(1, min(k, B // k)) = 1 table")
    assert round_robin_formula(9, 3, 1, deal_count=37).endswith("on 37 deals of at most T = max(1, min(k, B // k)) "
                                                                "= 3 tables")
    assert round_robin_formula(3, 3, 1, "rotate", 1) == (
        "C(3,3) subset x 3 seat rotations x 1 round = 3, on 1 deal of at most T = k = 3 tables")
    for b, k, r in [(4, 3, 2), (7, 2, 5), (10, 10, 1)]:
        for plan in ("duplicate", "rotate"):
            assert round_robin_formula(b, k, r, plan).endswith(f"= {round_robin_size(b, k, r, plan)}")


def test_standings_of_a_hand_checked_case() -> None:
    tally: dict[str, BotTally] = {}
    tally_match(tally, ["a", "b", "c"], [5, 10, 10], [1, 2, 2])     # a ahead of both; b and c tie
    tally_match(tally, ["b", "c", "a"], [3, 20, 8], [1, 3, 2])      # b, then a, then c
    assert tally["a"] == BotTally(matches=2, score_sum=13.0, half_points=6, pairs=4, wins=3, losses=1,
                                  opponents={"b": 2, "c": 2})
    assert (tally["b"].half_points, tally["b"].wins, tally["b"].losses) == (5, 2, 1)
    ratings = {"a": 1600.0, "b": 1500.0, "c": 1400.0}
    lines = standings(tally, ratings, 1500.0)
    assert [(s.rank, s.bot, s.points, s.matches, s.mean_score, s.score_rate) for s in lines] == [
        (1, "a", 3.0, 2, 6.5, 0.75), (2, "b", 2.5, 2, 6.5, 0.625), (3, "c", 0.5, 2, 15.0, 0.125)]
    # performance = mean opponent rating + 400 * (wins - losses) / pairs
    assert [s.performance for s in lines] == [1450.0 + 200.0, 1500.0 + 100.0, 1550.0 - 300.0]
    # equal points share a rank; an opponent missing from the ratings counts as the initial rating
    tied: dict[str, BotTally] = {}
    tally_match(tied, ["x", "y"], [4, 4], [1, 1])
    assert [(s.rank, s.bot, s.points, s.performance) for s in standings(tied, {}, 1500.0)] == [
        (1, "x", 0.5, 1500.0), (1, "y", 0.5, 1500.0)]
    assert standings({}, {}, 1500.0) == []
    with pytest.raises(ValueError, match="one score and one rank per seat"):
        tally_match({}, ["a", "b"], [1], [1, 2])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from("abcdef"), min_size=2, max_size=6, unique=True),
                          st.lists(st.integers(0, 3), min_size=6, max_size=6)), min_size=1, max_size=15))
def test_properties_of_standings(matches: list[tuple[list[str], list[int]]]) -> None:
    tally: dict[str, BotTally] = {}
    for seats, raw in matches:
        scores = raw[:len(seats)]
        tally_match(tally, seats, scores, [1 + sum(o < s for o in scores) for s in scores])
    lines = standings(tally, {}, 1500.0)
    pairs = sum(len(seats) * (len(seats) - 1) for seats, _ in matches)
    assert sum(s.pairs for s in lines) == pairs
    assert sum(s.points for s in lines) == pairs / 2  # every pair hands out exactly one point
    assert sum(s.wins for s in lines) == sum(s.losses for s in lines)
    assert all(0.0 <= s.score_rate <= 1.0 for s in lines)
    assert [s.points for s in lines] == sorted((s.points for s in lines), reverse=True)
    assert all(s.rank == 1 + sum(o.points > s.points for o in lines) for s in lines)
    # with every rating equal, performance is that rating + 400 (wins - losses) / pairs
    assert all(s.performance == pytest.approx(1500.0 + 400 * (s.wins - s.losses) / s.pairs) for s in lines)
