"""Match records are stored packed (arena/store/codec.py): lossless, small, and older JSON records still read; stored
bytes that are no record (damaged) are one error, RecordCodecError, and DATA_LOSS naming the match over gRPC."""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from platform_helpers import rpc_error

from arena.match.record import SeatSpec
from arena.match.referee import run_match_sync
from arena.store import Store
from arena.store.codec import PREFIX, RecordCodecError, pack_record, unpack_record
from arena.store.keys import match_key
from arena_sdk.pb import arena_pb2, arena_pb2_grpc

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


def _packed(body: Any) -> bytes:
    return PREFIX + zlib.compress(json.dumps(body).encode())


# Stored bytes that are no record, each of which once let another exception than RecordCodecError out of
# unpack_record (UnicodeDecodeError, RecursionError, KeyError, TypeError, ValueError, IndexError, AttributeError).
DAMAGED = {
    "nul and 0xff": b"\x00\xffgarbage",
    "not utf-8 json": b'{"a":\xff}',
    "nested too deep": b"[" * 100_000,
    "packed, nested too deep": PREFIX + zlib.compress(b"[" * 100_000),
    "packed list": _packed([]),
    "packed without r": _packed({}),
    "packed, columns too long": _packed({"r": {}, "c": {"#": [1], "seat": [0, 1]}, "o": []}),
    "packed, order names a missing key": _packed({"r": {}, "c": None, "o": ["match_id"]}),
    "packed, empty count": _packed({"r": {}, "c": {"#": []}, "o": []}),
    "packed, columns not an object": _packed({"r": {}, "c": 5, "o": []}),
    "packed, unhashable key": _packed({"r": {}, "c": None, "o": [[1]]}),
    "packed, not utf-8": PREFIX + zlib.compress(b"\xff"),
    "text with a lone surrogate": "\ud800",
}


@pytest.mark.parametrize("stored", list(DAMAGED.values()), ids=list(DAMAGED))
def test_damaged_stored_bytes_raise_record_codec_error_and_nothing_else(stored: bytes | str) -> None:
    with pytest.raises(RecordCodecError):
        unpack_record(stored)


def _recorded_match(store: Store, start_bot: Any, match_id: str) -> dict[str, Any]:
    bots = [start_bot("sample:random"), start_bot("sample:heuristic")]
    seats = [SeatSpec(f"b{i}@1.0", b.endpoint) for i, b in enumerate(bots)]
    record = run_match_sync(match_id, "take5", seats, seed=777).to_dict()
    assert store.record_result("take5", match_id, [s.name for s in seats], record["result"]["scores"],
                               record["result"]["ranks"], record["result"]["faults"], record)
    return record


def test_a_damaged_stored_record_is_data_loss_naming_the_match_over_grpc(
        store: Store, start_bot: Any, arena_server: Callable[..., tuple[Any, arena_pb2_grpc.ArenaStub]]) -> None:
    _recorded_match(store, start_bot, "m-damaged-1")
    _, stub = arena_server()
    assert json.loads(stub.GetMatch(arena_pb2.GetMatchRequest(match_id="m-damaged-1")).record_json)["seed"] == 777
    store.client.set(match_key("take5", "m-damaged-1"), b"\x00\xffgarbage")
    with pytest.raises(RecordCodecError, match="match m-damaged-1 "):
        store.get_match_record("m-damaged-1", "take5")
    code, details = rpc_error(lambda: stub.GetMatch(arena_pb2.GetMatchRequest(match_id="m-damaged-1")))
    assert code == grpc.StatusCode.DATA_LOSS, (code, details)
    assert "m-damaged-1" in details and "cannot be read" in details
    # the message is plain: no exception text, nothing of the stored bytes
    assert "Exception" not in details and "codec" not in details and "garbage" not in details
    # the summary of the match still lists; only its record is lost
    listed = stub.ListMatches(arena_pb2.ListMatchesRequest(bot="b0@1.0")).matches
    assert [m.match_id for m in listed] == ["m-damaged-1"]
