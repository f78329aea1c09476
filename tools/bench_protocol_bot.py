"""The protocol-only bot of ``make bench``: a Take 5 bot written on the generated code of ``bot.proto`` alone (no
SDK), served as the SDK serves a bot (``grpc.server`` on a thread pool of the SDK's size) and on the match stream:
it parses each request, answers a random card of its hand (a random row when it must take one) and keeps nothing.
Beside the sample random bot on the same games, its CPU per decision is what the protocol and gRPC cost a Python
bot, so the rest of the sample bot's is the SDK's own work (views completed and checked, the seeded generator, the
bot's method).

Prints ``protocol-bot listening on 127.0.0.1:PORT`` once ready, then serves until SIGTERM / SIGINT.

Usage: python tools/bench_protocol_bot.py [--port 0]
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sdk"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_echo_server import serve_as_a_bot  # noqa: E402

from arena_sdk.pb import bot_pb2  # noqa: E402

SERVICE = "arena.v1.Bot"


def get_info(request: bot_pb2.GetInfoRequest, context: grpc.ServicerContext) -> bot_pb2.BotInfo:
    return bot_pb2.BotInfo(name="protocol", version="1.0", games=["take5"], serves_match_stream=True)


def play_match(requests: Iterator[bot_pb2.RefereeMessage], context: grpc.ServicerContext,
               ) -> Iterator[bot_pb2.BotMessage]:
    """The match stream: one answer per request, in order (bot.proto, "The match stream")."""
    for message in requests:
        which = message.WhichOneof("request")
        if which == "decide":
            decide = message.decide
            answer = bot_pb2.BotMessage(sequence=decide.sequence)
            if decide.kind == bot_pb2.TAKE5_CHOOSE_ROW:
                answer.decision.take5.row = random.randrange(4)
            else:
                answer.decision.take5.card = random.choice(decide.take5.hand)
            yield answer
        elif which == "start":  # the history of each view is then sent once; nothing is kept here but the answer
            yield bot_pb2.BotMessage(started=bot_pb2.StartMatchResponse(keeps_history=True))
        else:
            yield bot_pb2.BotMessage(ended=bot_pb2.EndMatchResponse())


def _serialize(message: Any) -> bytes:
    return bytes(message.SerializeToString())


def main() -> None:
    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "GetInfo": grpc.unary_unary_rpc_method_handler(
            get_info, request_deserializer=bot_pb2.GetInfoRequest.FromString, response_serializer=_serialize),
        "PlayMatch": grpc.stream_stream_rpc_method_handler(
            play_match, request_deserializer=bot_pb2.RefereeMessage.FromString, response_serializer=_serialize)})
    serve_as_a_bot(handler, "protocol-bot listening on ", __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
