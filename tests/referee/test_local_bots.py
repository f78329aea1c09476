"""Bots as local processes (arena.match.local_bots): start, ready line, endpoint, stop; start failures with the
stderr tail; ``play`` with sample bots, bot files and running endpoints."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import grpc
import pytest

from arena.match.local_bots import (
    SAMPLE_BOTS,
    BotStartError,
    bot_command,
    bot_name,
    is_endpoint,
    play,
    start_bot,
    started_bots,
)
from arena.match.replay import replay
from arena_sdk.games import take5
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

from .conftest import BOTS_DIR


def get_info(endpoint: str) -> bot_pb2.BotInfo:
    with grpc.insecure_channel(endpoint) as channel:
        return bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=5)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


READY_BOT = """
    import os, signal, sys, time
    {extra}
    open(sys.argv[-1] if sys.argv[-1].endswith('.pid') else os.devnull, 'w').write(str(os.getpid()))
    print("arena-bot fake listening on 127.0.0.1:1", flush=True)
    while True:
        time.sleep(1)
"""


def test_sample_bots_table_points_at_modules() -> None:
    root = Path(__file__).resolve().parents[2]
    for name, module in SAMPLE_BOTS.items():
        assert (root / (module.replace(".", "/") + ".py")).is_file(), name


def test_start_sample_bot_serves_grpc_and_stops_cleanly() -> None:
    bot = start_bot("sample:heuristic")
    try:
        assert bot.running and bot.name == "heuristic"
        host, port = bot.endpoint.rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) > 0
        assert get_info(bot.endpoint).name == "heuristic"
        assert bot_name(bot.endpoint) == "heuristic"
    finally:
        bot.stop()
    assert bot.process.returncode == 0  # SIGTERM: clean shutdown
    assert not bot.running
    bot.stop()  # idempotent


def test_start_bot_file() -> None:
    bot = start_bot(str(BOTS_DIR / "spy_bot.py"), extra_args=["--log", os.devnull, "--name", "spy7"])
    try:
        assert bot.name == "spy7"
        assert get_info(bot.endpoint).name == "spy7"
    finally:
        bot.stop()


@pytest.mark.parametrize("spec", ["sample:nope", "random", "nowhere/bot.py", "", "sample:"])
def test_bad_spec_is_a_value_error(spec: str) -> None:
    with pytest.raises(ValueError):
        bot_command(spec)
    with pytest.raises(ValueError):
        start_bot(spec)


def test_bot_that_exits_reports_its_stderr(tmp_path) -> None:
    path = script(tmp_path, "dies.py", """
        import sys
        print("loading the model...", file=sys.stderr)
        print("ValueError: no weights found", file=sys.stderr)
        sys.exit(4)
    """)
    with pytest.raises(BotStartError) as info:
        start_bot(path)
    message = str(info.value)
    assert "exited with status 4" in message and "no weights found" in message and "dies.py" in message
    assert "without serving" not in message


def test_a_bot_file_that_never_serves_is_told_how_to(tmp_path) -> None:
    path = script(tmp_path, "noserve.py", """
        from arena_sdk import Take5Bot

        class Quiet(Take5Bot):
            name = "quiet"

            def choose_card(self, view):
                return view.hand[0]
    """)
    with pytest.raises(BotStartError) as info:
        start_bot(path)
    assert 'exited with status 0 without serving (does it end with `if __name__ == "__main__": serve(MyBot)`?)' \
        in str(info.value)


def test_bot_without_ready_line_times_out_and_is_stopped(tmp_path) -> None:
    pid_file = tmp_path / "silent.pid"
    path = script(tmp_path, "silent.py", f"""
        import os, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        print("starting, but never ready", flush=True)
        time.sleep(60)
    """)
    with pytest.raises(BotStartError, match="printed no 'arena-bot NAME listening on HOST:PORT' line"):
        start_bot(path, timeout=1.0)
    assert not alive(int(pid_file.read_text()))


def test_stop_kills_a_bot_that_ignores_sigterm(tmp_path) -> None:
    path = script(tmp_path, "stubborn.py", READY_BOT.format(extra="signal.signal(signal.SIGTERM, signal.SIG_IGN)"))
    bot = start_bot(path)
    assert bot.endpoint == "127.0.0.1:1" and bot.name == "fake"
    bot.stop(timeout=0.5)
    assert bot.process.returncode == -9  # SIGKILL after the SIGTERM grace


def test_started_bots_stops_everything_also_when_one_fails(tmp_path) -> None:
    pid_file = tmp_path / "good.pid"
    good = script(tmp_path, "good.py", READY_BOT.format(extra=""))
    bad = script(tmp_path, "bad.py", "import sys; sys.exit(1)\n")
    with pytest.raises(BotStartError, match="bad.py"):
        with started_bots([good, bad], extra_args=[str(pid_file)]):
            pass
    assert not alive(int(pid_file.read_text()))

    with pytest.raises(RuntimeError, match="inside"):
        with started_bots(["sample:random", good], extra_args=[]) as bots:
            assert [b.name for b in bots] == ["random", "fake"]
            raise RuntimeError("inside")
    assert all(not b.running for b in bots)


def test_is_endpoint() -> None:
    assert is_endpoint("127.0.0.1:50051") and is_endpoint("bots.example.org:7") and is_endpoint("[::1]:80")
    assert not is_endpoint("sample:random") and not is_endpoint("host:0") and not is_endpoint("host:99999")
    assert not is_endpoint("bot.py") and not is_endpoint("127.0.0.1")


def test_play_starts_and_stops_bots(sample_bots, dead_endpoint) -> None:
    running = sample_bots["random1"]
    record = play(["sample:random", str(BOTS_DIR / "illegal_bot.py"), running.endpoint, dead_endpoint],
                  config=take5.Take5Config(limit=10), deadline_ms=3000)
    assert isinstance(record.seed, int) and record.match_id.startswith("play-")
    assert [s.name for s in record.seats] == ["random", "illegal", "random", dead_endpoint]
    assert replay(record) == []
    assert {f.seat for f in record.faults} == {1, 3}
    for started in record.seats[:2]:  # the bots play started are gone; the running one is untouched
        with pytest.raises(grpc.RpcError):
            get_info(started.endpoint)
    assert get_info(running.endpoint).name == "random"


def test_play_rejects_a_bad_spec_before_starting_anything() -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        play(["sample:random", "not an endpoint"], seed=1)
    with pytest.raises(ValueError, match="unknown sample bot"):
        play(["sample:random", "sample:grandmaster"], seed=1)


def test_play_with_a_fixed_seed_is_reproducible_with_seeded_bots() -> None:
    # heuristic bots are deterministic, so the same seed gives the same game
    first = play(["sample:heuristic", "sample:heuristic"], config=take5.Take5Config(limit=10), seed=77,
                 deadline_ms=5000, match_id="p1")
    second = play(["sample:heuristic", "sample:heuristic"], config=take5.Take5Config(limit=10), seed=77,
                  deadline_ms=5000, match_id="p1")
    assert [d["action"] for d in first.decisions] == [d["action"] for d in second.decisions]
    assert first.result == second.result and first.seed == 77


def test_play_checks_game_and_seat_count_before_starting_bots() -> None:
    with pytest.raises(ValueError, match="2..10 seats"):
        play(["sample:random"], seed=1)
    with pytest.raises(ValueError, match="unknown game"):
        play(["sample:random", "sample:random"], game="chess", seed=1)


def test_bots_started_here_answer_the_referee_whatever_secret_the_shell_exports(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An ARENA_BOT_SECRET exported in the shell is not the referee's: the bots started here do not inherit it
    (else each would refuse every call of a referee that sends none, and every seat forfeit); a secret the launcher
    passes is the one the bot answers to."""
    monkeypatch.setenv("ARENA_BOT_SECRET", "s3cret-of-the-shell-0123456789")
    record = play(["sample:heuristic", "sample:random"], config=take5.Take5Config(limit=5), seed=3, deadline_ms=5000)
    assert not record.faults and list(record.result.faults) == [0, 0]
    bot = start_bot("sample:random", secret="s3cret-of-the-launcher-0123")
    try:
        request = bot_pb2.StartMatchRequest(match_id="m", game="take5", seat=0, num_players=2)
        with grpc.insecure_channel(bot.endpoint) as channel:
            stub = bot_pb2_grpc.BotStub(channel)
            with pytest.raises(grpc.RpcError) as refused:
                stub.StartMatch(request, timeout=5, metadata=(("arena-bot-secret", "s3cret-of-the-shell-0123456789"),))
            assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
            stub.StartMatch(request, timeout=5, metadata=(("arena-bot-secret", "s3cret-of-the-launcher-0123"),))
    finally:
        bot.stop()
