"""Pages of the Arena service's list methods: page sizes, opaque page tokens, and a byte budget per reply.

A list request carries ``page_size`` (0 = the list's default; more than its maximum is clamped to the maximum, not
refused) and ``page_token`` ("" = the first page); its answer carries ``next_page_token`` ("" on the last page).
A token is the base64url text of ``[1, method, query tag, position]`` (JSON): the position is where the next page
starts (the last entry listed, e.g. ``["<game>", "alpha@1"]``), the query tag a hash of the arena id, the method and
the request's filters, so a token of another list, of other filters or of another arena is refused
(``PageTokenError``; INVALID_ARGUMENT at the edge) rather than silently listing something else. Tokens carry no
secret: a hand-made one can only start a public list somewhere.

Sizes (gRPC refuses a message over 4 MiB, 4,194,304 bytes, by default). The largest legal entries, from
``arena.core.limits``:

- ``BotRecord``: name 64 + endpoint 255 + game 32 + version 64 + bot_id 129 + sdk_version 64 + author 128 +
  endpoint_problem 256 + health_reason 256 characters, plus about 80 bytes of tags, lengths and numbers: at most
  about 1,330 bytes. A default page (200) is at most about 266 KB, a page of the maximum (1000) about 1.3 MB.
- ``MatchSummary``: match id 64 + tournament id 24 + game 32, and per seat (at most 10) a bot id of 129 and four
  numbers: at most about 1,700 bytes. 50 (default): about 85 KB; 1000 (maximum): about 1.7 MB.
- ``WorkerInfo``: a worker's name and host (written by the workers, which hold Redis credentials) and one match id
  (64) per running match: a few KB for a worker of a few dozen matches at once.
- ``Tournament``: 128 bot ids of 129 characters (about 16.9 KB) plus its format's fields; a Swiss of many rounds
  lists its byes too, which can make one tournament much larger. 20 (default): about 350 KB for plain ones.

Whatever the sizes, ``fitting`` cuts a page at ``PAGE_BYTES`` (1 MiB, a quarter of the limit): the page then ends
early and its ``next_page_token`` continues after its last entry. A single entry over the budget still travels
alone (the page of one).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc

from arena.core import limits
from arena.server.requests import abort

TOKEN_VERSION = 1
PAGE_BYTES = 1024 * 1024  # a page's entries stop growing past this many bytes (gRPC's limit is 4 MiB)

T = TypeVar("T")


@dataclass(frozen=True)
class PageKind:
    """One list method's paging: its name (the Arena method), its default page size (``page_size`` 0) and its
    maximum (a larger ``page_size`` is clamped to it)."""

    method: str
    default_size: int
    max_size: int

    def size(self, requested: int) -> int:
        """The page size to use for a request's ``page_size``: 0 -> the default, above the maximum -> the
        maximum."""
        if requested <= 0:
            return self.default_size
        return min(int(requested), self.max_size)


BOTS = PageKind("ListBots", 200, 1000)
CHECKED_BOTS = 200  # ListBots with check_endpoints: at most this many bots a page (each one's GetInfo is called)
TOURNAMENTS = PageKind("ListTournaments", 20, 100)
MATCHES = PageKind("ListMatches", 50, limits.MATCH_LIST)
WORKERS = PageKind("ListWorkers", 200, 1000)


class PageTokenError(ValueError):
    """A page token that is not one this arena made for this list and these filters; the message says which and
    what to do, in one sentence."""


def _tag(kind: PageKind, query: Sequence[str]) -> str:
    """A short hash of the method and the query (arena id, filters), the part of a token that ties it to them."""
    text = "\x00".join([kind.method, *query])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def make_token(kind: PageKind, query: Sequence[str], position: Any) -> str:
    """The page token of the page after ``position`` (JSON-able: strings, numbers, lists, dicts of them) of the
    list ``kind`` under ``query`` (the arena id and the request's filters, in a fixed order)."""
    raw = json.dumps([TOKEN_VERSION, kind.method, _tag(kind, query), position], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def read_token(kind: PageKind, query: Sequence[str], token: str, parse: Callable[[Any], T]) -> T | None:
    """The position in ``token`` (``make_token``'s), as ``parse`` reads it; None for "" (the first page).

    Raises ``PageTokenError`` for a token that does not decode, is longer than ``limits.PAGE_TOKEN``, was made for
    another list method or other filters, or whose position ``parse`` refuses (any ``ValueError``,
    ``TypeError``, ``KeyError`` or ``IndexError`` it raises)."""
    if not token:
        return None
    how = (f"pass the next_page_token of the previous {kind.method} answer unchanged, or no page_token for the "
           f"first page")
    if len(token) > limits.PAGE_TOKEN:
        raise PageTokenError(f"page_token is {len(token)} characters long, longer than any {kind.method} token; "
                             f"{how}")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        version, method, tag, position = json.loads(raw.decode())
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError):
        raise PageTokenError(f"page_token {token[:40]!r} is not a page token of this arena; {how}") from None
    if version != TOKEN_VERSION or method != kind.method:
        raise PageTokenError(f"page_token was made for {method if isinstance(method, str) else 'another list'}, "
                             f"not {kind.method}; {how}")
    if tag != _tag(kind, query):
        raise PageTokenError(f"page_token was made for other filters (or another arena) than this "
                             f"{kind.method} request; {how}")
    try:
        return parse(position)
    except (ValueError, TypeError, KeyError, IndexError):
        raise PageTokenError(f"page_token {token[:40]!r} holds no valid {kind.method} position; {how}") from None


def page_request(kind: PageKind, query: Sequence[str], request: Any, parse: Callable[[Any], T],
                 context: grpc.ServicerContext) -> tuple[int, T | None]:
    """(page size, start position or None) of a list ``request`` with ``page_size`` and ``page_token`` fields;
    INVALID_ARGUMENT (the ``PageTokenError`` message) for a bad token."""
    try:
        position = read_token(kind, query, request.page_token, parse)
    except PageTokenError as exc:
        abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    return kind.size(request.page_size), position


def fitting(messages: Sequence[Any], budget: int = PAGE_BYTES) -> int:
    """How many of ``messages`` (protobuf messages, in page order) fit in ``budget`` bytes together: at least
    one when there are any, so a page always moves on."""
    total = 0
    for i, message in enumerate(messages):
        total += message.ByteSize() + 8  # the entry's tag and length
        if total > budget and i > 0:
            return i
    return len(messages)


def text(value: str, most: int = limits.PROBLEM_TEXT) -> str:
    """``value`` cut to ``most`` characters (the last one an ellipsis when cut): a free text of a reply entry."""
    return value if len(value) <= most else value[:most - 1] + "…"


def string_position(value: Any) -> str:
    """A position that is one string (``parse`` of ``read_token``). Raises ``ValueError`` otherwise."""
    if not isinstance(value, str) or len(value) > limits.PAGE_TOKEN:
        raise ValueError("not a string position")
    return value


def strings_position(count: int) -> Callable[[Any], tuple[str, ...]]:
    """A ``parse`` of ``read_token`` for a position of ``count`` strings."""

    def parse(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or len(value) != count:
            raise ValueError(f"not a list of {count} strings")
        return tuple(string_position(v) for v in value)

    return parse
