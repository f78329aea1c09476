"""Match records are stored packed (arena/store/codec.py): lossless, small, and older JSON records still read."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.match.record import SeatSpec
from arena.match.referee import run_match_sync
from arena.store import Store
from arena.store.codec import PREFIX, RecordCodecError, pack_record, unpack_record
from arena.store.keys import match_key

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bots"))
from any_random_bot import random_bot_class  # noqa: E402,F401  (the conformance bot, also used as a process)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
decisions = st.lists(st.dictionaries(st.sampled_from(["seq", "seat", "kind", "action", "source", "latency_ms",
                                                      "retries"]), json_values, max_size=7), max_size=20)


@settings(max_examples=60, deadline=None)
@given(body=st.dictionaries(st.text(max_size=8).filter(lambda k: k != "decisions"), json_values, max_size=6),
       decs=decisions)
def test_packing_is_lossless_key_order_included(body: dict[str, Any], decs: list[dict[str, Any]]) -> None:
    record = {**body, "decisions": decs}
    back = unpack_record(pack_record(record))
    assert back == record and list(back) == list(record)
    if len({tuple(d) for d in decs}) <= 1:  # decisions written alike (as the referee writes them) keep their order
        assert [list(d) for d in back["decisions"]] == [list(d) for d in decs]


def test_plain_json_records_stored_before_still_read_and_garbage_is_refused() -> None:
    record = {"match_id": "m1", "decisions": [{"seat": 0}]}
    assert unpack_record(json.dumps(record)) == record
    assert unpack_record(json.dumps(record).encode()) == record
    for bad in (b"z1:not zlib", b"\x00\x01", "[1, 2]"):
        try:
            unpack_record(bad)
        except RecordCodecError:
            continue
        raise AssertionError(f"{bad!r} was accepted")


def test_a_stored_take5_match_is_small_and_reads_back_whole(store: Store, start_bot: Any) -> None:
    bots = [start_bot("sample:random"), start_bot("sample:heuristic"), start_bot("sample:random"),
            start_bot("sample:heuristic")]
    seats = [SeatSpec(f"b{i}@1.0", b.endpoint) for i, b in enumerate(bots)]
    record = run_match_sync("m-codec-1", "take5", seats, seed=2**200 + 12345).to_dict()
    assert store.record_result("take5", "m-codec-1", [s.name for s in seats], record["result"]["scores"],
                               record["result"]["ranks"], record["result"]["faults"], record)
    raw = store.client.execute_command("GET", match_key("take5", "m-codec-1"), NEVER_DECODE=[])
    assert raw.startswith(PREFIX)
    plain = len(json.dumps(record))
    assert len(raw) < plain / 8, f"{len(raw)} bytes stored for a {plain}-byte record"
    assert store.get_match_record("m-codec-1", "take5") == record
