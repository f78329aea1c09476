"""The match record: JSON form (round trip, malformed records), and replay of tampered records (differences,
never a crash), with hypothesis mutating real records played over gRPC."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.core.config import DEFAULTS
from arena.match.local_bots import start_bot
from arena.match.options import RefereeOptions
from arena.match.record import Fault, MatchRecord, RecordError
from arena.match.referee import run_match_sync
from arena.match.replay import replay
from arena_sdk.games import take5

from .conftest import BOTS_DIR, seat, walk

CONFIG = take5.Take5Config(limit=20)


@pytest.fixture(scope="module")
def record(sample_bots) -> MatchRecord:
    """A clean record: three sample bots, several hands."""
    seats = [seat(sample_bots[r]) for r in ("random1", "heuristic", "random2")]
    # seat seeds make the random bots' play, and so the record the tampering tests change, the same on every run
    rec = run_match_sync("rec-clean", "take5", seats, CONFIG, seed=41, options=RefereeOptions(deadline_ms=5000),
                         seat_seeds=(11, 12, 13))
    assert rec.faults == () and replay(rec) == []
    return rec


@pytest.fixture(scope="module")
def faulty(sample_bots) -> Iterator[MatchRecord]:
    """A record with faults: an illegal bot at seat 1 misbehaving at sequence numbers 0, 2 and 5."""
    bot = start_bot(str(BOTS_DIR / "illegal_bot.py"), extra_args=["--at", "0,2,5"])
    try:
        seats = [seat(sample_bots["random1"]), seat(bot), seat(sample_bots["heuristic"])]
        rec = run_match_sync("rec-faulty", "take5", seats, CONFIG, seed=42, options=RefereeOptions(deadline_ms=5000))
    finally:
        bot.stop()
    assert len(rec.faults) == 3 and replay(rec) == []
    yield rec


def tampered(rec: MatchRecord, change) -> MatchRecord:
    d = copy.deepcopy(rec.to_dict())
    change(d)
    return MatchRecord.from_dict(d)


# --- JSON form --------------------------------------------------------------------------------------------------


def test_json_round_trip(record, faulty, tmp_path) -> None:
    for rec in (record, faulty):
        text = json.dumps(rec.to_dict())
        assert MatchRecord.from_dict(json.loads(text)) == rec
        rec.save(tmp_path / "r.json")
        assert MatchRecord.load(tmp_path / "r.json") == rec
    d = faulty.to_dict()
    assert d["faults"][0].keys() == {"kind", "seat", "hand", "turn", "detail", "decision"}
    assert d["decisions"][0].keys() == {"seq", "seat", "kind", "hand", "turn", "action", "source", "latency_ms"}
    assert d["result"] == {"scores": list(faulty.result.scores), "ranks": list(faulty.result.ranks),
                           "faults": [0, 3, 0], "forfeits": [None, None, None]}
    assert (d["version"], d["forfeits"], d["time_limit_at"]) == (2, [], None)
    assert d["limits"] == {key: getattr(DEFAULTS, key) for key in (
        "max_faults", "max_consecutive_timeouts", "match_time_limit_s", "lag_threshold_ms", "lag_retries")}


@pytest.mark.parametrize("key", ["match_id", "game", "config", "deals", "seats", "deadline_ms", "decisions",
                                 "faults", "result", "started_at", "duration_s", "limits", "forfeits",
                                 "time_limit_at"])
def test_missing_field_is_a_record_error(record, key) -> None:
    d = record.to_dict()
    del d[key]
    with pytest.raises(RecordError, match=f"record.{key} is missing"):
        MatchRecord.from_dict(d)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(game="chess"), "unknown game"),
        (lambda d: d.update(version=99), "version"),
        (lambda d: d.update(seed="7"), "seed"),
        (lambda d: d.update(deadline_ms=True), "deadline_ms"),
        (lambda d: d.update(deadline_ms=-3), "deadline_ms must be a positive"),
        (lambda d: d["config"].update(colour="red"), "config"),
        (lambda d: d["config"].update(limit=0), "config"),
        (lambda d: d.update(deals=[{"hands": [["a"]]}]), "deals"),
        (lambda d: d["seats"][0].pop("endpoint"), r"seats\[0\].endpoint"),
        (lambda d: d.update(seats=[]), r"record.seats must list 2..10 seats \(take5\), got 0"),
        (lambda d: d.update(seats=d["seats"] * 4), r"record.seats must list 2..10 seats \(take5\), got 12"),
        (lambda d: d["decisions"][3].update(source="oracle"), r"decisions\[3\].source"),
        (lambda d: d["decisions"][1].update(seat="0"), r"decisions\[1\].seat"),
        (lambda d: d["decisions"].append(7), r"decisions\[\d+\]"),
        (lambda d: d["faults"].append({"kind": "bored", "seat": 0, "hand": 0, "turn": 0, "detail": "",
                                       "decision": None}), "kind"),
        (lambda d: d["result"].update(scores=["x"]), "scores"),
        (lambda d: d["result"].update(ranks=[1.5, 2, 3]), "ranks"),
    ],
)
def test_malformed_record_is_a_record_error(record, change, message) -> None:
    d = copy.deepcopy(record.to_dict())
    change(d)
    with pytest.raises(RecordError, match=message):
        MatchRecord.from_dict(d)


def test_load_errors(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{not json")
    with pytest.raises(RecordError, match="not JSON"):
        MatchRecord.load(tmp_path / "a.json")
    (tmp_path / "b.json").write_text("[1, 2]")
    with pytest.raises(RecordError, match="JSON object"):
        MatchRecord.load(tmp_path / "b.json")
    with pytest.raises(OSError):
        MatchRecord.load(tmp_path / "missing.json")


# --- tampered records -------------------------------------------------------------------------------------------


def first_card_decision(rec: MatchRecord, seat_: int) -> int:
    return next(i for i, d in enumerate(rec.decisions) if d["seat"] == seat_ and d["kind"] == take5.CHOOSE_CARD)


def test_action_changed_to_an_illegal_card(record) -> None:
    i = first_card_decision(record, 0)
    states = list(walk(record))
    hand = states[i][0].hands[0]
    not_held = next(c for c in range(1, 105) if c not in hand)
    diffs = replay(tampered(record, lambda d: d["decisions"][i].update(action={"card": not_held})))
    assert any(f"decision {i}" in x and "not legal" in x for x in diffs)
    assert any("stopped" in x for x in diffs)


def test_action_changed_to_another_legal_card(record) -> None:
    i = first_card_decision(record, 1)
    hand = list(walk(record))[i][0].hands[1]
    other = next(c for c in hand if c != record.decisions[i]["action"]["card"])
    diffs = replay(tampered(record, lambda d: d["decisions"][i].update(action={"card": other})))
    assert diffs  # that card was played later in the hand by the same seat: now illegal there
    assert any("not legal" in x for x in diffs)


def test_result_tampered(record) -> None:
    diffs = replay(tampered(record, lambda d: d["result"]["scores"].__setitem__(0, 0.0)))
    assert any("result.scores" in x for x in diffs)
    diffs = replay(tampered(record, lambda d: d["result"].update(ranks=[1, 1, 1])))
    assert any("result.ranks" in x for x in diffs)


def test_missing_and_extra_decisions(record) -> None:
    diffs = replay(tampered(record, lambda d: d["decisions"].pop()))
    assert any("not over" in x for x in diffs)
    diffs = replay(tampered(record, lambda d: d["decisions"].append(dict(d["decisions"][-1]))))
    assert any("already over" in x for x in diffs)
    diffs = replay(tampered(record, lambda d: d.update(decisions=[])))
    assert any("not over" in x for x in diffs)


def test_decision_metadata_tampered(record) -> None:
    i = first_card_decision(record, 2)
    assert any("recorded kind" in x for x in
               replay(tampered(record, lambda d: d["decisions"][i].update(kind=take5.DRAFT_PICK))))
    assert any("turn" in x for x in replay(tampered(record, lambda d: d["decisions"][i].update(turn=7))))
    assert any("hand" in x for x in replay(tampered(record, lambda d: d["decisions"][i].update(hand=3))))
    assert any("sequence" in x for x in replay(tampered(record, lambda d: d["decisions"][i].update(seq=99))))
    assert any("asks seat" in x for x in replay(tampered(record, lambda d: d["decisions"][i].update(seat=9))))


def test_batch_applied_out_of_seat_order(record) -> None:
    def swap(d: dict) -> None:
        d["decisions"][0], d["decisions"][1] = d["decisions"][1], d["decisions"][0]

    diffs = replay(tampered(record, swap))
    assert any("applied before seat 0" in x for x in diffs)


def test_source_and_fault_tampering(faulty) -> None:
    f0 = faulty.faults[0]
    i = f0.decision
    state = list(walk(faulty))[i][0]
    # the default replaced by another legal action
    other = next(a for a in take5.legal_actions(state, f0.seat) if a != take5.default_action(state, f0.seat))
    diffs = replay(tampered(faulty, lambda d: d["decisions"][i].update(action={"card": other.card})))
    assert any("default is" in x for x in diffs)
    # a fault removed: its default has no fault, and the fault counts disagree
    diffs = replay(tampered(faulty, lambda d: d["faults"].pop(0)))
    assert any("without a fault" in x for x in diffs)
    assert any("result.faults" in x for x in diffs)
    # a bot decision relabelled as a default
    j = next(k for k, d in enumerate(faulty.decisions) if d["source"] == "bot")
    diffs = replay(tampered(faulty, lambda d: d["decisions"][j].update(source="default")))
    assert any(f"decision {j}" in x and "without a fault" in x for x in diffs)
    # a fault pointing at a decision that does not exist / at the wrong seat
    diffs = replay(tampered(faulty, lambda d: d["faults"][0].update(decision=10_000)))
    assert any("does not exist" in x for x in diffs)
    diffs = replay(tampered(faulty, lambda d: d["faults"][0].update(seat=0)))
    assert any("recorded for seat 0" in x for x in diffs)


def test_seed_or_config_tampered(record) -> None:
    assert replay(tampered(record, lambda d: d.update(seed=d["seed"] + 1)))
    assert replay(tampered(record, lambda d: d["config"].update(limit=1000)))
    diffs = replay(tampered(record, lambda d: d.update(seed=None)))
    assert any("cannot rebuild" in x for x in diffs)


def test_unreadable_action(record) -> None:
    diffs = replay(tampered(record, lambda d: d["decisions"][0].update(action={"card": "ten"})))
    assert any("unreadable action" in x for x in diffs)


def test_replay_never_raises_on_a_record_built_by_hand(record) -> None:
    weird = MatchRecord(
        match_id="w", game="take5", config={"limit": 5}, seed=1, deals=[], seats=record.seats[:2],
        deadline_ms=10, decisions=({"seat": [1]}, "x"), faults=(Fault("timeout", "a", 0, 0, "", None),),  # type: ignore[arg-type]
        result=record.result, started_at=0.0, duration_s=0.0,
    )
    diffs = replay(weird)
    assert diffs and all(isinstance(x, str) for x in diffs)
    assert replay(MatchRecord(**{**record.__dict__, "game": "chess"})) == ["unknown game 'chess'"]


# --- property: any tampering is reported, never a crash -------------------------------------------------------


def leaves(obj: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, (*path, i))
    else:
        yield path


def set_path(obj: Any, path: tuple, value: Any) -> None:
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 120) | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=5,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_leaf_replaced_gives_a_record_error_or_differences(faulty, data) -> None:
    d = copy.deepcopy(faulty.to_dict())
    path = data.draw(st.sampled_from(sorted(leaves(d), key=str)))
    value = data.draw(json_values)
    set_path(d, path, value)
    try:
        rec = MatchRecord.from_dict(d)
    except RecordError:
        return
    diffs = replay(rec)
    assert isinstance(diffs, list) and all(isinstance(x, str) for x in diffs)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_any_changed_card_choice_is_detected(record, data) -> None:
    cards = [i for i, dec in enumerate(record.decisions) if dec["kind"] == take5.CHOOSE_CARD]
    i = data.draw(st.sampled_from(cards))
    new = data.draw(st.integers(0, 110).filter(lambda c: c != record.decisions[i]["action"]["card"]))
    diffs = replay(tampered(record, lambda d: d["decisions"][i].update(action={"card": new})))
    assert diffs, f"changing decision {i} to card {new} went unnoticed"
