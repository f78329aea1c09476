"""Test bot that answers too late: it sleeps ``--sleep`` seconds (default 5) before a legal answer, stopping
early once the referee has given up on the call (deadline passed)."""

import time

import botbase


class SlowBot(botbase.TestBot):
    def misbehave(self, request, context):
        end = time.monotonic() + self.args.sleep
        while context.is_active() and time.monotonic() < end:
            time.sleep(0.01)
        return botbase.honest(request)


if __name__ == "__main__":
    botbase.main(SlowBot, "slow", lambda p: p.add_argument("--sleep", type=float, default=5.0))
