"""Tables fitted to the terminal: a number is never wrapped nor cut, a bot id folds only when it must, and the columns
of least weight are left out first, with a line saying which (``fit``, ``Fit.table``, ``print_tables``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from arena.core.text import printable


@dataclass(frozen=True)
class Col:
    """A column of a table fitted to the terminal (``fit``). ``header`` is shown when every kept column fits with
    it, else ``short`` (None: the same). ``cells``: "number" (a number or a short label: never wrapped nor cut),
    "name" (a bot id: kept whole while the kept columns leave room, folded only when even they do not) or "words"
    (wrapped between words). ``drop``: 0, always shown; higher, left out earlier when the terminal is too narrow."""

    header: str
    short: str | None = None
    cells: Literal["number", "name", "words"] = "number"
    drop: int = 0
    justify: JustifyMethod = "right"


NAME_MIN = 12  # columns a folded bot id keeps


@dataclass(frozen=True)
class Fit:
    """Which of ``columns`` a table keeps for a terminal of ``width`` columns, whether with their ``short``
    headers, the widest header or cell of each column (terminal columns; its longest word for "words"), and
    whether bot ids must fold (``fit`` decides)."""

    width: int
    columns: tuple[Col, ...]
    kept: tuple[int, ...]  # indexes into columns
    short: bool
    widest: tuple[int, ...]  # one per column
    fold_names: bool

    @property
    def left_out(self) -> tuple[str, ...]:
        """The headers of the columns left out, in table order."""
        return tuple(c.header for i, c in enumerate(self.columns) if i not in self.kept)

    def table(self, title: str, rows: Sequence[Sequence[str]]) -> Table:
        """A rich table titled ``title`` of the kept columns of ``rows`` (one cell per column given to ``fit``):
        a number column is never wrapped and never narrower than its widest cell. Cells are plain text: rich
        markup in them is shown as it is, control characters but a cell's own line breaks are removed (a bot's
        author or error status is text from outside)."""
        table = Table(title=title)
        for i in self.kept:
            c = self.columns[i]
            header = (c.short or c.header) if self.short else c.header
            if c.cells == "words":
                table.add_column(header, justify=c.justify, overflow="fold")
            elif c.cells == "name" and self.fold_names:
                table.add_column(header, justify=c.justify, overflow="fold", min_width=NAME_MIN)
            else:
                table.add_column(header, justify=c.justify, no_wrap=True, min_width=self.widest[i])
        for row in rows:
            table.add_row(*(Text("\n".join(map(printable, str(row[i]).split("\n")))) for i in self.kept))
        return table

    def note(self) -> str:
        """The line under the table naming the columns left out ("" when none was): "not shown at 80 columns:
        performance (Elo), score rate (widen the terminal, or use --json)" (every command of a fitted table has
        --json)."""
        if not self.left_out:
            return ""
        return f"not shown at {self.width} columns: {', '.join(self.left_out)} (widen the terminal, or use --json)"


def fit(columns: Sequence[Col], rows: Sequence[Sequence[str]], width: int) -> Fit:
    """The columns of ``rows`` (one cell per column of ``columns``) to show in a table of at most ``width``
    terminal columns: every column with its long headers if they fit, else with the short ones, else leaving out
    the columns of highest ``drop`` first until the rest fits with whole bot ids; when even the columns of
    ``drop`` 0 do not, bot ids fold. A column needs its widest header or cell (its longest word for "words"),
    plus 3 columns of padding and rule; the table 1 more."""
    def widest(i: int, short: bool) -> int:
        c = columns[i]
        texts = [(c.short or c.header) if short else c.header, *(row[i] for row in rows)]
        return max(map(cell_len, (w for t in texts for w in (t.split() if c.cells == "words" else t.splitlines()))),
                   default=0)

    def need(kept: Sequence[int], short: bool) -> int:
        return 1 + sum(widest(i, short) + 3 for i in kept)

    kept = list(range(len(columns)))
    for i in sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: -columns[i].drop):
        if need(kept, short=True) <= width:
            break
        kept.remove(i)
    short = need(kept, short=False) > width
    return Fit(width, tuple(columns), tuple(kept), short, tuple(widest(i, short) for i in range(len(columns))),
               fold_names=need(kept, short) > width)


def print_tables(console: Console, tables: Sequence[Table], note: str) -> None:
    """Print ``tables`` and, dim under them, ``note`` (``Fit.note``: the columns left out, when one was)."""
    for table in tables:
        console.print(table)
    if note:
        console.print(Text(note, style="dim"))
