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
the order their ``GameInfo.order`` says (the first is the CLI's default game), then the others by their order and
game id (``load_installed_games``); ``register`` adds a game from code (tests). The conformance tests then play
every registered game through every path.
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
SDK_DISTRIBUTION = "arena-sdk"  # this SDK's distribution: its games are registered first (``install_order``)

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
    return _register_loaded(entry_point, _game_of(entry_point))


def _where(entry_point: metadata.EntryPoint) -> str:
    dist = getattr(entry_point.dist, "name", None) or "an unknown distribution"
    return f"entry point {entry_point.name} = {entry_point.value} of {dist} (group {ENTRY_POINT_GROUP!r})"


def _game_of(entry_point: metadata.EntryPoint) -> Game:
    """The ``Game`` an entry point names, loaded and checked, not registered. Raises ``GameLoadError``."""
    where = _where(entry_point)
    try:
        obj = entry_point.load()
        game = obj() if isinstance(obj, type) and issubclass(obj, Game) else obj
    except Exception as exc:  # an import error or a failing constructor of a third-party game
        raise GameLoadError(f"{where} does not load: {type(exc).__name__}: {exc}") from exc
    if not isinstance(game, Game):
        raise GameLoadError(f"{where} names {game!r}, not a Game")
    if game.info.game != entry_point.name:
        raise GameLoadError(f"{where} names the game {game.info.game!r}: the entry point must be named by the game id")
    return game


def _register_loaded(entry_point: metadata.EntryPoint, game: Game) -> Game:
    if GAMES.get(entry_point.name) not in (None, game):
        raise GameLoadError(f"{_where(entry_point)}: game id {entry_point.name!r} is already registered by "
                            f"{type(GAMES[entry_point.name]).__name__}")
    return register(game)


def install_order(entry_point: metadata.EntryPoint, game: Game) -> tuple[int, int, str]:
    """The sort key of ``load_installed_games``: this SDK's games first (``SDK_DISTRIBUTION``), then the others;
    within each, by ``GameInfo.order``, then by game id."""
    dist = (getattr(entry_point.dist, "name", None) or "").lower().replace("_", "-")
    return (0 if dist == SDK_DISTRIBUTION else 1), game.info.order, entry_point.name


def load_installed_games() -> tuple[str, ...]:
    """Register every installed ``arena.games`` entry point not registered yet and return the ids added, in the
    order they were registered (``install_order``): those of this SDK's distribution (``SDK_DISTRIBUTION``) first,
    by their ``GameInfo.order`` (so the SDK's first game is the CLI's default whatever the ids, and a game installed
    later never becomes the first), then the others by ``GameInfo.order`` and game id. The same entry point found
    twice (one distribution on two paths) counts once. Raises ``GameLoadError`` for an entry point that does not
    load, and when two entry points claim one game id."""
    seen: dict[str, str] = {}
    loaded = []
    for entry_point in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        if entry_point.name in seen:
            if seen[entry_point.name] != entry_point.value:
                raise GameLoadError(f"two {ENTRY_POINT_GROUP!r} entry points claim the game id {entry_point.name!r}: "
                                    f"{seen[entry_point.name]} and {entry_point.value}")
            continue
        seen[entry_point.name] = entry_point.value
        if entry_point.name not in GAMES:
            loaded.append((entry_point, _game_of(entry_point)))
    loaded.sort(key=lambda found: install_order(*found))
    return tuple(_register_loaded(entry_point, game).info.game for entry_point, game in loaded)


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
