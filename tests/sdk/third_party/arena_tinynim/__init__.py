"""Tiny Nim, a third-party game package for the tests (``tests/sdk/test_third_party_game.py``): registered through an
``arena.games`` entry point of its own distribution, as any game outside the SDK would be. A heap of tokens; seats
take 1..``take_max`` in turn; who takes the last token wins (loses in the ``misere`` variant).

It has no ``arena.v1`` messages (a game played over gRPC adds its messages to the protocol), so it plays in process
only: ``arena_sdk.play_game``, the registry, the CLI's rule options and its renderer.
"""

from .rules import *  # noqa: F403 - the engine's public names
from .rules import __all__  # noqa: F401
