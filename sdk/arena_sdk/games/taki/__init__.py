"""Taki: the rules engine (``rules``), its types (``state``) and cards (``cards``).

``from arena_sdk.games import taki`` gives the engine's public names directly (``taki.new_game``,
``taki.PlayCard``, ``taki.card_from_token``, ...). Wire codecs, the bot class and the registry entry live in
other modules of this package.
"""

from .cards import (
    BLUE,
    BREAKER,
    CHCOLOR,
    COLOR_TOKENS,
    COLORS,
    DECK_SIZE,
    GREEN,
    KING,
    PLUS3,
    RED,
    SUPERTAKI,
    SYMBOL_TOKENS,
    YELLOW,
    card_color,
    card_from_token,
    card_symbol,
    card_token,
    color_from_token,
    color_token,
    deck,
)
from .rules import (
    action_text,
    apply,
    deal_game,
    decision_kind,
    default_action,
    is_over,
    legal_actions,
    new_game,
    observe,
    outcome,
    pending_seats,
    scores,
)
from .state import (
    GAME_ID,
    INFO,
    REACT,
    TURN,
    Draw,
    EndTurn,
    Event,
    PlayCard,
    React,
    RunInfo,
    TakiAction,
    TakiConfig,
    TakiDeal,
    TakiState,
    TakiView,
)

__all__ = [name for name in dir() if not name.startswith("_")]
