"""The `arena` command line without a server: help texts, argument errors, an unreachable server.

Every error must be one line on stderr, a non-zero exit code and no traceback (issue 2 item 9).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from arena.cli import cli, parse_endpoint
from arena_sdk.games import game_ids

ARENA = Path(sys.executable).parent / "arena"


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], bool]]:
    """Every (command path, is_group) of the tree under ``group``, the root included."""
    found = [(prefix, True)]
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += _commands(command, prefix + (name,))
        else:
            found.append((prefix + (name,), False))
    return found


ALL_COMMANDS = _commands(cli)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _assert_one_line_error(result, *fragments: str) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code not in (0, None), result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def test_the_command_tree_is_complete() -> None:
    expected = {("serve",), ("worker", "list"), ("bot", "register"), ("bot", "update"), ("bot", "remove"),
                ("bot", "token"), ("owner", "create"), ("owner", "show"), ("owner", "list"), ("owner", "remove"),
                ("registration", "show"), ("registration", "set"),
                ("bot", "list"), ("tournament", "create"), ("tournament", "list"), ("tournament", "status"),
                ("tournament", "standings"), ("tournament", "cancel"), ("tournament", "verify"),
                ("sprt", "start"), ("sprt", "show"), ("sprt", "cancel"),
                ("match", "list"), ("match", "show"),
                ("ladder",), *(("play", game) for game in game_ids()), ("replay",), ("web",)}
    assert expected == {path for path, is_group in ALL_COMMANDS if not is_group}
    assert isinstance(cli.commands["worker"], click.Group) and cli.commands["worker"].invoke_without_command


READS = [("bot", "list"), ("tournament", "list"), ("tournament", "status"), ("tournament", "standings"),
         ("match", "list"), ("match", "show"), ("ladder",), ("worker", "list"), ("sprt", "show"),
         ("owner", "show"), ("owner", "list"), ("registration", "show")]


@pytest.mark.parametrize("path", READS, ids=" ".join)
def test_every_read_has_json(path: tuple[str, ...]) -> None:
    command: click.Command = cli
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    assert "--json" in {opt for param in command.params for opt in param.opts}


@pytest.mark.parametrize("path, is_group", ALL_COMMANDS, ids=lambda p: " ".join(p) if isinstance(p, tuple) else "")
def test_help_of_every_command(path: tuple[str, ...], is_group: bool) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="arena")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: {' '.join(('arena',) + path)} ")
    if not is_group or path == ("worker",):  # every command says what it does, with an example
        assert "Example" in result.output, result.output
        assert f"arena {' '.join(path)}" in result.output.split("Example", 1)[1], result.output


@pytest.mark.parametrize("args, fragments", [
    (["tournament", "create", "--seats", "1", "--bots", "a,b"], ["--seats", "2<=x<=10"]),
    (["tournament", "create", "--seats", "11", "--bots", "a,b"], ["--seats"]),
    (["tournament", "create", "--rounds", "0", "--bots", "a,b"], ["--rounds"]),
    (["tournament", "create", "--bots", "a,b", "--seats", "3"], ["--seats 3 needs at least 3 bots"]),
    (["tournament", "create", "--bots", "a,a"], ["more than once", "a"]),
    (["tournament", "create", "--bots", "a"], ["at least 2 bots"]),
    (["tournament", "create", "--all", "--bots", "a,b"], ["either --bots or --all"]),
    (["tournament", "create"], ["--bots"]),
    (["tournament", "create", "--bots", "a,b", "--variant", "nope"], ["--variant"]),
    (["tournament", "create", "--bots", "a,b", "--limit", "0"], ["--limit"]),
    (["bot", "register", "mybot", "localhost"], ["HOST:PORT"]),
    (["bot", "register", "mybot", "localhost:http"], ["not a number"]),
    (["bot", "register", "mybot", "localhost:70000"], ["1..65535"]),
    (["bot", "register", "mybot", ":50061"], ["HOST:PORT"]),
    (["bot", "register", "my bot", "localhost:50061"], ["bot name"]),
    (["bot", "register", "x" * 65, "localhost:50061"], ["bot name"]),
    (["play", "take5", "--bot", "sample:random"], ["2..10"]),
    (["play", "take5", "--bot", "sample:nosuch", "--bot", "sample:random"], ["unknown sample bot", "nosuch"]),
    (["play", "take5", "--bot", "nowhere", "--bot", "sample:random"], ["HOST:PORT"]),
    (["play", "take5", "--bot", "missing_bot.py", "--bot", "sample:random"], ["does not exist"]),
    (["play", "take5", "--bot", "sample:random", "--bot", "sample:random", "--deadline-ms", "0"],
     ["--deadline-ms"]),
    (["play", "take5", "--bot", "sample:random", "--bot", "sample:random", "--deadline-ms", "9"],
     ["--deadline-ms", "10<=x<=60000"]),
    (["play", "take5", "--bot", "sample:random", "--bot", "sample:random", "--deadline-ms", "60001"],
     ["--deadline-ms", "10<=x<=60000"]),
    (["play", "take5", "--bot", "sample:random", "--bot", "sample:random", "--limit", "1001"],
     ["--limit", "1<=x<=1000"]),
    (["tournament", "create", "--bots", "a,b", "--deadline-ms", "9"], ["--deadline-ms", "10<=x<=60000"]),
    (["tournament", "create", "--bots", "a,b", "--deadline-ms", "60001"], ["--deadline-ms", "10<=x<=60000"]),
    (["tournament", "create", "--bots", "a,b", "--limit", "1001"], ["--limit", "1<=x<=1000"]),
    (["serve", "--listen", "nohost"], ["HOST:PORT"]),
    (["serve", "--workers", "-1"], ["--workers"]),
    (["worker", "--concurrency", "0"], ["--concurrency"]),
    (["worker", "--visibility-timeout", "0"], ["--visibility-timeout"]),
    (["serve", "--visibility-timeout", "-1"], ["--visibility-timeout"]),
    (["worker", "nosuch"], ["nosuch"]),
    (["bot", "update", "mybot"], ["--endpoint"]),
    (["bot", "update", "my bot", "--endpoint", "h:1"], ["bot name"]),
    (["bot", "update", "mybot@", "--endpoint", "h:1"], ["NAME@VERSION"]),
    (["bot", "update", "mybot@1 2", "--endpoint", "h:1"], ["NAME@VERSION"]),
    (["bot", "update", "mybot", "--endpoint", "h"], ["HOST:PORT"]),
    (["bot", "update", "mybot", "h"], ["HOST:PORT"]),
    (["bot", "update", "mybot", "h:1", "--endpoint", "h:2"], ["two endpoints"]),
    (["bot", "remove", "a@b@c"], ["NAME@VERSION"]),
    (["sprt", "a@1", "a@2", "--elo0", "nan"], ["--elo0 must be a finite number"]),
    (["sprt", "a@1", "a@2", "--elo1", "inf"], ["--elo1 must be a finite number"]),
    (["sprt", "a@1", "a@2", "--elo0", "5", "--elo1", "5"], ["--elo0 must be below --elo1"]),
    (["bot", "remove"], ["NAME[@VERSION]"]),
    (["tournament", "create", "--bots", "a,b@", "--dry-run"], ["--bots", "NAME@VERSION"]),
    (["tournament", "cancel"], ["ID"]),
    (["sprt", "stop", "t10"], ["no command 'stop' here", "arena sprt cancel ID"]),
    (["sprt", "cancel"], ["ID"]),
    (["tournament", "standings"], ["ID"]),
    (["match", "list", "--limit", "0"], ["--limit"]),
    (["match", "list", "--bot", "x y"], ["bot name"]),
    (["match", "show"], ["ID"]),
    (["ladder", "--rebuild", "--game", "chess"], ["--game"]),
    (["replay", "no/such/record.json"], ["does not exist"]),
    (["replay", "t3-000041"], ["no file 't3-000041'", "`arena match show t3-000041 --json > t3-000041.json`"]),
    (["ladder", "--game", "chess"], ["--game"]),
    (["nosuchcommand"], ["nosuchcommand"]),
])
def test_bad_arguments_give_one_line_and_exit_2(args: list[str], fragments: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    _assert_one_line_error(result, *fragments)
    assert result.exit_code == 2


@pytest.mark.parametrize("args", [
    ["ladder"],
    ["bot", "list"],
    ["bot", "register", "mybot", "127.0.0.1:50061"],
    ["tournament", "status", "t1"],
    ["tournament", "create", "--bots", "a,b,c", "--no-wait"],
    ["tournament", "create", "--all"],
    ["tournament", "create", "--bots", "a,b", "--dry-run"],
    ["tournament", "list"],
    ["tournament", "standings", "t1"],
    ["tournament", "cancel", "t1"],
    ["sprt", "cancel", "t1"],
    ["bot", "update", "mybot", "--endpoint", "127.0.0.1:50061", "--token", "x"],
    ["bot", "remove", "mybot@1.0", "--token", "x"],
    ["match", "list"],
    ["match", "show", "t1-r0-s0-p0"],
    ["ladder", "--rebuild"],
    ["worker", "list"],
])
def test_unreachable_server_is_one_clear_line(args: list[str], tmp_path: Path) -> None:
    server = f"127.0.0.1:{_free_port()}"
    result = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path)}).invoke(cli, [*args, "--server", server])
    line = _assert_one_line_error(result, f"cannot reach the arena server at {server}", "arena serve")
    assert result.exit_code == 1, line


def test_server_comes_from_ARENA_SERVER() -> None:
    server = f"127.0.0.1:{_free_port()}"
    result = CliRunner(env={"ARENA_SERVER": server}).invoke(cli, ["ladder"])
    _assert_one_line_error(result, f"at {server}")


def test_options_come_from_ARENA_variables() -> None:
    result = CliRunner(env={"ARENA_TOURNAMENT_CREATE_SEATS": "1"}).invoke(cli, ["tournament", "create",
                                                                               "--bots", "a,b"])
    _assert_one_line_error(result, "--seats")


SHARED_ENVVARS = {"ARENA_SERVER", "ARENA_REDIS_URL", "ARENA_DATA_DIR", "ARENA_TOKEN", "ARENA_ADMIN_TOKEN",
                  "ARENA_BOT_SECRET", "ARENA_TLS_CA", "ARENA_BOT_CA"}


def _options_with_context() -> list[tuple[tuple[str, ...], click.Option, click.Context]]:
    """Every option of every command (--help and --version aside), with the context the command runs in."""
    found = []
    for path, _ in ALL_COMMANDS:
        ctx = click.Context(cli, info_name="arena", auto_envvar_prefix="ARENA")
        command: click.Command = cli
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
            ctx = click.Context(command, parent=ctx, info_name=name)
        for param in command.params:
            if isinstance(param, click.Option) and not {"--help", "--version"} & set(param.opts):
                found.append((path, param, ctx))
    return found


@pytest.mark.parametrize("path, param, ctx", _options_with_context(),
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else (
                             max(v.opts, key=len) if isinstance(v, click.Option) else ""))
def test_every_option_reads_ARENA_COMMAND_OPTION_after_its_long_name(
        path: tuple[str, ...], param: click.Option, ctx: click.Context, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("ARENA_"):
            monkeypatch.delenv(name)
    if param.envvar:  # one of the variables shared by several commands
        assert param.envvar in SHARED_ENVVARS
        expected = param.envvar
    else:
        long_name = next(o for o in param.opts if o.startswith("--"))
        expected = "_".join(["ARENA", *path, long_name[2:]]).upper().replace("-", "_")
    assert param.resolve_envvar_value(ctx) is None
    monkeypatch.setenv(expected, "from-env")
    assert param.resolve_envvar_value(ctx) == "from-env", expected


@pytest.mark.parametrize("env, fragments", [
    ({"ARENA_TOURNAMENT_CREATE_BOTS": "a,b"}, ["cannot reach the arena server"]),  # the bots were read
    ({"ARENA_TOURNAMENT_CREATE_BOTS": "a,b", "ARENA_TOURNAMENT_CREATE_DEADLINE_MS": "5"}, ["--deadline-ms"]),
    ({"ARENA_TOURNAMENT_CREATE_ALL": "1", "ARENA_TOURNAMENT_CREATE_BOTS": "a,b"}, ["either --bots or --all"]),
    ({"ARENA_TOURNAMENT_CREATE_BOTS": "a,b", "ARENA_TOURNAMENT_CREATE_LIMIT": "1001"}, ["--limit"]),
])
def test_tournament_create_options_from_ARENA_variables(env: dict[str, str], fragments: list[str]) -> None:
    result = CliRunner(env=env).invoke(cli, ["tournament", "create", "--no-wait", "--server",
                                             f"127.0.0.1:{_free_port()}"])
    _assert_one_line_error(result, *fragments)


def test_play_bots_from_ARENA_variables() -> None:
    env = {"ARENA_PLAY_TAKE5_BOT": "sample:random sample:nosuch", "ARENA_PLAY_TAKE5_DEADLINE_MS": "60001"}
    result = CliRunner(env=env).invoke(cli, ["play", "take5"])
    _assert_one_line_error(result, "unknown sample bot", "nosuch")  # the seats came from the variable
    del env["ARENA_PLAY_TAKE5_BOT"]
    result = CliRunner(env=env).invoke(cli, ["play", "take5", "--bot", "sample:random", "--bot", "sample:random"])
    _assert_one_line_error(result, "--deadline-ms", "10<=x<=60000")


GROUPS = [path for path, is_group in ALL_COMMANDS if is_group and path != ("worker",)]


@pytest.mark.parametrize("path", GROUPS, ids=lambda p: " ".join(("arena",) + p))
def test_a_group_without_a_subcommand_prints_its_help(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, list(path), prog_name="arena")
    assert result.exit_code == 2  # click's exit code for a missing command
    assert "Traceback" not in result.output and "Error" not in result.output
    help_text = CliRunner().invoke(cli, [*path, "--help"], prog_name="arena").stdout
    assert result.stderr == help_text  # the normal multi-line help, as `--help` prints it
    assert result.stderr.startswith(f"Usage: {' '.join(('arena',) + path)} [OPTIONS] COMMAND [ARGS]...\n")
    assert "\nCommands:\n" in result.stderr


def test_the_installed_script_without_a_command_prints_the_help() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    done = subprocess.run([str(ARENA), "bot"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == "Usage: arena bot [OPTIONS] COMMAND [ARGS]..."
    assert "Commands:" in lines and any(line.strip().startswith("register ") for line in lines)


def test_worker_without_redis_is_a_clear_error(tmp_path: Path) -> None:
    env = {"ARENA_REDIS_URL": None}
    result = CliRunner(env=env).invoke(cli, ["worker", "--data-dir", str(tmp_path / "empty")])
    _assert_one_line_error(result, "no Redis", "ARENA_REDIS_URL")
    assert result.exit_code == 1


def test_the_installed_script_prints_no_traceback() -> None:
    """The real console script, as a user runs it: one line on stderr, nothing on stdout, exit 1."""
    assert ARENA.exists(), "install the project: pip install -e ./sdk -e '.[dev]'"
    server = f"127.0.0.1:{_free_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    done = subprocess.run([str(ARENA), "ladder", "--server", server], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"Error: cannot reach the arena server at {server}: nothing answers there; is `arena serve` running?"]


@pytest.mark.parametrize("text, ok", [
    ("127.0.0.1:50061", True), ("localhost:1", True), ("[::1]:50061", True), ("bots.example.org:65535", True),
    ("127.0.0.1", False), ("127.0.0.1:0", False), ("127.0.0.1:65536", False), (":50061", False),
    ("::1:50061", False), ("host:-1", False), ("a b:1", False), ("[]:1", False),
])
def test_parse_endpoint(text: str, ok: bool) -> None:
    if ok:
        assert parse_endpoint(text) == text
    else:
        with pytest.raises(ValueError, match="HOST:PORT|port"):
            parse_endpoint(text)


def test_listen_address_may_use_port_zero() -> None:
    assert parse_endpoint("0.0.0.0:0", allow_port_zero=True) == "0.0.0.0:0"


@pytest.mark.parametrize("command", [["worker"], ["serve", "--listen", "127.0.0.1:0"]])
@pytest.mark.parametrize("url, fragment", [
    ("redis://127.0.0.1:{port}/0", "cannot reach Redis at redis://127.0.0.1:"),
    ("http://127.0.0.1:{port}", "; a Redis Cluster is redis+cluster://HOST:PORT"),
    ("redis://127.0.0.1:{port}/0?password=QuerySecret123", "/0?password=***: "),  # the password never shown
    ("redis://:UserSecret123@127.0.0.1:{port}/0", "redis://:***@127.0.0.1:"),
])
def test_unusable_redis_is_one_line(command: list[str], url: str, fragment: str) -> None:
    env = {"ARENA_REDIS_URL": url.format(port=_free_port())}
    result = CliRunner(env=env).invoke(cli, command)
    _assert_one_line_error(result, fragment)
    assert result.exit_code == 1
    assert "Secret123" not in result.output


def test_a_listener_that_answers_nothing_is_told_apart_from_a_closed_port() -> None:
    import socket

    from arena.cli.errors import not_an_arena

    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never reads nor answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        said = not_an_arena(f"127.0.0.1:{port}", timeout_s=0.3)
    assert said is not None and "answers nothing (the call gave up, and one more probe got no answer in 0.3 s)" in said and "stopped or overloaded" in said
    closed = not_an_arena(f"127.0.0.1:{port}", timeout_s=0.3)  # the socket is closed now
    assert closed is not None and "nothing answers there" in closed


def test_a_los_near_certainty_is_never_printed_as_certain() -> None:
    from arena.cli.ladder import los_text

    assert [los_text(x) for x in (None, 0.0, 0.0004, 0.973, 0.9996, 1.0)] == [
        "-", "0.0 %", "< 0.1 %", "97.3 %", "> 99.9 %", "100.0 %"]


@pytest.mark.parametrize("password", ["", "WrongSecret123"])
def test_a_redis_that_refuses_the_password_is_said_so(redis_url: str, password: str) -> None:
    """The session's Redis wants a password: a URL without it, or with a wrong one, says so (a review got redis-py's
    "HELLO must be called with the client already authenticated..." with no word of a password)."""
    from urllib.parse import urlsplit

    parts = urlsplit(redis_url)
    assert parts.password, "the session's Redis has a password"
    url = f"redis://{f':{password}@' if password else ''}{parts.hostname}:{parts.port}/0"
    result = CliRunner(env={"ARENA_REDIS_URL": url}).invoke(cli, ["worker"])
    _assert_one_line_error(result, "refuses this client: a wrong or missing password in the URL")
    assert result.exit_code == 1 and "Secret123" not in result.output


def test_a_server_gone_while_it_is_probed_is_not_said_to_be_something_else() -> None:
    """The referee killed while the CLI asks it (a review: `kill -9` of serve under `tournament create`): the probe's
    first connection is accepted, then nothing listens; the CLI said "something listens ... but it is not an arena
    referee", now that nothing answers there any more."""
    import socket
    import threading

    from arena.cli.errors import not_an_arena

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]

    def accept_once_then_go() -> None:
        conn, _ = listener.accept()
        conn.close()
        listener.close()

    gone = threading.Thread(target=accept_once_then_go)
    gone.start()
    said = not_an_arena(f"127.0.0.1:{port}", timeout_s=1.0)
    gone.join()
    assert said is not None and "nothing answers there any more" in said, said


def test_an_until_separated_cap_below_the_deals_a_separation_needs_is_warned_of(dead_endpoint: str) -> None:
    """An organiser review: `--until-separated --max-matches 1` was accepted in silence, though a separation counts
    only over 10 deals or more: such a tournament can only stop at its cap. Said before the arena is asked."""
    from arena.tournaments.until_separated import MIN_DEALS

    args = ["tournament", "create", "--bots", "a,b", "--until-separated", "--server", dead_endpoint]
    low = CliRunner().invoke(cli, [*args, "--max-matches", str(MIN_DEALS - 1)])
    assert f"warning: --max-matches {MIN_DEALS - 1}: a separation counts only over {MIN_DEALS} deals" in low.stderr
    enough = CliRunner().invoke(cli, [*args, "--max-matches", str(MIN_DEALS)])
    assert "warning: --max-matches" not in enough.stderr and enough.exit_code != 0  # nobody answers there


def test_bot_health_settings_are_options_of_serve_and_worker(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-attack had to write Python to set the cap on a bot's deferred matches (WorkerSettings.max_deferral_s),
    and the health thresholds had no option either: `--max-deferral SECONDS`, `--unhealthy-after N` and
    `--bot-recheck SECONDS` set them on `arena worker` and on the embedded workers of `arena serve`."""
    from typing import Any

    from arena.server.app import ArenaServer
    from arena.worker import loop

    taken: list[Any] = []
    monkeypatch.setattr(loop, "run_worker", lambda url, settings, **kwargs: taken.append(settings))
    result = CliRunner().invoke(cli, ["worker", "--max-deferral", "25", "--unhealthy-after", "5", "--bot-recheck",
                                      "2.5", "--redis-url", redis_url])
    assert result.exit_code == 0, result.output
    assert [(s.max_deferral_s, s.unhealthy_after, s.bot_recheck_s) for s in taken] == [(25.0, 5, 2.5)]
    for bad in (["--max-deferral", "-1"], ["--unhealthy-after", "0"], ["--bot-recheck", "0"], ["--bot-recheck", "nan"],
                ["--bot-recheck", "inf"], ["--bot-recheck", "1e-300"], ["--max-deferral", "nan"],
                ["--max-deferral", "1e300"], ["--visibility-timeout", "inf"], ["--visibility-timeout", "nan"]):
        refused = CliRunner().invoke(cli, ["worker", *bad, "--redis-url", redis_url])
        assert refused.exit_code == 2 and bad[0] in refused.stderr, bad
    help_text = CliRunner().invoke(cli, ["serve", "--help"]).output
    assert all(o in help_text for o in ("--max-deferral SECONDS", "--unhealthy-after N", "--bot-recheck SECONDS"))
    from arena.worker.settings import WorkerSettings

    for field in ("bot_recheck_s", "max_deferral_s", "visibility_timeout_s"):  # in Python too (a re-attack: nan, inf)
        for value in (float("nan"), float("inf")):
            with pytest.raises(ValueError):
                WorkerSettings(**{field: value})
    settings = ArenaServer("127.0.0.1:0", redis_url, max_deferral_s=30.0, unhealthy_after=4,
                           bot_recheck_s=1.5).worker_settings
    assert (settings.max_deferral_s, settings.unhealthy_after, settings.bot_recheck_s) == (30.0, 4, 1.5)


def test_a_worker_on_the_data_folder_of_a_serve_with_an_external_redis_is_told_to_give_its_url(
        tmp_path: Path) -> None:
    """An operator review: `arena worker` with ARENA_DATA_DIR at the folder of a running `arena serve` that uses an
    external Redis said "run `arena serve --data-dir ...` on this machine first" (it was running)."""
    from arena.core.folder_lock import FolderLock

    lock = FolderLock(tmp_path)
    lock.acquire("arena serve listening on 127.0.0.1:1")
    try:
        held = CliRunner().invoke(cli, ["worker", "--data-dir", str(tmp_path)], env={"ARENA_REDIS_URL": None})
    finally:
        lock.release()
    assert held.exit_code == 1 and "keeps no private Redis there" in held.stderr, held.output
    free = CliRunner().invoke(cli, ["worker", "--data-dir", str(tmp_path)], env={"ARENA_REDIS_URL": None})
    assert free.exit_code == 1 and "run `arena serve --data-dir" in free.stderr, free.output


def test_serve_web_takes_the_proxy_options_of_arena_web(dead_endpoint: str) -> None:
    """An operator review: behind a proxy, `arena serve --web` answered 400 to the proxy's host name, having no
    --allowed-host; `--web-allowed-host` and `--web-trust-proxy` give its pages what `arena web`'s options give."""
    import urllib.error
    import urllib.request

    from arena.cli.app import AppContext
    from arena.cli.serve import start_pages

    def status(url: str) -> int:
        request = urllib.request.Request(url, headers={"Host": "arena.club.example"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    host, port = dead_endpoint.rsplit(":", 1)
    for allowed, refused in (((), True), (("arena.club.example",), False)):
        pages = start_pages(AppContext(), "127.0.0.1:0", host, int(port), "k" * 32, allowed_hosts=allowed,
                            trusted_proxies=("10.0.0.0/8",))
        try:
            code = status(pages.url() + "healthz")
        finally:
            pages.stop()
        assert (code == 400) is refused, (allowed, code)
    refused_alone = CliRunner().invoke(cli, ["serve", "--web-allowed-host", "x.example"])
    assert refused_alone.exit_code == 1 and "options of the pages of --web" in refused_alone.stderr
    for command in (["serve", "--web", "127.0.0.1:0", "--web-trust-proxy"], ["web", "--trust-proxy"]):
        typo = CliRunner().invoke(cli, [*command, "10.0.0.0/33"])  # a typo trusted no proxy, silently
        assert typo.exit_code == 2 and "'10.0.0.0/33' is no IP address or network" in typo.stderr, typo.output


def test_match_show_of_a_file_with_a_number_too_long_to_read_says_so(tmp_path: Path) -> None:
    """A re-attack: a record file with a 5,000-digit number ended `match show` with "unexpected ValueError"."""
    crafted = tmp_path / "long.json"
    crafted.write_text('{"match_id": "m", "seed": ' + "9" * 5000 + "}")
    shown = CliRunner().invoke(cli, ["match", "show", str(crafted)])
    assert shown.exit_code == 1 and "is not a match record" in shown.stderr and "unexpected" not in shown.output
