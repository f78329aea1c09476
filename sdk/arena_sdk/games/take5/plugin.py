"""The Take 5 entry of the game registry (``GAME``): its rules, codecs and bot class behind the ``Game`` interface,
forwarded by ``PackageGame`` to ``rules``, ``wire`` and ``bot``; defined here is only what differs."""

from __future__ import annotations

from typing import Any

from ...pb import bot_pb2
from ..base import PackageGame
from . import rules, wire
from .bot import Take5Bot


class Take5Game(PackageGame):
    """Take 5! (6 nimmt!): simultaneous card choice, rule-4 row choice, draft variant. See ``rules``."""

    config_type = rules.Take5Config
    bot_class = Take5Bot
    # the last message view_message encoded: (state, sent, decision kind, message, sent after it)
    _last_view: tuple[Any, Any, Any, Any, Any] | None = None
    decision_methods = {rules.CHOOSE_CARD: "choose_card", rules.CHOOSE_ROW: "choose_row",
                        rules.DRAFT_PICK: "draft_pick"}

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

    def view_message_into(self, dest: Any, state: Any, seat: int, sent: Any) -> Any:
        """``view_message`` written into ``dest`` with one copy of the message (none of it made twice)."""
        kind = rules.decision_kind(state, seat)
        last = self._last_view
        if last is None or last[0] is not state or last[1] != sent or last[2] != kind:
            msg, after = wire.encode_view(rules.observe(state, seat), sent)
            last = self._last_view = (state, sent, kind, msg, after)  # msg stays as encoded: only copies leave
        dest.CopyFrom(last[3])
        dest.seat = seat
        dest.hand[:] = state.hands[seat]
        return last[4]

    def view_from_message(self, msg: Any, kind: str | None, kept: Any) -> tuple[rules.Take5View, Any]:
        return wire.decode_view(msg, kind, kept)

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
