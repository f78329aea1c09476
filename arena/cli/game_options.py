"""The rule options of the commands that set a game's config (``arena play GAME``, ``arena tournament create``,
``arena sprt start``), made from what each registered game declares (``Game.config_fields``: field, type, default,
range or choices, help; ``arena_sdk.games.rule``): no game is named here.

Each declared field becomes one option: a ``bool`` field with a ``variant`` name is a value of the shared
``--variant`` option (the union of every game's variants), any other ``bool`` field a ``--NAME/--no-NAME`` flag, an
``int`` field ``--NAME N`` (its range checked by click), a ``str`` field with choices ``--NAME CHOICE`` (written with
``-`` for ``_``). The help says "Title: help [default: D]." ``arena play GAME`` gets the options of that game;
``arena tournament create`` and ``arena sprt start`` get every game's and refuse those of another game than
``--game``. Option values left unset (None) take the game's defaults; ``config_of`` turns the parsed values into the
game's config dataclass through the game's JSON codec, so the rules of a config live in one place (the SDK).

Two games declaring one option name of one type share the option (its help names both, with each game's range when
the ranges differ; click checks their union, each game's codec its own range); a later game whose option of that
name has another type gets ``--<game>-<name>`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from arena.cli.options import option
from arena_sdk.games import GAMES, ConfigField, get_game

Decorator = Callable[[Any], Any]


def _fields(game: str) -> tuple[ConfigField, ...]:
    if game not in GAMES:
        raise click.BadParameter(f"unknown game {game!r}; known games: {', '.join(sorted(GAMES))}")
    return get_game(game).config_fields


def _title(game: str) -> str:
    return get_game(game).info.title.rstrip("!")


def _cli_names() -> dict[str, dict[str, ConfigField]]:
    """Option dest name -> {game: its declared field} over every registered game (variants excluded), in the order
    the options are shown. A name stays the same whichever command shows it."""
    table: dict[str, dict[str, ConfigField]] = {}
    for game in GAMES:
        for f in _fields(game):
            if f.variant:
                continue
            dest = f.option.replace("-", "_")
            owners = table.get(dest)
            if owners and next(iter(owners.values())).type is not f.type:
                dest = f"{game}_{dest}"  # the name is another game's option of another type
            table.setdefault(dest, {})[game] = f
    return table


def _choices(f: ConfigField) -> dict[str, str]:
    """Command-line form -> config value of a ``str`` field's choices."""
    return {c.replace("_", "-"): c for c in f.choices}


def _default_text(f: ConfigField) -> str:
    if f.type is bool:
        return "yes" if f.default else "no"
    if f.choices:
        return str(f.default).replace("_", "-")
    return str(f.default)


def _range_text(f: ConfigField) -> str:
    """The range of an int field for the help of an option games share with other ranges, e.g. " (1..8)"; "" for
    a field without one."""
    if f.type is not int or (f.minimum is None and f.maximum is None):
        return ""
    return f" ({'' if f.minimum is None else f.minimum}..{'' if f.maximum is None else f.maximum})"


def _option(dest: str, owners: Mapping[str, ConfigField]) -> Decorator:
    """The click option of one dest name, for the games in ``owners``."""
    fields = list(owners.values())
    first = fields[0]
    name = dest.replace("_", "-")
    same = all((f.minimum, f.maximum, f.choices) == (first.minimum, first.maximum, first.choices) for f in fields)
    helps = "; ".join(f"{_title(g)}: {f.help}{'' if same else _range_text(f)} [default: {_default_text(f)}]"
                      for g, f in owners.items()) + "."
    if first.type is bool:
        return option(f"--{name}/--no-{name}", dest, default=None, help=helps)
    if first.type is int:  # games of other ranges: click checks their union, each game's codec its own
        lows, highs = [f.minimum for f in fields], [f.maximum for f in fields]
        low = None if None in lows else min(x for x in lows if x is not None)
        high = None if None in highs else max(x for x in highs if x is not None)
        return option(f"--{name}", dest, type=click.IntRange(low, high), default=None, metavar=first.unit or None,
                      help=helps)
    if first.choices:
        values = list(dict.fromkeys(c for f in fields for c in _choices(f)))
        return option(f"--{name}", dest, type=click.Choice(values), default=None, help=helps)
    return option(f"--{name}", dest, type=str, default=None, metavar=first.unit or None, help=helps)


def _variant_option(games: Sequence[str]) -> Decorator:
    variants = [(g, f) for g in games for f in _fields(g) if f.variant]
    names = list(dict.fromkeys(f.variant for _g, f in variants))
    described = "; ".join(f"{f.variant} ({_title(g)}: {f.help})" for g, f in variants)
    return option("--variant", "variants", type=click.Choice(names), multiple=True, hidden=not names,  # none: hidden
                  help=f"Rules variant (repeatable, combinable): {described}.")


def config_options(game: str | None = None) -> Decorator:
    """Decorator adding the rule options of ``game`` (every game's when None) and ``--variant`` to a command; the
    command receives ``variants`` and one keyword per option."""
    games = [game] if game is not None else list(GAMES)
    for g in games:
        _fields(g)  # an unknown game: click.BadParameter
    table = [(dest, {g: f for g, f in owners.items() if g in games}) for dest, owners in _cli_names().items()]
    options = [_option(dest, owners) for dest, owners in table if owners]

    def decorate(f: Any) -> Any:
        for opt in reversed(options):
            f = opt(f)
        return _variant_option(games)(f)

    return decorate


def config_option_names() -> set[str]:
    """Dest names of every game's rule options (to pick them out of a command's keyword arguments)."""
    return set(_cli_names()) | {"variants"}


def config_of(game: str, variants: Sequence[str], values: Mapping[str, Any]) -> Any:
    """The config dataclass of ``game`` from ``--variant`` values and the rule options (``values``: dest name ->
    parsed value, None when not given). Raises ``click.BadParameter`` for a variant or option of another game, or
    a value the game refuses."""
    from arena_sdk.wire import config_from_dict

    own = _fields(game)
    table = _cli_names()
    data: dict[str, Any] = {}
    for variant in variants:
        f = next((f for f in own if f.variant == variant), None)
        if f is None:
            owner = next((g for g in GAMES if any(x.variant == variant for x in _fields(g))), "another game")
            raise click.BadParameter(f"--variant {variant} is a {owner} variant, not a {game} one")
        data[f.name] = True
    for name, value in values.items():
        if value is None or name == "variants":
            continue
        owners = table.get(name, {})
        if game not in owners:
            owner = next(iter(owners), "another game")
            raise click.BadParameter(f"--{name.replace('_', '-')} is a {owner} option, not a {game} one")
        f = owners[game]
        data[f.name] = _choices(f).get(value, value) if f.choices and isinstance(value, str) else value
    try:
        return config_from_dict(game, data)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
