"""Test bot whose Decide answers bytes that do not parse as a ``DecideResponse`` (a raw gRPC handler, since a
generated servicer can only send real messages). GetInfo and EndMatch answer properly, and StartMatch unless ``--start-garbage``. Options as in
botbase (``--host``, ``--port``, ``--name``, ``--at``)."""

import argparse
import signal
import threading
from concurrent import futures

import botbase
import grpc

from arena_sdk.pb import bot_pb2

GARBAGE = b"\xff\xff\xffgarbage"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--name", default="undecodable")
    parser.add_argument("--at", default=None, help="sequence numbers to answer garbage at (default: all)")
    parser.add_argument("--start-garbage", action="store_true", help="answer StartMatch with garbage too")
    args = parser.parse_args()
    at = None if args.at in (None, "", "all") else {int(x) for x in args.at.split(",")}

    def decide(raw: bytes, context) -> bytes:
        request = bot_pb2.DecideRequest.FromString(raw)
        if at is None or request.sequence in at:
            return GARBAGE
        return botbase.honest(request).SerializeToString()

    info = bot_pb2.BotInfo(name=args.name, version="test", games=["take5"], sdk_version="test bot")
    handlers = {
        "GetInfo": grpc.unary_unary_rpc_method_handler(lambda raw, c: info.SerializeToString()),
        "StartMatch": grpc.unary_unary_rpc_method_handler(lambda raw, c: GARBAGE if args.start_garbage else b""),
        "EndMatch": grpc.unary_unary_rpc_method_handler(lambda raw, c: b""),
        "Decide": grpc.unary_unary_rpc_method_handler(decide),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("arena.v1.Bot", handlers),))
    port = server.add_insecure_port(f"{args.host}:{args.port}")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    print(f"arena-bot {args.name} listening on {args.host}:{port}", flush=True)
    stop.wait()
    server.stop(0).wait()


if __name__ == "__main__":
    main()
