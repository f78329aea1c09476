"""What every game's renderer shares."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from arena.core.text import printable


class RenderError(ValueError):
    """A record that cannot be rendered at all: not a well-formed record, or a game no renderer can show."""


def safe(text: object) -> str:
    """``text`` safe to print in a rich renderable: control characters (escape sequences) removed and rich
    markup escaped, so a crafted record's bot name cannot restyle or garble the terminal."""
    from rich.markup import escape

    return escape(printable(text))


def one_line(text: object) -> str:
    """``text`` on one line (white space runs become one space) without control or format characters
    (``arena.core.text.printable``): a fault's detail, which carries a bot's own error text, as a reader sees it.
    Never cut: the terminal wraps it (a fault's reason is what a bot author needs whole)."""
    return " ".join(printable(word) for word in str(text).split())


def forfeit_text(record: Any, seat: int) -> str:
    """ "forfeit (faults)" when ``seat`` forfeited the match of ``record`` (a ``MatchRecord``), else ""."""
    forfeits = getattr(record.result, "forfeits", ()) or ()
    reason = forfeits[seat] if seat < len(forfeits) else None
    return f"forfeit ({reason})" if reason else ""


def transports_text(record: Any) -> str | None:
    """How the referee called each seat's bot (``MatchRecord.transports``), for a record's header: e.g. "0: match
    stream, 1: match stream (3 streams: reopened after it ended or broke), 2: unary calls (PlayMatch refused the
    stream: not implemented)"; None when the record does not say (one from before it was kept)."""
    parts = []
    for seat, (transport, streams) in enumerate(record.transports):
        if transport == "stream":
            more = f" ({streams} streams: reopened after it ended or broke)" if streams > 1 else ""
            parts.append(f"{seat}: match stream{more}")
        else:
            refused = " (PlayMatch refused the stream: not implemented)" if streams else ""
            parts.append(f"{seat}: unary calls{refused}")
    return ", ".join(parts) or None


def result_table(record: Any, score_label: str) -> Table:
    """The result of a match: seat, bot, score, rank, faults and forfeits (a forfeited seat is ranked last
    whatever its score)."""
    rec = record
    table = Table(title="Result", title_justify="left")
    for col, justify in (("seat", "right"), ("bot", "left"), (score_label, "right"), ("rank", "right"),
                         ("faults", "right"), ("forfeit", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for s, seat in enumerate(rec.seats):
        score = rec.result.scores[s] if s < len(rec.result.scores) else None
        table.add_row(str(s), safe(seat.name), "-" if score is None else f"{score:g}",
                      str(rec.result.ranks[s]) if s < len(rec.result.ranks) else "-",
                      str(rec.result.faults[s]) if s < len(rec.result.faults) else "-", forfeit_text(rec, s))
    return table
