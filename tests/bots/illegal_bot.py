"""Test bot that answers well-formed but illegal actions: a card it does not hold (a row end it can see, else
the lowest card missing from its hand), row 4 on rule 4 (rows are 0..3), a card outside the draft pool."""

import botbase

from arena_sdk.pb import bot_pb2


def _not_in(cards, visible):
    for c in visible:
        if c not in cards:
            return c
    return next(c for c in range(1, 105) if c not in cards)


class IllegalBot(botbase.TestBot):
    def misbehave(self, request, context):
        view = request.take5
        if request.kind == botbase.CHOOSE_ROW:
            return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(row=4))
        if request.kind == botbase.DRAFT_PICK:
            return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(card=_not_in(set(view.draft_pool), [])))
        ends = [r.cards[-1] for r in view.rows if r.cards]
        return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(card=_not_in(set(view.hand), ends)))


if __name__ == "__main__":
    botbase.main(IllegalBot, "illegal")
