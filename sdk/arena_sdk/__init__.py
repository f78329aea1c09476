"""arena-sdk: write a bot for the card-game arena in a few lines.

    from arena_sdk import Take5Bot, serve

    class Lowest(Take5Bot):
        name = "lowest"
        version = "1.0"

        def choose_card(self, view):       # view: take5.Take5View, typed, never protobuf
            return min(view.hand)

    if __name__ == "__main__":
        serve(Lowest)                      # python lowest.py --port 50100  (--port 0: a free port)

A Taki bot subclasses ``TakiBot`` and overrides ``take_turn(view)`` (return one of ``legal_actions(view)``) and,
if it likes, ``react(view)`` (play a +3 Breaker out of turn?).

Needs only grpcio and protobuf. What a bot author uses is re-exported here: the base classes and their records
(``Take5Bot``, ``TakiBot``, ``MatchInfo``, ``MatchResult``), the server (``serve``, ``create_server``), the Take 5
view and rules helpers (``Take5View``, ``bullheads``, ``target_row``, ``penalty_if_played``, ``cheapest_row``), the
Taki view, actions and helpers (``TakiView``, ``PlayCard``, ``Draw``, ``EndTurn``, ``React``, ``legal_actions``,
``legal_plays``, ``can_draw``), the decision kinds, and ``play_game`` (an in-process game between bot objects).
The full rules engines are ``arena_sdk.games.take5`` and ``arena_sdk.games.taki``; every game is registered in
``arena_sdk.games.GAMES``.
"""

import os

# gRPC's C core logs errors (e.g. a port it cannot bind) straight to stderr, before the SDK's own one-line
# message. Quiet by default; a bot author who wants them sets GRPC_VERBOSITY=ERROR (or DEBUG). Read once, when
# grpc is first imported, which the imports below do.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

from ._version import SDK_VERSION, __version__  # noqa: E402
from .bot import Bot, BotDefinitionError, IllegalAnswerError, MatchInfo, MatchResult  # noqa: E402
from .bot_process import serve  # noqa: E402
from .games import GAMES, get_game, take5, taki  # noqa: E402
from .games.take5 import (  # noqa: E402
    CHOOSE_CARD,
    CHOOSE_ROW,
    DRAFT_PICK,
    Take5Config,
    Take5View,
    bullheads,
    penalty_if_played,
    target_row,
)
from .games.take5.bot import Take5Bot, cheapest_row, check_answer, decide  # noqa: E402
from .games.taki.bot import TakiBot, can_draw, legal_actions, legal_plays  # noqa: E402
from .games.taki.state import Draw, EndTurn, PlayCard, React, TakiConfig, TakiView  # noqa: E402
from .local import play_game  # noqa: E402
from .server import BotServicer, ServeError, create_server  # noqa: E402

__all__ = [
    "CHOOSE_CARD",
    "CHOOSE_ROW",
    "DRAFT_PICK",
    "SDK_VERSION",
    "GAMES",
    "Bot",
    "BotDefinitionError",
    "BotServicer",
    "IllegalAnswerError",
    "MatchInfo",
    "MatchResult",
    "ServeError",
    "Take5Bot",
    "Take5Config",
    "Take5View",
    "TakiBot",
    "TakiConfig",
    "TakiView",
    "Draw",
    "EndTurn",
    "PlayCard",
    "React",
    "can_draw",
    "legal_actions",
    "legal_plays",
    "taki",
    "__version__",
    "bullheads",
    "cheapest_row",
    "check_answer",
    "create_server",
    "decide",
    "get_game",
    "penalty_if_played",
    "play_game",
    "serve",
    "take5",
    "target_row",
]
