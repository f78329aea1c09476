"""How a call of the match stream (``arena.match.streams``) ends without an answer, as a failed unary call's
``grpc.RpcError`` would: ``StreamStatus`` (a status code and details), ``StreamTimeout`` (no answer in time while
the bot sent messages answering nothing waiting) and ``StreamCut`` (the referee ended a stream past its budget of
``MAX_UNASKED_MESSAGES``), ``StreamNotServed`` (the bot's PlayMatch is not implemented); ``status_code``, the code of
a status number."""

from __future__ import annotations

import grpc

# A seat's stream may bring at most this many messages at a time that answer nothing the referee asked on it (a
# sequence it never sent, a second answer to a request already answered, a message with no answer, undecodable
# bytes while no call waits); each request the referee sends gives one back, up to this many again (a bot that
# answers every request twice is never cut).
# One more and the referee ends the stream (a ``StreamCut``). An honest bot sends none: the first answer to a
# request whose call is over (a late answer, or one to a request asked again) is dropped without being counted.
# 32 such messages cost the referee about 2 ms (~55 us each with grpc's receiving), and a flood can keep its event
# loop no longer than that between two of its checks (one per message).
MAX_UNASKED_MESSAGES = 32

_CODES = {code.value[0]: code for code in grpc.StatusCode}


def status_code(number: int) -> grpc.StatusCode | None:
    """The ``grpc.StatusCode`` of a status number on the wire (``BotFailure.code``, grpc.aio's code of a servicer
    context), e.g. 5 -> NOT_FOUND; None for a number that is no status code."""
    return _CODES.get(number)
class StreamStatus(grpc.RpcError):
    """A call of the match stream that got no answer: its status code and details, as a failed unary call's
    ``grpc.RpcError`` (``code()``, ``details()``)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class StreamTimeout(StreamStatus):
    """DEADLINE_EXCEEDED for a call that got no answer in time while the bot sent messages on its stream that
    answered nothing waiting (a sequence not asked, a second answer, no answer set): a ``timeout`` fault like any
    other, whose detail also says what came instead (``sequence``: the Decide sequence the call asked, None for
    StartMatch and EndMatch; ``note``: how many such messages and the last one)."""

    def __init__(self, timeout_s: float, sequence: int | None, note: str) -> None:
        asked = f" to sequence {sequence}" if sequence is not None else ""
        super().__init__(grpc.StatusCode.DEADLINE_EXCEEDED,
                         f"no answer{asked} within {timeout_s * 1000:.0f} ms; {note}")
        self.sequence = sequence
        self.note = note


class StreamCut(StreamStatus):
    """UNAVAILABLE for the call that was waiting when the referee ended a stream that brought more messages
    answering nothing it asked than ``MAX_UNASKED_MESSAGES`` allows (or for the seat's next call, when none was
    waiting): an ``unreachable`` fault, and a call the referee does not make again on a new stream, as it does for
    a stream that broke, since the bot ended nothing."""

    def __init__(self, unasked: int) -> None:
        super().__init__(grpc.StatusCode.UNAVAILABLE,
                         f"the referee ended the match stream: the bot sent {unasked} messages answering nothing it "
                         f"was asked (at most {MAX_UNASKED_MESSAGES} at a time)")


NOT_SERVED = ("the bot's GetInfo says serves_match_stream, but it does not implement PlayMatch; a bot that answers "
              "the four unary calls only leaves serves_match_stream false")


class StreamNotServed(StreamStatus):
    """UNIMPLEMENTED: the bot's GetInfo says serves_match_stream, but its ``PlayMatch`` refused a stream as not
    implemented; the referee calls that seat through the unary calls from then on (``RunningMatch``)."""

    def __init__(self) -> None:
        super().__init__(grpc.StatusCode.UNIMPLEMENTED, NOT_SERVED)
