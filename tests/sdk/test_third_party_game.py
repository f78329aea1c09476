"""A game from outside the SDK joins the arena the way the built-in games do: an ``arena.games`` entry point of its
own distribution (here a temporary ``.dist-info`` beside the test package ``third_party/arena_tinynim``, on the
``PYTHONPATH`` of a fresh interpreter). The registry finds it, ``PackageGame`` forwards it to its modules, the CLI
makes its rule options from its declared config, and ``arena.render`` finds its renderer through an
``arena.renderers`` entry point. Entry points that do not name a good game are refused with a clear error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
import pytest

from arena_sdk.games import GAMES, GameLoadError, install_order, load_entry_point

PACKAGE_DIR = Path(__file__).resolve().parent / "third_party"


def install(site: Path, name: str, entry_points: str) -> None:
    """A distribution ``name`` with ``entry_points`` (the entry_points.txt text), as pip would leave it in ``site``."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


def run_python(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(PACKAGE_DIR)]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


TINYNIM = """
    [arena.games]
    tinynim = arena_tinynim.plugin:GAME

    [arena.renderers]
    tinynim = arena_tinynim.render
"""

PROBE = """
    import json
    from click.testing import CliRunner

    from arena_sdk import play_game
    from arena_sdk.games import GAMES, PackageGame, get_game
    from arena_tinynim import TinyNimConfig
    from arena_tinynim.bot import TinyNimBot

    class Greedy(TinyNimBot):
        name = "greedy"

        def take(self, view):
            return min(view.take_max, view.heap)

    game = get_game("tinynim")
    outcome = play_game([Greedy(), TinyNimBot()], TinyNimConfig(heap=7))

    from arena.cli import cli
    from arena.cli.game_options import config_of
    from arena.render import renderer, score_label

    runner = CliRunner()
    print(json.dumps({
        "games": list(GAMES),
        "adapter": isinstance(game, PackageGame),
        "modules": [game.rules_module.__name__, game.wire_module.__name__, game.bot_module.__name__],
        "title": game.info.title,
        "ranks": list(outcome.ranks),
        "help": runner.invoke(cli, ["play", "tinynim", "--help"], terminal_width=200).output,
        "refused": runner.invoke(cli, ["play", "tinynim", "--bot", "sample:random", "--bot", "sample:random",
                                       "--heap", "99"]).output,
        "config": repr(config_of("tinynim", ["misere"], {"heap": 5, "tinynim_hand_size": "size-only"})),
        "renderer": renderer("tinynim").__name__,
        "score_label": score_label("tinynim"),
    }))
"""


def test_the_sdks_own_games_come_first_so_a_game_installed_later_never_becomes_the_default() -> None:
    """The SDK's games by their ``GameInfo.order``, whatever their ids sort as (an SDK game "aaa" added after them
    does not become the default), then the others by order and id (entry_points.txt lists a distribution's entry
    points sorted by name, so their declared order is lost)."""
    def found(name: str, dist: str, order: int = 100) -> tuple[Any, Any]:
        entry_point = SimpleNamespace(name=name, value=f"{name}.plugin:GAME", dist=SimpleNamespace(name=dist))
        return entry_point, SimpleNamespace(info=SimpleNamespace(order=order))

    games = [found("zebra", "arena-zoo"), found("aaa", "arena-sdk"), found("take5", "arena-sdk", 0),
             found("aardvark", "arena-zoo"), found("taki", "arena_sdk", 1), found("yak", "arena-zoo", 5)]
    assert [e.name for e, _ in sorted(games, key=lambda g: install_order(*g))] == [
        "take5", "taki", "aaa", "yak", "aardvark", "zebra"]
    assert list(GAMES)[:2] == ["take5", "taki"]  # the CLI's default is take5


def test_a_game_installed_with_an_entry_point_is_registered_and_playable(tmp_path: Path) -> None:
    install(tmp_path, "arena-tinynim", TINYNIM)
    result = run_python(tmp_path, PROBE)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["games"] == ["take5", "taki", "tinynim"]  # the SDK's games, then the others in order of game id
    assert found["adapter"] is True
    assert found["modules"] == ["arena_tinynim.rules", "arena_tinynim.wire", "arena_tinynim.bot"]
    assert found["title"] == "Tiny Nim!"  # info found by convention: rules.INFO
    assert found["ranks"] == [1, 2]  # the greedy seat takes 3, 3 of 7; the other 1: greedy takes the last token
    help_text = found["help"]
    for expected in ("--heap TOKENS", "Tiny Nim: tokens on the heap at the start [default: 10].", "1<=x<=30",
                     "--variant [misere]", "misere (Tiny Nim: who takes the last token loses)",
                     "--tinynim-hand-size [all-shown|size-only]", "--limit TURNS",
                     "arena play tinynim --bot 127.0.0.1:50061 --bot 127.0.0.1:50062 --seed 7"):
        assert expected in help_text, (expected, help_text)
    assert "--turn-cap" not in help_text and "--limit-rule" not in help_text  # other games' options
    assert "Invalid value for '--heap': 99 is not in the range 1<=x<=30" in found["refused"]
    assert found["config"] == ("TinyNimConfig(heap=5, take_max=3, limit=50, hand_size='size_only', misere=True)")
    assert found["renderer"] == "arena_tinynim.render"
    assert found["score_label"] == "tokens short"


def test_two_entry_points_claiming_one_game_id_are_refused(tmp_path: Path) -> None:
    install(tmp_path, "arena-tinynim", TINYNIM)
    install(tmp_path, "arena-impostor", "[arena.games]\ntinynim = arena_tinynim.plugin:TinyNimGame\n")
    result = run_python(tmp_path, "import arena_sdk.games")
    assert result.returncode == 1
    assert "GameLoadError: two 'arena.games' entry points claim the game id 'tinynim'" in result.stderr


def test_an_entry_point_that_names_no_good_game_is_refused() -> None:
    def entry_point(name: str, value: str) -> metadata.EntryPoint:
        return metadata.EntryPoint(name=name, value=value, group="arena.games")

    with pytest.raises(GameLoadError, match=r"entry point chess = no_such_module:GAME .* does not load: "
                                            r"ModuleNotFoundError"):
        load_entry_point(entry_point("chess", "no_such_module:GAME"))
    with pytest.raises(GameLoadError, match="names .*, not a Game"):
        load_entry_point(entry_point("chess", "arena_sdk.games:GAMES"))
    with pytest.raises(GameLoadError, match="names the game 'take5': the entry point must be named by the game id"):
        load_entry_point(entry_point("chess", "arena_sdk.games.take5.plugin:GAME"))
    assert "chess" not in GAMES
    # the same game again under its own id changes nothing
    assert load_entry_point(entry_point("take5", "arena_sdk.games.take5.plugin:GAME")) is GAMES["take5"]


@pytest.fixture
def tinynim(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Tiny Nim registered in this process for one test (the registry restored after)."""
    monkeypatch.syspath_prepend(str(PACKAGE_DIR))
    from arena_tinynim.plugin import GAME

    monkeypatch.setitem(GAMES, "tinynim", GAME)
    return GAME


def test_games_sharing_an_option_name_share_the_option(tinynim: Any) -> None:
    """Take 5 and Tiny Nim both declare an int ``limit``: one ``--limit`` (help naming both, each game's codec
    checking its own range); Tiny Nim's text ``hand_size`` next to Taki's number becomes ``--tinynim-hand-size``."""
    from arena.cli.game_options import config_of, config_options

    command = config_options()(click.Command("create", callback=lambda **kw: None))
    options = {p.name: p for p in command.params}
    limit = options["limit"]
    assert isinstance(limit, click.Option)
    assert limit.help == ("Take 5: bullhead limit checked after each complete hand (1..1000) [default: 66]; Tiny "
                          "Nim: turns before the game ends drawn (1..100) [default: 50].")
    assert isinstance(limit.type, click.IntRange) and (limit.type.min, limit.type.max) == (1, 1000)  # the union
    assert options["hand_size"].type.name == "integer range"  # Taki's
    assert options["tinynim_hand_size"].opts == ["--tinynim-hand-size"]
    assert config_of("take5", [], {"limit": 70}).limit == 70
    assert config_of("tinynim", [], {"limit": 70}).limit == 70
    with pytest.raises(click.BadParameter, match="take5 limit must be 1..1000 bullheads, got 1001"):
        config_of("take5", [], {"limit": 1001})
    with pytest.raises(click.BadParameter, match=r"TinyNimConfig.limit must be a whole number of turns 1..100"):
        config_of("tinynim", [], {"limit": 101})
    with pytest.raises(click.BadParameter, match="--tinynim-hand-size is a tinynim option, not a taki one"):
        config_of("taki", [], {"tinynim_hand_size": "size-only"})
    with pytest.raises(click.BadParameter, match="--variant misere is a tinynim variant, not a take5 one"):
        config_of("take5", ["misere"], {})
