"""``python -m arena.cli``: the ``arena`` command."""

from arena.cli import main

main()
