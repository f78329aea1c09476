"""The platform's own errors under one root, ``ArenaError`` (a bot's faults are data, never exceptions).

Each layer raises a subclass named for what failed (``TournamentError``, ``StoreError``, ``RecordError``, ...); a caller
that only needs "the arena refused this" catches ``ArenaError``. Errors that are also bad values derive from
``ValueError`` too, so code written against ``ValueError`` keeps working.
"""


# What the Arena service tells a caller while its Redis cannot be used (UNAVAILABLE; the address and the error go
# to the referee's log only). Its clients (the CLI, the web pages) tell it from a referee that does not answer.
REDIS_DOWN = ("the arena's Redis cannot be used now (its referee's log says why); try again in a moment, or ask its "
              "operator whether it is running")


class ArenaError(Exception):
    """Root of every error the platform raises on purpose; the message names the bad value and what is allowed."""


class TournamentError(ArenaError, ValueError):
    """A tournament request that cannot be expanded; the message names the bad value and the allowed range."""
