"""Game-independent shapes shared by every rules engine, the referee and the SDK: the rules errors, a game's static
metadata (``GameInfo``), the result of a game (``Outcome``, ``competition_ranks``) and the declaration of a game's rule
options (``rule`` / ``ConfigField``, ``config_fields``, ``check_config``).

``arena_sdk.games.base`` re-exports every name here; import them from there (or from ``arena_sdk.games``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar


class RulesError(ValueError):
    """Base class of every rules-engine error."""


class IllegalActionError(RulesError):
    """An action that the rules do not allow in this state; the message names the action and the reason."""


class WireError(ValueError):
    """A protobuf message or JSON document that does not describe a valid value; the message says which field."""


@dataclass(frozen=True)
class GameInfo:
    """Static metadata a game declares.

    Attributes:
        game: game id used on the wire and in the CLI, e.g. ``"take5"``.
        title: human name, e.g. ``"Take 5!"``.
        min_players / max_players: allowed seat counts (inclusive).
        simultaneous: True when several seats may have a decision pending at once (Take 5 card choice).
        imperfect_information: True when seats hide information from each other.
        decision_kinds: the decision kinds the game asks (wire names of ``DecisionKind``).
        lower_score_is_better: True when the final score is a penalty (Take 5 bullheads).
        order: where the game comes among the installed games of its distribution (lower first, then by game id;
            ``arena_sdk.games.load_installed_games``): the SDK's first game is the CLI's default ``--game``.
    """

    game: str
    title: str
    min_players: int
    max_players: int
    simultaneous: bool
    imperfect_information: bool
    decision_kinds: tuple[str, ...]
    lower_score_is_better: bool
    order: int = 100


@dataclass(frozen=True)
class Outcome:
    """Final result of a game, in seat order.

    Attributes:
        scores: the game's score of every seat (Take 5: bullhead total; lower is better there).
        ranks: standard competition rank of every seat, 1 = best, equal scores share a rank (1, 2, 2, 4).
    """

    scores: tuple[float, ...]
    ranks: tuple[int, ...]


def competition_ranks(scores: tuple[float, ...] | list[float], lower_is_better: bool) -> tuple[int, ...]:
    """Standard competition ranking ("1224") of ``scores``: 1 + the number of strictly better scores.

    >>> competition_ranks([10, 20, 20, 30], lower_is_better=True)
    (1, 2, 2, 4)
    """
    if lower_is_better:
        return tuple(1 + sum(1 for o in scores if o < s) for s in scores)
    return tuple(1 + sum(1 for o in scores if o > s) for s in scores)


# --- declared rule options ------------------------------------------------------------------------------------

_RULE = "arena_rule"  # the key of a declared field's metadata
T = TypeVar("T")


@dataclass(frozen=True)
class ConfigField:
    """One rule option of a game's config dataclass, as the game declares it (``rule``): the command-line options
    of ``arena play``, ``arena tournament create`` and ``arena sprt``, their help and the config checks
    (``check_config``) all come from it, as a Kaggle environment's spec declares each configuration field.

    Attributes:
        name: the dataclass field, also its key in the config's JSON form, e.g. ``"limit"``.
        type: ``bool``, ``int`` or ``str``: the type of ``default``.
        default: the value when the option is not given.
        help: what the option sets, a phrase for people, e.g. ``"bullhead limit checked after each complete
            hand"``.
        minimum / maximum: ``int`` options: the allowed range, inclusive (None: unbounded).
        choices: ``str`` options: the allowed values (JSON form, e.g. ``("at_least", "more_than")``); on the
            command line each is written with ``-`` for ``_``.
        unit: ``int`` options: what the number counts, in capitals (``"BULLHEADS"``): the option's metavar, and
            the unit an error message names.
        variant: ``bool`` options that switch a rules variant on: the ``--variant`` name (e.g. ``"draft"``); ""
            for a ``--NAME/--no-NAME`` flag.
        flag: the option's command-line name when it is not ``name`` with ``-`` for ``_`` (e.g. ``"plus-draw"``).
    """

    name: str
    type: type
    default: Any
    help: str
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    variant: str = ""
    flag: str = ""

    @property
    def option(self) -> str:
        """The command-line name without dashes in front: ``flag``, else ``name`` with ``-`` for ``_``."""
        return self.flag or self.name.replace("_", "-")

    def problem(self, value: Any) -> str:
        """Why ``value`` cannot be this option's value, as the end of a sentence ("must be True or False, got
        3"); "" when it can."""
        if self.type is bool:
            return "" if isinstance(value, bool) else f"must be True or False, got {value!r}"
        if self.type is int:
            low, high = self.minimum, self.maximum
            if isinstance(value, int) and not isinstance(value, bool) and (low is None or value >= low) and (
                    high is None or value <= high):
                return ""
            unit = f" of {self.unit.lower()}" if self.unit else ""
            bounds = (f" {low}..{high}" if low is not None and high is not None else f" >= {low}" if low is not None
                      else f" <= {high}" if high is not None else "")
            return f"must be a whole number{unit}{bounds}, got {value!r}"
        if self.choices:
            return "" if value in self.choices else (
                f"must be one of {', '.join(map(repr, self.choices))}, got {value!r}")
        return "" if isinstance(value, self.type) else f"must be a {self.type.__name__}, got {value!r}"


def rule(default: T, help: str, *, minimum: int | None = None, maximum: int | None = None,
         choices: Sequence[str] = (), unit: str = "", variant: str = "", flag: str = "") -> T:
    """Declare a rule option as a field of a game's config dataclass (see ``ConfigField`` for the arguments; the
    field's name and type come from the dataclass and its default):

        @dataclass(frozen=True)
        class MyConfig:
            rounds: int = rule(3, "rounds to play", minimum=1, maximum=50, unit="ROUNDS")

    Returns a ``dataclasses.field`` carrying the declaration (typed as the default, for the dataclass)."""
    spec = {"help": help, "minimum": minimum, "maximum": maximum, "choices": tuple(choices), "unit": unit,
            "variant": variant, "flag": flag}
    return dataclasses.field(default=default, metadata={_RULE: spec})


def config_fields(config_type: type) -> tuple[ConfigField, ...]:
    """The rule options a config dataclass declares (its fields made with ``rule``), in field order. Raises
    ``TypeError`` for a class that is not a dataclass."""
    if not dataclasses.is_dataclass(config_type):
        raise TypeError(f"a game's config type must be a dataclass, got {config_type!r}")
    out = []
    for f in dataclasses.fields(config_type):
        spec = f.metadata.get(_RULE)
        if spec is not None:
            out.append(ConfigField(name=f.name, type=type(f.default), default=f.default, **spec))
    return tuple(out)


def check_config(config: Any) -> None:
    """Check every declared rule option of ``config`` (a config dataclass instance) against its declaration:
    type, range, choices. A config's ``__post_init__`` calls it. Raises ``RulesError`` naming the field and the bad
    value, e.g. ``"Take5Config.limit must be a whole number of bullheads 1..1000, got 0"``."""
    for f in config_fields(type(config)):
        problem = f.problem(getattr(config, f.name))
        if problem:
            raise RulesError(f"{type(config).__name__}.{f.name} {problem}")
