"""The Taki entry of the game registry: its rules, codecs and bot class behind the ``Game`` interface."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..base import Game, Outcome, RulesError
from . import rules, wire
from .bot import TakiBot, decide
from .cards import BREAKER
from .state import INFO, REACT, TURN, React, TakiConfig, TakiState, TakiView


class TakiGame(Game):
    """Taki: sequential turns, runs, +2 stacks, the out-of-turn +3 Breaker reaction; stairs variant. See
    ``rules``. A match takes at most one explicit deal (``TakiDeal``); its seed drives the deal otherwise and every
    later chance event (reshuffles)."""

    info = INFO
    config_type = TakiConfig
    bot_class = TakiBot
    decision_methods = {TURN: "take_turn", REACT: "react"}

    def new_game(self, num_players: int, config: Any = None, *, seed: int | None = None,
                 deals: Sequence[Any] = ()) -> TakiState:
        deals = tuple(deals)
        if len(deals) > 1:
            raise RulesError(f"a Taki game takes at most one explicit deal, got {len(deals)}")
        return rules.new_game(num_players, config, seed=seed, deal=deals[0] if deals else None)

    def pending_seats(self, state: Any) -> tuple[int, ...]:
        return rules.pending_seats(state)

    def decision_kind(self, state: Any, seat: int) -> str | None:
        return rules.decision_kind(state, seat)

    def legal_actions(self, state: Any, seat: int) -> tuple[Any, ...]:
        return rules.legal_actions(state, seat)

    def apply(self, state: Any, seat: int, action: Any) -> TakiState:
        return rules.apply(state, seat, action)

    def observe(self, state: Any, seat: int) -> TakiView:
        return rules.observe(state, seat)

    def default_action(self, state: Any, seat: int) -> Any:
        return rules.default_action(state, seat)

    def is_over(self, state: Any) -> bool:
        return rules.is_over(state)

    def outcome(self, state: Any) -> Outcome:
        return rules.outcome(state)

    def position(self, state: Any) -> tuple[int, int]:
        return 0, state.turn

    def config_from_dict(self, data: Mapping[str, Any] | None) -> TakiConfig:
        return wire.config_from_dict(data)

    def config_to_dict(self, config: Any) -> dict[str, Any]:
        return wire.config_to_dict(config)

    def deal_from_dict(self, data: Mapping[str, Any]) -> Any:
        return wire.deal_from_dict(data)

    def deal_to_dict(self, deal: Any) -> dict[str, Any]:
        return wire.deal_to_dict(deal)

    def action_from_dict(self, kind: str, data: Any) -> Any:
        return wire.action_from_dict(kind, data)

    def action_to_dict(self, action: Any) -> dict[str, Any]:
        return wire.action_to_dict(action)

    def config_to_proto(self, config: Any) -> Any:
        return wire.config_to_proto(config)

    def config_from_proto(self, msg: Any) -> TakiConfig:
        return wire.config_from_proto(msg)

    def view_to_proto(self, view: Any) -> Any:
        return wire.view_to_proto(view)

    def view_from_proto(self, msg: Any, kind: str | None) -> TakiView:
        return wire.view_from_proto(msg, kind)

    def action_to_proto(self, action: Any) -> Any:
        return wire.action_to_proto(action)

    def action_from_proto(self, kind: str, msg: Any) -> Any:
        return wire.action_from_proto(kind, msg)

    def decide(self, bot: Any, view: Any) -> Any:
        return decide(bot, view)

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
