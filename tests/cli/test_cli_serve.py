"""`arena serve` / `arena worker` as real processes, driven by the CLI commands a user types: bot lifecycle with
owner tokens, tournaments (dry run, create, list, status with standings, cancel), matches (list, show, replay of
the shown record), the ladder and its rebuild, the workers. Real redis-server, real bot processes, real gRPC.

The module's arena is ``arena serve --workers 0`` plus two ``arena worker`` processes that find the private
redis-server through the shared data dir, so every tournament here is shared by two workers in separate
processes. Tests use bot names of their own, so that they do not depend on one another.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import BOTS_DOWN_HINT, cli
from arena.core.folder_lock import folder_held
from arena.match.local_bots import BotProcess, started_bots
from arena.match.local_bots import start_bot as start_bot_process
from arena.store.redis_files import PASSWORD_FILE
from arena.store.redis_server import PrivateRedis
from arena.store.redis_urls import redact_url

ARENA = Path(sys.executable).parent / "arena"
START_TIMEOUT_S = 30
VERSION2_BOT = str(Path(__file__).resolve().parent / "bots" / "version2_bot.py")


class Proc:
    """An `arena` subprocess whose stdout lines are collected by a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen([str(ARENA), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env)
        self.lines: list[str] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.lines.append("<eof>")
            self.changed.notify_all()

    def wait_for(self, fragment: str) -> str:
        with self.changed:
            ok = self.changed.wait_for(lambda: any(fragment in line for line in self.lines) or "<eof>" in self.lines,
                                       timeout=START_TIMEOUT_S)
        found = [line for line in self.lines if fragment in line]
        assert ok and found, f"no {fragment!r} in {self.lines}; stderr: {self._stderr()}"
        return found[0]

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return "(running)"
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def terminate(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(extra)
    return env


@dataclass
class Arena:
    server: str
    data_dir: Path
    bots: dict[str, BotProcess]  # "random", "heuristic", "montecarlo"
    named: list[BotProcess] = field(default_factory=list)  # sample bots started under other names (--name)

    def run(self, *args: str, data_dir: Path | None = None, env: dict[str, Any] | None = None) -> Result:
        """``arena ARGS --server S --data-dir D`` in this process (CliRunner); ARENA_TOKEN unset unless given.
        ARENA_DATA_DIR is the server's data dir, where `arena serve` saved the admin token the CLI sends with
        organiser calls (ARENA_ADMIN_TOKEN unset unless given)."""
        extra = ["--server", self.server]
        if args[0] == "bot" and args[1] in ("register", "update", "remove"):
            extra += ["--data-dir", str(data_dir or self.data_dir)]
        env = {"ARENA_TOKEN": None, "ARENA_ADMIN_TOKEN": None, "ARENA_DATA_DIR": str(self.data_dir),
               "COLUMNS": "200", **(env or {})}
        return CliRunner(env=env).invoke(cli, [*args, *extra])

    def ok(self, *args: str, **kwargs: Any) -> str:
        result = self.run(*args, **kwargs)
        assert result.exit_code == 0, f"arena {' '.join(args)}: {result.output}"
        return result.stdout

    def json(self, *args: str, **kwargs: Any) -> Any:
        return json.loads(self.ok(*args, "--json", **kwargs))

    def fails(self, *args: str, **kwargs: Any) -> str:
        """The one error line of a command that must fail with exit code 1."""
        result = self.run(*args, **kwargs)
        assert result.exit_code == 1, f"arena {' '.join(args)} should fail: {result.output}"
        assert "Traceback" not in result.output
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
        return lines[0]

    def register(self, name: str, bot: str) -> str:
        """Start the sample ``bot`` as ``--name NAME`` (registration checks the name its GetInfo gives) and
        register it; returns its bot id."""
        process = start_bot_process(f"sample:{bot}", extra_args=["--name", name])
        self.named.append(process)
        return self.json("bot", "register", name, process.endpoint)["bot_id"]


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    data_dir = tmp_path_factory.mktemp("arena-data")
    serve = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "0"], _env())
    workers: list[Proc] = []
    try:
        server = serve.wait_for("listening on ").rsplit("listening on ", 1)[1].strip()
        assert "only separate `arena worker`s run matches" in serve.wait_for("workers: none embedded")
        for name in ("w1", "w2"):
            worker = Proc(["worker", "--data-dir", str(data_dir), "--name", name, "--concurrency", "2"], _env())
            workers.append(worker)
            worker.wait_for(f"arena worker {name} working for redis")
        with started_bots(["sample:random", "sample:heuristic", "sample:montecarlo"]) as bots:
            arena = Arena(server, data_dir, dict(zip(("random", "heuristic", "montecarlo"), bots)))
            try:
                yield arena
            finally:
                for bot in arena.named:
                    bot.stop()
    finally:
        for proc in workers:
            proc.terminate()
        serve.terminate()


def _wait_until_idle(arena: Arena, timeout: float = 60.0) -> None:
    """Until no worker runs a match (a cancelled tournament's running matches finish)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(w["running"] for w in arena.json("worker", "list")):
            return
        time.sleep(0.2)
    raise AssertionError("the workers are still running matches")


# --- bots -------------------------------------------------------------------------------------------------------


def test_registering_again_without_the_secret_says_the_kept_one_is_used(arena: Arena, start_bot) -> None:  # type: ignore[no-untyped-def]
    secret = "kept-secret-0123456789"
    endpoint = start_bot("sample:random", extra_args=["--name", "keeper", "--secret", secret]).endpoint
    first = arena.ok("bot", "register", "keeper", endpoint, "--bot-secret", secret).splitlines()[0]
    assert first == f"registered take5 bot keeper@1.0 at {endpoint}"
    again = arena.ok("bot", "register", "keeper", endpoint).splitlines()[0]
    assert again.startswith(f"registered take5 bot keeper@1.0 at {endpoint} (with the bot secret kept for it) "
                            f"(registered again: first on 20"), again  # a second registration said so not
    assert again.endswith("; its ladder history stays)") and secret not in again


def test_bot_lifecycle_with_owner_tokens(arena: Arena, tmp_path: Path, start_bot) -> None:  # type: ignore[no-untyped-def]
    endpoint = start_bot("sample:random", extra_args=["--name", "life"]).endpoint
    out = arena.ok("bot", "register", "life", endpoint)
    lines = out.strip().splitlines()
    assert lines[0] == f"registered take5 bot life@1.0 at {endpoint}"
    token = lines[1].removeprefix("owner token of life: ")
    assert lines[1].startswith("owner token of life: ") and len(token) >= 16
    token_file = arena.data_dir / "tokens.json"
    assert f"saved in {token_file}" in lines[2] and "`arena bot token life` prints it again" in lines[2]
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    arena_id = arena.json("bot", "token", "life", "--data-dir", str(arena.data_dir))["arena_id"]
    assert len(arena_id) == 32
    assert json.loads(token_file.read_text())["tokens"][f"arena:{arena_id}"]["take5"]["life"] == token
    assert arena.ok("bot", "token", "life", "--data-dir", str(arena.data_dir)).strip() == token

    # another machine (another data dir) without the token is refused; with a wrong token too
    elsewhere = tmp_path / "elsewhere"
    line = arena.fails("bot", "register", "life", endpoint, data_dir=elsewhere)
    assert "PERMISSION_DENIED" in line and f"{elsewhere / 'tokens.json'} has no token of life" in line
    line = arena.fails("bot", "register", "life", endpoint, "--token", "not-the-token", data_dir=elsewhere)
    assert "PERMISSION_DENIED" in line and "--token / ARENA_TOKEN" in line
    assert not (elsewhere / "tokens.json").exists()
    # ... but the token from ARENA_TOKEN works there, and no new token is issued
    again = arena.json("bot", "register", "life", endpoint, data_dir=elsewhere, env={"ARENA_TOKEN": token})
    assert again["bot_id"] == "life@1.0" and again["owner_token"] is None

    # a new version of the same NAME, with the saved token: the ladder keeps versions apart
    v2 = start_bot(VERSION2_BOT, extra_args=["--name", "life"])
    out = arena.ok("bot", "register", "life", v2.endpoint)
    assert out.strip() == f"registered take5 bot life@2.0 at {v2.endpoint}"  # no token printed again
    listed = {b["bot_id"]: b for b in arena.json("bot", "list") if b["name"] == "life"}
    assert set(listed) == {"life@1.0", "life@2.0"}
    assert (listed["life@2.0"]["version"], listed["life@2.0"]["endpoint"]) == ("2.0", v2.endpoint)

    # update: needs the token; the new endpoint is verified
    line = arena.fails("bot", "update", "life@1.0", "--endpoint", v2.endpoint, data_dir=elsewhere)
    assert line.startswith("Error: no owner token for take5 bot life on ")
    line = arena.fails("bot", "remove", "life", data_dir=elsewhere, env={"ARENA_TOKEN": None})
    assert line == (f"Error: no owner token for take5 bot life on {arena.server}: pass --token TOKEN or set "
                    f"ARENA_TOKEN; {elsewhere / 'tokens.json'} has no token of life (it was printed when life was "
                    "first registered); the organiser may remove it with --as-organiser")
    line = arena.fails("bot", "remove", "nobody", data_dir=elsewhere)
    assert "no bot named nobody" in line and "NOT_FOUND" in line and "owner token" not in line
    # a bot that says it is another is refused; one started with --name life is taken
    other = arena.bots["random"].endpoint
    line = arena.fails("bot", "update", "life@1.0", "--endpoint", other)
    assert "FAILED_PRECONDITION" in line and "'random'" not in line
    assert "reports another name than 'life' in GetInfo; make it report life (a Python SDK bot: start it with " \
        "--name=life)" in line
    moved = start_bot("sample:random", extra_args=["--name", "life"])
    assert arena.ok("bot", "update", "life@1.0", moved.endpoint).strip() == \
        f"updated take5 bot life@1.0: endpoint {moved.endpoint}"  # the endpoint after NAME, as for register
    assert {b["bot_id"]: b["endpoint"] for b in arena.json("bot", "list")}["life@1.0"] == moved.endpoint
    moved.stop()
    line = arena.fails("bot", "update", "life@1.0", "--endpoint", moved.endpoint)
    assert "FAILED_PRECONDITION" in line and moved.endpoint in line

    # remove one version, then the rest
    assert arena.ok("bot", "remove", "life@2.0").strip() == "removed take5 bot life@2.0; ladder history kept"
    assert [b["bot_id"] for b in arena.json("bot", "list") if b["name"] == "life"] == ["life@1.0"]
    line = arena.fails("bot", "remove", "life@2.0")
    assert "NOT_FOUND" in line
    arena.ok("bot", "remove", "life")
    assert not [b for b in arena.json("bot", "list") if b["name"] == "life"]
    # NAME stays its owner's
    line = arena.fails("bot", "register", "life", v2.endpoint, data_dir=elsewhere)
    assert "the name life is reserved by its owner (all its versions were removed); pass its owner token" in line
    assert "PERMISSION_DENIED" in line
    assert arena.ok("bot", "register", "life", v2.endpoint).strip() == f"registered take5 bot life@2.0 at {v2.endpoint}"


def test_tokens_are_found_whatever_address_names_the_arena(arena: Arena, tmp_path: Path) -> None:
    """Issue 6, the token trap: a token saved through 127.0.0.1:PORT is found through localhost:PORT (the same
    referee), and a file holding a token of NAME for another arena never says it has none."""
    process = start_bot_process("sample:random", extra_args=["--name", "trap"])
    arena.named.append(process)
    data = tmp_path / "data"
    arena.ok("bot", "register", "trap", process.endpoint, data_dir=data)  # through 127.0.0.1:PORT
    localhost = "localhost:" + arena.server.rpartition(":")[2]
    again = CliRunner(env={"ARENA_TOKEN": None}).invoke(cli, ["bot", "register", "trap", process.endpoint,
                                                               "--server", localhost, "--data-dir", str(data)])
    assert again.exit_code == 0, again.output
    assert again.stdout.strip().startswith(f"registered take5 bot trap@1.0 at {process.endpoint} (registered again")
    assert "owner token" not in again.stdout  # no new token
    token = json.loads((data / "tokens.json").read_text())["tokens"]
    (saved,) = [games["take5"]["trap"] for key, games in token.items() if key.startswith("arena:")]
    printed = CliRunner().invoke(cli, ["bot", "token", "trap", "--server", localhost, "--data-dir", str(data)])
    assert printed.exit_code == 0 and printed.stdout.strip() == saved
    # the same file, moved under another arena's id: the error names it and says how to print it
    other = {"version": 1, "tokens": {"arena:" + "f" * 32: {"take5": {"trap": saved}}}}
    (data / "tokens.json").write_text(json.dumps(other))
    line = arena.fails("bot", "register", "trap", process.endpoint, data_dir=data)
    assert "has no token" not in line and "holds a token of trap only for another arena (arena ffffffff)" in line
    assert "`arena bot token trap --all` prints what is saved" in line
    listed = CliRunner().invoke(cli, ["bot", "token", "trap", "--all", "--data-dir", str(data)])
    assert listed.exit_code == 0 and listed.stdout.strip() == f"{saved}  arena ffffffff"


def test_a_name_is_one_owners_in_every_game(arena: Arena, tmp_path: Path) -> None:
    """The security review's case: owner A registered dual for take5; a stranger (another data dir) registering
    dual for taki is refused with a clear message and gets no token; A registers dual for taki with the token saved
    for take5 (found for any game), no new token."""
    take5 = start_bot_process("sample:random", extra_args=["--name", "dual"])
    taki = start_bot_process("sample:taki-random", extra_args=["--name", "dual"])
    arena.named += [take5, taki]
    owner, stranger = tmp_path / "owner", tmp_path / "stranger"
    first = arena.json("bot", "register", "dual", take5.endpoint, data_dir=owner)
    assert first["owner_token"]
    line = arena.fails("bot", "register", "dual", taki.endpoint, "--game", "taki", data_dir=stranger)
    assert "PERMISSION_DENIED" in line and "bot name 'dual' is taken by another owner (registered for take5)" in line
    assert "choose another name" in line
    assert not (stranger / "tokens.json").exists()
    out = arena.ok("bot", "register", "dual", taki.endpoint, "--game", "taki", data_dir=owner)
    assert out.strip() == f"registered taki bot dual@1.0 at {taki.endpoint}"  # no new token printed
    listed = {(b["game"], b["bot_id"]): b["owner"] for b in arena.json("bot", "list", "--no-check")
              if b["name"] == "dual"}
    assert set(listed) == {("take5", "dual@1.0"), ("taki", "dual@1.0")} and len(set(listed.values())) == 1
    printed = arena.run("bot", "token", "dual", "--game", "taki", "--data-dir", str(owner))
    assert printed.exit_code == 0 and printed.stdout.strip() == first["owner_token"]


def test_registering_an_endpoint_that_does_not_answer_is_refused(arena: Arena) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        nobody = f"127.0.0.1:{s.getsockname()[1]}"
    line = arena.fails("bot", "register", "ghost", nobody)
    assert "FAILED_PRECONDITION" in line and nobody in line
    tokens = arena.data_dir / "tokens.json"
    assert not tokens.exists() or '"ghost"' not in tokens.read_text()  # no token was issued, none saved
    assert "ghost" not in {b["name"] for b in arena.json("bot", "list")}


# --- tournaments, matches, ladder -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(arena: Arena) -> dict[str, Any]:
    """Three bots registered as p-rnd, p-heur, p-mc and one finished round robin between them (3 rounds of one
    match, each on a deal of its own)."""
    ids = [arena.register("p-rnd", "random"), arena.register("p-heur", "heuristic"),
           arena.register("p-mc", "montecarlo")]
    assert ids == ["p-rnd@1.0", "p-heur@1.0", "p-mc@1.0"]
    t = arena.json("tournament", "create", "--bots", "p-rnd,p-heur", "--bots", "p-mc", "--seats", "3",
                   "--rounds", "3", "--limit", "10", "--wait")
    return t


def test_dry_run_counts_without_queuing(arena: Arena, played: dict[str, Any]) -> None:
    before = arena.json("tournament", "list")
    out = arena.ok("tournament", "create", "--bots", "p-rnd,p-heur,p-mc", "--seats", "2", "--rounds", "4",
                   "--dry-run")
    lines = out.strip().splitlines()
    assert lines[0].startswith("dry run: 12 matches on 12 deals (3 bots, 2 seats, 4 rounds, unique deals)")
    assert lines[1] == "formula: C(3,2) subsets x 4 rounds = 12, on 12 unique deals (every table its own deal)"
    assert lines[2] == "bots: p-rnd@1.0, p-heur@1.0, p-mc@1.0"  # as resolved: NAME@VERSION
    assert "nothing was queued" in lines[3]
    data = arena.json("tournament", "create", "--bots", "p-rnd,p-heur,p-mc", "--rounds", "2", "--dry-run")
    assert (data["id"], data["state"], data["matches_total"], data["seats_per_match"]) == ("", "planned", 2, 3)
    assert data["formula"].startswith("C(3,3) subset x 2 rounds = 2, on 2 unique deals")
    rotate = arena.run("tournament", "create", "--bots", "p-rnd,p-heur,p-mc", "--deals", "rotate", "--dry-run")
    assert rotate.exit_code == 0 and "dry run: 3 matches on 1 deal (3 bots, 3 seats, 1 round, rotate deals)" in rotate.stdout, rotate.output
    assert "warning: --deals rotate: every bot plays every seat of each of its deals" in rotate.stderr
    seeded = arena.run("tournament", "create", "--bots", "p-rnd,p-heur", "--seed", "5", "--dry-run")
    assert seeded.exit_code == 2 and "a tournament takes no --seed" in seeded.stderr, seeded.output
    assert "arena play --seed" in " ".join(seeded.stderr.split())
    assert arena.json("tournament", "list") == before  # nothing stored


def test_tournament_create_list_status_and_standings(arena: Arena, played: dict[str, Any]) -> None:
    t = played
    assert (t["state"], t["matches_total"], t["matches_done"], t["deals"]) == ("finished", 3, 3, "unique")
    assert hashlib.sha256(bytes.fromhex(t["seed_hex"])).hexdigest() == t["seed_commitment"]  # ended: revealed
    assert t["bots"] == ["p-rnd@1.0", "p-heur@1.0", "p-mc@1.0"]  # NAME resolved to its latest version
    assert t["formula"].startswith("C(3,3) subset x 3 rounds = 3,") and t["config"]["limit"] == 10
    listed = {x["id"]: x for x in arena.json("tournament", "list")}
    assert listed[t["id"]]["state"] == "finished" and listed[t["id"]]["matches_done"] == 3

    status = arena.json("tournament", "status", t["id"])
    standings = status["standings"]
    assert sorted(e["bot"] for e in standings) == ["p-heur@1.0", "p-mc@1.0", "p-rnd@1.0"]
    assert all(e["matches"] == 3 for e in standings)
    assert sum(e["points"] for e in standings) == pytest.approx(3 * 3)  # 3 matches x 3 pairs, 1 point a pair
    assert [e["rank"] for e in standings] == sorted(e["rank"] for e in standings)
    assert all(0 <= e["score_rate"] <= 1 for e in standings)
    shown = arena.json("tournament", "standings", t["id"])
    assert (shown["tournament_id"], shown["entries"]) == (t["id"], standings)
    assert shown["fit_matches"] == 3  # the tournament's own fit counts its 3 matches

    text = arena.ok("tournament", "status", t["id"])
    assert "3/3 matches" in text and "finished" in text and f"Standings of {t['id']}" in text
    assert t["seed_commitment"] in text and t["seed_hex"] in text
    for header in ("rank", "bot", "points", "matches", "mean bullheads", "performance"):
        assert header in text
    best = standings[0]
    assert any(best["bot"] in line and f"{best['points']:g}" in line for line in text.splitlines())


def test_match_list_show_and_replay_of_the_shown_record(arena: Arena, played: dict[str, Any],
                                                        tmp_path: Path) -> None:
    matches = arena.json("match", "list", "--tournament", played["id"])
    assert len(matches) == 3
    for m in matches:
        assert sorted(m["seats"]) == ["p-heur@1.0", "p-mc@1.0", "p-rnd@1.0"]
        assert sum(m["rating_deltas"]) == pytest.approx(0.0, abs=1e-9)  # Elo deltas sum to zero
        assert max(m["scores"]) >= 10  # the game ran to the limit of 10
    assert len(arena.json("match", "list", "--tournament", played["id"], "--limit", "2")) == 2
    assert {m["match_id"] for m in arena.json("match", "list", "--bot", "p-heur")} >= {m["match_id"] for m in matches}
    for width in ("200", "60"):  # every seat's bot, score and rank whole, at any width (no "…" cut)
        listed = arena.ok("match", "list", "--tournament", played["id"], env={"COLUMNS": width})
        assert "…" not in listed and all(m["match_id"] in listed for m in matches), listed
        assert all(f"{bot}," in listed for bot in matches[0]["seats"]), listed
    assert "not shown at 60 columns: tournament" in " ".join(listed.split()), listed

    chosen = matches[0]
    record = arena.json("match", "show", chosen["match_id"])
    assert record["match_id"] == chosen["match_id"]
    assert [s["name"] for s in record["seats"]] == chosen["seats"]
    assert record["result"]["scores"] == chosen["scores"]
    path = tmp_path / "shown.json"
    path.write_text(json.dumps(record))
    replayed = CliRunner().invoke(cli, ["replay", str(path)])
    assert replayed.exit_code == 0 and replayed.stdout.startswith("identical"), replayed.output

    text = arena.ok("match", "show", chosen["match_id"])
    assert f"Match {chosen['match_id']}" in text and "Hand 1 · turn 1" in text and "Rows at the start" in text
    assert "Elo changes: " in text and f"of tournament {played['id']}" in text
    first_card = record["decisions"][0]["action"]["card"]
    assert any(line.lstrip("│ ").startswith(f"{first_card} ") for line in text.splitlines())

    line = arena.fails("match", "show", "no-such-match")
    assert "NOT_FOUND" in line


def test_match_list_says_on_stderr_when_more_matches_are_stored_than_shown(arena: Arena,
                                                                         played: dict[str, Any]) -> None:
    """--limit (default 50) cut the list without a word: a line on stderr now says how many were shown, how many the
    tournament has, and how to see more; stdout (the table, or --json) is unchanged."""
    tid = played["id"]
    cut = arena.run("match", "list", "--tournament", tid, "--limit", "2", "--json")
    assert cut.exit_code == 0 and len(json.loads(cut.stdout)) == 2, cut.output
    assert cut.stderr.strip() == (f"showed the newest 2 matches of the 3 finished in tournament {tid}; more are "
                                  f"stored: `--limit N` shows up to N (at most 10000); `--bot NAME` narrows the "
                                  f"list"), cut.stderr
    table = arena.run("match", "list", "--tournament", tid, "--limit", "2")
    assert table.exit_code == 0 and "Finished matches" in table.stdout and "showed" not in table.stdout
    assert table.stderr.startswith("showed the newest 2 matches of the 3 finished"), table.stderr
    whole = arena.run("match", "list", "--tournament", tid, "--limit", "3", "--json")
    assert whole.exit_code == 0 and len(json.loads(whole.stdout)) == 3 and whole.stderr == "", whole.stderr
    clean = arena.run("match", "list", "--tournament", tid, "--bot", "p-mc", "--faults")  # none of them faulted
    assert clean.exit_code == 0 and clean.stdout.strip() == f"no finished match of {tid} with a fault of p-mc", \
        clean.output
    assert json.loads(arena.run("match", "list", "--tournament", tid, "--faults", "--json").stdout) == []
    everywhere = arena.run("match", "list", "--limit", "1")  # every tournament's: no count is read
    assert everywhere.stderr.startswith("showed the newest 1 match; more are stored: `--limit N`"), \
        everywhere.stderr
    from arena.cli.match import more_note

    assert "past what --limit reaches (10000): narrow the list" in more_note(10000, 10000)
    assert more_note(5, 5, filters=("tournament", "bot")).endswith("shows up to N (at most 10000)")
    assert "`--tournament ID` and `--bot NAME` narrow the list" in more_note(5, 5)
    assert "[default: 50; 1<=x<=10000]" in " ".join(arena.ok("match", "list", "--help").split())


def test_verify_recomputes_the_commitment_and_every_deal(arena: Arena, played: dict[str, Any]) -> None:
    out = arena.ok("tournament", "verify", played["id"], "--records")
    assert out.startswith(f"tournament {played['id']}: the seed {played['seed_hex']} matches the commitment "
                          f"{played['seed_commitment']}; 3 matches, each dealt from HMAC-SHA256(seed, ")
    assert "(records checked too); no bot received a deal twice" in out
    report = arena.json("tournament", "verify", played["id"])
    assert (report["ok"], report["matches"], report["problems"]) == (True, 3, [])
    matches = arena.json("match", "list", "--tournament", played["id"])
    assert sorted((m["round"], m["deal"], m["table"], m["attempt"]) for m in matches) == [
        (0, 0, 0, 0), (1, 0, 0, 0), (2, 0, 0, 0)]
    assert all(m["revealed"] and m["seed"] for m in matches)


def test_ladder_and_its_rebuild_agree(arena: Arena, played: dict[str, Any]) -> None:
    ladder = arena.json("ladder")
    bots = {e["bot"] for e in ladder["entries"]}
    assert {"p-rnd@1.0", "p-heur@1.0", "p-mc@1.0"} <= bots
    rebuilt = arena.json("ladder", "--rebuild")
    assert rebuilt["equal"] is True and rebuilt["differences"] == []
    assert rebuilt["results"] >= 3
    assert [e["bot"] for e in rebuilt["rebuilt"]["entries"]] == [e["bot"] for e in rebuilt["live"]["entries"]]
    base = ("rank", "bot", "rating", "matches", "wins", "mean_score")  # the rebuild compares the live Elo itself
    assert [{k: e[k] for k in base} for e in rebuilt["live"]["entries"]] == [{k: e[k] for k in base}
                                                                          for e in ladder["entries"]]  # nothing ran
    text = arena.ok("ladder", "--rebuild")
    assert "the rebuilt ladder equals the live ladder" in text


def test_worker_list_shows_both_worker_processes(arena: Arena, played: dict[str, Any]) -> None:
    workers = {w["name"]: w for w in arena.json("worker", "list")}
    assert {"w1", "w2"} <= set(workers)
    assert all(workers[n]["alive"] and workers[n]["concurrency"] == 2 for n in ("w1", "w2"))
    assert workers["w1"]["pid"] != workers["w2"]["pid"]  # separate processes
    assert workers["w1"]["matches_done"] + workers["w2"]["matches_done"] >= played["matches_total"]
    text = arena.ok("worker", "list")
    assert any(line.startswith("│ w1 ") for line in text.splitlines()), text
    assert "not shown" not in text and str(workers["w1"]["pid"]) in text
    narrow = arena.ok("worker", "list", env={"COLUMNS": "50"})
    assert "…" not in narrow and "not shown at 50 columns:" in " ".join(narrow.split()), narrow
    assert any(line.startswith("│ w1 ") for line in narrow.splitlines()), narrow


def test_create_with_a_bot_that_stopped_is_refused_with_a_hint(  # type: ignore[no-untyped-def]
        arena: Arena, start_bot) -> None:
    gone = start_bot("sample:random", extra_args=["--name", "down-rnd"])
    up = arena.register("up-rnd", "random")
    down = arena.json("bot", "register", "down-rnd", gone.endpoint)["bot_id"]
    gone.stop()
    before = arena.json("tournament", "list")
    line = arena.fails("tournament", "create", "--bots", f"{up},{down}", "--no-wait")
    assert "bots not answering: " in line and down in line and up not in line.split("not answering: ")[1]
    assert line.endswith("start the bots (or move them with arena bot update, or leave them out: arena bot "
                         "remove) and create the tournament again "
                         "(FAILED_PRECONDITION)") and BOTS_DOWN_HINT not in line  # the advice once
    assert arena.json("tournament", "list") == before  # nothing was created


def test_cancel_drops_queued_matches(arena: Arena, played: dict[str, Any]) -> None:
    t = arena.json("tournament", "create", "--bots", "p-rnd,p-heur,p-mc", "--seats", "3", "--rounds", "120",
                   "--no-wait")
    assert t["state"] == "running" and t["matches_total"] == 120
    line = arena.fails("sprt", "cancel", t["id"])  # a round robin is no SPRT: `sprt cancel` leaves it alone
    assert f"tournament {t['id']} is not an SPRT" in line, line
    out = arena.ok("tournament", "cancel", t["id"])
    dropped = int(re.match(rf"tournament {t['id']} cancelled: (\d+) queued matches dropped; ", out).group(1))
    _wait_until_idle(arena)
    end = time.monotonic() + 60  # a match a worker had claimed (not yet shown as running) still finishes and counts
    while time.monotonic() < end:
        after = arena.json("tournament", "status", t["id"], "--watch")  # returns at once: not running
        if after["matches_done"] + after["matches_cancelled"] == after["matches_total"]:
            break
        time.sleep(0.5)
    assert after["state"] == "cancelled"
    assert after["matches_cancelled"] > 0
    assert after["matches_done"] + after["matches_cancelled"] == after["matches_total"]
    assert 0 < dropped <= after["matches_cancelled"]  # what this call dropped; a worker may drop a few more
    again = arena.json("tournament", "cancel", t["id"])  # cancelling twice changes nothing
    assert (again["state"], again["matches_done"], again["matches_cancelled"], again["matches_dropped_now"]) == \
        ("cancelled", after["matches_done"], after["matches_cancelled"], 0)
    assert arena.ok("tournament", "cancel", t["id"]).startswith(
        f"tournament {t['id']} was already cancelled; nothing changed: ")
    line = arena.fails("tournament", "cancel", played["id"])  # a finished tournament cannot be cancelled
    assert "FAILED_PRECONDITION" in line
    assert arena.json("ladder", "--rebuild")["equal"] is True


# --- messages that say what is wrong (issue 6) -------------------------------------------------------------------


def test_server_options_that_point_at_no_referee_say_what_is_there(arena: Arena) -> None:
    from arena.store.redis_server import resolve_redis_url

    bot = arena.bots["random"].endpoint
    line = _fails_with_server("ladder", bot)
    assert line == (f"Error: {bot} is a bot (random 1.0), not an arena referee: --server takes the address of "
                    "`arena serve` (it prints \"arena serve listening on HOST:PORT\"; default localhost:50051)")
    redis_url = resolve_redis_url(arena.data_dir)
    assert redis_url is not None
    redis_at = redis_url.split("@", 1)[-1].split("//", 1)[-1].split("/", 1)[0]  # HOST:PORT, without the password
    line = _fails_with_server("bot", "list", redis_at)
    assert line.startswith(f"Error: {redis_at} is a Redis server, not an arena referee: ")
    assert "a Redis URL goes to --redis-url or ARENA_REDIS_URL" in line
    result = CliRunner().invoke(cli, ["ladder", "--server", "localhost"])
    assert result.exit_code == 2
    assert "'localhost' is not HOST:PORT: give the referee's port too, e.g. localhost:50051" in result.stderr


def _fails_with_server(*args: str) -> str:
    *command, server = args
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, [*command, "--server", server])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_match_list_of_an_unknown_bot_is_an_error(arena: Arena, played: dict[str, Any]) -> None:
    line = arena.fails("match", "list", "--bot", "nosuch")
    assert line == ("Error: unknown bot nosuch: no bot of that name is registered and no stored match has it; "
                    "`arena bot list` shows the registered bots")
    assert arena.json("match", "list", "--bot", "p-mc")  # a known bot still lists its matches


def test_bot_list_shows_whether_each_endpoint_answers(arena: Arena) -> None:
    process = start_bot_process("sample:random", extra_args=["--name", "gone"])
    arena.named.append(process)
    arena.ok("bot", "register", "gone", process.endpoint)
    answers = {b["bot_id"]: b["answers"] for b in arena.json("bot", "list")}
    assert answers["gone@1.0"] is True
    process.stop()
    listed = {b["bot_id"]: b for b in arena.json("bot", "list")}
    assert listed["gone@1.0"]["answers"] is False and "refused" in listed["gone@1.0"]["endpoint_problem"]
    row = next(line for line in arena.ok("bot", "list").splitlines() if "gone@1.0" in line)
    assert "no: connection refused" in row
    assert "answers" not in arena.json("bot", "list", "--no-check")[0]


def test_worker_says_it_is_stopping_on_ctrl_c(arena: Arena) -> None:
    worker = Proc(["worker", "--data-dir", str(arena.data_dir), "--name", "w-int"], _env())
    worker.wait_for("arena worker w-int working for redis")
    worker.process.send_signal(signal.SIGINT)
    assert worker.process.wait(timeout=60) == 0
    worker.wait_for("arena worker w-int stopping: the matches it runs finish first")
    worker.wait_for("arena worker w-int stopped")


def test_create_says_which_version_each_name_stands_for(arena: Arena, played: dict[str, Any]) -> None:
    """Last of the module's arena tests: its tournament, played to its end, changes no other test's standings."""
    out = arena.ok("tournament", "create", "--bots", "p-rnd,p-heur", "--seats", "2", "--rounds", "1", "--wait")
    assert "bots: p-heur@1.0, p-rnd@1.0" in out.splitlines() or "bots: p-rnd@1.0, p-heur@1.0" in out.splitlines()


# --- serve on its own ---------------------------------------------------------------------------------------------


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[Proc, str, Path]]:
    """`arena serve` on a free port with a private redis-server in a temporary data dir."""
    data_dir = tmp_path / "arena-data"
    proc = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "1",
                 "--visibility-timeout", "12"], _env())
    try:
        line = proc.wait_for("listening on ")
        yield proc, line.rsplit("listening on ", 1)[1].strip(), data_dir
    finally:
        proc.terminate()


def test_serve_runs_and_stops_its_private_redis(serve: tuple[Proc, str, Path]) -> None:
    proc, server, data_dir = serve
    assert "private redis-server" in proc.wait_for("redis: ")
    assert "reclaimed after 12 s" in proc.wait_for("workers: 1 embedded")
    assert (data_dir / "redis.url").exists()  # so that `arena worker` on this machine finds it
    end = time.monotonic() + START_TIMEOUT_S
    workers: list[dict[str, Any]] = []
    while not workers and time.monotonic() < end:  # the embedded worker's first heartbeat
        workers = json.loads(CliRunner().invoke(cli, ["worker", "list", "--json", "--server", server]).stdout)
        time.sleep(0.1)
    assert len(workers) == 1 and workers[0]["alive"]
    empty = CliRunner().invoke(cli, ["ladder", "--game", "taki", "--server", server]).stdout
    assert "the taki ladder is empty" in empty and "`arena tournament create --all --game taki`" in empty
    assert proc.terminate() == 0
    assert any(line.startswith("arena serve stopping: the matches its workers play finish first (at most ")
               for line in proc.lines), proc.lines
    assert not (data_dir / "redis.url").exists()  # the private redis-server was stopped with the server


def test_serve_puts_its_private_redis_on_the_port_given(tmp_path: Path) -> None:
    """--redis-port pins the private Redis (an operator's firewall or monitoring expects it); with --redis-url it is
    refused: that Redis is the operator's own."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"), "--workers", "0",
                 "--redis-port", str(port)], _env())
    try:
        proc.wait_for("listening on ")
        assert f"127.0.0.1:{port}" in proc.wait_for("redis: ")
    finally:
        proc.terminate()
    refused = CliRunner().invoke(cli, ["serve", "--redis-port", str(port), "--redis-url", "redis://127.0.0.1:1/0",
                                       "--data-dir", str(tmp_path / "e")])
    assert refused.exit_code == 1 and "--redis-port sets the port of the private redis-server" in refused.output
    with socket.socket() as taken:  # another program listens on the port given
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        held = taken.getsockname()[1]
        busy = CliRunner().invoke(cli, ["serve", "--listen", "127.0.0.1:0", "--redis-port", str(held),
                                        "--data-dir", str(tmp_path / "f")])
    assert busy.exit_code == 1 and f"port {held} is taken: give another --redis-port" in busy.output, busy.output


def _output_until(path: Path, fragment: str, process: subprocess.Popen[bytes]) -> str:
    end = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < end:
        text = path.read_text()
        if fragment in text:
            return text
        assert process.poll() is None, f"exited with {process.returncode} before {fragment!r}: {text}"
        time.sleep(0.1)
    raise AssertionError(f"no {fragment!r} in {path}: {path.read_text()}")


def test_serve_keeps_its_private_redis_password_to_itself(tmp_path: Path) -> None:
    """The private Redis asks for a password that `arena serve` and `arena worker` (which finds it through the data
    dir) use but never show: not in their output or logs (-v), not on a command line; its files are private."""
    import redis

    data_dir = tmp_path / "arena-data"
    logs = {name: (tmp_path / f"{name}.out", tmp_path / f"{name}.err") for name in ("serve", "worker")}
    commands = {"serve": ["-v", "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "1"],
                "worker": ["-v", "worker", "--data-dir", str(data_dir), "--name", "w-pw"]}
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for name in ("serve", "worker"):
            out, err = logs[name]
            with open(out, "wb") as out_f, open(err, "wb") as err_f:
                processes.append(subprocess.Popen([str(ARENA), *commands[name]], stdout=out_f, stderr=err_f,
                                                  env=_env(PYTHONUNBUFFERED="1")))
            _output_until(out, "workers: 1 embedded" if name == "serve" else "working for redis", processes[-1])
        password = (data_dir / PASSWORD_FILE).read_text().strip()
        assert len(password) >= 43
        port = int((data_dir / "redis.port").read_text())
        assert f"redis: redis://:***@127.0.0.1:{port}/0 (private redis-server" in logs["serve"][0].read_text()
        anonymous = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
        with pytest.raises(redis.AuthenticationError):
            anonymous.keys("arena:*")
        anonymous.close()
        for path in [data_dir, *data_dir.rglob("*")]:
            assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, f"{path} is {oct(path.stat().st_mode)}"
        redis_pid = int((data_dir / "redis.pid").read_text())
        for pid in [redis_pid, *(p.pid for p in processes)]:
            assert password.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    assert [p.returncode for p in processes] == [0, 0]
    for out, err in logs.values():
        for path in (out, err):
            assert password not in path.read_text(), path
    assert "arena serve stopping" in logs["serve"][0].read_text()


def test_serve_uses_ARENA_REDIS_URL(redis_url: str, tmp_path: Path) -> None:
    data_dir = tmp_path / "unused"
    proc = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "0"],
                _env(ARENA_REDIS_URL=redis_url))
    try:
        assert proc.wait_for("redis: ") == f"redis: {redact_url(redis_url)} (external)"
        assert not (data_dir / "redis.url").exists()  # no private server was started
    finally:
        assert proc.terminate() == 0


def test_serve_on_a_taken_port_is_one_line(serve: tuple[Proc, str, Path], redis_url: str) -> None:
    _, server, _ = serve
    done = subprocess.run([str(ARENA), "serve", "--listen", server, "--workers", "0"], capture_output=True,
                          text=True, env=_env(ARENA_REDIS_URL=redis_url), timeout=60)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot listen on {server}"), done.stderr


def test_a_second_serve_on_a_data_folder_in_use_is_refused(serve: tuple[Proc, str, Path]) -> None:
    proc, server, data_dir = serve
    done = subprocess.run([str(ARENA), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir),
                           "--workers", "0"], capture_output=True, text=True, env=_env(), timeout=60)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"Error: data folder {data_dir} is in use by arena serve listening on {server} "
                               f"(pid {proc.process.pid}, since "), lines[0]
    workers = json.loads(CliRunner().invoke(cli, ["worker", "list", "--json", "--server", server]).stdout)
    assert isinstance(workers, list)  # the first server still answers, its Redis untouched
    assert (data_dir / "redis.url").exists()


def test_the_folder_of_a_killed_serve_can_be_served_again(tmp_path: Path) -> None:
    data_dir = tmp_path / "arena-data"
    first = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "0"], _env())
    first.wait_for("listening on ")
    first.process.kill()  # SIGKILL: no clean-up runs, the kernel drops the lock
    first.process.wait(timeout=30)
    orphan = int((data_dir / "redis.pid").read_text())  # the private redis-server the killed serve left running
    second = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "0"], _env())
    try:
        assert "taken over" in second.wait_for("redis: ")  # it took over the killed one's private Redis
    finally:
        assert second.terminate() == 0
    # ... and stopped it as it stopped, as one it had started itself
    assert not (data_dir / "redis.pid").exists() and not (data_dir / "redis.url").exists()
    assert not Path(f"/proc/{orphan}").exists() or "zombie" in _proc_state(orphan)


def test_a_private_redis_another_live_process_started_is_left_running(tmp_path: Path) -> None:
    data_dir = tmp_path / "arena-data"
    with PrivateRedis(data_dir) as owned:  # started by this process, which outlives the serve
        serve = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "0"], _env())
        try:
            line = serve.wait_for("redis: ")
            assert "already running" in line and "taken over" not in line
        finally:
            assert serve.terminate() == 0
        assert owned.running and (data_dir / "redis.url").exists()


def _redis_pid(data_dir: Path, other_than: int = 0) -> int:
    """The pid in ``redis.pid`` once it is not ``other_than`` (the restarted server wrote its own)."""
    end = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < end:
        try:
            pid = int((data_dir / "redis.pid").read_text())
        except (OSError, ValueError):
            pid = 0
        if pid and pid != other_than:
            return pid
        time.sleep(0.05)
    raise AssertionError(f"no redis.pid other than {other_than} in {data_dir}")


def test_serve_restarts_its_private_redis_killed_with_sigkill(tmp_path: Path, start_bot) -> None:  # type: ignore[no-untyped-def]
    """kill -9 of the private redis-server of a running serve: serve starts it again on the same port with the same
    folder and password (one warning line), the referee answers again within seconds with the data written before
    (its appendonly file), and a normal stop afterwards leaves no redis-server behind."""
    data_dir = tmp_path / "arena-data"
    serve = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "1"], _env())
    try:
        server = serve.wait_for("listening on ").rsplit("listening on ", 1)[1].strip()
        assert "restarted should it die" in serve.wait_for("redis: ")
        arena = Arena(server, data_dir, {})
        endpoint = start_bot("sample:random", extra_args=["--name", "kept"]).endpoint
        arena.ok("bot", "register", "kept", endpoint)
        url = (data_dir / "redis.url").read_text()
        first = _redis_pid(data_dir)
        os.kill(first, signal.SIGKILL)
        killed = time.monotonic()
        listed: list[dict[str, Any]] = []
        while time.monotonic() - killed < START_TIMEOUT_S:  # UNAVAILABLE until the restarted Redis has loaded
            result = arena.run("bot", "list", "--no-check", "--json")
            if result.exit_code == 0:
                listed = json.loads(result.stdout)
                break
            assert "UNAVAILABLE" in result.stderr, result.output
            time.sleep(0.05)
        back_after = time.monotonic() - killed
        assert [b["bot_id"] for b in listed] == ["kept@1.0"], f"not back after {back_after:.1f} s: {listed}"
        second = _redis_pid(data_dir, other_than=first)
        assert (data_dir / "redis.url").read_text() == url  # the same port and password: clients reconnect
        assert serve.process.poll() is None
        print(f"the referee answered again {back_after:.2f} s after the SIGKILL")  # shown with pytest -s
    finally:
        assert serve.terminate() == 0
    assert serve.lines[-1] == "<eof>" and serve.lines[-2].startswith("arena serve stopping"), serve.lines
    assert not (data_dir / "redis.url").exists() and not (data_dir / "redis.pid").exists()
    assert not Path(f"/proc/{second}").exists() or "zombie" in _proc_state(second)  # stopped, not restarted
    assert serve.process.stderr is not None
    stderr = serve.process.stderr.read()
    restarted = [line for line in stderr.splitlines() if "redis_watch" in line]
    assert len(restarted) == 1, stderr
    assert (f"the private redis-server (pid {first}) exited unexpectedly (killed by SIGKILL); restarted it on port "
            f"{url.rsplit(':', 1)[1].split('/')[0]} with the same data folder and password (pid {second}, ") \
        in restarted[0]
    assert "Traceback" not in stderr, stderr


def test_serve_stops_when_its_private_redis_keeps_dying(tmp_path: Path) -> None:
    """A private redis-server that cannot be started again (here: another program took its port while serve was
    paused) is tried 5 times, backing off (0 + 1 + 2 + 4 + 8 s); then serve stops with one error line that says
    what to do, exit code 1, and nothing left running."""
    data_dir = tmp_path / "arena-data"
    serve = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "0"], _env())
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        serve.wait_for("listening on ")
        port = int((data_dir / "redis.port").read_text())
        serve.process.send_signal(signal.SIGSTOP)  # so that the port is taken before serve can restart its Redis
        try:
            os.kill(_redis_pid(data_dir), signal.SIGKILL)
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            end = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    squatter.bind(("127.0.0.1", port))
                    break
                except OSError:  # the killed server's socket is closed a moment after the signal
                    assert time.monotonic() < end, f"port {port} stays taken"
                    time.sleep(0.01)
            squatter.listen()
        finally:
            serve.process.send_signal(signal.SIGCONT)
        assert serve.process.wait(timeout=60) == 1
    finally:
        squatter.close()
        serve.terminate()
    assert serve.process.stderr is not None
    lines = serve.process.stderr.read().strip().splitlines()
    attempts = [line for line in lines if "redis_watch" in line]
    assert len(attempts) == 5 and all(f"restarting it on port {port} failed (attempt {n} of 5 within 60 s" in line
                                      for n, line in enumerate(attempts, 1)), attempts
    assert lines[-1].startswith(f"Error: the private redis-server of {data_dir} (port {port}) could not be kept "
                                f"running: 5 restart attempts within 60 s, the last: redis-server exited with code 1 "
                                f"on port {port} "), lines
    assert f"not restarting it again. See {data_dir / 'redis.log'} for why" in lines[-1]
    assert "start arena serve again" in lines[-1] and "Traceback" not in "\n".join(lines)
    assert "arena serve stopping: its private redis-server cannot be kept running" in serve.lines
    assert not (data_dir / "redis.url").exists() and not (data_dir / "redis.pid").exists()


def _proc_state(pid: int) -> str:
    """The state line of /proc/<pid>/status ("" when the process is gone)."""
    try:
        return next((line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                     if line.startswith("State:")), "").lower()
    except OSError:
        return ""


@pytest.mark.parametrize("web", [False, True])
def test_a_second_ctrl_c_stops_serve_at_once(tmp_path: Path, start_bot, web: bool) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C lets the embedded workers' matches finish (up to their drain time); a second Ctrl-C stops now: the
    matches under way are left pending for the next worker, and the serve still stops its private Redis and frees
    its data folder, also when the second comes at once (with --web, while the pages stop) and a third follows."""
    data_dir = tmp_path / "arena-data"
    serve = Proc(["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--workers", "1",
                  *(["--web", "127.0.0.1:0"] if web else [])], _env())
    try:
        server = serve.wait_for("listening on ").rsplit("listening on ", 1)[1].strip()
        runner = CliRunner(env={"ARENA_DATA_DIR": str(data_dir)})
        slow = start_bot(str(Path(__file__).resolve().parents[1] / "bots" / "slow_bot.py"),
                         extra_args=["--sleep", "0.6"])
        fast = start_bot("sample:random")
        for name, bot in (("slow", slow), ("random", fast)):
            done = runner.invoke(cli, ["bot", "register", name, bot.endpoint, "--server", server])
            assert done.exit_code == 0, done.output
        created = runner.invoke(cli, ["tournament", "create", "--bots", "slow,random", "--rounds", "4", "--no-wait",
                                      "--server", server])
        assert created.exit_code == 0, created.output
        end = time.monotonic() + START_TIMEOUT_S
        while not any(w["running"] for w in json.loads(runner.invoke(
                cli, ["worker", "list", "--json", "--server", server]).stdout)):
            assert time.monotonic() < end, "no match started"
            time.sleep(0.2)
        t0 = time.monotonic()
        serve.process.send_signal(signal.SIGINT)
        if web:  # told again at once, and once more
            for _ in range(2):
                time.sleep(0.05)
                serve.process.send_signal(signal.SIGINT)
        else:
            assert "(Ctrl-C again: stop now)" in serve.wait_for("arena serve stopping")
            serve.process.send_signal(signal.SIGINT)
        assert serve.process.wait(timeout=30) == 0
        assert time.monotonic() - t0 < 15  # the match (0.6 s a decision, a game to 66) and the 60 s drain not waited for
        assert "arena serve stopped now" in serve.wait_for("stopped now")
        assert not (data_dir / "redis.pid").exists() and not folder_held(data_dir)
    finally:
        serve.terminate()
