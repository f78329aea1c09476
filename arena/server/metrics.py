"""The referee's RPC figures for Prometheus: a gRPC server interceptor that counts every call of the methods the
server serves (``grpc_server_started_total``, ``grpc_server_handled_total`` by status code) and times it
(``grpc_server_handling_seconds``), named as the gRPC ecosystem's Prometheus interceptors name them (metric objects:
``arena.core.metrics``; ``docs/metrics.md``).

Labels stay bounded: a call of a method the server does not serve is never labelled (its name is the caller's
choice); the status code is the one the servicer set or aborted with, OK when it returned normally, UNKNOWN when it
raised without one (grpcio answers such a call UNKNOWN).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from arena.core import metrics as m

_TYPES = {(False, False): "unary", (False, True): "server_stream", (True, False): "client_stream",
          (True, True): "bidi_stream"}


def _split(method: str) -> tuple[str, str]:
    """``"/arena.v1.Arena/RegisterBot"`` -> ("arena.v1.Arena", "RegisterBot")."""
    service, _, name = method.lstrip("/").rpartition("/")
    return service or "unknown", name


def _code(context: grpc.ServicerContext, failed: bool) -> str:
    code = context.code() if hasattr(context, "code") else None
    if isinstance(code, grpc.StatusCode):
        return code.name
    return "UNKNOWN" if failed else "OK"


class RpcMetricsInterceptor(grpc.ServerInterceptor):
    """Counts and times every call of a served method (``RPC_STARTED``, ``RPC_HANDLED``, ``RPC_SECONDS``). A
    streamed answer is timed until its last message is sent (or the stream fails)."""

    def intercept_service(self, continuation: Callable[[Any], Any], handler_call_details: Any) -> Any:
        handler = continuation(handler_call_details)
        if handler is None:  # not served: UNIMPLEMENTED by grpcio, and the method name is not a label
            return None
        grpc_type = _TYPES[(bool(handler.request_streaming), bool(handler.response_streaming))]
        labels = (grpc_type, *_split(handler_call_details.method))
        if handler.unary_unary is not None:
            return handler._replace(unary_unary=_unary(handler.unary_unary, labels))
        if handler.unary_stream is not None:
            return handler._replace(unary_stream=_streamed(handler.unary_stream, labels))
        if handler.stream_unary is not None:
            return handler._replace(stream_unary=_unary(handler.stream_unary, labels))
        return handler._replace(stream_stream=_streamed(handler.stream_stream, labels))


def _unary(behaviour: Callable[[Any, grpc.ServicerContext], Any],
           labels: tuple[str, str, str]) -> Callable[[Any, grpc.ServicerContext], Any]:
    def counted(request: Any, context: grpc.ServicerContext) -> Any:
        m.RPC_STARTED.labels(*labels).inc()
        t0 = time.perf_counter()
        failed = True
        try:
            answer = behaviour(request, context)
            failed = False
            return answer
        finally:
            m.RPC_SECONDS.labels(*labels).observe(time.perf_counter() - t0)
            m.RPC_HANDLED.labels(*labels, _code(context, failed)).inc()

    return counted


def _streamed(behaviour: Callable[[Any, grpc.ServicerContext], Iterator[Any]],
              labels: tuple[str, str, str]) -> Callable[[Any, grpc.ServicerContext], Iterator[Any]]:
    def counted(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        m.RPC_STARTED.labels(*labels).inc()
        t0 = time.perf_counter()
        failed = True
        try:
            yield from behaviour(request, context)
            failed = False
        finally:
            m.RPC_SECONDS.labels(*labels).observe(time.perf_counter() - t0)
            m.RPC_HANDLED.labels(*labels, _code(context, failed)).inc()

    return counted
