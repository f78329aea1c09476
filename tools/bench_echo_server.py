"""The echo server of ``make bench``: a bare gRPC unary echo and a bare bidirectional streaming echo (raw bytes
in, the same bytes out: no protobuf, no application code), served exactly as the SDK serves a bot
(``grpc.server`` on a thread pool of the SDK's size), so that a bot's CPU per decision can be set beside this
process's CPU per call.

Prints ``echo listening on 127.0.0.1:PORT`` once ready, then serves until SIGTERM / SIGINT.

Usage: python tools/bench_echo_server.py [--port 0]
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from concurrent import futures
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sdk"))

from arena_sdk.server import DEFAULT_MAX_WORKERS  # noqa: E402

SERVICE = "bench.Echo"
METHOD = f"/{SERVICE}/Echo"
STREAM_METHOD = f"/{SERVICE}/EchoStream"  # a bidirectional stream: every message sent back as it comes


def echo_stream(requests, context):  # type: ignore[no-untyped-def]
    yield from requests


def serve_as_a_bot(handler: grpc.GenericRpcHandler, ready: str, description: str) -> None:
    """Serve ``handler`` as the SDK serves a bot (``grpc.server`` on a thread pool of the SDK's size) on 127.0.0.1
    and ``--port`` (0: a free one); print ``ready`` and the address once listening, then serve until SIGTERM /
    SIGINT."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    args = parser.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=DEFAULT_MAX_WORKERS))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port(f"127.0.0.1:{args.port}")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    print(f"{ready}127.0.0.1:{port}", flush=True)
    while not stop.wait(0.2):
        pass
    server.stop(0).wait()


def main() -> None:
    handler = grpc.method_handlers_generic_handler(
        SERVICE, {"Echo": grpc.unary_unary_rpc_method_handler(lambda request, context: request),
                  "EchoStream": grpc.stream_stream_rpc_method_handler(echo_stream)})
    serve_as_a_bot(handler, "echo listening on ", __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
