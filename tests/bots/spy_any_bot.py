"""Spy bot for EVERY registered game: a real SDK bot process (``arena_sdk.serve`` of a class that subclasses the bot
class of every game in ``arena_sdk.games.GAMES`` and answers a seeded-random legal action, ``any_random_bot.py``)
that appends every request it receives to a JSONL log, so an audit can check what the arena revealed to it (STYLE.md
habits 3 and 14; ``tests/audit``).

    python spy_any_bot.py --log spy.jsonl --port 0 [--name NAME] [--seed N] [--secret S]

One line per received call, written before the SDK looks at the request: ``{"method": "StartMatch" | "Decide" |
"EndMatch" | "GetInfo", "metadata": [[key, value], ...], "bytes": base64 of the request exactly as it came off the
wire, "time": seconds since the epoch}``. The request is decoded from those bytes only afterwards (so the log holds
unknown fields too) and handed to the SDK's own servicer, which serves it as for any bot (one bot object per match
and seat, the same checks, the secret gate when started with ``--secret``). Several seats and matches may be served
at once; lines never interleave. A request on the match stream (``PlayMatch``) is logged as the call it stands for,
with the stream's metadata and the bytes of the request inside the ``RefereeMessage``.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from any_random_bot import random_bot_class
from google.protobuf import message_factory

import arena_sdk.server as sdk_server
from arena_sdk import serve
from arena_sdk.games import GAMES
from arena_sdk.pb import bot_pb2

_lock = threading.Lock()
STREAM_STEPS = {"start": "StartMatch", "decide": "Decide", "end": "EndMatch"}  # RefereeMessage field -> the call


def spy_bot_class() -> type:
    """A bot class of every registered game whose every decision is a random legal action, seeded per match and
    seat (``--seed``): the random bots of ``any_random_bot.py``, one per game, joined."""
    bases = tuple(random_bot_class(game) for game in GAMES)
    return type("SpyBot", bases, {"name": "spy", "version": "1.0", "games": tuple(GAMES)})


def stream_behaviour(log: Callable[[str, grpc.ServicerContext, bytes], None], servicer: Any,
                     gate: Any) -> Callable[[Iterator[bytes], grpc.ServicerContext], Iterator[Any]]:
    """The spy's match stream: each request it carries is logged as the unary call it stands for (its own bytes),
    then served by ``servicer.PlayMatch``."""

    def behaviour(raws: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[Any]:
        if gate is not None:
            refusal = gate("PlayMatch", context)
            if refusal is not None:
                context.abort(*refusal)

        def requests() -> Iterator[Any]:
            for raw in raws:
                try:
                    message = bot_pb2.RefereeMessage.FromString(raw)
                except Exception:  # a spy never crashes on what it is sent
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, "undecodable RefereeMessage")
                which = message.WhichOneof("request")
                if which is not None:
                    log(STREAM_STEPS[which], context, getattr(message, which).SerializeToString())
                yield message

        return servicer.PlayMatch(requests(), context)

    return behaviour


def spying_add_guarded_service(log_path: str) -> Callable[..., None]:
    """A replacement of ``arena_sdk.guard.add_guarded_service`` (as ``arena_sdk.server`` calls it) that registers
    every unary method with a raw-bytes request deserializer, logs each request, then decodes it and calls the
    servicer (through the secret gate when the bot was started with ``--secret``)."""

    def log(name: str, context: grpc.ServicerContext, raw: bytes) -> None:
        metadata = [[k, v.decode("latin-1") if isinstance(v, bytes) else str(v)]
                    for k, v in (context.invocation_metadata() or ())]
        line = json.dumps({"method": name, "metadata": metadata, "time": time.time(),
                           "bytes": base64.b64encode(raw).decode("ascii")})
        with _lock, open(log_path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def add(server: grpc.Server, service: Any, servicer: Any, gate: Any = None, validate: Any = None,
            share: Any = None) -> None:  # share: the per-address limit, not needed by a spy
        handlers = {}
        for method in service.methods:
            request_cls = message_factory.GetMessageClass(method.input_type)
            response_cls = message_factory.GetMessageClass(method.output_type)
            if method.client_streaming:
                handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                    stream_behaviour(log, servicer, gate),
                    request_deserializer=None, response_serializer=response_cls.SerializeToString)
                continue

            def behaviour(raw: bytes, context: grpc.ServicerContext, name: str = method.name,
                          request_cls: Any = request_cls) -> Any:
                log(name, context, raw)
                if gate is not None:
                    refusal = gate(name, context)
                    if refusal is not None:
                        context.abort(*refusal)
                try:
                    request = request_cls.FromString(raw)
                except Exception:  # a spy never crashes on what it is sent
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"undecodable {name} request")
                return getattr(servicer, name)(request, context)

            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                behaviour, request_deserializer=None, response_serializer=response_cls.SerializeToString)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))

    return add


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--log", required=True)
    known, rest = parser.parse_known_args(sys.argv[1:])
    sdk_server.add_guarded_service = spying_add_guarded_service(known.log)  # type: ignore[assignment]
    serve(spy_bot_class(), rest)
