"""The stored match records as ``GetMatch`` gives them: without the bots' notes but those of the seats a call
proves it owns (``without_notes``), and, for every caller who proves no seat, encoded once per stored record and
kept (``PublicRecords``): a revealed record does not change once stored, and decoding, stripping and encoding one
of a long game (300 KB for 1,800 decisions) on every call made ``GetMatch`` the costliest public read.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from arena.core.kept import Kept
from arena.store import Store

MAX_KEPT_BYTES = 64 * 1024 * 1024  # encoded records kept at most (a match of 1,800 decisions: about 300 KB)


def without_notes(record: dict[str, Any], keep: frozenset[int] = frozenset()) -> dict[str, Any]:
    """``record`` (JSON form) without the bots' notes (each decision's ``note``) but those of the seats ``keep``.

    Total over whatever a stored record decodes to: a record of another shape (damaged in the store) is given as
    stored, for its reader to refuse ("cannot be shown"), but for the notes: a ``decisions`` that is no list and
    items that are no objects are kept as they are, and a decision whose ``seat`` is no seat number keeps no note.
    """
    decisions = record.get("decisions")
    if not isinstance(decisions, list):
        return record

    def strip(d: Any) -> bool:
        if not isinstance(d, dict) or "note" not in d:
            return False
        seat = d.get("seat")
        return not (isinstance(seat, int) and not isinstance(seat, bool) and seat in keep)

    if not any(strip(d) for d in decisions):
        return record
    return dict(record, decisions=[{k: v for k, v in d.items() if k != "note"} if strip(d) else d for d in decisions])



class PublicRecords:
    """The records of revealed matches as a caller proving no seat gets them (JSON text), by (game, match id, a
    digest of the stored bytes: a record stored again, or changed in the store, is another key; ``arena tournament
    verify`` reads what is stored), at most ``max_bytes`` of them, the least recently asked going first. A record
    kept costs a call one read of its stored bytes (compressed) and their digest, not their decoding and encoding.
    Thread-safe (the referee's handlers share it); two callers of a record not kept yet may both build it."""

    def __init__(self, max_bytes: int = MAX_KEPT_BYTES) -> None:
        self._kept: Kept[tuple[str, str, bytes, bool], str] = Kept(max_bytes, len)
        self.builds = 0  # records encoded so far (for tests)

    def record_json(self, store: Store, game: str, match_id: str, strip: bool, own: frozenset[int] | None) -> str:
        """The stored record of ``match_id`` as JSON text ("" when none is stored); ``strip``: without the bots'
        notes but those of the seats ``own``. A call with seats of its own (``own``) is encoded for it alone.
        Raises ``RecordCodecError`` for a damaged record (nothing kept)."""
        raw = store.match_record_bytes(match_id, game)
        if raw is None:
            return ""
        if own:
            record = store.unpack_match_record(match_id, game, raw)
            return json.dumps(without_notes(record, own) if strip else record)
        key = (game, match_id, hashlib.blake2b(raw, digest_size=16).digest(), strip)
        text = self._kept.get(key)
        if text is None:
            record = store.unpack_match_record(match_id, game, raw)
            text = json.dumps(without_notes(record) if strip else record)
            self.builds += 1
            self._kept.put(key, text)
        return text
