"""Take 5! (6 nimmt!): the rules engine (``rules``), its types (``state``), wire codecs (``wire``), the bot base
class (``bot``) and the registry entry (``plugin.GAME``).

``from arena_sdk.games import take5`` gives the engine's public names (``rules.__all__``) directly:
``take5.new_game``, ``take5.Take5View``, ``take5.bullheads``, ...
"""

from .rules import *  # noqa: F403 - the engine's public names
from .rules import __all__  # noqa: F401
