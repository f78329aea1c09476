"""Test bot that answers garbage: ``--style wrong_kind`` sets the wrong action field (a row for a card choice, a
card for a row choice); ``--style empty`` answers an empty ``DecideResponse``."""

import botbase

from arena_sdk.pb import bot_pb2


class GarbageBot(botbase.TestBot):
    def misbehave(self, request, context):
        if self.args.style == "empty":
            return bot_pb2.DecideResponse()
        if request.kind == botbase.CHOOSE_ROW:
            return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(card=1))
        return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(row=0))


if __name__ == "__main__":
    botbase.main(GarbageBot, "garbage",
                 lambda p: p.add_argument("--style", choices=["wrong_kind", "empty"], default="wrong_kind"))
