"""`arena play GAME --games N`: a series between the same real sample bot processes (started once), seats rotated
and seeds consecutive, each record saved and replayable, and each bot's tally (``arena.cli.play_series``)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.cli.play_series import seats_of_game, seed_of_game, tally
from arena.core.limits import MAX_SEED


def test_seats_rotate_so_every_bot_holds_every_seat() -> None:
    specs = ["a", "b", "c"]
    games = [seats_of_game(specs, i) for i in range(3)]
    assert games == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    assert all(sorted(g[seat] for g in games) == specs for seat in range(3))
    assert seed_of_game(7, 2) == 9 and seed_of_game(MAX_SEED, 1) == 0


def _record(names: list[str], scores: list[int], ranks: list[int], faults: list[int]) -> SimpleNamespace:
    return SimpleNamespace(seats=[SimpleNamespace(name=n) for n in names],
                           result=SimpleNamespace(scores=scores, ranks=ranks, faults=faults, forfeits=()))


def test_tally_counts_each_bot_by_name_whatever_its_seat() -> None:
    records = [_record(["a", "b"], [10, 30], [1, 2], [0, 1]), _record(["b", "a"], [5, 20], [1, 2], [0, 0]),
               _record(["a", "b"], [12, 12], [1, 1], [0, 0])]
    b, a = tally(records, ["b", "a"])  # best mean rank first; equal ones keep the order of the names
    assert (a.bot, a.games, a.mean_score, a.wins, a.faults) == ("a", 3, 14.0, 2, 0)
    assert (b.bot, b.scores, b.ranks, b.wins, b.faults) == ("b", [30.0, 5.0, 12.0], [2, 1, 1], 2, 1)
    assert a.mean_rank == pytest.approx(4 / 3) and b.mean_rank == pytest.approx(4 / 3)
    assert a.margin == pytest.approx(1.959964 * 5.2915 / 3 ** 0.5, rel=1e-3)


def test_a_series_plays_every_seat_and_saves_replayable_records(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # records/ is made in the working folder
    result = CliRunner().invoke(cli, ["play", "take5", "--bot", "sample:heuristic", "--bot", "sample:random",
                                      "--games", "4", "--seed", "40", "--limit", "10", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["games"] == 4 and [r["seats"] for r in out["results"]] == [["heuristic", "random"],
                                                                          ["random", "heuristic"]] * 2
    folder = tmp_path / out["records"]
    files = sorted(folder.glob("*.json"))
    assert len(files) == 4 and [json.loads(f.read_text())["seed"] for f in files] == [40, 41, 42, 43]
    bots = {b["bot"]: b for b in out["bots"]}
    for name in ("heuristic", "random"):
        scores = [r["scores"][r["seats"].index(name)] for r in out["results"]]
        assert bots[name]["games"] == 4 and bots[name]["mean_score"] == pytest.approx(sum(scores) / 4)
    replayed = CliRunner().invoke(cli, ["replay", str(files[1])])
    assert replayed.exit_code == 0 and replayed.stdout.startswith("identical"), replayed.output
    text = CliRunner(env={"COLUMNS": "120"}).invoke(cli, [
        "play", "take5", "--bot", "sample:heuristic", "--bot", "sample:random", "--games", "2", "--limit", "5"])
    assert text.exit_code == 0, text.output
    assert "2 games of take5, seats rotated" in text.stdout and "mean bullheads (95 %)" in text.stdout


def test_a_series_takes_neither_show_nor_record(tmp_path: Path) -> None:
    for extra in (["--show"], ["--record", str(tmp_path / "g.json")]):
        result = CliRunner().invoke(cli, ["play", "take5", "--bot", "sample:random", "--bot", "sample:random",
                                          "--games", "3", *extra])
        assert result.exit_code == 2 and "--games 3 plays a series" in result.output, result.output
