"""`arena play take5` with real sample bot processes over real gRPC, and `arena replay` of its record."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import cli

THREE_SEATS = ["--bot", "sample:random", "--bot", "sample:heuristic", "--bot", "sample:random"]
TEST_BOTS = Path(__file__).resolve().parents[1] / "bots"  # bare bots written against the generated stubs


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One short game (limit 15) between three sample bot processes; its record path and the CLI output."""
    record = tmp_path_factory.mktemp("play") / "game.json"
    result = CliRunner().invoke(cli, ["play", "take5", *THREE_SEATS, "--limit", "15", "--seed", "11",
                                      "--record", str(record)])
    assert result.exit_code == 0, result.output
    return record, result.stdout


def test_play_prints_the_result_table_and_saves_the_record(played: tuple[Path, str]) -> None:
    path, out = played
    data = json.loads(path.read_text())
    assert [s["name"] for s in data["seats"]] == ["random", "heuristic", "random-2"]  # repeats get a suffix
    assert data["seed"] == 11 and data["config"]["limit"] == 15
    assert max(data["result"]["scores"]) >= 15  # the game ran until a total reached the limit
    for header in ("seat", "bot", "bullheads", "rank", "faults"):
        assert header in out
    for seat, name in enumerate(("random", "heuristic", "random-2")):
        score = int(data["result"]["scores"][seat])
        rank = data["result"]["ranks"][seat]
        assert any(f"│ {name} " in line and f" {score} " in line and f" {rank} " in line
                   for line in out.splitlines()), out
    assert f"record saved to {path}" in out


def test_replay_of_a_played_record_is_identical(played: tuple[Path, str]) -> None:
    path, _ = played
    result = CliRunner().invoke(cli, ["replay", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("identical")


def test_replay_of_a_tampered_result_exits_1(played: tuple[Path, str], tmp_path: Path) -> None:
    data = json.loads(played[0].read_text())
    data["result"]["scores"][0] += 1
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["replay", str(tampered)])
    assert result.exit_code == 1, result.output
    assert "identical" not in result.stdout
    assert "difference" in result.stdout and "Traceback" not in result.output


def test_replay_of_a_tampered_decision_exits_1(played: tuple[Path, str], tmp_path: Path) -> None:
    data = json.loads(played[0].read_text())
    first = data["decisions"][0]
    assert first["kind"] == "TAKE5_CHOOSE_CARD"
    first["action"]["card"] = 105  # not a card at all
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["replay", str(tampered)])
    assert result.exit_code == 1, result.output
    assert "decision 0" in result.stdout


@pytest.mark.parametrize("content", ["not json at all", "{}", "[1, 2]", '{"version": 1, "game": "take5"}',
                                     "[" * 100_000 + "]" * 100_000])
def test_replay_of_a_malformed_record_is_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = CliRunner().invoke(cli, ["replay", str(path)])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot read the match record {path}")


def test_play_against_a_bot_that_is_not_running_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = CliRunner().invoke(cli, ["play", "take5", "--bot", f"127.0.0.1:{port}", "--bot", "sample:random",
                                      "--record", str(tmp_path / "r.json")])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [f"Error: cannot reach the bot at 127.0.0.1:{port}: is it running?"]
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("folder", ["missing/dir", "a-file"])
def test_play_refuses_a_record_in_a_folder_that_does_not_exist(tmp_path: Path, folder: str) -> None:
    """A typo in --record makes no folders: the play is refused before any bot starts, and nothing is created."""
    (tmp_path / "a-file").write_text("")
    record = tmp_path / folder / "game.json"
    result = CliRunner().invoke(cli, ["play", "take5", *THREE_SEATS, "--record", str(record)])
    assert result.exit_code == 2, result.output
    what = "does not exist" if folder.startswith("missing") else "is not a directory"
    assert f"Invalid value for '--record': the folder {record.parent} of {record} {what}" in result.stderr
    assert "playing" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_play_against_a_running_endpoint_uses_its_name(start_bot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bot = start_bot("sample:heuristic")
    record = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["play", "take5", "--bot", bot.endpoint, "--bot", "sample:random",
                                      "--limit", "5", "--variant", "known-cards", "--record", str(record)])
    assert result.exit_code == 0, result.output
    data = json.loads(record.read_text())
    assert data["seats"][0] == {"name": bot.name, "endpoint": bot.endpoint, "transport": "stream", "streams": 1}
    assert data["config"]["known_cards"] is True
    assert bot.running  # a bot the CLI did not start is left running


def test_play_shows_every_hand_the_standings_and_where_the_record_is(played: tuple[Path, str]) -> None:
    path, out = played
    data = json.loads(path.read_text())
    assert "Bullheads per hand (total)" in out and "Standings" in out
    hands = [line for line in out.splitlines() if line.startswith("│") and "(" in line]
    assert hands, out  # one line per hand: the bullheads each bot took, and its total after the hand
    totals = [int(x) for x in hands[-1].rsplit("(", 3)[1:] for x in [x.split(")")[0]]]
    assert totals == [int(s) for s in data["result"]["scores"]]
    assert f"record saved to {path}: `arena match show {path}` tells it turn by turn" in out


def test_play_with_show_prints_the_turn_table(tmp_path: Path) -> None:
    result = CliRunner(env={"COLUMNS": "160"}).invoke(
        cli, ["play", "take5", *THREE_SEATS, "--limit", "5", "--seed", "2", "--show", "--record",
              str(tmp_path / "g.json")])
    assert result.exit_code == 0, result.output
    assert "Hand 1 · turn 1" in result.stdout and "Rows after turn 1" in result.stdout
    assert result.stdout.count("Result") == 1 and "Standings" not in result.stdout  # the result once, at the end


def test_match_show_renders_a_local_record_file(played: tuple[Path, str]) -> None:
    path, _ = played
    result = CliRunner(env={"COLUMNS": "160"}).invoke(cli, ["match", "show", str(path)])
    assert result.exit_code == 0, result.output
    assert "Hand 1 · turn 1" in result.stdout and "Result" in result.stdout
    assert result.stdout.rstrip().endswith(f"from {path}")
    as_json = CliRunner().invoke(cli, ["match", "show", str(path), "--json"])
    assert json.loads(as_json.stdout) == json.loads(path.read_text())


def test_match_show_strips_control_characters_of_a_record_files_match_id(played: tuple[Path, str],
                                                                          tmp_path: Path) -> None:
    """A record file someone was sent cannot set the terminal's title (OSC) or move the cursor through its match id."""
    path, _ = played
    data = json.loads(path.read_text())
    data["match_id"] = "evil\x1b]0;pwned\x07\x1b[2J"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(data))
    result = CliRunner(env={"COLUMNS": "160"}).invoke(cli, ["match", "show", str(hostile)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "evil]0;pwned[2J" in result.output  # shown, without its control characters


def test_a_bots_error_text_in_a_fault_reaches_no_terminal_as_escapes(played: tuple[Path, str], tmp_path: Path) -> None:
    """A fault's detail carries the bot's own error status: its escape sequences (clear screen, an 8-bit CSI, a
    right-to-left override) and rich markup are shown as text, in the turn table and the table of faults."""
    path, _ = played
    data = json.loads(path.read_text())
    decision = next(i for i, d in enumerate(data["decisions"]) if d["seat"] == 0)
    evil = "INTERNAL: boom\x1b[2J\x9b31m\u202eevil [/] [link=http://x.example]y"
    data["faults"] = [{"kind": "error", "seat": 0, "hand": data["decisions"][decision].get("hand", 0),
                       "turn": data["decisions"][decision].get("turn", 0), "detail": evil, "decision": decision}]
    hostile = tmp_path / "faults.json"
    hostile.write_text(json.dumps(data))
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["match", "show", str(hostile)])
    assert result.exit_code == 0, result.output
    assert not any(c in result.output for c in ("\x1b", "\x9b", "\u202e"))
    assert "boom[2J31mevil [/] [link=http://x.example]y" in result.output


@pytest.mark.parametrize("content, fragment", [(None, "No such file"), ("{oops", "is not a match record"),
                                               ('{"a": 1}', "cannot show the match record"),
                                               ("[" * 100_000 + "]" * 100_000, "nested too deep")])
def test_match_show_of_a_bad_file_is_one_line(tmp_path: Path, content: str | None, fragment: str) -> None:
    path = tmp_path / "m.json"
    if content is not None:
        path.write_text(content)
    result = CliRunner().invoke(cli, ["match", "show", str(path)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in result.output


def test_play_shows_each_hand_as_it_ends(played: tuple[Path, str]) -> None:
    """The live lines come from the referee's progress observer while the game runs: one per hand, with the
    bullheads each bot took and its total, the last one equal to the final scores."""
    path, out = played
    data = json.loads(path.read_text())
    lines = [line for line in out.splitlines() if line.startswith("hand ")]
    assert lines and lines[0].startswith("hand 1: random +")
    last = lines[-1]
    for name, score in zip(("random", "heuristic", "random-2"), data["result"]["scores"], strict=True):
        assert f"{name} +" in last and f"({int(score)})" in last, last


def test_play_taki_shows_progress_standings_and_the_record(tmp_path: Path) -> None:
    record = tmp_path / "taki.json"
    result = CliRunner().invoke(cli, ["play", "taki", "--bot", "sample:taki-heuristic", "--bot", "sample:taki-random",
                                      "--seed", "4", "--record", str(record)])
    assert result.exit_code == 0, result.output
    data = json.loads(record.read_text())
    assert data["game"] == "taki" and sorted(data["result"]["ranks"]) == [1, 2]
    assert "game over in turn" in result.stdout and "cards held" in result.stdout
    assert f"record saved to {record}" in result.stdout
    shown = CliRunner().invoke(cli, ["match", "show", str(record)])
    assert shown.exit_code == 0 and "wins!" in shown.stdout


def test_play_refuses_a_started_bot_of_another_game_before_the_match() -> None:
    result = CliRunner().invoke(cli, ["play", "taki", "--bot", "sample:heuristic", "--bot", "sample:taki-random",
                                      "--seed", "3"])
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert re.fullmatch(r"Error: sample:heuristic: the bot at 127\.0\.0\.1:\d+ plays take5, not taki; start a bot of "
                        r"taki there \(a bot of take5\? play it with `arena play take5`\)", line), line


def test_play_passes_on_what_a_bot_file_says_of_a_misspelt_decision_method(tmp_path: Path) -> None:
    """The bot warns when it starts; `arena play --bot FILE` kept its stderr to itself, so the misspelt bot won with
    the SDK's default move and nobody read why."""
    bot = tmp_path / "typo_taki.py"
    bot.write_text(
        "from arena_sdk import TakiBot, serve\n\n\n"
        "class Typo(TakiBot):\n"
        "    name, version = 'typo', '1.0'\n\n"
        "    def take_trun(self, view):\n"
        "        return None\n\n\n"
        "if __name__ == '__main__':\n"
        "    serve(Typo)\n")
    result = CliRunner().invoke(cli, ["play", "taki", "--bot", str(bot), "--bot", "sample:taki-random", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert f"warning: {bot}: Typo overrides none of TakiBot's decision methods" in result.stderr
    assert "it defines take_trun: did you mean take_turn?" in result.stderr


def test_a_bot_file_that_does_not_start_is_named_with_the_line_of_its_error(tmp_path: Path) -> None:
    """A SyntaxError (or any traceback) on the bot's stderr: the one-line error gives the file and line."""
    bot = tmp_path / "broken_bot.py"
    bot.write_text("from arena_sdk import Take5Bot, serve\n\n\nclass Broken(Take5Bot)\n    name = 'broken'\n")
    result = CliRunner().invoke(cli, ["play", "take5", "--bot", str(bot), "--bot", "sample:random"])
    assert result.exit_code == 1
    assert "SyntaxError: expected ':' (broken_bot.py, line 4)" in result.stderr, result.stderr


@pytest.mark.parametrize("how", ["endpoint", "file"])
def test_play_refuses_a_bot_claiming_the_match_stream_it_does_not_serve(
        tmp_path: Path, start_bot: Callable[..., Any], how: str) -> None:
    """A bot written from the .proto whose GetInfo says serves_match_stream but that does not implement PlayMatch
    played and forfeited with 10 `error` faults; `arena play` now refuses to start the game, with registration's
    message (``bot_checks.stream_refusal``), whether the bot runs (HOST:PORT) or is a file started here."""
    if how == "endpoint":
        bot = start_bot(str(TEST_BOTS / "stream_bot.py"), extra_args=["--style", "no_stream"]).endpoint
    else:
        bot = str(tmp_path / "claims_bot.py")
        Path(bot).write_text(f"import runpy, sys\nsys.argv += ['--style', 'no_stream']\n"
                             f"runpy.run_path({str(TEST_BOTS / 'stream_bot.py')!r}, run_name='__main__')\n")
    result = CliRunner().invoke(cli, ["play", "take5", "--bot", bot, "--bot", "sample:random",
                                      "--record", str(tmp_path / "r.json")])
    assert result.exit_code == 1, result.output
    [line] = result.stderr.strip().splitlines()
    who = "" if how == "endpoint" else f"{re.escape(bot)}: "  # a bot started here: as given
    assert re.fullmatch(r"Error: " + who + r"the bot at 127\.0\.0\.1:\d+ says serves_match_stream in GetInfo, but "
                        r"it does not implement PlayMatch \(it refused a match stream with UNIMPLEMENTED\), .*: "
                        r"implement PlayMatch .*, or leave serves_match_stream false, .*", line), line
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(("chars", "refusal"), [
    (200, r"the bot at 127\.0\.0\.1:\d+ answered GetInfo over the arena's limits: BotInfo\.author is 200 characters "
          r"long; the limit is 128"),
    (20_000, r"the bot at 127\.0\.0\.1:\d+ answered GetInfo with a BotInfo over the arena's size limit \(20,\d+ "
             r"bytes\): the arena reads at most 16,384 bytes \(16 KiB\) of it, and its fields must keep within name 64 "
             r"characters, .*author 128 characters \(bot\.proto, BotInfo\)"),
])
def test_play_applies_the_bot_info_limits_of_registration(
        tmp_path: Path, start_bot: Callable[..., Any], chars: int, refusal: str) -> None:
    """A bot with a 200- or 20,000-character author played locally with no complaint, and its author learnt of the
    limits only when registering; `arena play` refuses it as registration does (``bot_checks``)."""
    bot = start_bot(str(TEST_BOTS / "info_bot.py"), extra_args=["--author-chars", str(chars)])
    result = CliRunner().invoke(cli, ["play", "take5", "--bot", bot.endpoint, "--bot", "sample:random",
                                      "--record", str(tmp_path / "r.json")])
    assert result.exit_code == 1, result.output
    [line] = result.stderr.strip().splitlines()
    assert re.fullmatch(f"Error: {refusal}", line), line
    assert not (tmp_path / "r.json").exists()
