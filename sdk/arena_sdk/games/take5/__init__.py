"""Take 5! (6 nimmt!): the rules engine (``rules``), its wire codecs (``wire``), the bot base class (``bot``) and
the registry entry (``plugin.GAME``). ``from arena_sdk.games import take5`` gives the engine's names directly
(``take5.new_game``, ``take5.Take5View``, ...), as before the game became a package.
"""

from .bot import Take5Bot, cheapest_row, check_answer, decide  # noqa: F401 - re-exported
from .rules import *  # noqa: F403 - the engine's public names, e.g. take5.new_game

__all__ = [name for name in dir() if not name.startswith("_")]
