"""Shared plumbing of the misbehaving test bots: a bare ``arena.v1.Bot`` server written directly against the
generated stubs (not the SDK), so each bot can break the protocol on purpose.

Every test bot takes ``--host``, ``--port`` (0 picks a free port), ``--name`` and ``--at`` (comma-separated
per-seat request sequence numbers at which it misbehaves; default: every request), prints the SDK's ready line
``arena-bot <name> listening on <host>:<port>`` and exits on SIGTERM/SIGINT. When it behaves it answers a legal
action: the lowest card of the hand, row 0 on rule 4, the lowest card of the draft pool.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable
from concurrent import futures
from typing import Any

import grpc

from arena_sdk.pb import bot_pb2, bot_pb2_grpc

CHOOSE_CARD = bot_pb2.TAKE5_CHOOSE_CARD
CHOOSE_ROW = bot_pb2.TAKE5_CHOOSE_ROW
DRAFT_PICK = bot_pb2.TAKE5_DRAFT_PICK


def honest(request: bot_pb2.DecideRequest) -> bot_pb2.DecideResponse:
    """A legal answer: lowest card of the hand, row 0 on rule 4, lowest card of the draft pool."""
    view = request.take5
    if request.kind == CHOOSE_ROW:
        return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(row=0))
    if request.kind == DRAFT_PICK:
        return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(card=min(view.draft_pool)))
    return bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(card=min(view.hand)))


class TestBot(bot_pb2_grpc.BotServicer):
    """Override ``misbehave(request, context)``; ``start`` / ``end`` hooks may be overridden too."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.at: set[int] | None = (
            None if args.at in (None, "", "all") else {int(x) for x in args.at.split(",")}
        )

    def GetInfo(self, request: Any, context: grpc.ServicerContext) -> bot_pb2.BotInfo:
        return bot_pb2.BotInfo(name=self.args.name, version="test", games=["take5"], sdk_version="test bot")

    def StartMatch(self, request: Any, context: grpc.ServicerContext) -> bot_pb2.StartMatchResponse:
        self.start(request, context)
        return bot_pb2.StartMatchResponse()

    def EndMatch(self, request: Any, context: grpc.ServicerContext) -> bot_pb2.EndMatchResponse:
        self.end(request, context)
        return bot_pb2.EndMatchResponse()

    def Decide(self, request: bot_pb2.DecideRequest, context: grpc.ServicerContext) -> bot_pb2.DecideResponse:
        if self.at is None or request.sequence in self.at:
            return self.misbehave(request, context)
        return honest(request)

    # hooks
    def start(self, request: Any, context: grpc.ServicerContext) -> None:
        pass

    def end(self, request: Any, context: grpc.ServicerContext) -> None:
        pass

    def misbehave(self, request: bot_pb2.DecideRequest, context: grpc.ServicerContext) -> bot_pb2.DecideResponse:
        return honest(request)


def main(bot_cls: Callable[[argparse.Namespace], TestBot], name: str,
         add_arguments: Callable[[argparse.ArgumentParser], None] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--name", default=name)
    parser.add_argument("--at", default=None, help="sequence numbers to misbehave at, e.g. 0,3 (default: all)")
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    bot_pb2_grpc.add_BotServicer_to_server(bot_cls(args), server)
    port = server.add_insecure_port(f"{args.host}:{args.port}")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    print(f"arena-bot {args.name} listening on {args.host}:{port}", flush=True)
    stop.wait()
    server.stop(0).wait()
    sys.exit(0)
