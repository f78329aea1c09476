"""The Take 5 entry of the game registry: its rules, codecs and bot class behind the ``Game`` interface."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...pb import bot_pb2
from ..base import Game, Outcome
from . import rules, wire
from .bot import Take5Bot, decide


class Take5Game(Game):
    """Take 5! (6 nimmt!): simultaneous card choice, rule-4 row choice, draft variant. See ``rules``."""

    info = rules.INFO
    config_type = rules.Take5Config
    bot_class = Take5Bot
    # the last message view_message encoded: (state, sent, decision kind, message, sent after it)
    _last_view: tuple[Any, Any, Any, Any, Any] | None = None
    decision_methods = {rules.CHOOSE_CARD: "choose_card", rules.CHOOSE_ROW: "choose_row",
                        rules.DRAFT_PICK: "draft_pick"}

    def new_game(self, num_players: int, config: Any = None, *, seed: int | None = None,
                 deals: Sequence[Any] = ()) -> rules.Take5State:
        return rules.new_game(num_players, config, seed=seed, deals=tuple(deals))

    def pending_seats(self, state: Any) -> tuple[int, ...]:
        return rules.pending_seats(state)

    def decision_kind(self, state: Any, seat: int) -> str | None:
        return rules.decision_kind(state, seat)

    def legal_actions(self, state: Any, seat: int) -> tuple[Any, ...]:
        return rules.legal_actions(state, seat)

    def apply(self, state: Any, seat: int, action: Any) -> rules.Take5State:
        return rules.apply(state, seat, action)

    def observe(self, state: Any, seat: int) -> rules.Take5View:
        return rules.observe(state, seat)

    def default_action(self, state: Any, seat: int) -> Any:
        return rules.default_action(state, seat)

    def is_over(self, state: Any) -> bool:
        return rules.is_over(state)

    def outcome(self, state: Any) -> Outcome:
        return rules.outcome(state)

    def position(self, state: Any) -> tuple[int, int]:
        return state.hand_number, state.turn

    def config_from_dict(self, data: Mapping[str, Any] | None) -> rules.Take5Config:
        return wire.config_from_dict(data)

    def config_to_dict(self, config: Any) -> dict[str, Any]:
        return wire.config_to_dict(config)

    def deal_from_dict(self, data: Mapping[str, Any]) -> rules.Take5Deal:
        return wire.deal_from_dict(data)

    def deal_to_dict(self, deal: Any) -> dict[str, Any]:
        return wire.deal_to_dict(deal)

    def action_from_dict(self, kind: str, data: Any) -> Any:
        return wire.action_from_dict(kind, data)

    def action_to_dict(self, action: Any) -> dict[str, Any]:
        return wire.action_to_dict(action)

    def config_to_proto(self, config: Any) -> Any:
        return wire.config_to_proto(config)

    def config_from_proto(self, msg: Any) -> rules.Take5Config:
        return wire.config_from_proto(msg)

    def view_to_proto(self, view: Any) -> Any:
        return wire.view_to_proto(view)

    def view_from_proto(self, msg: Any, kind: str | None) -> rules.Take5View:
        return wire.view_from_proto(msg, kind)

    def view_message(self, state: Any, seat: int, sent: Any) -> tuple[Any, Any]:
        """``wire.encode_view(observe(state, seat), sent)``, encoded once per turn: the seats of a simultaneous
        turn differ only in ``seat`` and ``hand`` (every other field is public, or depends on the seat's decision
        kind), so the message of the last (state, sent, kind) is copied and those two fields replaced."""
        kind = rules.decision_kind(state, seat)
        last = self._last_view
        if last is not None and last[0] is state and last[1] == sent and last[2] == kind:
            msg = bot_pb2.Take5View()
            msg.CopyFrom(last[3])
            msg.seat = seat
            msg.hand[:] = state.hands[seat]
            return msg, last[4]
        msg, after = wire.encode_view(rules.observe(state, seat), sent)
        kept = bot_pb2.Take5View()
        kept.CopyFrom(msg)  # the caller may change the message it gets; the copy kept here stays as encoded
        self._last_view = (state, sent, kind, kept, after)  # one tuple: threads see the old or the new entry
        return msg, after

    def view_from_message(self, msg: Any, kind: str | None, kept: Any) -> tuple[rules.Take5View, Any]:
        return wire.decode_view(msg, kind, kept)

    def action_to_proto(self, action: Any) -> Any:
        return wire.action_to_proto(action)

    def action_from_proto(self, kind: str, msg: Any) -> Any:
        return wire.action_from_proto(kind, msg)

    def decide(self, bot: Any, view: Any) -> Any:
        return decide(bot, view)

    def view_legal_actions(self, view: Any) -> tuple[Any, ...]:
        if view.kind == rules.CHOOSE_CARD:
            return tuple(rules.ChooseCard(c) for c in view.hand)
        if view.kind == rules.CHOOSE_ROW:
            return tuple(rules.ChooseRow(r) for r in range(rules.NUM_ROWS))
        if view.kind == rules.DRAFT_PICK:
            return tuple(rules.DraftPick(c) for c in view.draft_pool)
        return ()

    def answer_of(self, action: Any) -> int:
        return action.row if isinstance(action, rules.ChooseRow) else action.card

    def check_view(self, view: Any, kind: str) -> str:
        if kind == rules.CHOOSE_CARD:
            if not view.hand:
                return "the hand is empty"
            if len(view.rows) != rules.NUM_ROWS:
                return "the view has no rows"
        elif kind == rules.CHOOSE_ROW:
            if view.resolving_card is None:
                return "resolving_card is not set"
            if len(view.rows) != rules.NUM_ROWS:
                return "the view has no rows"
        elif kind == rules.DRAFT_PICK:
            if not view.draft_pool:
                return "the draft pool is empty"
        else:
            return f"{kind} is not a Take 5 decision"
        return ""


GAME = Take5Game()
