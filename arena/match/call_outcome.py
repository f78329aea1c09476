"""What one call to a bot came to, for ``arena.match.running``: its fault kind (or none) and the fault's detail, from
its answer or its gRPC error, as the failure policy classifies them (``docs/failure-policy.md``).
"""

from __future__ import annotations

from typing import Any

import grpc

from arena.core import limits
from arena.core.text import cut
from arena.match.bot_stub import UndecodableAnswer
from arena.match.stream_status import StreamTimeout


def status_code(exc: grpc.RpcError) -> grpc.StatusCode | None:
    """The status code of a call's error (None for an error that carries none)."""
    return exc.code() if hasattr(exc, "code") else None


def fault_kind(code: grpc.StatusCode | None) -> str:
    """The fault a failed call's status is: ``timeout`` (DEADLINE_EXCEEDED), ``unreachable`` (UNAVAILABLE) or
    ``error``."""
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return "timeout"
    if code == grpc.StatusCode.UNAVAILABLE:
        return "unreachable"
    return "error"


def rpc_detail(method: str, exc: grpc.RpcError, timeout_ms: int) -> str:
    """The fault's detail of a failed call: "Decide: no answer within the 500 ms deadline", "StartMatch: CODE: ..."
    (the bot's status text cut to ``limits.BOT_STATUS_TEXT`` characters, ending in "…" when cut); a
    ``StreamTimeout`` adds the sequence asked and what the bot sent instead."""
    code = exc.code() if hasattr(exc, "code") else None
    details = exc.details() if hasattr(exc, "details") else str(exc)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        if isinstance(exc, StreamTimeout):  # the bot sent other answers meanwhile: which
            asked = f" to sequence {exc.sequence}" if exc.sequence is not None else ""
            return f"{method}: no answer{asked} within the {timeout_ms} ms deadline; {exc.note}"
        return f"{method}: no answer within the {timeout_ms} ms deadline"
    name = code.name if code is not None else "UNKNOWN"
    return f"{method}: {name}: {cut(details, limits.BOT_STATUS_TEXT) if details else 'no details'}"


def call_outcome(method: str, response: Any, exc: grpc.RpcError | None, unreachable: grpc.RpcError | None,
             connected: bool, timeout_ms: int) -> tuple[str | None, str]:
    """(fault kind or None, detail) of one call: its answer ``response`` or its error ``exc``; ``unreachable``: the
    UNAVAILABLE error of its first try when it was tried again (waiting for the bot to come back), and
    ``connected`` whether the channel is connected now. A call that waited for its bot until the deadline and
    never reached it is ``unreachable``; one that reached it and got no answer in time is a ``timeout``."""
    if exc is not None:
        code = status_code(exc)
        if unreachable is not None and code == grpc.StatusCode.DEADLINE_EXCEEDED and not connected:
            return "unreachable", (f"{rpc_detail(method, unreachable, timeout_ms)}; not back within the "
                                   f"{timeout_ms} ms deadline")
        return fault_kind(code), rpc_detail(method, exc, timeout_ms)
    if isinstance(response, UndecodableAnswer):
        return "malformed", response.describe(method)
    if response is None:  # grpc.aio yields None when the answer does not parse (a stub without answer_decoder)
        return "malformed", f"{method}: the answer could not be decoded as a {method} response message"
    return None, ""
