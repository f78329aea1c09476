"""Test bot that proves the referee asks simultaneous decisions concurrently: it holds every card choice until
``--parties`` card-choice requests are waiting at once (a ``threading.Barrier``), then answers them all legally.
Serve every seat of a match with it. If the requests came one after another, the barrier would never fill and
each call would outlive its deadline (the bot then answers late, after ``--wait`` seconds)."""

import threading

import botbase


class BarrierBot(botbase.TestBot):
    def __init__(self, args):
        super().__init__(args)
        self.barrier = threading.Barrier(args.parties)

    def misbehave(self, request, context):
        if request.kind == botbase.CHOOSE_CARD:
            try:
                self.barrier.wait(timeout=self.args.wait)
            except threading.BrokenBarrierError:
                self.barrier.reset()
        return botbase.honest(request)


def _args(p):
    p.add_argument("--parties", type=int, required=True)
    p.add_argument("--wait", type=float, default=10.0)


if __name__ == "__main__":
    botbase.main(BarrierBot, "barrier", _args)
