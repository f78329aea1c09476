"""``arena owner`` and ``arena registration`` against a real referee on the session's real Redis: the organiser
creates an owner (token printed once, saved), a second bot NAME joins the owner of --token, `owner show` finds every
saved owner, `registration set --closed` refuses strangers in one line, and a huge quota is refused like any bad
value."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.server.app import ArenaServer

TOKEN = "the-organisers-token-0123456789"


@pytest.fixture
def address(redis_url: str) -> Iterator[str]:
    server = ArenaServer("127.0.0.1:0", redis_url, workers=0, verify_bots=False, admin_token=TOKEN)
    port = server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop()


def _cli(data: Path, *args: str, admin: bool = False) -> Any:
    env = {"ARENA_ADMIN_TOKEN": TOKEN if admin else None, "ARENA_TOKEN": None, "ARENA_DATA_DIR": str(data)}
    return CliRunner(env=env).invoke(cli, list(args))


def test_owner_commands_and_a_second_name(address: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = _cli(data, "bot", "register", "one", "127.0.0.1:1", "--json", "--server", address, "--data-dir", str(data))
    assert first.exit_code == 0, first.output
    mine = json.loads(first.output)
    token, oid = mine["owner_token"], mine["owner"]
    assert token and oid.startswith("o-")
    second = _cli(data, "bot", "register", "two", "127.0.0.1:2", "--token", token, "--server", address,
                  "--data-dir", str(data))
    assert second.exit_code == 0, second.output
    assert second.output == "registered take5 bot two@0 at 127.0.0.1:2\n"  # no new token
    again = _cli(data, "bot", "register", "two", "127.0.0.1:4", "--json", "--server", address, "--data-dir", str(data))
    assert again.exit_code == 0, again.output  # the --token used for the new name was saved for it
    assert json.loads(again.output)["owner"] == oid

    created = _cli(data, "owner", "create", "team blue", "--json", "--server", address, "--data-dir", str(data),
                   admin=True)
    assert created.exit_code == 0, created.output
    team = json.loads(created.output)
    assert team["label"] == "team blue" and team["owner_token"] and team["names"] == []
    saved = json.loads((data / "tokens.json").read_text())
    assert any(e["token"] == team["owner_token"] for arena in saved["owners"].values() for e in arena.values())

    shown = _cli(data, "owner", "show", "--json", "--server", address, "--data-dir", str(data))
    assert shown.exit_code == 0, shown.output
    owners = {o["id"]: o for o in json.loads(shown.output)}
    assert owners[oid]["names"] == ["take5/one", "take5/two"] and owners[team["id"]]["names"] == []
    assert token not in shown.output and team["owner_token"] not in shown.output

    listed = _cli(data, "owner", "list", "--json", "--server", address, admin=True)
    assert listed.exit_code == 0, listed.output
    assert {o["id"] for o in json.loads(listed.output)} == {oid, team["id"]}
    text = _cli(data, "owner", "show", "--server", address, "--data-dir", str(data)).output
    assert f"owner {oid}, created " in text and "2 names (at most 20): take5/one, take5/two" in text
    stranger = _cli(tmp_path / "other", "owner", "list", "--server", address)
    assert stranger.exit_code == 1 and "ListOwners is an organiser call" in stranger.stderr

    closed = _cli(data, "registration", "set", "--closed", "--max-names-per-owner", "5", "--server", address,
                  admin=True)
    assert closed.exit_code == 0, closed.output
    assert closed.output.startswith("registration closed: names per owner 5;")
    refused = _cli(tmp_path / "other", "bot", "register", "three", "127.0.0.1:3", "--server", address,
                   "--data-dir", str(tmp_path / "other"))
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "registration of new owners is closed" in lines[0]
    ok = _cli(data, "bot", "register", "three", "127.0.0.1:3", "--token", team["owner_token"], "--json",
              "--server", address, "--data-dir", str(data))
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["owner"] == team["id"]
    shown = _cli(data, "registration", "show", "--json", "--server", address)
    assert json.loads(shown.output)["mode"] == "closed" and json.loads(shown.output)["names_total"] == 3

    huge = _cli(data, "registration", "set", "--max-names-total", "18446744073709551616", "--server", address,
                admin=True)
    assert huge.exit_code == 2 and "Traceback" not in huge.output and "--max-names-total" in huge.stderr


def test_a_ctrl_c_during_a_first_registration_waits_for_the_new_token(
        address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new owner's token exists only in RegisterBot's answer: a Ctrl-C while the call is under way is held until
    the token is saved (then the command ends interrupted, exit 130, saying so), where it lost the token before; a
    second Ctrl-C stops at once."""
    import os
    import signal

    from arena.cli.app import ArenaClient

    real_call = ArenaClient.call
    presses = {"n": 1}

    def call_after_ctrl_c(self: ArenaClient, method: str, *args: Any, **kwargs: Any) -> Any:
        if method == "RegisterBot":
            for _ in range(presses["n"]):
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the arena registers the bot
        return real_call(self, method, *args, **kwargs)

    monkeypatch.setattr(ArenaClient, "call", call_after_ctrl_c)
    data = tmp_path / "data"
    held = _cli(data, "bot", "register", "held", "127.0.0.1:1", "--server", address, "--data-dir", str(data))
    assert held.exit_code == 130, held.output
    assert "finishing the registration of held first" in held.stderr
    assert f"interrupted: held was registered all the same, its owner token saved in {data.resolve()}" in held.stderr
    token = held.stdout.split("owner token of held: ")[1].split()[0]
    assert token in (data / "tokens.json").read_text()

    presses["n"] = 2  # pressed twice: stopped at once, nothing saved, and told what may have happened
    stopped = _cli(data, "bot", "register", "gone", "127.0.0.1:2", "--server", address, "--data-dir", str(data))
    assert stopped.exit_code == 130 and "its owner token is lost with this answer" in stopped.stderr
    assert "gone" not in (data / "tokens.json").read_text()


def test_a_ctrl_c_during_owner_create_waits_for_its_token(
        address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`owner create` prints and saves the token of the owner it created even when Ctrl-C came during the call,
    then ends interrupted saying so."""
    import os
    import signal

    from arena.cli.app import ArenaClient

    real_call = ArenaClient.call

    def call_after_ctrl_c(self: ArenaClient, method: str, *args: Any, **kwargs: Any) -> Any:
        if method == "CreateOwner":
            os.kill(os.getpid(), signal.SIGINT)
        return real_call(self, method, *args, **kwargs)

    monkeypatch.setattr(ArenaClient, "call", call_after_ctrl_c)
    data = tmp_path / "data"
    held = _cli(data, "owner", "create", "team red", "--server", address, "--data-dir", str(data), admin=True)
    assert held.exit_code == 130, held.output
    token = held.stdout.split("owner token: ")[1].split()[0]
    assert token in (data / "tokens.json").read_text()
    assert "was created all the same, its token saved in" in held.stderr

    def call_after_two(self: ArenaClient, method: str, *args: Any, **kwargs: Any) -> Any:
        if method == "CreateOwner":
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
        return real_call(self, method, *args, **kwargs)

    monkeypatch.setattr(ArenaClient, "call", call_after_two)
    stopped = _cli(data, "owner", "create", "team green", "--server", address, "--data-dir", str(data), admin=True)
    assert stopped.exit_code == 130 and "it may have been created all the same" in stopped.stderr, stopped.output
