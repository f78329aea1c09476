"""The ``arena`` console script (and ``python -m arena``): imports the command line, then runs it.

The import takes about a second (grpc, protobuf, rich); a Ctrl-C during it exits with code 130 and one line, as
during a command (``arena.cli``), instead of a traceback of whatever module was being imported.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Entry point of the ``arena`` console script."""
    try:
        from arena.cli import main as run_cli
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted.\n")
        raise SystemExit(130) from None
    run_cli()


if __name__ == "__main__":
    main()
