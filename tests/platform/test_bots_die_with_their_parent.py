"""A bot the arena starts itself (house bots, `arena play`'s sample bots) stops when the process that started it
dies, even by SIGKILL, which runs no clean-up (``ARENA_PARENT_PID``, ``arena_sdk.bot_process.serve``): real
processes, a real SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

PARENT = """
import sys, time
from arena.match.local_bots import start_bot
bot = start_bot("sample:random")
print(bot.process.pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie (exited, not reaped yet) is not alive
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_started_bot_stops_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        bot = int(parent.stdout.readline())
        time.sleep(0.5)
        assert _alive(bot)  # it serves while its parent lives
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 15
        while _alive(bot) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(bot), "the bot outlived the process that started it"
    finally:
        parent.kill()
