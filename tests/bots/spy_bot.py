"""Test bot that records every DecideRequest it receives: one JSON line per request in ``--log`` with the seat,
the sequence number and the serialized message (base64), so a test can check what the referee revealed. It
plays legally (the lowest card, row 0, the lowest pool card) and can serve several seats of one match."""

import base64
import json
import threading

import botbase


class SpyBot(botbase.TestBot):
    def __init__(self, args):
        super().__init__(args)
        self.lock = threading.Lock()

    def Decide(self, request, context):
        line = json.dumps({
            "match_id": request.match_id, "seat": request.seat, "sequence": request.sequence,
            "message": base64.b64encode(request.SerializeToString()).decode("ascii"),
        })
        with self.lock, open(self.args.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        return botbase.honest(request)


if __name__ == "__main__":
    botbase.main(SpyBot, "spy", lambda p: p.add_argument("--log", required=True))
