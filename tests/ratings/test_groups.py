"""Connected groups of a ladder (``arena.ratings.groups``), the finite margins (``margins.bounded_margin``, the
too-few-matches rule) and the batch fit per group (``ladder.fit_groups``, ``arena.ladder.fits.fit_document``):
properties over random tables (hypothesis) and the scenario of two groups that never met."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ladder.fits import CachedFit, fit_document
from arena.ratings.design import RatedMatch
from arena.ratings.groups import connected_groups, group_numbers
from arena.ratings.ladder import PairCounts, elo_lines, fit_for_ladder, fit_groups
from arena.ratings.margins import MIN_MATCHES, bounded_margin, elo_margin

BOTS = [f"b{i}" for i in range(12)]
tables_strategy = st.lists(st.lists(st.sampled_from(BOTS), min_size=2, max_size=4, unique=True), max_size=15)


def _reachable(tables: list[list[str]], start: str) -> set[str]:
    """Bots linked to ``start`` by a chain of tables (a plain search, independent of the code under test)."""
    seen, frontier = {start}, [start]
    while frontier:
        bot = frontier.pop()
        for t in tables:
            if bot in t:
                for other in t:
                    if other not in seen:
                        seen.add(other)
                        frontier.append(other)
    return seen


@settings(max_examples=60, deadline=None)
@given(tables_strategy, st.randoms(use_true_random=False))
def test_groups_are_the_reachable_sets_numbered_by_size_whatever_the_order(tables: list[list[str]],
                                                                           rnd: random.Random) -> None:
    groups = connected_groups(tables)
    bots = {b for t in tables for b in t}
    assert sorted(b for g in groups for b in g) == sorted(bots)  # a partition: every bot exactly once
    for g in groups:
        assert set(g) == _reachable(tables, g[0]) and list(g) == sorted(g)
    number = group_numbers(groups)
    assert all(len({number[b] for b in t}) == 1 for t in tables)  # a table never spans two groups
    assert [(-len(g), g[0]) for g in groups] == sorted((-len(g), g[0]) for g in groups)
    shuffled = [rnd.sample(t, len(t)) for t in tables]
    rnd.shuffle(shuffled)
    assert connected_groups(shuffled) == groups  # the numbering depends only on who met whom


def test_groups_by_hand() -> None:
    tables = [["c", "d"], ["a", "b"], ["x", "y", "z"], ["b", "c"]]
    assert connected_groups(tables) == [("a", "b", "c", "d"), ("x", "y", "z")]
    assert connected_groups([["m", "n"], ["a", "b"]]) == [("a", "b"), ("m", "n")]  # equal sizes: smallest id first
    assert connected_groups([]) == [] and group_numbers([("a", "b"), ("c",)]) == {"a": 1, "b": 1, "c": 2}


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 200), st.integers(0, 200), st.integers(0, 200))
def test_the_bounded_margin_is_finite_and_the_plain_one_where_that_is(wins: int, draws: int, losses: int) -> None:
    n = wins + draws + losses
    if n == 0:
        with pytest.raises(ValueError):
            bounded_margin(wins, draws, losses)
        return
    margin = bounded_margin(wins, draws, losses)
    if n < 2:
        assert math.isnan(margin)
        return
    assert math.isfinite(margin) and margin >= 0.0
    plain = elo_margin(wins, draws, losses)
    if math.isfinite(plain.margin):
        assert margin == plain.margin
    else:  # a perfect or nil record, or a short one whose interval reaches a score of 0 or 1
        assert margin > 0.0


def test_the_bounded_margin_of_a_perfect_record_by_hand() -> None:
    # 60 wins + 2 virtual draws: s = 61/62; per-game variance (60 (1/62)^2 + 2 (0.5 - 61/62)^2) / 62
    s = 61 / 62
    var = (60 * (1 - s) ** 2 + 2 * (0.5 - s) ** 2) / 62
    expected = 1.959964 * 400 / math.log(10) * math.sqrt(var / 62) / (s * (1 - s))
    assert bounded_margin(60, 0, 0) == pytest.approx(expected, rel=1e-6) == pytest.approx(240.72, abs=0.01)
    assert bounded_margin(0, 0, 60) == pytest.approx(expected, rel=1e-6)
    assert bounded_margin(60, 20, 20) == pytest.approx(66.01, abs=0.01)  # fastchess golden vector unchanged
    assert bounded_margin(3, 0, 0, prior_draws=0) == math.inf


def _two_groups() -> list[RatedMatch]:
    """The scenario of the ladder of bots that never met: four demo bots, 144 matches of 3 seats (108 each),
    and three new bots that played 3 matches among themselves."""
    rnd = random.Random(1)
    strength = {"demo-a@1": 0.0, "demo-b@1": 1.0, "demo-c@1": 1.5, "demo-d@1": 0.0}
    demo = sorted(strength)
    out = []
    for k in range(144):
        seated = [b for i, b in enumerate(demo) if i != k % 4]
        rnd.shuffle(seated)
        noise = {b: strength[b] + rnd.gauss(0, 1) for b in seated}
        order = sorted(seated, key=lambda b: -noise[b])
        out.append(RatedMatch(tuple(seated), tuple(order.index(b) + 1 for b in seated), match_id=f"a{k:03d}"))
    new = ["new-x@1", "new-y@1", "new-z@1"]
    out += [RatedMatch(tuple(new[i:] + new[:i]), (1, 2, 3), match_id=f"b{i}") for i in range(3)]
    return out


def test_two_groups_are_fitted_apart_with_the_margins_of_each_alone() -> None:
    matches = _two_groups()
    together = fit_for_ladder(matches, replicates=50)
    demo = [m for m in matches if m.match_id and m.match_id.startswith("a")]
    alone = fit_for_ladder(demo, replicates=50)
    fits = fit_groups(matches, replicates=50)
    assert [sorted(f.bots) for f in fits] == [sorted(alone.bots), ["new-x@1", "new-y@1", "new-z@1"]]
    assert fits[0].ratings == pytest.approx(alone.ratings) and fits[0].margin == pytest.approx(alone.margin)
    for f in fits:
        assert sum(f.ratings.values()) / len(f.bots) == pytest.approx(1500.0)  # anchored in each group
    # together, the unidentified gap between the groups swamps every margin; apart, the demo bots' are tight
    assert min(together.margin[b] for b in alone.bots) > 400
    assert max(fits[0].margin.values()) < 100


def test_the_cached_fit_lists_groups_apart_and_compares_only_within_one() -> None:
    matches = _two_groups()
    doc = fit_document(matches, len(matches), 0, True)
    assert doc.groups == 2 and [x.group for x in doc.lines] == [1, 1, 1, 1, 2, 2, 2]
    assert doc.lines[3].los_next is None and doc.lines[6].los_next is None  # each group's last line
    assert doc.los_of("demo-a@1", "new-x@1") is None and doc.los_of("demo-a@1", "demo-b@1") is not None
    for x in doc.lines:
        assert x.too_few_matches == (x.matches < MIN_MATCHES)
        assert (x.margin is None) == x.too_few_matches and (x.margin is None or math.isfinite(x.margin))
    again = CachedFit.from_json(doc.to_json())
    assert again.lines == doc.lines and again.groups == 2
    older = json.loads(doc.to_json())
    del older["fields"]  # cached by an arena that fitted without groups: fitted again, not misread
    with pytest.raises(ValueError, match="cached fit lines"):
        CachedFit.from_json(json.dumps(older))


results_strategy = st.lists(
    st.tuples(st.lists(st.sampled_from(BOTS[:8]), min_size=2, max_size=3, unique=True),
              st.randoms(use_true_random=False)), min_size=1, max_size=12)


def _ranked(results: list[tuple[list[str], random.Random]]) -> list[tuple[list[str], list[int]]]:
    out = []
    for seats, rnd in results:
        order = rnd.sample(range(len(seats)), len(seats))
        out.append((seats, [order.index(i) + 1 for i in range(len(seats))]))
    return out


@settings(max_examples=40, deadline=None)
@given(results_strategy, st.integers(0, 8))
def test_live_lines_come_group_by_group_compare_within_one_and_have_no_infinite_margin(
        results: list[tuple[list[str], random.Random]], few_below: int) -> None:
    counts = PairCounts()
    ranked = _ranked(results)
    for seats, ranks in ranked:
        counts.add(seats, ranks)
    played = {b: sum(1 for seats, _ in ranked if b in seats) + few_below for b in BOTS[:8]}
    ladder = [(b, 1500.0 + 10 * i) for i, b in enumerate(sorted(played, key=lambda b: -played[b]))]
    lines = elo_lines(ladder, counts, played)
    number = group_numbers(connected_groups(seats for seats, _ in ranked))
    assert sorted(x.bot for x in lines) == sorted(played)
    assert [x.group for x in lines] == sorted((x.group for x in lines), key=lambda g: g or math.inf)
    for k, x in enumerate(lines):
        assert x.group == number.get(x.bot, 0)
        assert x.too_few_matches == (played[x.bot] < MIN_MATCHES)
        assert x.margin is None or (math.isfinite(x.margin) and not x.too_few_matches)
        if k + 1 < len(lines) and lines[k + 1].group != x.group:
            assert x.los_next is None


@settings(max_examples=15, deadline=None)
@given(results_strategy)
def test_the_fit_per_group_covers_every_bot_once_anchored_in_each(
        results: list[tuple[list[str], random.Random]]) -> None:
    matches = [RatedMatch(tuple(seats), tuple(ranks), match_id=f"m{i}") for i, (seats, ranks) in
               enumerate(_ranked(results))]
    fits = fit_groups(matches, replicates=0)
    assert [tuple(sorted(f.bots)) for f in fits] == connected_groups(m.bots for m in matches)
    for f in fits:
        assert sum(f.ratings.values()) / len(f.bots) == pytest.approx(1500.0)
        assert all(math.isfinite(r) for r in f.ratings.values())


def test_the_groups_note_names_the_groups_of_removed_bots_and_offers_a_join_only_between_others() -> None:
    """After `make demo` removed its bots, the ladder said "a tournament with bots of both groups joins them" of a
    group no tournament could seat any more (a newcomer review)."""
    from arena.ratings.groups import groups_note, removed_groups

    assert groups_note(1) == groups_note(1, [1]) == ""
    assert groups_note(2).endswith("; a tournament with bots of two groups joins them")
    one_gone = groups_note(2, [1])
    assert "group 1 holds only removed bots" in one_gone and "joins them" not in one_gone
    two_gone = groups_note(3, [3, 1])
    assert "groups 1 and 3 hold only removed bots" in two_gone and "joins them" not in two_gone
    assert "joins them" in groups_note(3, [2])  # groups 1 and 3 can still meet
    entries = [(1, False), (1, True), (2, True), (2, True), (0, True), (3, True)]
    assert removed_groups(entries, lambda e: e[0], lambda e: e[1]) == [2, 3]  # never group 0 (not counted yet)
