"""Reading every page of a paged list call (ListBots, ListTournaments, ListMatches, ListWorkers, ListOwners)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.cli.errors import ArenaCliError


@dataclass
class Pages:
    """What ``every_page`` read: the entries kept, how many entries were read in all (``read``), and whether the
    list has more than was read (``more``: it stopped at ``most`` kept or ``read_most`` read)."""

    entries: list[Any] = field(default_factory=list)
    read: int = 0
    more: bool = False


def read_pages(client: Any, method: str, request: Any, field_name: str, most: int | None = None,
               keep: Callable[[Any], bool] | None = None, read_most: int | None = None) -> Pages:
    """The entries (``field_name`` of each answer) of the pages of the list ``method`` (e.g. "ListBots", "bots"),
    asked with ``request`` (a copy is given each page's token), in order: those ``keep`` keeps (every one without
    it); stop once ``most`` are kept or ``read_most`` entries are read (None: no bound). ``client`` is an
    ``ArenaClient``; an answer without ``next_page_token`` (an older arena) is one page. Raises ``ArenaCliError``
    when the arena gives a page token it gave before (the list would never end)."""
    out = Pages()
    seen: set[str] = set()
    page = type(request)()
    page.CopyFrom(request)
    while True:
        reply = client.call(method, page)
        entries = list(getattr(reply, field_name))
        out.read += len(entries)
        out.entries.extend(e for e in entries if keep is None or keep(e))
        token = getattr(reply, "next_page_token", "")
        full = most is not None and len(out.entries) >= most
        if not token or full or (read_most is not None and out.read >= read_most):
            out.more = bool(token) or (most is not None and len(out.entries) > most)
            if most is not None:
                out.entries = out.entries[:most]
            return out
        if token in seen:
            raise ArenaCliError(f"the arena at {client.server} answered {method} with a page token it gave before; "
                                f"its list would never end (is it an arena of this version?)")
        seen.add(token)
        page.page_token = token


def every_page(client: Any, method: str, request: Any, field_name: str, most: int | None = None) -> list[Any]:
    """The entries of every page of the list ``method``, at most ``most`` (None: all): ``read_pages``'s entries."""
    return read_pages(client, method, request, field_name, most).entries
