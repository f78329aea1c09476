"""A bot author's first hour, as README.md tells it (issue 6): `make demo`, then every command of the README's
"Write your first bot" section, twice in a row, each exiting 0.

The commands are read from README.md itself (its ``sh`` blocks under "## Write your first bot"), so the README and
this test cannot drift apart. They run as real processes (the real demo, `arena serve` with its private
redis-server, the bot of the README's python block, the sample bots), from a temporary folder that plays the
repository folder: ``.venv/bin/`` is this test's virtualenv, the README's fixed ports are swapped for free ones
and the referee's default address for a free port (``ARENA_SERVE_LISTEN`` / ``ARENA_SERVER``, spelled
``localhost`` while the demo registered through ``127.0.0.1``: the same arena, so the same owner tokens). A
command ending in ``&`` is started in the background and waited for until it prints its ready line, as a user
waits for it; ``kill $(jobs -p)`` stops them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
VENV_BIN = Path(sys.executable).parent
READY_TIMEOUT_S = 60
COMMAND_TIMEOUT_S = 180


def readme_section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def first_bot_commands() -> list[str]:
    """The shell commands of the "Write your first bot" section, in order: continuation lines joined, comments
    dropped."""
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", readme_section("Write your first bot"), re.DOTALL):
        pending = ""
        for raw in block.splitlines():
            line = pending + raw
            if line.rstrip().endswith("\\"):
                pending = line.rstrip()[:-1]
                continue
            pending = ""
            code = re.sub(r"\s+#.*$", "", line).strip()
            if code and not code.startswith("#"):
                commands.append(code)
    return commands


def first_bot_source() -> str:
    match = re.search(r"```python\n(.*?)```", readme_section("Write your first bot"), re.DOTALL)
    assert match, "README has no python block under 'Write your first bot'"
    return match.group(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Background:
    command: str
    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)

    def pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if "listening on " in line:
                self.ready.set()
        self.ready.set()


@dataclass
class Shell:
    """Runs README commands the way a user at a shell does, in ``cwd``."""

    cwd: Path
    env: dict[str, str]
    ports: dict[str, str]
    jobs: list[Background] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)

    def argv(self, command: str) -> list[str]:
        for readme_port, port in self.ports.items():
            command = command.replace(readme_port, port)
        words = shlex.split(command)
        if words[0].startswith(".venv/bin/"):
            words[0] = str(VENV_BIN / words[0].removeprefix(".venv/bin/"))
        return words

    def run(self, command: str) -> str:
        if command == "kill $(jobs -p)":
            self.kill_jobs()
            return ""
        background = command.endswith("&")
        words = self.argv(command.removesuffix("&").strip())
        self.transcript.append(f"$ {command}")
        if background:
            process = subprocess.Popen(words, cwd=self.cwd, env=self.env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
            job = Background(command, process)
            self.jobs.append(job)
            threading.Thread(target=job.pump, daemon=True).start()
            assert job.ready.wait(READY_TIMEOUT_S) and process.poll() is None, (
                f"`{command}` did not start: {job.lines}\n" + "\n".join(self.transcript))
            return "\n".join(job.lines)
        done = subprocess.run(words, cwd=self.cwd, env=self.env, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT_S)
        self.transcript.append(done.stdout + done.stderr)
        assert done.returncode == 0, (f"`{command}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}\n"
                                      + "\n".join(self.transcript))
        assert "Error" not in done.stderr, done.stderr
        return done.stdout

    def kill_jobs(self) -> None:
        for job in self.jobs:
            if job.process.poll() is None:
                job.process.send_signal(signal.SIGTERM)
        for job in self.jobs:
            try:
                job.process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                job.process.kill()
                job.process.wait()
                raise AssertionError(f"`{job.command}` did not stop on SIGTERM") from None
        self.jobs.clear()


def test_readme_first_bot_commands_are_complete() -> None:
    commands = first_bot_commands()
    assert commands[-1] == "kill $(jobs -p)"
    assert any(c.startswith(".venv/bin/arena serve") and c.endswith("&") for c in commands)
    assert any(c.startswith(".venv/bin/python my_bot.py") and c.endswith("&") for c in commands)
    assert sum(1 for c in commands if " bot register " in c) == 3


def test_make_demo_then_the_readme_first_bot_section_twice(tmp_path: Path) -> None:
    (tmp_path / "my_bot.py").write_text(first_bot_source())
    referee_port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "DEMO_"))}
    env.update(DEMO_ROUNDS="1", DEMO_DATA_DIR=str(tmp_path / ".arena"), COLUMNS="160",
               ARENA_SERVE_LISTEN=f"127.0.0.1:{referee_port}", ARENA_SERVER=f"localhost:{referee_port}")
    demo = subprocess.run([sys.executable, str(ROOT / "tools" / "demo.py")], env=env, capture_output=True,
                          text=True, timeout=COMMAND_TIMEOUT_S)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "--json" not in demo.stdout  # the demo shows the commands it runs, with their own output
    tokens = json.loads((tmp_path / ".arena" / "tokens.json").read_text())
    assert any(key.startswith("arena:") for key in tokens["tokens"])  # filed by the arena's id, not the address

    ports = {str(p): str(_free_port()) for p in (50200, 50201, 50202)}
    shell = Shell(tmp_path, env, ports)
    try:
        for run in (1, 2):
            outputs = {command: shell.run(command) for command in first_bot_commands()}
            register_lowrisk = next(out for cmd, out in outputs.items() if " bot register lowrisk " in cmd)
            assert ("owner token of lowrisk:" in register_lowrisk) == (run == 1), register_lowrisk
            played = next(out for cmd, out in outputs.items() if " play take5 " in cmd)
            assert "Standings" in played and "record saved to game.json" in played
            shown = next(out for cmd, out in outputs.items() if " match show game.json" in cmd)
            assert "Hand 1" in shown and "Result" in shown
            listed = next(out for cmd, out in outputs.items() if cmd.endswith("bot list"))
            assert "lowrisk@1.0" in listed and "demo-" not in listed  # the demo left no bot behind
            ladder = next(out for cmd, out in outputs.items() if " ladder " in cmd)
            assert "lowrisk@1.0" in ladder and "demo-montecarlo@1.0" in ladder
    finally:
        shell.kill_jobs()


def test_a_bot_on_a_busy_port_prints_only_the_clean_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        env = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"}
        done = subprocess.run([sys.executable, "-m", "sample_bots.random_bot", "--port", port], env=env,
                              capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot listen on"), done.stderr
