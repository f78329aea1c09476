"""Following the pages of the Arena service's list methods (``page_token`` / ``next_page_token``)."""

from __future__ import annotations

from typing import Any

from arena.cli.errors import ArenaCliError


def every_page(client: Any, method: str, request: Any, field: str, most: int | None = None) -> list[Any]:
    """The entries (``field`` of each answer) of every page of the list ``method`` (e.g. "ListBots", "bots"),
    asked with ``request`` (a copy is given each page's token), in order; stop once ``most`` entries are in
    (None: all). ``client`` is an ``ArenaClient``; an answer without ``next_page_token`` (an older arena) is one page.
    Raises ``ArenaCliError`` when the arena gives a page token it gave before (the list would never end)."""
    out: list[Any] = []
    seen: set[str] = set()
    page = type(request)()
    page.CopyFrom(request)
    while True:
        reply = client.call(method, page)
        out.extend(getattr(reply, field))
        token = getattr(reply, "next_page_token", "")
        if not token or (most is not None and len(out) >= most):
            return out if most is None else out[:most]
        if token in seen:
            raise ArenaCliError(f"the arena at {client.server} answered {method} with a page token it gave before; "
                                f"its list would never end (is it an arena of this version?)")
        seen.add(token)
        page.page_token = token
