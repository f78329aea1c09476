"""A call whose client leaves while the Arena service still works on it (a `RegisterBot` cancelled during its bot
check) must not crash the referee: its method runs on in a thread after grpc freed the call, and reading the call's
peer then was a segfault in cygrpc (a re-attack killed `arena serve` 2 times in 3 with `arena bot register` and a
second Ctrl-C against a bot whose GetInfo takes 1.5 s); nor may it leave a NAME registered to a new owner whose
token went to nobody. The referee runs in a process of its own here, so a crash is seen as such rather than taking
pytest with it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import sys, time
    from concurrent import futures
    import grpc
    from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2, bot_pb2_grpc
    from arena.server.app import ArenaServer

    class SlowInfo(bot_pb2_grpc.BotServicer):
        def GetInfo(self, request, context):
            time.sleep(1.2)  # longer than the client waits, shorter than the referee's check bound (2 s)
            return bot_pb2.BotInfo(name="leaver1", version="1", games=["take5"])

    bot = grpc.server(futures.ThreadPoolExecutor(4))
    bot_pb2_grpc.add_BotServicer_to_server(SlowInfo(), bot)
    bot_port = bot.add_insecure_port("127.0.0.1:0")
    bot.start()
    server = ArenaServer("127.0.0.1:0", sys.argv[1], workers=0)
    port = server.start()
    stub = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
    for name in ("leaver0", "leaver1"):  # another name than GetInfo's (refused after the check), then the same
        request = arena_pb2.RegisterBotRequest(name=name, endpoint=f"127.0.0.1:{bot_port}", game="take5")
        try:
            stub.RegisterBot(request, timeout=0.4)  # the client leaves during the bot check
        except grpc.RpcError as exc:
            print("left:", exc.code().name, flush=True)
        time.sleep(2.0)  # the check ends, the method carries on without its call
    names = [b.name for b in stub.ListBots(arena_pb2.ListBotsRequest(), timeout=10).bots]
    print("alive, registered:", ",".join(sorted(names)), flush=True)
    server.stop()
""")


def test_a_client_leaving_during_a_registration_check_neither_crashes_the_referee_nor_registers(redis_url: str) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, redis_url], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    assert done.stdout.count("left: DEADLINE_EXCEEDED") == 2, done.stdout
    # the one whose GetInfo matched is not registered either: its new owner's token would have gone to nobody,
    # leaving the name held by an owner nobody is (it was registered before)
    assert "alive, registered: \n" in done.stdout, done.stdout
