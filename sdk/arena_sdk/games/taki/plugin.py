"""The Taki entry of the game registry (``GAME``): its rules, codecs and bot class behind the ``Game`` interface,
forwarded by ``PackageGame`` to ``rules``, ``wire`` and ``bot``; defined here is only what differs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import PackageGame, RulesError
from . import rules
from .bot import TakiBot
from .cards import BREAKER
from .state import REACT, TURN, React, TakiConfig, TakiState


class TakiGame(PackageGame):
    """Taki: sequential turns, runs, +2 stacks, the out-of-turn +3 Breaker reaction; stairs variant. See
    ``rules``. A match takes at most one explicit deal (``TakiDeal``); its seed drives the deal otherwise and every
    later chance event (reshuffles)."""

    config_type = TakiConfig
    bot_class = TakiBot
    decision_methods = {TURN: "take_turn", REACT: "react"}

    def new_game(self, num_players: int, config: Any = None, *, seed: int | None = None,
                 deals: Sequence[Any] = ()) -> TakiState:
        deals = tuple(deals)
        if len(deals) > 1:
            raise RulesError(f"a Taki game takes at most one explicit deal, got {len(deals)}")
        return rules.new_game(num_players, config, seed=seed, deal=deals[0] if deals else None)

    def view_legal_actions(self, view: Any) -> tuple[Any, ...]:
        return view.legal if view.kind is not None else ()

    def answer_of(self, action: Any) -> Any:
        return action.play if isinstance(action, React) else action

    def check_view(self, view: Any, kind: str) -> str:
        if kind not in (TURN, REACT):
            return f"{kind} is not a Taki decision"
        if not view.legal:
            return "the view lists no legal action"
        if kind == REACT and BREAKER not in view.hand:
            return "a Breaker question to a seat that holds no +3 Breaker"
        return ""


GAME = TakiGame()
