"""Real matches between real bot processes over real gRPC: full games, variants, explicit deals, shared
endpoints, concurrent matches, the simultaneous asking of every pending seat, bad arguments."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import run_match, run_match_sync
from arena.match.replay import replay
from arena_sdk import wire
from arena_sdk.games import take5

from .conftest import final_state, walk

SHORT = take5.Take5Config(limit=20)


def check_consistent(record: MatchRecord) -> None:
    """Invariants of any record: per-seat sequences 0, 1, 2, ...; result matches the re-simulated end state."""
    per_seat: dict[int, list[int]] = {}
    for dec in record.decisions:
        per_seat.setdefault(dec["seat"], []).append(dec["seq"])
    for s, seqs in per_seat.items():
        assert seqs == list(range(len(seqs))), f"seat {s} sequences {seqs}"
    state = final_state(record)
    assert take5.is_over(state)
    outcome = take5.outcome(state)
    assert record.result.scores == tuple(float(x) for x in outcome.scores)
    assert record.result.ranks == outcome.ranks
    assert replay(record) == []


def test_full_game_three_sample_bot_processes_replays_identically(seats_of, tmp_path) -> None:
    seats = seats_of("random1", "heuristic", "montecarlo")
    record = run_match_sync("full-1", "take5", seats, take5.Take5Config(), seed=2024,
                            options=RefereeOptions(deadline_ms=5000))

    assert record.faults == () and record.result.faults == (0, 0, 0)
    assert all(d["source"] == "bot" for d in record.decisions)
    assert max(record.result.scores) >= 66  # the default limit ended the game
    assert record.seats == tuple(seats) and record.seed == 2024 and record.deals == []
    assert record.config == {"limit": 66, "limit_rule": "at_least", "known_cards": False, "draft": False}
    assert Counter(d["kind"] for d in record.decisions)[take5.CHOOSE_CARD] % 30 == 0  # 3 seats x 10 turns a hand
    check_consistent(record)

    # JSON round trip, in memory and through a file
    assert MatchRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    path = tmp_path / "match.json"
    record.save(path)
    loaded = MatchRecord.load(path)
    assert loaded == record
    assert replay(loaded) == []


def test_one_endpoint_serving_every_seat(sample_bots) -> None:
    bot = sample_bots["random2"]
    seats = [SeatSpec(f"r{i}", bot.endpoint) for i in range(5)]
    record = run_match_sync("shared-1", "take5", seats, SHORT, seed=11, options=RefereeOptions(deadline_ms=5000))
    assert record.faults == ()
    assert {d["seat"] for d in record.decisions} == set(range(5))
    check_consistent(record)


def test_draft_and_known_cards_variants_over_grpc(seats_of) -> None:
    config = take5.Take5Config(limit=20, known_cards=True, draft=True)
    record = run_match_sync("draft-1", "take5", seats_of("random1", "heuristic", "random2", "montecarlo"), config,
                            seed=5, options=RefereeOptions(deadline_ms=5000))
    kinds = Counter(d["kind"] for d in record.decisions)
    assert kinds[take5.DRAFT_PICK] % 40 == 0 and kinds[take5.DRAFT_PICK] > 0  # 4 seats x 10 picks a hand
    assert record.faults == ()
    assert record.config["draft"] is True and record.config["known_cards"] is True
    # known cards with 4 players: only cards 1..44 are ever played
    assert all(d["action"].get("card", 1) <= 44 for d in record.decisions)
    check_consistent(record)


def test_explicit_deal_is_recorded_and_replayed(seats_of) -> None:
    deal = take5.deal_hand(99, 0, 3, SHORT)
    record = run_match_sync("deal-1", "take5", seats_of("random1", "random2", "heuristic"), SHORT, seed=7, deals=[deal],
                            options=RefereeOptions(deadline_ms=5000))
    assert record.deals == [wire.deal_to_dict("take5", deal)]
    first_turn = [d for d in record.decisions if d["hand"] == 0 and d["turn"] == 0
                  and d["kind"] == take5.CHOOSE_CARD]
    for d in first_turn:  # hand 0 was played from the explicit deal, not from seed 7
        assert d["action"]["card"] in deal.hands[d["seat"]]
    check_consistent(record)
    # the same deal without a seed: valid as long as the game ends within the dealt hands
    one_hand = run_match_sync("deal-2", "take5", seats_of("random1", "random2", "heuristic"),
                              take5.Take5Config(limit=1), deals=[deal], options=RefereeOptions(deadline_ms=5000))
    assert one_hand.seed is None and replay(one_hand) == []


def test_rule_4_row_choices_are_asked_and_recorded(seats_of) -> None:
    # A full game among random bots nearly always has rule-4 moments; find a seed with one, deterministically.
    for seed in range(1, 30):
        record = run_match_sync(f"row-{seed}", "take5", seats_of("random1", "random2", "heuristic"), SHORT, seed=seed,
                                options=RefereeOptions(deadline_ms=5000))
        rows = [(state, d) for state, d in walk(record) if d["kind"] == take5.CHOOSE_ROW]
        if rows:
            break
    assert rows, "no rule-4 decision in 29 games"
    for state, d in rows:
        assert take5.pending_seats(state) == (d["seat"],)  # asked of the seat whose card resolves, alone
        assert set(d["action"]) == {"row"} and 0 <= d["action"]["row"] <= 3
    check_consistent(record)


def test_every_pending_seat_is_asked_at_once(test_bot) -> None:
    # The barrier bot holds each card choice until all 4 seats' requests of the turn have arrived. A referee
    # that asked seats one after another would leave the barrier unfilled and every answer would time out.
    bot = test_bot("barrier_bot", "--parties", "4")
    seats = [SeatSpec(f"b{i}", bot.endpoint) for i in range(4)]
    record = run_match_sync("barrier-1", "take5", seats, take5.Take5Config(limit=1), seed=4,
                            options=RefereeOptions(deadline_ms=3000))
    assert record.faults == ()
    check_consistent(record)


def test_concurrent_matches_in_one_event_loop(seats_of) -> None:
    async def both() -> list[MatchRecord]:
        return await asyncio.gather(
            run_match("c-1", "take5", seats_of("random1", "heuristic"), SHORT, seed=1,
                      options=RefereeOptions(deadline_ms=5000)),
            run_match("c-2", "take5", seats_of("random1", "heuristic", "random2"), SHORT, seed=2,
                      options=RefereeOptions(deadline_ms=5000)),
        )

    first, second = asyncio.run(both())
    assert (first.match_id, len(first.seats)) == ("c-1", 2)
    assert (second.match_id, len(second.seats)) == ("c-2", 3)
    check_consistent(first)
    check_consistent(second)


@pytest.mark.parametrize(
    ("game", "n", "config", "kwargs", "message"),
    [
        ("chess", 3, None, {"seed": 1}, "unknown game"),
        ("take5", 1, None, {"seed": 1}, "2..10 seats"),
        ("take5", 11, None, {"seed": 1}, "2..10 seats"),
        ("take5", 3, None, {}, "seed"),
        ("take5", 3, None, {"seed": 1, "deadline_ms": 0}, "deadline_ms"),
        ("take5", 3, None, {"seed": 1, "call_deadline_ms": -5}, "call_deadline_ms"),
        ("take5", 3, "not a config", {"seed": 1}, "config"),
        ("take5", 3, None, {"deals": [take5.Take5Deal(hands=((1, 2),), rows=(3, 4, 5, 6))]}, "deal"),
    ],
)
def test_bad_arguments_raise_value_error(dead_endpoint, game, n, config, kwargs, message) -> None:
    seats = [SeatSpec(f"s{i}", dead_endpoint) for i in range(n)]
    limits = {k: kwargs.pop(k) for k in ("deadline_ms", "call_deadline_ms") if k in kwargs}
    with pytest.raises(ValueError, match=message):
        run_match_sync("bad", game, seats, config, options=RefereeOptions(**limits), **kwargs)


def test_bad_seats_raise_value_error() -> None:
    with pytest.raises(ValueError, match="SeatSpec"):
        run_match_sync("bad", "take5", ["127.0.0.1:1", "127.0.0.1:2"], seed=1)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="endpoint"):
        run_match_sync("bad", "take5", [SeatSpec("a", ""), SeatSpec("b", "127.0.0.1:2")], seed=1)
    with pytest.raises(ValueError, match="match_id"):
        run_match_sync("", "take5", [SeatSpec("a", "x:1"), SeatSpec("b", "x:2")], seed=1)
