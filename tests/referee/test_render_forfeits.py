"""What `arena match show` tells of a forfeit and of a crafted bot name (the renderers on records of real
matches)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from arena.match.local_bots import BotProcess
from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord, SeatSpec
from arena.match.referee import run_match_sync
from arena.render import render_match


def _text(record: MatchRecord) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(render_match(record))
    return console.export_text()


def test_a_forfeit_is_shown_with_its_reason_and_the_last_rank(test_bot: Callable[..., BotProcess],
                                                               seats_of: Callable[..., list[SeatSpec]]) -> None:
    garbage = test_bot("garbage_bot", "--style", "empty")
    seats = [SeatSpec("garbage", garbage.endpoint), *seats_of("random1", "random2")]
    record = run_match_sync("render-forfeit", "take5", seats, seed=3,
                            options=RefereeOptions(max_faults=2, deadline_ms=2000))
    assert record.result.forfeits[0] == "faults" and record.result.ranks[0] == 3
    lines = [line for line in _text(record).splitlines() if "garbage" in line and "forfeit (faults)" in line]
    assert lines and " 3 " in lines[0], _text(record)


def test_a_crafted_bot_name_in_a_record_file_cannot_restyle_the_terminal(
        seats_of: Callable[..., list[SeatSpec]]) -> None:
    record = run_match_sync("render-name", "take5", seats_of("random1", "random2"), seed=4)
    data = record.to_dict()
    data["seats"][0]["name"] = "[bold red]X[/]\x1b[31mY"
    text = _text(MatchRecord.from_dict(data))
    assert "\x1b" not in text and "[bold red]X[/]" in text


def test_how_each_seat_was_called_is_kept_and_shown(test_bot: Callable[..., BotProcess],
                                                    seats_of: Callable[..., list[SeatSpec]]) -> None:
    """A bot author could not tell whether the referee used the match stream (a cross-language review): the record
    keeps each seat's transport and streams, `match show` prints them on its `calls` line, a record from before
    (without them) still reads, and a record with a bad transport is refused naming the seat."""
    import pytest

    from arena.match.record import RecordError

    no_stream = test_bot("stream_bot", "--style", "no_stream")
    seats = [*seats_of("random1"), SeatSpec("claims", no_stream.endpoint)]
    record = run_match_sync("render-calls", "take5", seats, seed=5)
    assert record.transports[0] == ("stream", 1) and record.transports[1][0] == "unary"
    again = MatchRecord.from_dict(record.to_dict())
    assert again.transports == record.transports
    text = _text(again)
    assert "calls" in text and "0: match stream, 1: unary calls (PlayMatch refused the stream: not implemented)" in text
    data = record.to_dict()
    for spec in data["seats"]:
        del spec["transport"], spec["streams"]
    older = MatchRecord.from_dict(data)
    assert older.transports == () and "match stream" not in _text(older)
    data["seats"][1].update(transport="carrier pigeon", streams=0)
    with pytest.raises(RecordError, match=r"record.seats\[0\] must have a transport"):
        MatchRecord.from_dict(data)
    data["seats"][0].update(transport=["a" * 100_000], streams=0)  # a crafted file: the message stays short
    with pytest.raises(RecordError) as refused:
        MatchRecord.from_dict(data)
    assert len(str(refused.value)) < 300, len(str(refused.value))
