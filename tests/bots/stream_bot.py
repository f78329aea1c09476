"""A bot that serves only the match stream well (its unary Decide always fails with INTERNAL, so a clean match
proves the referee used the stream), and breaks the stream's rules on purpose at the requests named by ``--at``:

--style late       answer after --sleep seconds (past the deadline), then carry on
--style wrong_seq  answer with a sequence the referee did not ask (the request's + 1000)
--style huge       answer a BotMessage over the referee's 64 KiB limit
--style break      end the stream with UNAVAILABLE (the next decision comes on a new stream)
--style long_error end the stream with INTERNAL and a status text of --size characters
--style end        answer, then end the stream with status OK, as if the match were over (the next decision comes
                   on a new stream)
--style flood      send --count messages with sequences nobody asked (the request's + 1000, + 1001, ...), then
                   answer (--flood-after: answer first, then flood, when the referee waits for nothing); stops early
                   when the referee ends the stream, and says on stderr how many it sent ("flood at N: sent M")
--style honest     no misbehaviour (with --secret: check the arena-bot-secret metadata of each stream)
--style no_stream  says serves_match_stream in GetInfo but does not implement PlayMatch (grpc's generated
                   servicer answers UNIMPLEMENTED); its unary calls answer honestly
--style refuse_later  serves the stream until the first request named by --at, where it breaks the stream
                   (UNAVAILABLE); from then on it refuses every stream with UNIMPLEMENTED, and its unary calls
                   answer honestly (a bot restarted without PlayMatch mid-match)

--start-sleep S delays the answer to `start` by S seconds (any style).
--deadlines prints "decide SEQUENCE deadline_ms MS" on stderr for each decide it gets (any style).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from botbase import TestBot, honest, main  # noqa: E402

from arena_sdk.pb import bot_pb2  # noqa: E402


class StreamBot(TestBot):
    def GetInfo(self, request: Any, context: grpc.ServicerContext) -> bot_pb2.BotInfo:
        return bot_pb2.BotInfo(name=self.args.name, version="test", games=["take5"], sdk_version="test bot",
                               serves_match_stream=True)

    def Decide(self, request: bot_pb2.DecideRequest, context: grpc.ServicerContext) -> bot_pb2.DecideResponse:
        if self.args.style in ("no_stream", "refuse_later"):
            return honest(request)
        context.abort(grpc.StatusCode.INTERNAL, "this bot answers on the match stream only")
        raise AssertionError  # abort raises

    def PlayMatch(self, requests: Iterator[bot_pb2.RefereeMessage],
                  context: grpc.ServicerContext) -> Iterator[bot_pb2.BotMessage]:
        if self.args.style == "no_stream" or getattr(self, "refusing", False):  # as a servicer without PlayMatch
            return super().PlayMatch(requests, context)
        return self._play(requests, context)

    def _play(self, requests: Iterator[bot_pb2.RefereeMessage],
              context: grpc.ServicerContext) -> Iterator[bot_pb2.BotMessage]:
        if self.args.secret:
            given = dict(context.invocation_metadata()).get("arena-bot-secret")
            if given != self.args.secret:
                context.abort(grpc.StatusCode.PERMISSION_DENIED, "wrong arena-bot-secret")
        for message in requests:
            which = message.WhichOneof("request")
            if which == "start":
                time.sleep(self.args.start_sleep)
                yield bot_pb2.BotMessage(started=bot_pb2.StartMatchResponse())
            elif which == "end":
                yield bot_pb2.BotMessage(ended=bot_pb2.EndMatchResponse())
            elif which == "decide":
                request = message.decide
                if self.args.deadlines:
                    print(f"decide {request.sequence} deadline_ms {message.deadline_ms}", file=sys.stderr, flush=True)
                answer = honest(request)
                if self.at is not None and request.sequence not in self.at or self.args.style == "honest":
                    yield bot_pb2.BotMessage(sequence=request.sequence, decision=answer)
                elif self.args.style == "end":  # answer, then end the stream
                    yield bot_pb2.BotMessage(sequence=request.sequence, decision=answer)
                    return
                else:
                    yield from self._misbehave(request.sequence, answer, context)

    def _misbehave(self, seq: int, answer: bot_pb2.DecideResponse,
                   context: grpc.ServicerContext) -> Iterator[bot_pb2.BotMessage]:
        """What ``--style`` does instead of answering decide ``seq`` with ``answer``."""
        if self.args.style == "late":
            time.sleep(self.args.sleep)
            yield bot_pb2.BotMessage(sequence=seq, decision=answer)
        elif self.args.style == "flood":
            if self.args.flood_after:
                yield bot_pb2.BotMessage(sequence=seq, decision=answer)
            yield from self._flood(seq, context)
            if not self.args.flood_after and context.is_active():
                yield bot_pb2.BotMessage(sequence=seq, decision=answer)
        elif self.args.style == "long_error":
            context.abort(grpc.StatusCode.INTERNAL, "E" * self.args.size)
        elif self.args.style == "wrong_seq":
            yield bot_pb2.BotMessage(sequence=seq + 1000, decision=answer)
        elif self.args.style == "huge":
            yield bot_pb2.BotMessage(sequence=seq, failure=bot_pb2.StepFailure(
                step=bot_pb2.MATCH_STEP_DECIDE, code=13, message="x" * 100_000))
        else:  # break (refuse_later: and refuse every stream from now on)
            self.refusing = self.args.style == "refuse_later"
            context.abort(grpc.StatusCode.UNAVAILABLE, "the stream breaks here")

    def _flood(self, seq: int, context: grpc.ServicerContext) -> Iterator[bot_pb2.BotMessage]:
        """``--count`` decisions with sequences nobody asked, as fast as grpc takes them, until the stream is over."""
        junk = bot_pb2.BotMessage(decision=bot_pb2.DecideResponse(take5=bot_pb2.Take5Action(card=1)))
        sent = 0
        try:
            for i in range(self.args.count):
                if not context.is_active():
                    break
                junk.sequence = seq + 1000 + i
                yield junk
                sent += 1
        finally:  # also when grpc closes the generator (the stream was cancelled)
            print(f"flood at {seq}: sent {sent}", file=sys.stderr, flush=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--style", default="honest", choices=["honest", "late", "wrong_seq", "huge", "break",
                                                                  "end", "long_error", "flood", "no_stream",
                                                                  "refuse_later"])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--flood-after", action="store_true")
    parser.add_argument("--sleep", type=float, default=0.5)
    parser.add_argument("--secret", default="")
    parser.add_argument("--start-sleep", type=float, default=0.0)
    parser.add_argument("--deadlines", action="store_true")


if __name__ == "__main__":
    main(StreamBot, "stream_bot", add_arguments)
