"""Bot notes, on real parts: bots that attach a note to their answers (``Bot.note`` -> ``DecideResponse.note``) play
a match through the real referee over gRPC; the record keeps each note at its decision, cut to 280 characters and
at most 8000 per seat and match, control characters removed; the viewer's frames show them only when asked (a
match that is over, an organiser who shows notes), a seat's perspective its own notes only; the referee's records
(read through the CLI over real gRPC) keep them for their owner's signed call, everyone or nobody, as the organiser
sets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.core.signing import token_hash
from arena.match.local_bots import start_bots
from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import run_match_sync
from arena.match.replay import replay
from arena.match.running import MAX_NOTE_CHARS, MAX_NOTES_CHARS_PER_MATCH
from arena.render.frames import ALL, PUBLIC, build_frames, seat_perspective
from arena.server.app import ArenaServer
from arena.server.match_records import without_notes
from arena.server.servicer import ArenaServicer
from arena.store import Store
from arena_sdk.games import take5

OWNER_TOKEN = "owner-token-of-noting-" + "0123456789abcdefghijk"
NOTING_BOT = str(Path(__file__).resolve().parent / "bots" / "noting_bot.py")


@pytest.fixture(scope="module")
def record() -> Iterator[MatchRecord]:
    bots = start_bots([NOTING_BOT, "sample:random"])
    try:
        seats = [SeatSpec("noting@1", bots[0].endpoint), SeatSpec("random@1", bots[1].endpoint)]
        # seat seeds: the random bots' play, and so the match's length and its notes, are the same on every run
        yield run_match_sync("notes-1", "take5", seats, take5.Take5Config(limit=66), seed=5,
                             options=RefereeOptions(deadline_ms=5000), seat_seeds=(11, 12))
    finally:
        for bot in bots:
            bot.stop()


def test_the_record_keeps_each_note_at_its_decision_within_the_bounds(record: MatchRecord) -> None:
    notes = [d for d in record.decisions if "note" in d]
    assert notes and all(d["seat"] == 0 for d in notes)  # the sample bot sets none
    assert all(len(d["note"]) <= MAX_NOTE_CHARS and "\x1b" not in d["note"] for d in notes)
    assert max(len(d["note"]) for d in notes) > MAX_NOTE_CHARS * 0.9  # the long ones were cut
    total = sum(len(d["note"]) for d in notes)
    assert MAX_NOTES_CHARS_PER_MATCH - MAX_NOTE_CHARS < total <= MAX_NOTES_CHARS_PER_MATCH
    used, full = 0, None  # once the seat's notes of the match are used up, later ones are dropped
    for i, d in enumerate(record.decisions):
        used += len(d.get("note", ""))
        if full is None and used == MAX_NOTES_CHARS_PER_MATCH:
            full = i
    assert full is not None and all("note" not in d for d in record.decisions[full + 1:])
    assert any(d["seat"] == 0 for d in record.decisions[full + 1:])
    first = next(d for d in notes if d["kind"] == take5.CHOOSE_CARD)
    assert first["note"].startswith("hand [") and f"plays {first['action']['card']}hand" in first["note"]
    assert replay(record) == []  # a note changes nothing in the match


def test_the_frames_show_notes_only_when_asked_and_a_seat_its_own(record: MatchRecord) -> None:
    assert all("note" not in f for f in build_frames(record, PUBLIC).frames)
    public = [f for f in build_frames(record, PUBLIC, notes=True).frames if "note" in f]
    assert public and all(f["seat"] == 0 for f in public)
    assert len([f for f in build_frames(record, ALL, notes=True).frames if "note" in f]) == len(public)
    assert all("note" not in f for f in build_frames(record, seat_perspective(1), notes=True).frames)
    assert [f for f in build_frames(record, seat_perspective(0), notes=True).frames if "note" in f]


def test_hidden_notes_are_removed_from_the_records_the_referee_gives(record: MatchRecord) -> None:
    data = record.to_dict()
    stripped = without_notes(data)
    assert all("note" not in d for d in stripped["decisions"]) and any("note" in d for d in data["decisions"])
    assert MatchRecord.from_dict(stripped).decisions[0]["action"] == data["decisions"][0]["action"]
    assert without_notes(data, frozenset({0})) == data  # only seat 0 has notes
    with pytest.raises(ValueError, match="bot_notes must be one of owner, public, hidden"):
        ArenaServicer(None, "redis://x", bot_notes="owners")  # type: ignore[arg-type]


def _shown_notes(redis_url: str, tmp_path: Path, bot_notes: str, record: MatchRecord,
                 token: str | None) -> list[int] | str:
    """The seats whose notes ``arena match show ID --json`` gets from a referee with ``bot_notes``, the call
    signed with ``token`` (or unsigned); the CLI's error line when it refuses."""
    store = Store.from_url(redis_url)
    store.register_bot_claim("take5", "noting", "127.0.0.1:9", version="1", owner_hash=token_hash(OWNER_TOKEN))
    data = record.to_dict()
    store.record_result("take5", record.match_id, ["noting@1", "random@1"], list(record.result.scores),
                        list(record.result.ranks), [0, 0], data)
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0, bot_notes=bot_notes)
    port = server.start()
    try:
        args = ["match", "show", record.match_id, "--json", "--server", f"127.0.0.1:{port}"]
        env = {"ARENA_DATA_DIR": str(tmp_path), "ARENA_TOKEN": token}
        result = CliRunner(env=env).invoke(cli, args)
    finally:
        server.stop(grace=0)
    if result.exit_code != 0:
        return result.output
    shown = json.loads(result.stdout)
    return sorted({d["seat"] for d in shown["decisions"] if "note" in d})


@pytest.mark.parametrize(("bot_notes", "token", "seats"), [
    ("owner", OWNER_TOKEN, [0]), ("owner", None, []), ("owner", "x" * 43, "wrong owner token"),
    ("public", None, [0]), ("hidden", OWNER_TOKEN, [])])
def test_the_organiser_sets_who_reads_the_notes(redis_url: str, tmp_path: Path, record: MatchRecord,
                                                bot_notes: str, token: str | None, seats: list[int] | str) -> None:
    shown = _shown_notes(redis_url, tmp_path, bot_notes, record, token)
    if isinstance(seats, str):
        assert isinstance(shown, str) and seats in shown and "PERMISSION_DENIED" in shown
    else:
        assert shown == seats


def test_a_revealed_record_is_encoded_once_for_everyone_and_apart_for_its_owner(redis_url: str,
                                                                                  record: MatchRecord) -> None:
    """GetMatch's records (``PublicRecords``): a caller proving no seat gets the record without notes, encoded once
    however often it is asked; an owner's call gets its seat's notes, never kept for others; a record changed in
    the store is encoded again (``arena tournament verify`` reads what is stored)."""
    from arena.server.match_records import PublicRecords
    from arena.store.codec import pack_record
    from arena.store.keys import match_key

    store = Store.from_url(redis_url)
    store.record_result("take5", "kept-1", ["noting@1", "random@1"], list(record.result.scores),
                        list(record.result.ranks), [0, 0], record.to_dict())
    records = PublicRecords()

    def seats_with_notes(text: str) -> list[int]:
        return sorted({d["seat"] for d in json.loads(text)["decisions"] if "note" in d})

    first = records.record_json(store, "take5", "kept-1", True, None)
    assert seats_with_notes(first) == [] and records.builds == 1
    assert records.record_json(store, "take5", "kept-1", True, frozenset()) == first
    assert seats_with_notes(records.record_json(store, "take5", "kept-1", True, frozenset({0}))) == [0]
    assert records.record_json(store, "take5", "kept-1", True, None) == first and records.builds == 1
    assert seats_with_notes(records.record_json(store, "take5", "kept-1", False, None)) == [0]
    store.client.set(match_key("take5", "kept-1"), pack_record(dict(record.to_dict(), seed=12345)))
    changed = records.record_json(store, "take5", "kept-1", True, None)
    assert json.loads(changed)["seed"] == 12345 and records.builds == 3
    assert records.record_json(store, "take5", "nothing-stored", True, None) == ""
