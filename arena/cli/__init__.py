"""The ``arena`` command line: run the referee and workers, manage bots (register, update, remove, with owner
tokens), run tournaments (create, dry run, follow, cancel, standings), read matches turn by turn, read and rebuild
the ladder, list the workers, play and replay single games.

Thin by design (STYLE.md habit 9): every command parses its options, calls one platform function or one RPC of
the referee's ``arena.v1.Arena`` service, and prints the answer with rich (tables, progress bars) or as JSON
(``--json`` on every read). Every option can also come from an environment variable: ``ARENA_SERVER``,
``ARENA_REDIS_URL``, ``ARENA_DATA_DIR`` and ``ARENA_TOKEN`` are shared by the commands that use them; any other
option reads ``ARENA_<COMMAND>_<OPTION>``: the command path and the option's long name, upper case, ``-`` as ``_``
(``ArenaOption``), e.g. ``ARENA_SERVE_WORKERS=4``, ``ARENA_LADDER_JSON=1``,
``ARENA_TOURNAMENT_CREATE_DEADLINE_MS=200``. Several values of a repeatable option are separated by spaces
(``ARENA_PLAY_TAKE5_BOT="sample:random sample:heuristic"``).

One module per command group: ``serve``, ``worker``, ``bot`` (with ``tokens``), ``owner`` (with
``registration``), ``tournament``, ``sprt``, ``match``, ``ladder``, ``play`` (play and replay), ``web`` (the web
pages); ``app`` holds the root group and its context, ``options`` and ``errors`` what every command shares.

Owner tokens: an ``arena bot register`` that creates a new owner (a new NAME, no --token) prints the owner's token
once and saves it in ``<data-dir>/tokens.json`` (mode 0600, filed by the arena's id, game and NAME: whatever address
names the same referee), where later ``register``, ``update`` and ``remove`` of that NAME on this machine find it,
and ``arena bot token NAME`` prints it (``TokenStore``); a new NAME registered with --token is filed with that
token when this machine keeps it already (a token given only on the command line is never saved). ``arena owner
create`` saves the tokens it receives there too.

Errors are one line on stderr and a non-zero exit code, never a traceback: 1 for a failed operation, 2 for a bad
command line, 130 after Ctrl-C, 143 after SIGTERM (which unwinds like Ctrl-C: whatever the command started, such
as the bot processes of ``arena play``, is stopped first). Set ``ARENA_DEBUG=1`` to see the traceback of an
unexpected error.

The heavy platform modules (referee, service, Redis) are imported inside the commands that need them, so
``--help`` stays fast and works everywhere.
"""

from __future__ import annotations

import os

# gRPC's C core logs errors (e.g. a port it cannot bind) straight to stderr, beside the CLI's own one-line error.
# Quiet unless the user asks (GRPC_VERBOSITY=ERROR or DEBUG); read once, when grpc is first imported.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

from arena.cli import (  # noqa: E402,F401  (each registers its commands)
    bot,
    ladder,
    match,
    owner,
    play,
    serve,
    sprt,
    tournament,
    tournament_verify,
    web,
    worker,
)
from arena.cli.app import AppContext, ArenaClient, cli  # noqa: E402
from arena.cli.errors import ArenaCliError, ArenaInterrupted, Terminated, rpc_error  # noqa: E402
from arena.cli.ladder import ladder_differences  # noqa: E402
from arena.cli.options import parse_endpoint, split_bot_id  # noqa: E402
from arena.cli.tokens import TokenStore  # noqa: E402
from arena.cli.tournament import BOTS_DOWN_HINT  # noqa: E402

__all__ = ["BOTS_DOWN_HINT", "AppContext", "ArenaClient", "ArenaCliError", "ArenaInterrupted", "Terminated",
           "TokenStore", "cli", "ladder_differences", "main", "parse_endpoint", "rpc_error", "split_bot_id"]


def main() -> None:
    """Entry point of the ``arena`` console script."""
    cli(prog_name="arena")
