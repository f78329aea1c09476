"""Per-game command-line options: the only CLI code that names a game (DESIGN.md: a game is a plug-in; the
platform code per game is its renderer and its CLI config options).

Each game declares its rule options (``GameCli``): ``--variant`` names (shared option, the union of every game's
variants) and its own options. ``arena play GAME`` gets the options of that game; ``arena tournament create
--game GAME`` gets every game's options and refuses those of another game. ``config_of`` turns the parsed values
into the game's config dataclass through the game's JSON codec, so the rules of a config live in one place (the
SDK). Option values left unset (None) take the game's defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import click

from arena.cli.options import option

Decorator = Callable[[Any], Any]


@dataclass(frozen=True)
class GameCli:
    """The command-line rule options of one game.

    Attributes:
        game: the game id. variants: ``--variant`` value -> (config key set to true, help text).
        options: click option decorators of the game's own options (their dest names are in ``keys``).
        keys: option dest name -> config key (JSON form of the game's config).
        convert: option dest name -> function turning the parsed value into the config value.
    """

    game: str
    variants: Mapping[str, tuple[str, str]]
    options: Sequence[Decorator]
    keys: Mapping[str, str]
    convert: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)


_TAKE5 = GameCli(
    game="take5",
    variants={"known-cards": ("known_cards", "Take 5: only cards 1..10*players+4"),
              "draft": ("draft", "Take 5: the cards are drafted face up")},
    options=(
        option("--limit", type=click.IntRange(1, 1000), default=None, metavar="BULLHEADS",
               help="Take 5: bullhead limit checked after each complete hand [default: 66]."),
        option("--limit-rule", type=click.Choice(("at-least", "more-than")), default=None,
               help="Take 5: the game ends when a total is at least (>=) or more than (>) the limit "
                    "[default: at-least]."),
    ),
    keys={"limit": "limit", "limit_rule": "limit_rule"},
    convert={"limit_rule": lambda v: v.replace("-", "_")},
)

_TAKI = GameCli(
    game="taki",
    variants={"stairs": ("stairs", "Taki: the stairs, one long game through stages 8 down to 1")},
    options=(
        option("--turn-cap", type=click.IntRange(1, 100_000), default=None, metavar="TURNS",
               help="Taki: the game ends after this many turns, ranked by cards held [default: 2000]."),
        option("--hand-size", type=click.IntRange(1, 8), default=None, metavar="CARDS",
               help="Taki: cards dealt to each seat [default: 8]."),
        option("--draw-when-playable/--no-draw-when-playable", default=None,
               help="Taki: whether drawing is allowed when a card could be played [default: allowed]."),
        option("--plus-draw/--no-plus-draw", default=None,
               help="Taki: whether a seat owing a card after a Plus may draw instead of playing "
                    "[default: no]."),
    ),
    keys={"turn_cap": "turn_cap", "hand_size": "hand_size", "draw_when_playable": "draw_when_playable",
          "plus_draw": "plus_draw_when_playable"},
)

GAME_CLIS: dict[str, GameCli] = {g.game: g for g in (_TAKE5, _TAKI)}


def _game_cli(game: str) -> GameCli:
    try:
        return GAME_CLIS[game]
    except KeyError:
        raise click.BadParameter(f"unknown game {game!r}; known games: {', '.join(sorted(GAME_CLIS))}") from None


def _variant_option(games: Sequence[GameCli]) -> Decorator:
    names = [name for g in games for name in g.variants]
    described = "; ".join(f"{name} ({text})" for g in games for name, (_key, text) in g.variants.items())
    return option("--variant", "variants", type=click.Choice(names), multiple=True,
                  help=f"Rules variant (repeatable, combinable): {described}.")


def config_options(game: str | None = None) -> Decorator:
    """Decorator adding the rule options of ``game`` (every game's when None) and ``--variant`` to a command; the
    command receives ``variants`` and one keyword per option."""
    games = [_game_cli(game)] if game is not None else list(GAME_CLIS.values())

    def decorate(f: Any) -> Any:
        for g in reversed(games):
            for opt in reversed(g.options):
                f = opt(f)
        return _variant_option(games)(f)

    return decorate


def config_option_names() -> set[str]:
    """Dest names of every game's rule options (to pick them out of a command's keyword arguments)."""
    return {name for g in GAME_CLIS.values() for name in g.keys} | {"variants"}


def config_of(game: str, variants: Sequence[str], values: Mapping[str, Any]) -> Any:
    """The config dataclass of ``game`` from ``--variant`` values and the rule options (``values``: dest name ->
    parsed value, None when not given). Raises ``click.BadParameter`` for a variant or option of another game, or
    a value the game refuses."""
    from arena_sdk.wire import config_from_dict

    cli = _game_cli(game)
    data: dict[str, Any] = {}
    for variant in variants:
        if variant not in cli.variants:
            owner = next((g.game for g in GAME_CLIS.values() if variant in g.variants), "another game")
            raise click.BadParameter(f"--variant {variant} is a {owner} variant, not a {game} one")
        data[cli.variants[variant][0]] = True
    for name, value in values.items():
        if value is None or name == "variants":
            continue
        if name not in cli.keys:
            owner = next((g.game for g in GAME_CLIS.values() if name in g.keys), "another game")
            raise click.BadParameter(f"--{name.replace('_', '-')} is a {owner} option, not a {game} one")
        data[cli.keys[name]] = cli.convert.get(name, lambda v: v)(value)
    try:
        return config_from_dict(game, data)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
