"""The referee's RPC figures for Prometheus: a gRPC server interceptor that counts every call of the methods the
server serves (``grpc_server_started_total``, ``grpc_server_handled_total`` by status code) and times it
(``grpc_server_handling_seconds``), named as the gRPC ecosystem's Prometheus interceptors name them (metric objects:
``arena.core.metrics``; ``docs/metrics.md``).

Labels stay bounded: a call of a method the server does not serve is never labelled (its name is the caller's
choice); the status code is the one the servicer set or aborted with, OK when it returned normally, UNKNOWN when it
raised without one (grpcio answers such a call UNKNOWN).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, cast

import grpc
import grpc.aio

from arena.core import metrics as m
from arena.match.stream_status import status_code

_TYPES = {(False, False): "unary", (False, True): "server_stream", (True, False): "client_stream",
          (True, True): "bidi_stream"}


def _split(method: str) -> tuple[str, str]:
    """``"/arena.v1.Arena/RegisterBot"`` -> ("arena.v1.Arena", "RegisterBot")."""
    service, _, name = method.lstrip("/").rpartition("/")
    return service or "unknown", name


class _CodeOf:
    """A servicer context as the behaviour sees it, that keeps the status code the behaviour aborted with or set
    (``code``; None while it did neither): grpc.aio's context of a behaviour run in a thread does not tell it."""

    __slots__ = ("_context", "code")

    def __init__(self, context: grpc.ServicerContext) -> None:
        self._context = context
        self.code: Any = None

    def abort(self, code: grpc.StatusCode, details: str = "", *args: Any) -> Any:
        self.code = code
        return self._context.abort(code, details, *args)

    def set_code(self, code: grpc.StatusCode) -> None:
        self.code = code
        self._context.set_code(code)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def _code_name(code: Any, failed: bool) -> str:
    """The status code's name as a call ended: the one aborted with or set (a ``grpc.StatusCode``, or grpc.aio's
    number of one), else UNKNOWN when the behaviour raised (grpcio answers such a call UNKNOWN), else OK."""
    if isinstance(code, grpc.StatusCode):
        return code.name
    known = status_code(code) if isinstance(code, int) else None
    if known is not None:
        return known.name
    return "UNKNOWN" if failed else "OK"


class RpcMetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts and times every call of a served method (``RPC_STARTED``, ``RPC_HANDLED``, ``RPC_SECONDS``), on the
    referee's ``grpc.aio`` server, whose methods are plain functions run in its thread pool. A streamed answer is
    timed until its last message is sent (or the stream fails)."""

    async def intercept_service(self, continuation: Callable[[Any], Awaitable[Any]],
                                handler_call_details: Any) -> Any:
        handler = await continuation(handler_call_details)
        if handler is None:  # not served: UNIMPLEMENTED by grpcio, and the method name is not a label
            return None
        behaviour = handler.unary_unary or handler.unary_stream or handler.stream_unary or handler.stream_stream
        grpc_type = getattr(behaviour, "grpc_type", None) or _TYPES[(bool(handler.request_streaming),
                                                                     bool(handler.response_streaming))]
        labels = (grpc_type, *_split(handler_call_details.method))
        if handler.unary_unary is not None:
            return handler._replace(unary_unary=_unary(handler.unary_unary, labels))
        if handler.unary_stream is not None:
            return handler._replace(unary_stream=_streamed(handler.unary_stream, labels))
        if handler.stream_unary is not None:
            return handler._replace(stream_unary=_unary(handler.stream_unary, labels))
        return handler._replace(stream_stream=_streamed(handler.stream_stream, labels))


class _Counted:
    """One call's figures: started when entered, timed and counted by its status code when left (``_CodeOf``:
    the code the behaviour aborted with or set; UNKNOWN when it raised without one). ``seen`` is the context to
    give the behaviour."""

    __slots__ = ("labels", "seen", "t0")

    def __init__(self, labels: tuple[str, str, str], context: grpc.ServicerContext) -> None:
        self.labels = labels
        # grpc.aio's own context (of a coroutine method) tells its code; the one of a thread-run method does not
        self.seen = context if callable(getattr(context, "code", None)) else cast(grpc.ServicerContext,
                                                                                  _CodeOf(context))

    def __enter__(self) -> grpc.ServicerContext:
        m.RPC_STARTED.labels(*self.labels).inc()
        self.t0 = time.perf_counter()
        return self.seen

    def __exit__(self, kind: type[BaseException] | None, *_: Any) -> None:
        m.RPC_SECONDS.labels(*self.labels).observe(time.perf_counter() - self.t0)
        seen = self.seen
        code = seen.code if isinstance(seen, _CodeOf) else cast(Any, seen).code()
        m.RPC_HANDLED.labels(*self.labels, _code_name(code, kind is not None)).inc()


def _unary(behaviour: Callable[[Any, grpc.ServicerContext], Any], labels: tuple[str, str, str]) -> Any:
    """``behaviour`` (a plain function, run in the server's thread pool, or a coroutine function, run on its
    loop: grpc_health's aio servicer) counted."""
    if inspect.iscoroutinefunction(behaviour):
        async def counted_async(request: Any, context: grpc.ServicerContext) -> Any:
            with _Counted(labels, context) as seen:
                return await behaviour(request, seen)

        return counted_async

    def counted(request: Any, context: grpc.ServicerContext) -> Any:
        with _Counted(labels, context) as seen:
            return behaviour(request, seen)

    return counted


def _streamed(behaviour: Callable[[Any, grpc.ServicerContext], Any], labels: tuple[str, str, str]) -> Any:
    """``behaviour`` (a generator function, an async one, or a coroutine function writing its answers with
    ``context.write``: grpc_health's aio Watch) counted until its last answer."""
    if inspect.iscoroutinefunction(behaviour):
        return _unary(behaviour, labels)
    if inspect.isasyncgenfunction(behaviour):
        async def counted_async(request: Any, context: grpc.ServicerContext) -> AsyncIterator[Any]:
            with _Counted(labels, context) as seen:
                async for answer in behaviour(request, seen):
                    yield answer

        return counted_async

    def counted(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        with _Counted(labels, context) as seen:
            yield from behaviour(request, seen)

    return counted
