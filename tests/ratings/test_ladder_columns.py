"""The ladder's honest columns (``arena.ratings.ladder``): pairwise counts, the live-Elo margin and LOS against
hand-computed values and the fastchess golden vector, the batch-fit columns, the replicate budget, the luck
subsample, and the fit run in a child process (``arena.ladder.cache``)."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import numpy as np
import pytest
from ratings_sim import duplicate_deals

from arena.ladder.fits import decode_matches, elsewhere, fit_document, fit_elsewhere, matches_count, refit
from arena.ratings import ladder
from arena.ratings.ladder import PairCounts, elo_lines, fit_for_ladder, fit_lines, ladder_replicates, tau_sample
from arena.ratings.margins import bounded_margin


def test_pair_counts_count_each_pair_once_per_match_and_round_trip() -> None:
    c = PairCounts()
    c.add(["a", "b", "c"], [1, 2, 2])  # a ahead of b and c; b and c tied
    c.add(["c", "a"], [1, 2])
    assert c.results == 2
    assert c.head_to_head("a", "b") == (1, 0, 0) and c.head_to_head("b", "a") == (0, 0, 1)
    assert c.head_to_head("b", "c") == (0, 1, 0) == c.head_to_head("c", "b")
    assert c.head_to_head("a", "c") == (1, 0, 1)
    assert c.against_field() == {"a": (2, 0, 1), "b": (0, 1, 1), "c": (1, 1, 1)}
    again = PairCounts.from_dict(c.to_dict())
    assert (again.ahead, again.ties, again.results) == (c.ahead, c.ties, c.results)
    with pytest.raises(ValueError, match="pair-counts"):
        PairCounts.from_dict({"results": 1, "ahead": {"a-b": 1}, "ties": {}})
    with pytest.raises(ValueError, match="one rank per seat"):
        c.add(["a", "b"], [1])


def test_elo_margin_is_fastchess_over_the_field_and_los_is_head_to_head() -> None:
    c = PairCounts()
    for ranks, n in (([1, 2], 60), ([1, 1], 20), ([2, 1], 20)):
        for _ in range(n):
            c.add(["a", "b"], ranks)
    lines = elo_lines([("a", 1600.0), ("b", 1400.0)], c, {"a": 100, "b": 100})
    # fastchess: W60 D20 L20 -> +147.2 +/- 66.0, with the live rating's own walk (2 seats: +/- 103.3)
    both = math.hypot(66.01, ladder.walk_margin(1.0))
    assert lines[0].margin == pytest.approx(both, abs=0.01) and both == pytest.approx(122.6, abs=0.1)
    assert lines[1].margin == pytest.approx(both, abs=0.01)  # the same games from the other side
    assert (lines[0].low, lines[0].high) == pytest.approx((1600 - both, 1600 + both), abs=0.01)
    assert lines[0].los_next == pytest.approx(0.5 + 0.5 * math.erf(40 / math.sqrt(160)))  # W60 L20, ties ignored
    assert lines[1].los_next is None
    # head to head decides even against the ratings: b above a on the ladder, a won the pairs
    flipped = elo_lines([("b", 1500.0), ("a", 1499.0)], c, {"a": 100, "b": 100})
    assert flipped[0].los_next == pytest.approx(1 - lines[0].los_next)


@pytest.mark.parametrize("seats", [2, 4])
def test_a_live_rating_of_equal_bots_stays_within_its_walk_margin_which_does_not_shrink(seats: int) -> None:
    """Equal bots at K = 32: after thousands of matches their live ratings still wander (the newcomer's two equal
    versions stood 100-165 Elo apart with margins of +/- 16): 95 % of the time within ``walk_margin`` of their
    strength, far more often outside the pairwise margin alone."""
    from arena.ratings.elo import elo_deltas
    from arena.ratings.margins import elo_margin

    rnd = random.Random(seats)
    ratings, inside, narrow, samples = [1500.0] * seats, 0, 0, 0
    walk = ladder.walk_margin(seats - 1.0)
    pairwise = elo_margin(1500 * (seats - 1), 0, 1500 * (seats - 1)).margin  # 3,000 matches' worth of pairs
    for match in range(3000):
        ranks = rnd.sample(range(1, seats + 1), seats)
        ratings = [r + d for r, d in zip(ratings, elo_deltas(ratings, ranks))]
        if match >= 200:
            samples += 1
            inside += abs(ratings[0] - 1500.0) <= walk
            narrow += abs(ratings[0] - 1500.0) <= pairwise
    assert inside / samples >= 0.95 and narrow / samples < 0.6


def test_bots_that_never_met_in_one_group_get_the_normal_approximation_and_unknowns_stay_unknown() -> None:
    c = PairCounts()
    for _ in range(12):
        c.add(["a", "x"], [1, 2])
    for _ in range(8):
        c.add(["x", "a"], [1, 2])
    for _ in range(5):
        c.add(["b", "x"], [1, 2])  # b met x, never a: one group through x
    for _ in range(15):
        c.add(["x", "b"], [1, 2])
    played = {"a": 20, "b": 20, "x": 40, "new": 0}
    lines = elo_lines([("a", 1550.0), ("b", 1500.0), ("x", 1450.0), ("new", 1500.0)], c, played)
    assert [(x.bot, x.group) for x in lines] == [("a", 1), ("b", 1), ("x", 1), ("new", 0)]
    ma, mb = lines[0].margin, lines[1].margin
    assert ma is not None and mb is not None and 0 < ma < math.inf and 0 < mb < math.inf
    sd = math.hypot(ma, mb) / NormalDist().inv_cdf(0.975)
    assert lines[0].los_next == pytest.approx(NormalDist().cdf(50.0 / sd))
    assert lines[2].los_next is None  # "new" has no pairwise result: not in x's group, no comparison
    assert (lines[3].margin, lines[3].low, lines[3].high, lines[3].too_few_matches) == (None, None, None, True)


def test_a_bot_that_won_every_pair_has_a_finite_margin_and_one_with_few_matches_none() -> None:
    c = PairCounts()
    for _ in range(10):
        c.add(["a", "b", "c"], [1, 2, 3])
    lines = elo_lines([("a", 1700.0), ("b", 1500.0), ("c", 1300.0)], c, {"a": 10, "b": 10, "c": 10})
    # 20 pairwise wins: two virtual draws, delta method (margins.bounded_margin), not the plain formula's inf
    walk = ladder.walk_margin(2.0)  # 3 seats: 2 opponents a match
    assert lines[0].margin == pytest.approx(math.hypot(bounded_margin(20, 0, 0), walk)) and lines[0].margin < math.inf
    assert lines[2].margin == pytest.approx(lines[0].margin) and not lines[0].too_few_matches
    ten_nil = 0.5 + 0.5 * math.erf(10 / math.sqrt(20))  # 99.92 %
    assert lines[0].los_next == pytest.approx(ten_nil) and lines[1].los_next == pytest.approx(ten_nil)
    assert 0 < lines[1].margin < math.inf  # b: 10 wins, 10 losses
    few = elo_lines([("a", 1700.0), ("b", 1500.0), ("c", 1300.0)], c, {"a": 4, "b": 5, "c": 10})
    # a bot with too few matches comes after the others, whatever its rating; LOS over the next line as listed
    assert [(x.bot, x.margin is None, x.too_few_matches) for x in few] == [("b", False, False), ("c", False, False),
                                                                            ("a", True, True)]
    assert few[0].los_next == pytest.approx(ten_nil)  # b over c
    assert few[1].los_next == pytest.approx(1 - ten_nil)  # c over a, which beat it 10 times: head to head counts
    assert few[2].los_next is None


def test_groups_that_never_met_are_listed_apart_and_not_compared() -> None:
    c = PairCounts()
    for _ in range(6):
        c.add(["p", "q", "r"], [1, 2, 3])
        c.add(["y", "z"], [2, 1])
    played = dict.fromkeys("pqryz", 6)
    lines = elo_lines([("z", 1600.0), ("p", 1580.0), ("q", 1500.0), ("y", 1400.0), ("r", 1420.0)], c, played)
    assert [(x.bot, x.group) for x in lines] == [("p", 1), ("q", 1), ("r", 1), ("z", 2), ("y", 2)]
    assert lines[2].los_next is None  # r (group 1) is not compared with z (group 2)
    assert lines[3].los_next is not None and lines[3].los_next > 0.9 and lines[4].los_next is None


def test_replicates_shrink_with_the_data_within_bounds() -> None:
    assert [ladder_replicates(n) for n in (0, 50, 10_000, 20_000, 50_000, 100_000, 10**6)] == [
        200, 200, 200, 100, 40, 20, 20]


def test_the_luck_subsample_is_whole_deals_and_order_free() -> None:
    rng = np.random.default_rng(3)
    matches = duplicate_deals(rng, {f"b{i}": 40.0 * i for i in range(8)}, 4, 40, luck_sd=0.5)
    sample = tau_sample(matches, size=60)
    shuffled = list(matches)
    random.Random(1).shuffle(shuffled)
    assert sorted(m.match_id or "" for m in tau_sample(shuffled, size=60)) == sorted(
        m.match_id or "" for m in sample)
    deals = {m.deal for m in sample}
    assert len(sample) >= 60 and all(sum(1 for m in matches if m.deal == d) == sum(
        1 for m in sample if m.deal == d) for d in deals)
    assert tau_sample(matches[:10], size=60) == matches[:10]


def test_a_large_fit_holds_the_luck_sd_of_its_subsample(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    elos = {f"b{i}": 60.0 * i for i in range(8)}
    matches = duplicate_deals(rng, elos, 4, 12, luck_sd=0.8)  # 96 matches
    monkeypatch.setattr(ladder, "TAU_SAMPLE_MATCHES", 40)
    fit = fit_for_ladder(matches, replicates=20)
    probe = ladder.fit_ratings(tau_sample(matches, 40), replicates=0)
    assert fit.deal_sd == pytest.approx(probe.deal_sd) and fit.replicates == 20
    lines = fit_lines(fit)
    assert [x.bot for x in lines] == list(fit.bots)
    assert all(x.low is not None and x.high is not None and x.low < x.rating < x.high for x in lines)
    assert lines[0].los_next == pytest.approx(fit.los(lines[0].bot, lines[1].bot))
    assert fit.bots[0] == "b7"


def test_the_fit_in_a_child_process_equals_the_fit_here() -> None:
    rng = np.random.default_rng(8)
    matches = duplicate_deals(rng, {"a": 0.0, "b": 80.0, "c": 160.0, "d": 240.0}, 4, 3, luck_sd=0.5)
    here = fit_document(matches, len(matches), 0, True)
    there = fit_elsewhere(matches, len(matches), 0, True)
    assert there.lines == here.lines and there.los == here.los and there.results == len(matches)
    assert set(here.los) == {"a|b", "a|c", "a|d", "b|c", "b|d", "c|d"}


def test_the_compact_copy_grows_by_the_new_results_and_refits_the_same_here_and_in_a_child() -> None:
    rng = np.random.default_rng(9)
    matches = duplicate_deals(rng, {"a": 0.0, "b": 80.0, "c": 160.0, "d": 240.0}, 4, 3, luck_sd=0.5)
    blob, none = refit(None, matches[:5], 0, False)
    assert none is None and matches_count(blob) == 5 and matches_count(None) == 0
    grown, doc = refit(blob, matches[5:], 0, True)
    bots, rows = decode_matches(grown)
    assert matches_count(grown) == len(rows) == len(matches) and sorted(bots) == ["a", "b", "c", "d"]
    assert doc is not None and doc.results == len(matches)
    assert doc.lines == fit_document(matches, len(matches), 0, False).lines  # the copy loses nothing the fit reads
    there_blob, there = elsewhere("refit", blob, matches[5:], 0, True)
    assert there_blob == grown and there is not None and there.lines == doc.lines
    with pytest.raises(ValueError, match="malformed"):
        decode_matches(b"3\nnot zlib")
    with pytest.raises(ValueError, match="not run in a child"):
        elsewhere("print", "hello")


def test_the_ladder_ranks_bots_with_too_few_matches_after_the_others() -> None:
    """GetLadder's ranks follow the lines' order: by rating, a bot with too few matches ranked after the others of
    its group (a newcomer saw a bot that forfeited its 2 matches at #2, above a bot of 42), ties sharing a rank."""
    from arena.ladder.replies import _group_ranks
    from arena.ratings.ladder import RatedLine

    def line(bot: str, rating: float, few: bool, group: int = 1) -> RatedLine:
        return RatedLine(bot=bot, rating=rating, margin=None, low=None, high=None, los_next=None, group=group,
                         too_few_matches=few)

    lines = [line("a", 1600, False), line("b", 1500, False), line("c", 1500, False), line("crash", 1550, True),
             line("slow", 1520, True), line("x", 1400, False, group=2), line("y", 1700, True, group=2)]
    assert _group_ranks(lines) == [1, 2, 2, 4, 5, 1, 2]
