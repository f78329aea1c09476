"""The sample random bot reporting version 2.0 in GetInfo: a second version of the same bot NAME for the
registration tests (``arena bot register NAME`` with a new version needs the owner token)."""

import sys

from arena_sdk import serve
from sample_bots.random_bot import RandomBot


class RandomBotV2(RandomBot):
    version = "2.0"


if __name__ == "__main__":
    serve(RandomBotV2, sys.argv[1:])
