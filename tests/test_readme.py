"""The README's "write your first bot" example is at most 15 lines and really plays, as its own process."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from arena.cli import cli

README = Path(__file__).resolve().parent.parent / "README.md"


def first_bot_source() -> str:
    section = README.read_text().split("## Write your first bot", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "README has no python block under 'Write your first bot'"
    return match.group(1)


def test_first_bot_is_at_most_15_lines() -> None:
    assert len(first_bot_source().splitlines()) <= 15


def test_first_bot_plays_a_game_without_faults(tmp_path: Path) -> None:
    bot = tmp_path / "my_bot.py"
    bot.write_text(first_bot_source())
    record = tmp_path / "game.json"
    result = CliRunner().invoke(
        cli,
        ["play", "take5", "--bot", str(bot), "--bot", "sample:random", "--bot", "sample:heuristic",
         "--limit", "20", "--seed", "3", "--record", str(record)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(record.read_text())
    assert data["seats"][0]["name"] == "lowrisk"
    assert data["result"]["faults"][0] == 0
    assert any(d["seat"] == 0 and d["source"] == "bot" for d in data["decisions"])
