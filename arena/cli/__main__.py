"""``python -m arena.cli``: the ``arena`` command."""

from . import main

main()
