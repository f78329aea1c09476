"""Test bot that crashes mid-match: at the ``--at`` sequence number(s) it kills its own process with
``os._exit(3)`` inside Decide, before answering (default: its first Decide)."""

import os
import sys

import botbase


class CrashBot(botbase.TestBot):
    def misbehave(self, request, context):
        print(f"crash bot: exiting at Decide #{request.sequence}", file=sys.stderr, flush=True)
        os._exit(3)


if __name__ == "__main__":
    botbase.main(CrashBot, "crash")
