"""Batch fit: hand-computed golden values, recovery of known strengths within the intervals at about the nominal
rate (coverage), deal luck taken out, order-freedom, errors (STYLE.md habit 7)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ratings_sim import random_deals, rotated_deals

from arena.ratings import FitError, RatedMatch, fit_ratings

PLAIN = {"seat_effects": False, "deal_effects": False, "prior_sd": None, "replicates": 0}


def three_bot_matches() -> list[RatedMatch]:
    """A>B>C once, A>C>B once, B>A>C three times, C>A>B three times (3-seat matches).

    By symmetry B and C are equal; with t = theta_A - theta_B and x = e^t the Plackett-Luce log-likelihood is
    4t - 8 log(x + 2) + 3t - 3 log(x + 1) + 3t - 3 log(x + 1) + const (first places among three, then second
    places among the two left), whose derivative 10 - 8x/(x + 2) - 6x/(x + 1) is 0 at x = 2: A is
    ln 2 = 400 log10(2) = 120.41 Elo above B and C. Anchored at mean 1500: A 1580.27, B = C 1459.86.
    (Pairwise Bradley-Terry would give a different answer, ln(5/3): the fit is Plackett-Luce.)"""
    orders = [("A", "B", "C")] + [("A", "C", "B")] + [("B", "A", "C")] * 3 + [("C", "A", "B")] * 3
    return [RatedMatch(o, (1, 2, 3)) for o in orders]


def test_golden_three_bots() -> None:
    fit = fit_ratings(three_bot_matches(), **PLAIN)
    assert fit.ratings["A"] == pytest.approx(1580.274, abs=1e-3)
    assert fit.ratings["B"] == pytest.approx(1459.863, abs=1e-3)
    assert fit.ratings["C"] == pytest.approx(1459.863, abs=1e-3)
    assert fit.bots[0] == "A"


def test_golden_anchor_bot() -> None:
    fit = fit_ratings(three_bot_matches(), anchor="C", anchor_rating=1000.0, **PLAIN)
    assert fit.ratings["C"] == 1000.0
    assert fit.ratings["A"] == pytest.approx(1000 + 400 * math.log10(2), abs=1e-3)


def test_golden_two_players_a_tie_is_half_a_win() -> None:
    # A beats B twice, they tie once, B beats A once: a tie is split into both orders at half weight, so A has
    # 2.5 of 4 points: ln(2.5 / 1.5) = 400 log10(5/3) = 88.74 Elo apart, 1544.37 and 1455.63.
    matches = [RatedMatch(("A", "B"), (1, 2)), RatedMatch(("B", "A"), (2, 1)), RatedMatch(("A", "B"), (1, 1)),
               RatedMatch(("A", "B"), (2, 1))]
    fit = fit_ratings(matches, **PLAIN)
    assert fit.ratings["A"] == pytest.approx(1544.370, abs=1e-3)
    assert fit.ratings["B"] == pytest.approx(1455.630, abs=1e-3)


def test_ties_are_symmetric() -> None:
    matches = [RatedMatch(("A", "B", "C"), (1, 1, 3)), RatedMatch(("C", "B", "A"), (3, 1, 1))] * 3
    fit = fit_ratings(matches, seat_effects=False, replicates=0)
    assert fit.ratings["A"] == pytest.approx(fit.ratings["B"], abs=1e-6)
    assert fit.ratings["C"] < fit.ratings["A"] - 100


def test_prior_keeps_a_perfect_record_finite() -> None:
    fit = fit_ratings([RatedMatch(("A", "B"), (1, 2))] * 5, replicates=20)
    assert math.isfinite(fit.ratings["A"]) and 1500 < fit.ratings["A"] < 4000
    assert fit.ratings["A"] - 1500 == pytest.approx(1500 - fit.ratings["B"])


def test_seat_effect_is_recovered() -> None:
    # Seat 0 of 3 is 0.6 natural-log odds (104 Elo) stronger than the others, on random deals of equal bots.
    rng = np.random.default_rng(7)
    bots = [f"b{i}" for i in range(5)]
    matches = []
    for k in range(600):
        table = [str(b) for b in rng.choice(bots, 3, replace=False)]
        totals = np.array([0.6, 0.0, 0.0]) + rng.gumbel(size=3)
        ranks = tuple(int(r) for r in 1 + np.argsort(np.argsort(-totals)))
        matches.append(RatedMatch(tuple(table), ranks, match_id=str(k)))
    fit = fit_ratings(matches, replicates=0)
    seat = fit.seat_effects[3]
    assert seat[0] - (seat[1] + seat[2]) / 2 == pytest.approx(104.2, abs=30)
    assert max(abs(r - 1500) for r in fit.ratings.values()) < 40


ELOS = {"a": 1380.0, "b": 1460.0, "c": 1540.0, "d": 1620.0}  # mean 1500, the fit's anchor


def test_coverage_of_known_strengths() -> None:
    """40 simulated data sets of 60 random-deal matches of 4 bots at 4 seats: the 95 % intervals hold the true
    ratings at about the nominal rate (measured on 800 intervals: 95.5 %; here 160, seeded)."""
    hits = []
    for k in range(40):
        fit = fit_ratings(random_deals(np.random.default_rng(k), ELOS, 4, 60), replicates=100, seed=k)
        hits += [fit.lower[b] <= elo <= fit.upper[b] for b, elo in ELOS.items()]
    assert 0.90 <= np.mean(hits) <= 0.99, np.mean(hits)


def test_deal_luck_is_taken_out() -> None:
    """Seat rotation of each deal among 4 bots (100 matches), hands with luck of sd 1 natural-log odds (174 Elo):
    the fit with deal effects estimates the luck's sd and recovers the true strengths within its intervals; the
    fit without them leaves the luck in the noise and so shrinks every rating towards the mean and misses the
    truth far more often (seeded, measured: luck sd 171 Elo for a true 174; coverage 95 % against 70 %; best-worst
    spread 216 against 173 Elo, truth 240). The same matches on fresh deals give the same fit whether deal
    effects are asked for or not (there is no shared deal to learn from)."""
    with_luck, without, spread_with, spread_without, taus = [], [], [], [], []
    for k in range(10):
        matches = rotated_deals(np.random.default_rng(100 + k), ELOS, 4, 25, 1.0)
        lucky = fit_ratings(matches, replicates=60, seed=k)
        blind = fit_ratings(matches, replicates=60, seed=k, deal_effects=False)
        taus.append(lucky.deal_sd)
        with_luck += [lucky.lower[b] <= e <= lucky.upper[b] for b, e in ELOS.items()]
        without += [blind.lower[b] <= e <= blind.upper[b] for b, e in ELOS.items()]
        spread_with.append(lucky.ratings["d"] - lucky.ratings["a"])
        spread_without.append(blind.ratings["d"] - blind.ratings["a"])
    assert 100 < np.median(taus) < 260
    assert np.mean(with_luck) >= 0.85
    assert np.mean(without) < np.mean(with_luck) - 0.1
    assert np.mean(spread_with) == pytest.approx(240, abs=40)
    assert np.mean(spread_without) < 0.85 * np.mean(spread_with)

    fresh = [RatedMatch(m.bots, m.ranks, deal=f"fresh{i}") for i, m in enumerate(matches)]
    a = fit_ratings(fresh, replicates=5)
    b = fit_ratings(fresh, replicates=5, deal_effects=False)
    assert a.luck_effects == 0 and a.ratings == b.ratings and np.array_equal(a.samples, b.samples)


def test_permuting_the_results_changes_nothing() -> None:
    matches = rotated_deals(np.random.default_rng(3), ELOS, 4, 8, 0.8)
    matches += random_deals(np.random.default_rng(4), ELOS, 3, 20)
    base = fit_ratings(matches, replicates=30, seed=5)
    for k in range(3):
        shuffled = [matches[i] for i in np.random.default_rng(k).permutation(len(matches))]
        again = fit_ratings(shuffled, replicates=30, seed=5)
        assert again.ratings == base.ratings
        assert again.lower == base.lower and again.upper == base.upper
        assert np.array_equal(again.samples, base.samples, equal_nan=True)
        assert again.deal_sd == base.deal_sd and again.seat_effects == base.seat_effects


def test_intervals_los_and_standings() -> None:
    fit = fit_ratings(random_deals(np.random.default_rng(1), {"a": 1300.0, "b": 1500.0, "c": 1700.0}, 3, 150),
                      replicates=80)
    assert fit.bots == ("c", "b", "a")
    assert fit.separated()
    assert fit.los("c", "b") > 0.99 and fit.los("c", "b") + fit.los("b", "c") == pytest.approx(1.0)
    assert fit.los("a", "a") == 0.5
    rows = fit.standings()
    assert [r.rank for r in rows] == [1, 2, 3] and rows[-1].los_next is None
    assert rows[0].los_next == pytest.approx(fit.los("c", "b"))
    assert rows[0].lower == pytest.approx(fit.ratings["c"] - fit.margin["c"])
    assert sum(fit.ratings.values()) / 3 == pytest.approx(1500.0)
    assert fit.samples.shape == (80, 3)
    point = fit_ratings(random_deals(np.random.default_rng(1), ELOS, 3, 10), replicates=0)
    assert point.lower == {} and point.standings()[0].lower is None
    with pytest.raises(FitError):
        point.los("a", "b")
    with pytest.raises(FitError):
        fit.interval("nobody")


def test_from_stored_result() -> None:
    m = RatedMatch.from_stored({"match_id": "t1-000003", "seats": ["x@1", "y@1", "z@2"], "ranks": [2, 1, 2],
                                 "seed": 42, "scores": [5, 1, 5]})
    assert m.bots == ("x@1", "y@1", "z@2") and m.ranks == (2, 1, 2) and m.deal == "42/3"
    assert m.match_id == "t1-000003"
    assert RatedMatch.from_stored({"seats": ["a", "b"], "ranks": [1, 2]}).deal is None
    with pytest.raises(FitError):
        RatedMatch.from_stored({"seats": ["a", "b"]})


@pytest.mark.parametrize(
    ("bots", "ranks", "hands"),
    [(("a",), (1,), None), (("a", "b"), (1,), None), (("a", "a"), (1, 2), None), (("a", "b"), (0, 1), None),
     (("a", "b"), (1, 2), (0, 0))],
)
def test_bad_match_is_refused(bots: tuple[str, ...], ranks: tuple[int, ...], hands: tuple[int, ...] | None) -> None:
    with pytest.raises(FitError):
        RatedMatch(bots, ranks, hands=hands)


@pytest.mark.parametrize(
    "kwargs", [{"replicates": -1}, {"level": 1.0}, {"anchor": "nobody"}, {"prior_sd": 0.0}, {"deal_effects": -5.0}]
)
def test_bad_fit_parameters_are_refused(kwargs: dict) -> None:
    with pytest.raises(FitError):
        fit_ratings(three_bot_matches(), **kwargs)
    with pytest.raises(FitError):
        fit_ratings([])


def test_a_perfect_record_gets_a_wide_interval() -> None:
    """Two bots, 10 matches (seats alternating), all won by one: every bootstrap replicate is again 10 wins, so
    the bootstrap sd is ~0 (it gave +/- 10.5 Elo); the information floor (``arena.ratings.information``) gives the
    honest width under the 1000 Elo prior: per rating 1.96 * 292 = 572 Elo, LOS Phi(851 / 584) = 0.93."""
    matches = [RatedMatch(("A", "B") if k % 2 else ("B", "A"), (1, 2) if k % 2 else (2, 1), deal=f"d{k}")
               for k in range(10)]
    fit = fit_ratings(matches, replicates=50)
    assert fit.ratings["A"] == pytest.approx(1925.6, abs=0.1)
    assert float(np.nanstd(fit.samples[:, 0])) < 20  # the collapsed bootstrap
    assert fit.margin["A"] > 150 and fit.margin["B"] > 150
    assert fit.margin["A"] == pytest.approx(572.3, abs=1.0)
    assert 0.5 < fit.los("A", "B") < 0.99 and fit.los("B", "A") == pytest.approx(1 - fit.los("A", "B"))
    assert not fit.separated()
    anchored = fit_ratings(matches, replicates=20, anchor="B")
    assert anchored.margin["B"] == 0.0 and anchored.margin["A"] > 300
    assert anchored.los("A", "B") == pytest.approx(fit.los("A", "B"))
    plain = fit_ratings(matches, replicates=20, prior_sd=None, seat_effects=False)  # ML diverges: +/- huge
    assert plain.margin["A"] > 1000


def test_information_floor_is_the_bootstrap_order_on_regular_data() -> None:
    """With varied data the information sd and the bootstrap sd estimate the same spread: they agree within the
    bootstrap's noise, so the floor barely moves a regular interval."""
    fit = fit_ratings(random_deals(np.random.default_rng(2), ELOS, 4, 200), replicates=200, seed=2)
    boot = np.nanstd(fit.samples, axis=0, ddof=1)
    info = np.sqrt(np.diag(fit.covariance))
    assert np.all(info > 0.7 * boot) and np.all(info < 1.3 * boot), (info, boot)


def test_a_house_bot_in_several_seats_is_one_player_per_seat_and_a_bot_seated_twice_is_refused() -> None:
    m = RatedMatch.from_stored({"seats": ["v@1", "house:heuristic", "house:heuristic", "house:heuristic"],
                                "ranks": [1, 2, 3, 4], "seed": 7, "match_id": "t1-000000"})
    assert m.bots == ("v@1", "house:heuristic", "house:heuristic#2", "house:heuristic#3")
    with pytest.raises(FitError, match="seated twice"):
        RatedMatch.from_stored({"seats": ["v@1", "v@1"], "ranks": [1, 2]})
