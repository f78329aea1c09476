"""Generic code names no game (DESIGN.md: a game is a plug-in, found by its game id): no module of ``arena/`` or
``sdk/arena_sdk/`` imports a registered game's package (or any module named for a game) or holds a string constant
that is exactly a game id, except the games' own files: their SDK packages, the renderer named for each game (and
its frames module), the generated protocol code and the SDK's convenience re-exports. Docstrings may name games. And
``docs/adding-a-game.md`` names the files that the built-in games really have."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from arena_sdk.games import GAMES

ROOT = Path(__file__).resolve().parent.parent
GAME_IDS = frozenset(GAMES)
# The packages of the registered games (arena_sdk.games.take5, or a third-party game's own package).
GAME_PACKAGES = frozenset(type(game).__module__.rpartition(".")[0] for game in GAMES.values())
SOURCES = sorted([*ROOT.glob("arena/**/*.py"), *ROOT.glob("sdk/arena_sdk/**/*.py")])
PAGE = ROOT / "docs" / "adding-a-game.md"


def is_game_file(path: str) -> bool:
    """The files allowed to name games: a game's SDK package, the renderer named for it and its viewer frames
    (``arena/render/<game>.py``, ``arena/render/frames/<game>.py``), the generated protocol code, the SDK's
    convenience re-exports."""
    parts = path.split("/")
    if path.startswith("sdk/arena_sdk/_proto/") or path == "sdk/arena_sdk/__init__.py":
        return True
    if path.startswith("sdk/arena_sdk/games/") and len(parts) > 4 and parts[3] in GAME_IDS:
        return True
    return path.startswith("arena/render/") and Path(path).stem in GAME_IDS


def module_name(path: str) -> str:
    """The dotted module name of a source file (``sdk/arena_sdk/wire.py`` -> ``arena_sdk.wire``)."""
    dotted = path.removeprefix("sdk/").removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def _names_a_game(dotted: str) -> bool:
    return any(part in GAME_IDS for part in dotted.split(".")) or any(
        dotted == p or dotted.startswith(f"{p}.") for p in GAME_PACKAGES)


def resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module of ``from <level dots><name> import ...`` written in ``module``."""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([name] if name else [])])


def game_names_in(source: str, module: str, is_package: bool = False) -> list[str]:
    """Where ``source`` (of the module ``module``, a package's ``__init__`` when ``is_package``) names a game:
    ``"LINE: imports a game (...)"`` or ``"LINE: names a game ('...')"``; docstrings do not count."""
    tree = ast.parse(source)
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = resolve(module, is_package, node.level, node.module) if node.level else node.module or ""
            targets = [base, *(f"{base}.{a.name}" for a in node.names)]
            if any(_names_a_game(t) for t in targets):
                hits.append(f"{node.lineno}: imports a game ({base}: {', '.join(a.name for a in node.names)})")
        elif isinstance(node, ast.Import):
            hits += [f"{node.lineno}: imports a game ({a.name})" for a in node.names if _names_a_game(a.name)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if node.value.strip().lower() in GAME_IDS:
                hits.append(f"{node.lineno}: names a game ({node.value!r})")
    return hits


def test_the_registry_holds_the_games_checked_here() -> None:
    assert {"take5", "taki"} <= GAME_IDS
    assert "arena_sdk.games.take5" in GAME_PACKAGES and len(SOURCES) > 50


@pytest.mark.parametrize("path", [p.relative_to(ROOT).as_posix() for p in SOURCES
                                  if not is_game_file(p.relative_to(ROOT).as_posix())])
def test_a_generic_module_names_no_game(path: str) -> None:
    hits = game_names_in((ROOT / path).read_text(encoding="utf-8"), module_name(path), path.endswith("/__init__.py"))
    assert hits == [], f"{path} names a game: {hits}; find the game by its id in the registry instead"


def test_the_check_sees_each_way_of_naming_a_game() -> None:
    source = '''"""A module about take5: docstrings may name games."""
from arena_sdk.games import take5
from arena_sdk.games.taki.cards import deck
import arena.render.taki
from .games import taki
from . import take5 as t5

DEFAULT = "take5"


def f(game="TAKI "):
    """taki"""
    return {"take5": 1}
'''
    hits = game_names_in(source, "arena_sdk.example")
    assert [int(h.split(":")[0]) for h in hits] == [2, 3, 4, 5, 6, 8, 11, 13], hits
    assert "5: imports a game (arena_sdk.games: taki)" in hits
    inside = game_names_in(source, "arena_sdk.games", is_package=True)
    assert "6: imports a game (arena_sdk.games: take5)" in inside, inside
    assert game_names_in('"""take5"""\nfrom arena_sdk.games import GAMES, get_game\nX = "take 5"\n',
                         "arena.match.x") == []


def test_the_allowed_files_are_the_games_own() -> None:
    assert is_game_file("sdk/arena_sdk/games/take5/rules.py")
    assert is_game_file("arena/render/taki.py")
    assert is_game_file("sdk/arena_sdk/_proto/arena/v1/bot_pb2.py")
    assert not is_game_file("sdk/arena_sdk/games/__init__.py")
    assert not is_game_file("sdk/arena_sdk/games/base.py")
    assert not is_game_file("arena/render/__init__.py")
    assert not is_game_file("arena/cli/game_options.py")


# --- docs/adding-a-game.md ----------------------------------------------------------------------------------------

ROW = re.compile(r"^\| `([^`]+)` \| (.+) \|$", re.MULTILINE)


def page_rows() -> list[tuple[str, bool]]:
    """(path with ``<game>``, required?) of every row of the page's file table."""
    return [(path, not text.endswith("(optional).")) for path, text in ROW.findall(PAGE.read_text(encoding="utf-8"))]


def test_the_page_counts_the_files_it_names() -> None:
    rows = page_rows()
    required = [path for path, needed in rows if needed]
    stated = re.search(r"\*\*(\d+) files\*\*", PAGE.read_text(encoding="utf-8"))
    assert stated is not None and int(stated.group(1)) == len(required) == 14, (stated, required)
    assert {"proto/arena/v1/bot.proto", "sdk/arena_sdk/games/<game>/plugin.py", "arena/render/<game>.py",
            "sdk/pyproject.toml", "tests/games/<game>/spy_auditor.py"} <= set(required)


@pytest.mark.parametrize("game", sorted(g for g in GAMES if type(GAMES[g]).__module__.startswith("arena_sdk.games.")))
def test_every_built_in_game_has_the_files_the_page_names(game: str) -> None:
    for path, needed in page_rows():
        if not needed or "<name>" in path:
            continue
        real = ROOT / path.replace("<game>", game)
        assert real.is_file(), f"docs/adding-a-game.md names {path}, but {real.relative_to(ROOT)} does not exist"
    entry = f'{game} = "arena_sdk.games.{game}.plugin:GAME"'
    assert entry in (ROOT / "sdk" / "pyproject.toml").read_text(encoding="utf-8")
    for oneof in ("GameConfig", "DecideRequest", "DecideResponse"):
        assert re.search(rf"message {oneof} \{{[^}}]*\b{game} = \d+;", (ROOT / "proto/arena/v1/bot.proto").read_text(
            encoding="utf-8"), re.DOTALL), f"no {game} field in {oneof}"
