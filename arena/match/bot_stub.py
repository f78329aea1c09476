"""The referee's client of ``arena.v1.Bot``: a stub whose answer decoders never raise.

grpcio decodes an answer with the stub's response deserializer; when that raises (a bot answered bytes that are
not a ``DecideResponse``, ``BotInfo``, ...), grpcio logs "Exception deserializing response!" with a traceback and
hands the caller None. ``GuardedBotStub`` decodes with a function that returns an ``UndecodableAnswer`` instead
(nothing logged by grpcio), so the referee records the answer as a ``malformed`` fault and logs one line itself.
The client-side twin of ``arena_sdk.guard`` (which does the same for requests on the bot's side).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

from arena_sdk.pb import bot_pb2, bot_pb2_grpc

SERVICE = "/arena.v1.Bot/"
# method -> (request message, answer message), as in proto/arena/v1/bot.proto
METHODS: dict[str, tuple[Any, Any]] = {
    "GetInfo": (bot_pb2.GetInfoRequest, bot_pb2.BotInfo),
    "StartMatch": (bot_pb2.StartMatchRequest, bot_pb2.StartMatchResponse),
    "Decide": (bot_pb2.DecideRequest, bot_pb2.DecideResponse),
    "EndMatch": (bot_pb2.EndMatchRequest, bot_pb2.EndMatchResponse),
}


class UndecodableAnswer:
    """A bot's answer whose bytes do not decode as the method's answer message.

    Attributes:
        message_name: the message it should have been (e.g. ``"DecideResponse"``).
        error: why it did not decode (protobuf's message, at most 200 characters, on one line).
        size: the answer's length, bytes.
    """

    __slots__ = ("message_name", "error", "size")

    def __init__(self, message_name: str, error: str, size: int) -> None:
        self.message_name = message_name
        self.error = error
        self.size = size

    def __repr__(self) -> str:
        return f"UndecodableAnswer({self.message_name}, {self.size} bytes: {self.error})"

    def describe(self, method: str) -> str:
        """One sentence for a fault's detail or a log line, e.g. "Decide: the answer (12 bytes) could not be
        decoded as a DecideResponse message (Error parsing message)"."""
        return (f"{method}: the answer ({self.size} bytes) could not be decoded as a {self.message_name} message "
                f"({self.error})")


def answer_decoder(message_cls: Any) -> Callable[[bytes], Any]:
    """A response deserializer for ``message_cls`` that never raises: the decoded message, or an
    ``UndecodableAnswer`` for bytes that are not one."""
    name = message_cls.DESCRIPTOR.name

    def decode(data: bytes) -> Any:
        try:
            return message_cls.FromString(data)
        except Exception as exc:  # DecodeError, or upb's errors (e.g. nesting too deep): never grpcio's traceback
            return UndecodableAnswer(name, " ".join(str(exc).split())[:200] or type(exc).__name__, len(data))

    return decode


def _serialize(request: Any) -> bytes:
    """A match stream request's bytes: its own ``SerializeToString`` (a ``RefereeMessage``, or the referee's
    wrapper of one that stamps its ``deadline_ms`` as it is serialised: ``arena.match.stream_writer.Timed``)."""
    data: bytes = request.SerializeToString()
    return data


class GuardedBotStub(bot_pb2_grpc.BotStub):
    """``BotStub`` on ``channel`` (a ``grpc.aio.Channel`` or a blocking ``grpc.Channel``) whose calls return the
    answer message, or an ``UndecodableAnswer`` when the bot's bytes are not one (see the module docstring); the
    match stream (``PlayMatch``) reads each ``BotMessage`` the same way. Errors of a call (``grpc.RpcError``) are
    as with ``BotStub``."""

    def __init__(self, channel: grpc.Channel | grpc.aio.Channel) -> None:  # noqa: D107 - the class says it
        for method, (request_cls, answer_cls) in METHODS.items():
            setattr(self, method, channel.unary_unary(
                SERVICE + method,
                request_serializer=request_cls.SerializeToString,
                response_deserializer=answer_decoder(answer_cls),
            ))
        self.PlayMatch = channel.stream_stream(  # type: ignore[assignment]
            SERVICE + "PlayMatch",
            request_serializer=_serialize,
            response_deserializer=answer_decoder(bot_pb2.BotMessage),
        )
