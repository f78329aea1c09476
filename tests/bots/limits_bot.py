"""Test bot for the referee's limits: it logs every call it receives and misbehaves on demand.

``--decide`` says what it does at the ``--at`` Decide sequence numbers (default: every one): ``honest`` (a legal
answer at once), ``illegal`` (a card it does not hold, row 4), ``hang`` (never answers: it waits until the
referee's deadline has passed), ``delay`` (a legal answer after ``--delay`` seconds, whatever the deadline).
``--hang start,end`` makes StartMatch and/or EndMatch hang the same way. ``--log FILE`` appends one JSON line per
call received, ``{"method", "seat", "seq"}`` (``seq`` null outside Decide), written when the call arrives, so a
test can see which calls the referee made, and repeats of one sequence number."""

import json
import threading
import time

import botbase
from illegal_bot import IllegalBot

HANG_MAX_S = 60.0


class LimitsBot(botbase.TestBot):
    def __init__(self, args):
        super().__init__(args)
        self.lock = threading.Lock()
        self.hang_on = set(filter(None, args.hang.split(",")))

    def _log(self, method, seat, seq=None):
        if self.args.log:
            with self.lock, open(self.args.log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": method, "seat": seat, "seq": seq}) + "\n")

    @staticmethod
    def _hang(context):
        end = time.monotonic() + HANG_MAX_S
        while context.is_active() and time.monotonic() < end:
            time.sleep(0.005)

    def start(self, request, context):
        self._log("StartMatch", request.seat)
        if "start" in self.hang_on:
            self._hang(context)

    def end(self, request, context):
        self._log("EndMatch", request.seat)
        if "end" in self.hang_on:
            self._hang(context)

    def Decide(self, request, context):
        self._log("Decide", request.seat, request.sequence)
        return super().Decide(request, context)

    def misbehave(self, request, context):
        mode = self.args.decide
        if mode == "illegal":
            return IllegalBot.misbehave(self, request, context)
        if mode == "hang":
            self._hang(context)
        elif mode == "delay":
            time.sleep(self.args.delay)
        return botbase.honest(request)


def _args(p):
    p.add_argument("--decide", choices=["honest", "illegal", "hang", "delay"], default="honest")
    p.add_argument("--delay", type=float, default=0.2)
    p.add_argument("--hang", default="", help="comma-separated: start, end")
    p.add_argument("--log", default="")


if __name__ == "__main__":
    botbase.main(LimitsBot, "limits", _args)
