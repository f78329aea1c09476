"""The game registry: one ``Game`` plug-in per game id (STYLE.md habits 13 and 16, after OpenSpiel's registered games
and pytest's plug-ins found through entry points).

Generic code (referee, scheduler, store, service, SDK server, CLI) asks ``get_game(game_id)`` or iterates
``GAMES`` and never imports a game by name. A game is a package whose registry entry (a ``Game`` instance, usually
a ``PackageGame`` forwarding to the package's ``rules``, ``wire`` and ``bot`` modules) is named by an entry point of
the group ``arena.games`` (``ENTRY_POINT_GROUP``), its name the game id. The games shipped with the SDK are declared
in ``sdk/pyproject.toml`` exactly as a third-party distribution declares its own:

    [project.entry-points."arena.games"]
    mygame = "mygame_arena.plugin:GAME"

Every installed entry point of the group is loaded when this package is first imported: this SDK's own games first, in
the order its ``pyproject.toml`` declares them (the first is the CLI's default game), then the others in order of
game id;
``register`` adds a game from code (tests). The conformance tests then play every registered game through every
path.
"""

from __future__ import annotations

from importlib import metadata

from .base import (
    ConfigField,
    Game,
    GameInfo,
    IllegalActionError,
    Outcome,
    PackageGame,
    RulesError,
    WireError,
    check_config,
    config_fields,
    rule,
)

ENTRY_POINT_GROUP = "arena.games"
SDK_DISTRIBUTION = "arena-sdk"  # this SDK's distribution: its games are registered first, in its declared order

GAMES: dict[str, Game] = {}


class GameLoadError(ImportError):
    """An ``arena.games`` entry point that does not load, or does not name a ``Game`` whose id is the entry point's
    name; the message names the entry point, its distribution and what is wrong."""


def register(game: Game) -> Game:
    """Add ``game`` to the registry under ``game.info.game`` and return it. Raises ``ValueError`` when another
    game already holds that id, and ``TypeError`` for an object that is not a ``Game``."""
    if not isinstance(game, Game):
        raise TypeError(f"register() needs a Game instance, got {game!r}")
    gid = game.info.game
    existing = GAMES.get(gid)
    if existing is not None and existing is not game:
        raise ValueError(f"game id {gid!r} is already registered by {type(existing).__name__}")
    GAMES[gid] = game
    return game


def get_game(game_id: object) -> Game:
    """The registered game ``game_id``. Raises ``WireError`` (a ``ValueError``) naming the known games when there
    is none."""
    game = GAMES.get(game_id) if isinstance(game_id, str) else None
    if game is None:
        known = ", ".join(sorted(GAMES)) or (
            f"none: no {ENTRY_POINT_GROUP!r} entry point is installed (is arena-sdk installed? pip install ./sdk)")
        raise WireError(f"unknown game {game_id!r}; known games: {known}")
    return game


def game_ids() -> tuple[str, ...]:
    """Every registered game id, in registration order (the installed games in ``load_installed_games``' order)."""
    return tuple(GAMES)


def load_entry_point(entry_point: metadata.EntryPoint) -> Game:
    """Register the game an ``arena.games`` entry point names and return it. The entry point's object is a
    ``Game`` instance or a ``Game`` subclass (instantiated without arguments); its id must be the entry point's
    name. Raises ``GameLoadError``."""
    dist = getattr(entry_point.dist, "name", None) or "an unknown distribution"
    where = f"entry point {entry_point.name} = {entry_point.value} of {dist} (group {ENTRY_POINT_GROUP!r})"
    try:
        obj = entry_point.load()
        game = obj() if isinstance(obj, type) and issubclass(obj, Game) else obj
    except Exception as exc:  # an import error or a failing constructor of a third-party game
        raise GameLoadError(f"{where} does not load: {type(exc).__name__}: {exc}") from exc
    if not isinstance(game, Game):
        raise GameLoadError(f"{where} names {game!r}, not a Game")
    if game.info.game != entry_point.name:
        raise GameLoadError(f"{where} names the game {game.info.game!r}: the entry point must be named by the game id")
    if GAMES.get(entry_point.name) not in (None, game):
        raise GameLoadError(f"{where}: game id {entry_point.name!r} is already registered by "
                            f"{type(GAMES[entry_point.name]).__name__}")
    return register(game)


def _load_order(found: tuple[int, metadata.EntryPoint]) -> tuple[int, int, str, str]:
    """The sort key of ``load_installed_games``: (index among the entry points found, entry point)."""
    index, entry_point = found
    dist = (getattr(entry_point.dist, "name", None) or "").lower().replace("_", "-")
    if dist == SDK_DISTRIBUTION:
        return 0, index, "", ""
    return 1, 0, entry_point.name, entry_point.value


def load_installed_games() -> tuple[str, ...]:
    """Register every installed ``arena.games`` entry point not registered yet and return the ids added, in the
    order they were registered: those of this SDK's distribution (``SDK_DISTRIBUTION``) first, in the order it
    declares them, then the others in order of game id (so that a game installed later never becomes the first). The
    same entry point found twice (one distribution on two paths) counts once. Raises ``GameLoadError`` for an entry
    point that does not load, and when two entry points claim one game id."""
    added = []
    seen: dict[str, str] = {}
    for _, entry_point in sorted(enumerate(metadata.entry_points(group=ENTRY_POINT_GROUP)), key=_load_order):
        if entry_point.name in seen:
            if seen[entry_point.name] != entry_point.value:
                raise GameLoadError(f"two {ENTRY_POINT_GROUP!r} entry points claim the game id {entry_point.name!r}: "
                                    f"{seen[entry_point.name]} and {entry_point.value}")
            continue
        seen[entry_point.name] = entry_point.value
        if entry_point.name not in GAMES:
            load_entry_point(entry_point)
            added.append(entry_point.name)
    return tuple(added)


load_installed_games()

__all__ = [
    "ENTRY_POINT_GROUP",
    "GAMES",
    "ConfigField",
    "Game",
    "GameInfo",
    "GameLoadError",
    "IllegalActionError",
    "Outcome",
    "PackageGame",
    "RulesError",
    "WireError",
    "check_config",
    "config_fields",
    "game_ids",
    "get_game",
    "load_entry_point",
    "load_installed_games",
    "register",
    "rule",
]
