"""Taki: the rules engine (``rules``), its types (``state``), cards (``cards``), wire codecs (``wire``), the bot
base class (``bot``) and the registry entry (``plugin.GAME``).

``from arena_sdk.games import taki`` gives the engine's public names (``rules.__all__``) directly:
``taki.new_game``, ``taki.PlayCard``, ``taki.card_from_token``, ...
"""

from .rules import *  # noqa: F403 - the engine's public names
from .rules import __all__  # noqa: F401
