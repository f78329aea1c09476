"""Swiss pairing for k-seat tables (arena.tournaments.swiss_pairing): rounds, byes, repeats, seats, standings."""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.core.errors import TournamentError
from arena.tournaments.swiss import counted_rounds
from arena.tournaments.swiss_pairing import SwissLine, SwissRound, bye_points, pair_round, swiss_standings


def bots(n: int) -> list[str]:
    return [f"b{i:03d}" for i in range(n)]


def play_rounds(n: int, k: int, rounds: int, seed: int = 0) -> list[SwissRound]:
    """``rounds`` rounds, each on a fresh shuffled standing (as results would reorder it)."""
    rng = random.Random(seed)
    standing = bots(n)
    history: list[SwissRound] = []
    for _ in range(rounds):
        history.append(pair_round(standing, k, history))
        rng.shuffle(standing)
    return history


def meetings(history: list[SwissRound]) -> Counter[frozenset[str]]:
    c: Counter[frozenset[str]] = Counter()
    for rnd in history:
        for t in rnd.tables:
            for a, b in itertools.combinations(t, 2):
                c[frozenset((a, b))] += 1
    return c


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), k=st.integers(2, 10), rounds=st.integers(1, 5), seed=st.integers(0, 1000))
def test_every_bot_once_per_round_tables_of_k(n: int, k: int, rounds: int, seed: int) -> None:
    if k > n:
        return
    for rnd in play_rounds(n, k, rounds, seed):
        seated = [b for t in rnd.tables for b in t] + list(rnd.byes)
        assert sorted(seated) == bots(n)
        assert all(len(t) == k for t in rnd.tables)
        assert len(rnd.byes) == n % k
        assert len(rnd.tables) == n // k


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), k=st.integers(2, 10), seed=st.integers(0, 1000))
def test_byes_spread_no_second_bye_before_everyone_had_one(n: int, k: int, seed: int) -> None:
    if k > n or n % k == 0:
        return
    rounds = n // (n % k)  # rounds * (n mod k) <= n
    byes = Counter(b for rnd in play_rounds(n, k, rounds, seed) for b in rnd.byes)
    assert max(byes.values()) == 1
    assert sum(byes.values()) == rounds * (n % k)


def test_byes_go_to_the_lowest_standing() -> None:
    rnd = pair_round(bots(10), 4, [])
    assert rnd.byes == ("b008", "b009")
    second = pair_round(bots(10), 4, [rnd])
    assert second.byes == ("b006", "b007")


def test_no_repeat_meetings_when_easy() -> None:
    for n, k, rounds in ((16, 4, 2), (16, 4, 3), (32, 4, 4), (16, 2, 8), (24, 3, 4)):
        history = play_rounds(n, k, rounds)
        assert max(meetings(history).values()) == 1, (n, k, rounds)


def test_no_repeat_with_the_same_standing() -> None:
    standing = bots(16)
    first = pair_round(standing, 4, [])
    assert first.tables[0] and sorted(first.tables[0]) == standing[:4]  # consecutive blocks at first
    second = pair_round(standing, 4, [first])
    assert max(meetings([first, second]).values()) == 1


def test_similar_standing_at_a_table() -> None:
    standing = bots(16)
    first = pair_round(standing, 4, [])
    assert [sorted(t) for t in first.tables] == [standing[i:i + 4] for i in range(0, 16, 4)]
    # round 2 without repeats seats one bot of each block per table; the least spread: mins 0..3, maxes 12..15
    second = pair_round(standing, 4, [first])
    pos = {b: i for i, b in enumerate(standing)}
    assert sum(max(pos[b] for b in t) - min(pos[b] for b in t) for t in second.tables) == 48


def test_seat_balance() -> None:
    # Bound 2, not 1: when two bots that both held seat 0 more often meet, one of them must take it again.
    for n, k, rounds, bound in ((8, 2, 4, 2), (16, 4, 4, 2), (12, 3, 6, 2), (32, 4, 8, 2)):
        counts = {b: [0] * k for b in bots(n)}
        for rnd in play_rounds(n, k, rounds, seed=3):
            for t in rnd.tables:
                for s, b in enumerate(t):
                    counts[b][s] += 1
        spread = max(max(c) - min(c) for c in counts.values())
        assert spread <= bound, (n, k, spread)


def test_deterministic() -> None:
    assert play_rounds(27, 4, 6, seed=5) == play_rounds(27, 4, 6, seed=5)
    a = pair_round(bots(20), 3, play_rounds(20, 3, 3))
    b = pair_round(bots(20), 3, play_rounds(20, 3, 3))
    assert a == b


def test_fast_for_128_bots() -> None:
    for k in (2, 4):
        history = play_rounds(128, k, 6)
        t0 = time.perf_counter()
        pair_round(bots(128), k, history)
        assert time.perf_counter() - t0 < 0.5


def test_errors() -> None:
    with pytest.raises(TournamentError):
        pair_round(bots(8), 1, [])
    with pytest.raises(TournamentError):
        pair_round(bots(20), 11, [])
    with pytest.raises(TournamentError):
        pair_round(bots(3), 4, [])
    with pytest.raises(TournamentError):
        pair_round(["a", "b", "a", "c"], 2, [])
    with pytest.raises(TournamentError):
        pair_round(bots(4), 2, [SwissRound((("b000", "zzz"),), ())])
    with pytest.raises(TournamentError):
        pair_round(bots(5), 2, [SwissRound((("b000", "b001"), ("b002", "b003")), ("ghost",))])


def test_round_dict_round_trip_and_malformed() -> None:
    rnd = pair_round(bots(10), 4, [])
    assert SwissRound.from_dict(rnd.to_dict()) == rnd
    assert rnd.to_dict() == {"tables": [list(t) for t in rnd.tables], "byes": list(rnd.byes)}
    for bad in ({}, {"tables": []}, {"tables": "ab", "byes": []}, {"tables": [[1, 2]], "byes": []},
                {"tables": [["a", "b"]], "byes": "c"}, {"tables": [["a"]], "byes": [3]}):
        with pytest.raises(ValueError):
            SwissRound.from_dict(bad)


def test_bye_points() -> None:
    assert bye_points(2) == 0.5
    assert bye_points(4) == 1.5


def test_standings_hand_made() -> None:
    # k = 3, bots a..d; one round: table (a, b, c), d has a bye.
    # match 1: a 1st, b and c tied 2nd -> a 2, b 0.5, c 0.5
    # match 2 (a later round): c 1st, a 2nd, d 3rd -> c 2, a 1, d 0
    rounds = [SwissRound((("a", "b", "c"),), ("d",)), SwissRound((("c", "a", "d"),), ("b",))]
    results = [(("a", "b", "c"), (1, 2, 2)), (("c", "a", "d"), (1, 2, 3))]
    lines = swiss_standings(["a", "b", "c", "d"], 3, results, rounds, ["d", "c", "b", "a"])
    # points: a 3, b 0.5 + 1 (bye) = 1.5, c 2.5, d 0 + 1 (bye) = 1
    pts = {ln.bot: ln.points for ln in lines}
    assert pts == {"a": 3.0, "b": 1.5, "c": 2.5, "d": 1.0}
    tb = {ln.bot: ln.tiebreak for ln in lines}
    assert tb["a"] == pytest.approx((1.5 + 2.5 + 2.5 + 1.0) / 4)  # met b, c, c, d
    assert tb["b"] == pytest.approx((3.0 + 2.5) / 2)
    assert tb["d"] == pytest.approx((2.5 + 3.0) / 2)
    assert [ln.bot for ln in lines] == ["a", "c", "b", "d"]
    assert [ln.rank for ln in lines] == [1, 2, 3, 4]
    assert lines[0] == SwissLine(1, "a", 3.0, tb["a"], 2, 0)
    assert {ln.bot: (ln.matches, ln.byes) for ln in lines} == {"a": (2, 0), "b": (1, 1), "c": (2, 0), "d": (1, 1)}


def test_standings_shared_rank_and_first_order() -> None:
    # two tables of 2, the winners tie on points and on tiebreak: shared rank 1, first_order breaks the order
    results = [(("a", "b"), (1, 2)), (("c", "d"), (1, 2))]
    rounds = [SwissRound((("a", "b"), ("c", "d")), ())]
    lines = swiss_standings(["a", "b", "c", "d"], 2, results, rounds, ["c", "d", "a", "b"])
    assert [(ln.rank, ln.bot) for ln in lines] == [(1, "c"), (1, "a"), (3, "d"), (3, "b")]
    tied = swiss_standings(["a", "b", "c", "d"], 2, [(("a", "b"), (1, 1))], [], ["a", "b", "c", "d"])
    assert [(ln.rank, ln.bot, ln.points) for ln in tied] == [(1, "a", 0.5), (1, "b", 0.5), (3, "c", 0.0),
                                                              (3, "d", 0.0)]


def test_standings_errors() -> None:
    with pytest.raises(TournamentError):
        swiss_standings(["a", "b"], 2, [(("a", "x"), (1, 2))], [], ["a", "b"])
    with pytest.raises(TournamentError):
        swiss_standings(["a", "b"], 2, [(("a", "b"), (1,))], [], ["a", "b"])
    with pytest.raises(TournamentError):
        swiss_standings(["a", "b"], 2, [], [SwissRound((), ("x",))], ["a", "b"])


def test_a_reply_counts_only_the_rounds_its_totals_count() -> None:
    round_ = SwissRound(tables=(("a", "b"), ("c", "d")), byes=())
    paired = [(round_, 2), (round_, 2), (round_, 2)]
    assert counted_rounds(paired, 6) == paired
    assert counted_rounds(paired, 4) == paired[:2]  # the third round was paired after the totals were read
    assert counted_rounds(paired, 3) == paired[:1] and counted_rounds(paired, 0) == []


def test_the_default_rounds_at_2_seats_stop_where_pairs_would_meet_again() -> None:
    from arena.tournaments.swiss import default_rounds, formula, new_meeting_rounds

    assert [default_rounds(n, 2) for n in (2, 3, 4, 5, 6, 8, 16)] == [1, 3, 3, 5, 5, 5, 6]
    assert default_rounds(8, 4) == 5 and default_rounds(4, 3) == 4  # more seats: meetings repeat anyway
    for seed in range(10):  # 4 bots: 3 rounds, every pair once (a 4th round could only pair two bots again)
        assert sorted(meetings(play_rounds(4, 2, default_rounds(4, 2), seed)).values()) == [1] * 6, seed
    assert "pairs meet again" not in formula(4, 2, new_meeting_rounds(4))
    assert formula(4, 2, 4).endswith("= 8 matches (from round 4 on, pairs meet again)")
