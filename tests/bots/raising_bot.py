"""Test bot whose handler raises (the client sees gRPC status UNKNOWN). ``--on decide`` (default) raises in
Decide at the ``--at`` sequence numbers; ``--on start`` raises in StartMatch (and plays legally); ``--on end``
raises in EndMatch. ``--abort`` answers INVALID_ARGUMENT with ``context.abort`` instead of raising."""

import botbase
import grpc


class RaisingBot(botbase.TestBot):
    def _fail(self, context, where):
        if self.args.abort:
            # with a terminal escape and a right-to-left override: the referee keeps neither in the record
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"raising bot refuses {where}\x1b[2J\u202e")
        raise RuntimeError(f"raising bot fails in {where}")

    def start(self, request, context):
        if self.args.on == "start":
            self._fail(context, "StartMatch")

    def end(self, request, context):
        if self.args.on == "end":
            self._fail(context, "EndMatch")

    def Decide(self, request, context):
        if self.args.on == "decide" and (self.at is None or request.sequence in self.at):
            self._fail(context, f"Decide #{request.sequence}")
        return botbase.honest(request)


def _args(p):
    p.add_argument("--on", choices=["decide", "start", "end"], default="decide")
    p.add_argument("--abort", action="store_true")


if __name__ == "__main__":
    botbase.main(RaisingBot, "raising", _args)
