"""The platform's own errors under one root, ``ArenaError`` (a bot's faults are data, never exceptions).

Each layer raises a subclass named for what failed (``TournamentError``, ``StoreError``, ``RecordError``, ...); a caller
that only needs "the arena refused this" catches ``ArenaError``. Errors that are also bad values derive from
``ValueError`` too, so code written against ``ValueError`` keeps working.
"""


class ArenaError(Exception):
    """Root of every error the platform raises on purpose; the message names the bad value and what is allowed."""


class TournamentError(ArenaError, ValueError):
    """A tournament request that cannot be expanded; the message names the bad value and the allowed range."""
