"""A bot whose GetInfo answer is made from the command line, to test the checks of a BotInfo (its limits):
``--author-chars N`` reports an author of N characters (20,000 makes an answer over the referee's 16 KiB read
limit; 200 one over the author's limit of 128 characters); ``--refuse-info`` answers GetInfo UNIMPLEMENTED (an
impostor that will not say who it is); ``--note TEXT`` puts TEXT in every Decide answer's note. It reports version
"1.0" and plays take5, honestly, through the four unary calls."""

from __future__ import annotations

import argparse
from typing import Any

import grpc
from botbase import TestBot, main

from arena_sdk.pb import bot_pb2


class InfoBot(TestBot):
    def GetInfo(self, request: Any, context: grpc.ServicerContext) -> bot_pb2.BotInfo:
        if self.args.refuse_info:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "no GetInfo here")
        return bot_pb2.BotInfo(name=self.args.name, version="1.0", games=["take5"], sdk_version="test bot",
                               author="a" * self.args.author_chars)


    def Decide(self, request: bot_pb2.DecideRequest, context: grpc.ServicerContext) -> bot_pb2.DecideResponse:
        answer = super().Decide(request, context)
        if self.args.note:
            answer.note = self.args.note
        return answer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--author-chars", type=int, default=0)
    parser.add_argument("--refuse-info", action="store_true")
    parser.add_argument("--note", default="")


if __name__ == "__main__":
    main(InfoBot, "info_bot", add_arguments)
