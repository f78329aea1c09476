"""Owner tokens on this machine (``<data-dir>/tokens.json``), bot ids NAME@VERSION, and the ladder comparison of
``arena ladder --rebuild``: the parts of the CLI that need no server."""

from __future__ import annotations

import json
import socket
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from arena.cli import ArenaCliError, TokenStore, cli, ladder_differences, split_bot_id
from arena.cli.tokens import ArenaRef


def _free_server() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_tokens_round_trip_keyed_by_server_game_and_name(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "data")
    assert store.get("a:1", "take5", "bot") is None  # no file yet
    store.put("a:1", "take5", "bot", "t1")
    store.put("a:1", "take5", "other", "t2")
    store.put("b:2", "take5", "bot", "t3")
    assert store.get("a:1", "take5", "bot") == "t1"
    assert store.get("a:1", "take5", "other") == "t2"
    assert store.get("b:2", "take5", "bot") == "t3"
    assert store.get("b:2", "take5", "other") is None  # a token is never offered to another server
    store.put("a:1", "take5", "bot", "t4")  # a new arena at the same address: the new token wins
    assert TokenStore(tmp_path / "data").get("a:1", "take5", "bot") == "t4"
    data = json.loads(store.path.read_text())
    assert data["version"] == 1 and data["tokens"]["a:1"]["take5"] == {"bot": "t4", "other": "t2"}


def test_the_token_of_a_name_is_found_for_any_game(tmp_path: Path) -> None:
    """A NAME is one owner's in every game: its token saved for take5 is the one to use for taki too (the game
    asked for first); the "no token" message looks at every game, and so does `arena bot token --all`."""
    store = TokenStore(tmp_path)
    arena = ArenaRef("arena:" + "a" * 32, "127.0.0.1:1")
    store.put(arena, "take5", "dual", "t-take5")
    assert store.get(arena.key, "taki", "dual") is None  # filed per game ...
    assert store.find(arena.key, "taki", "dual") == ("take5", "t-take5")  # ... found for any game
    assert store.lookup(arena, "taki", "dual") == "t-take5"
    store.put(arena, "taki", "dual", "t-taki")  # older data may hold two owners' tokens: each game its own first
    assert store.lookup(arena, "taki", "dual") == "t-taki" and store.lookup(arena, "take5", "dual") == "t-take5"
    assert store.lookup(arena, "taki", "other") is None
    assert "has no token of other" in store.missing(arena, "taki", "other")
    elsewhere = ArenaRef("arena:" + "b" * 32, "127.0.0.1:2")
    assert "only for another arena (arena aaaaaaaa" in store.missing(elsewhere, "taki", "dual")
    assert store.saved("taki", "dual") == [("arena aaaaaaaa (last reached at 127.0.0.1:1)", "t-taki")]
    # a token filed under the address by a CLI older than arena ids is found and re-filed under its own game
    store.put("127.0.0.1:2", "take5", "legacy", "t-legacy")
    assert store.lookup(elsewhere, "taki", "legacy") == "t-legacy"
    assert store.get(elsewhere.key, "take5", "legacy") == "t-legacy" and store.get("127.0.0.1:2", "take5",
                                                                                  "legacy") is None


def test_the_token_of_a_name_is_found_in_another_letter_case(tmp_path: Path) -> None:
    """NAMEs that differ only in letter case are one NAME to the arena: its owner typing ``Heuristic`` sends the token
    saved for ``heuristic`` (the referee then says which spelling it holds), and a NAME's own spelling comes
    first."""
    store = TokenStore(tmp_path)
    arena = ArenaRef("arena:" + "a" * 32, "127.0.0.1:1")
    store.put(arena, "take5", "heuristic", "t-lower")
    assert store.lookup(arena, "take5", "Heuristic") == "t-lower"
    assert store.find(arena.key, "taki", "HEURISTIC") == ("take5", "t-lower")
    store.put(arena, "taki", "Heuristic", "t-upper")  # older data: both spellings saved, each finds its own
    assert store.lookup(arena, "take5", "Heuristic") == "t-upper"
    assert store.lookup(arena, "take5", "heuristic") == "t-lower"
    assert store.lookup(arena, "take5", "heuristics") is None


def test_token_file_is_private_and_written_whole(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.put("a:1", "take5", "bot", "secret")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    store.path.chmod(0o644)  # someone loosened it: the next write makes it private again
    store.put("a:1", "take5", "bot2", "secret2")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["tokens.json"]  # no temporary file left behind


@pytest.mark.parametrize("content, fragment", [("{not json", "is not valid JSON"), ("[]", "no \"tokens\" object"),
                                               ('{"tokens": 3}', "no \"tokens\" object")])
def test_a_broken_token_file_is_a_clear_error(tmp_path: Path, content: str, fragment: str) -> None:
    (tmp_path / "tokens.json").write_text(content)
    with pytest.raises(ArenaCliError, match=fragment):
        TokenStore(tmp_path).get("a:1", "take5", "bot")
    result = CliRunner().invoke(cli, ["bot", "remove", "mybot", "--data-dir", str(tmp_path),
                                      "--server", _free_server()])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and str(tmp_path / "tokens.json") in lines[0]


@pytest.mark.parametrize("command", [["bot", "update", "mybot@1.0", "--endpoint", "127.0.0.1:50061"],
                                     ["bot", "remove", "mybot"]])
def test_update_and_remove_without_a_token_still_ask_the_referee(tmp_path: Path, command: list[str]) -> None:
    """Without a token the referee is asked anyway, so that an unknown bot is answered NOT_FOUND (the "no owner
    token" message for a bot that exists is checked against a real referee in test_cli_serve.py)."""
    server = _free_server()
    result = CliRunner(env={"ARENA_TOKEN": None}).invoke(cli, [*command, "--data-dir", str(tmp_path),
                                                               "--server", server])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the arena server" in lines[0] and "owner token" not in lines[0]


@pytest.mark.parametrize("how", ["env", "file"])
def test_a_token_from_ARENA_TOKEN_or_the_file_is_used(tmp_path: Path, how: str) -> None:
    server = _free_server()
    env = {"ARENA_TOKEN": "from-env" if how == "env" else None}
    if how == "file":
        TokenStore(tmp_path).put(server, "take5", "mybot", "from-file")
    result = CliRunner(env=env).invoke(cli, ["bot", "remove", "mybot", "--data-dir", str(tmp_path),
                                             "--server", server])
    # the token was found, so the CLI went on to call the (absent) server
    assert result.exit_code == 1
    assert "cannot reach the arena server" in result.stderr and "owner token" not in result.stderr


@pytest.mark.parametrize("text, expected", [
    ("mybot", ("mybot", "")), ("mybot@1.0", ("mybot", "1.0")), ("a.b-c_d@2025-01-01+git.abc", ("a.b-c_d",
                                                                                            "2025-01-01+git.abc")),
    (" mybot@1 ", ("mybot", "1")),
])
def test_split_bot_id(text: str, expected: tuple[str, str]) -> None:
    assert split_bot_id(text) == expected


@pytest.mark.parametrize("text", ["", "@1.0", "my bot", "mybot@", "mybot@1 0", "a@b@c", "x" * 65, "mybot@" + "v" * 65])
def test_split_bot_id_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="bot name|NAME@VERSION"):
        split_bot_id(text)


@given(st.from_regex(r"[A-Za-z0-9_.-]{1,64}", fullmatch=True), st.from_regex(r"[^\s@]{1,64}", fullmatch=True))
def test_split_bot_id_inverts_joining(name: str, version: str) -> None:
    assert split_bot_id(f"{name}@{version}") == (name, version)


def _entry(bot: str, rating: float = 1500.0, matches: int = 3, wins: int = 1, mean: float = 12.0) -> dict:
    return {"rank": 1, "bot": bot, "rating": rating, "matches": matches, "wins": wins, "mean_score": mean}


def test_ladder_differences() -> None:
    live = [_entry("a@1", 1510.0), _entry("b@1", 1490.0)]
    assert ladder_differences(live, live) == []
    assert ladder_differences([_entry("a@1", 1510.0 + 1e-9), _entry("b@1", 1490.0)], live) == []
    assert ladder_differences([_entry("a@1", 1510.5), _entry("b@1", 1490.0)], live) == [
        "a@1: rating rebuilt 1510.500000, live 1510.000000"]
    assert ladder_differences([_entry("a@1", 1510.0, matches=4), _entry("b@1", 1490.0, wins=0)], live) == [
        "a@1: matches rebuilt 4, live 3", "b@1: wins rebuilt 0, live 1"]
    assert ladder_differences([_entry("a@1", 1510.0)], live) == ["b@1 is on the live ladder only"]
    assert ladder_differences(live + [_entry("c@2")], live) == ["c@2 is on the rebuilt ladder only"]
