"""How a match record is kept in Redis: compact and compressed, about 1.5 KB for a typical 4-seat match instead
of about 25 KB of JSON, so that a million matches fit in a few GB.

``pack_record(record) -> bytes`` stores the record's decisions column by column (one list per field: seats, kinds,
actions, sources, latencies...; small repeated values compress well) and the rest of the record as it is, as
compact JSON compressed with zlib (``LEVEL`` 6, zlib's default: level 9 took 25-37 % more CPU for records 2-3 %
smaller, 1,077 us instead of 678 us for 32 KB of JSON), behind the prefix ``b"z1:"``. ``unpack_record(data) ->
dict`` gives back exactly the dict that was packed (lossless: ``unpack_record(pack_record(r)) == r`` for every
JSON-ready record; the key order is kept too, at the top level and for decisions that share one order, as the
referee writes them), and reads plain JSON records stored before (starting with ``{``) unchanged. Pure functions,
no I/O.
"""

from __future__ import annotations

import itertools
import json
import operator
import zlib
from typing import Any

from arena.core.errors import ArenaError

PREFIX = b"z1:"
_MISSING = "\x00missing"  # marks a field absent from one decision (decisions need not share every key)


class RecordCodecError(ArenaError, ValueError):
    """Stored text that is neither a packed record nor a JSON record."""


LEVEL = 6  # zlib's compression level of a stored record


def pack_record(record: dict[str, Any]) -> bytes:
    """The stored form of a JSON-ready match record (``MatchRecord.to_dict()``). Raises ``TypeError`` for a value
    JSON cannot hold."""
    body = dict(record)
    order = list(body)  # top-level key order, kept so an unpacked record reads like the original
    decisions = body.pop("decisions", None)
    columns: dict[str, list[Any]] | None = None
    if isinstance(decisions, list) and all(isinstance(d, dict) for d in decisions):
        columns = _columns(decisions)
    elif "decisions" in record:
        body["decisions"] = decisions
    text = json.dumps({"r": body, "c": columns, "o": order}, separators=(",", ":"), allow_nan=False)
    return PREFIX + zlib.compress(text.encode("utf-8"), LEVEL)


def _columns(decisions: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The decisions column by column, keys in first-seen order (as the referee writes them), ``_MISSING`` where a
    decision lacks a key; ``"#"``: the count, for a list of empty decisions."""
    keys = list(dict.fromkeys(itertools.chain.from_iterable(decisions)))
    if len(keys) > 1 and all(len(d) == len(keys) for d in decisions):  # every decision has every key (the usual)
        try:
            rows = list(map(operator.itemgetter(*keys), decisions))
        except KeyError:  # same size, other keys
            pass
        else:
            columns = dict(zip(keys, map(list, zip(*rows))))
            columns["#"] = [len(decisions)]
            return columns
    columns = {k: [d.get(k, _MISSING) for d in decisions] for k in keys}
    columns["#"] = [len(decisions)]
    return columns


def unpack_record(stored: bytes | str) -> dict[str, Any]:
    """The record dict of a stored value (packed, or plain JSON as bytes or text). Raises ``RecordCodecError`` when
    it is neither: whatever is wrong with the stored bytes (not UTF-8, not zlib, not JSON, JSON nested too deep, a
    packed body of the wrong shape), no other exception comes out."""
    try:
        return _unpack(stored)
    except RecordCodecError:
        raise
    except (ValueError, TypeError, LookupError, AttributeError, RecursionError, zlib.error) as exc:
        # ValueError covers UnicodeDecodeError and json.JSONDecodeError; LookupError covers KeyError and IndexError
        raise RecordCodecError(f"a stored record cannot be read: {type(exc).__name__}: {exc}") from None


def _unpack(stored: bytes | str) -> dict[str, Any]:
    if isinstance(stored, str):
        stored = stored.encode("utf-8")
    if not stored.startswith(PREFIX):
        try:
            value = json.loads(stored)
        except (ValueError, RecursionError) as exc:
            raise RecordCodecError(f"a stored record is neither packed nor JSON: {exc}") from None
        if not isinstance(value, dict):
            raise RecordCodecError("a stored record must be a JSON object")
        return value
    try:
        data = json.loads(zlib.decompress(stored[len(PREFIX):]).decode("utf-8"))
    except (ValueError, RecursionError, zlib.error) as exc:
        raise RecordCodecError(f"a packed record cannot be read: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("r"), dict) or not isinstance(data.get("o"), list):
        raise RecordCodecError("a packed record has not the packed shape (r, c, o)")
    body = data["r"]
    columns = data.get("c")
    if columns is not None:
        count = columns.pop("#")[0]
        if not isinstance(count, int) or isinstance(count, bool) or count < 0 or any(
                not isinstance(values, list) or len(values) != count for values in columns.values()):
            raise RecordCodecError(f"a packed record's decision columns do not all hold its {count!r} decisions")
        decisions: list[dict[str, Any]] = [{} for _ in range(count)]
        for key, values in columns.items():
            for d, v in zip(decisions, values, strict=True):
                if v != _MISSING:
                    d[key] = v
        body["decisions"] = decisions
    return {k: body[k] for k in data["o"]}
