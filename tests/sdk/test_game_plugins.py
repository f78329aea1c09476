"""The plug-in machinery every game shares: the declared rule options (``rule``, ``ConfigField``,
``check_config``) and the ``PackageGame`` adapter that forwards the ``Game`` interface to a package's modules."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from arena_sdk.games import GAMES, ConfigField, PackageGame, RulesError, check_config, config_fields, rule


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_field_of_a_config_is_a_declared_rule_option(game: str) -> None:
    g = GAMES[game]
    fields = g.config_fields
    assert [f.name for f in fields] == [f.name for f in dataclasses.fields(g.config_type)]
    default = g.config_type()
    for f in fields:
        assert f.help and f.type in (bool, int, str), f
        assert getattr(default, f.name) == f.default and f.problem(f.default) == ""
        if f.type is int:
            assert f.minimum is not None and f.maximum is not None and f.unit.isupper(), f
        if f.variant:
            assert f.type is bool and f.default is False, f
    assert g.config_from_dict(g.config_to_dict(default)) == default


def test_the_declared_options_of_take5_and_taki() -> None:
    """What the CLI's options are made of (``arena.cli.game_options``): the names, ranges and variants of today."""
    take5 = {f.option: (f.type, f.minimum, f.maximum, f.choices, f.variant) for f in GAMES["take5"].config_fields}
    assert take5 == {"limit": (int, 1, 1000, (), ""), "limit-rule": (str, None, None, ("at_least", "more_than"), ""),
                     "known-cards": (bool, None, None, (), "known-cards"), "draft": (bool, None, None, (), "draft")}
    taki = {f.option: (f.type, f.minimum, f.maximum, f.variant) for f in GAMES["taki"].config_fields}
    assert taki == {"draw-when-playable": (bool, None, None, ""), "plus-draw": (bool, None, None, ""),
                    "turn-cap": (int, 1, 100_000, ""), "stairs": (bool, None, None, "stairs"),
                    "hand-size": (int, 1, 8, "")}


@dataclass(frozen=True)
class DemoConfig:
    rounds: int = rule(3, "rounds to play", minimum=1, maximum=9, unit="ROUNDS")
    floor: int = rule(0, "lowest score", minimum=0)
    order: str = rule("up", "play order", choices=("up", "down"))
    name: str = rule("x", "a free text")
    fast: bool = rule(False, "play fast", variant="fast")
    seed_note: str = "not declared"  # a plain field: not a rule option

    def __post_init__(self) -> None:
        check_config(self)


@pytest.mark.parametrize(("values", "message"), [
    ({"rounds": 0}, "DemoConfig.rounds must be a whole number of rounds 1..9, got 0"),
    ({"rounds": True}, "DemoConfig.rounds must be a whole number of rounds 1..9, got True"),
    ({"rounds": 2.0}, "DemoConfig.rounds must be a whole number of rounds 1..9, got 2.0"),
    ({"floor": -1}, "DemoConfig.floor must be a whole number >= 0, got -1"),
    ({"order": "sideways"}, "DemoConfig.order must be one of 'up', 'down', got 'sideways'"),
    ({"name": 7}, "DemoConfig.name must be a str, got 7"),
    ({"fast": 1}, "DemoConfig.fast must be True or False, got 1"),
])
def test_check_config_refuses_what_the_declaration_does_not_allow(values: dict, message: str) -> None:
    with pytest.raises(RulesError) as info:
        DemoConfig(**values)
    assert str(info.value) == message


def test_config_fields_reads_the_declarations_in_field_order() -> None:
    fields = config_fields(DemoConfig)
    assert [f.name for f in fields] == ["rounds", "floor", "order", "name", "fast"]
    assert fields[0] == ConfigField("rounds", int, 3, "rounds to play", 1, 9, (), "ROUNDS")
    assert fields[4].variant == "fast" and fields[4].option == "fast"
    assert DemoConfig(rounds=9, floor=100, order="down", name="y", fast=True).rounds == 9
    with pytest.raises(TypeError, match="must be a dataclass"):
        config_fields(int)


class Lonely(PackageGame):
    """A plug-in defined where no ``rules``, ``wire`` or ``bot`` module lies beside it."""

    config_type = DemoConfig
    decision_methods: dict[str, str] = {}

    def view_legal_actions(self, view: object) -> tuple[object, ...]:
        return ()

    def answer_of(self, action: object) -> object:
        return action


def test_a_package_game_says_which_module_it_lacks() -> None:
    game = Lonely()
    assert Lonely.rules_module is None and Lonely.wire_module is None
    with pytest.raises(NotImplementedError, match=r"Lonely has no rules module: set rules_module or override "
                                                  r"pending_seats\(\)"):
        game.pending_seats(None)
    with pytest.raises(NotImplementedError, match="Lonely has no wire module: set wire_module or override "
                                                  "config_to_dict"):
        game.config_to_dict(DemoConfig())
    with pytest.raises(NotImplementedError, match="has no bot module"):
        game.decide(None, None)


@pytest.mark.parametrize("game", sorted(g for g in GAMES if isinstance(GAMES[g], PackageGame)))
def test_a_package_game_forwards_to_its_own_modules(game: str) -> None:
    g = GAMES[game]
    assert isinstance(g, PackageGame)
    package = type(g).__module__.rpartition(".")[0]
    assert g.rules_module is not None and g.rules_module.__name__ == f"{package}.rules"
    assert g.wire_module is not None and g.wire_module.__name__ == f"{package}.wire"
    assert g.info is g.rules_module.INFO
    state = g.new_game(g.info.min_players, g.config_type(), seed=3)
    seat = g.pending_seats(state)[0]
    assert g.legal_actions(state, seat) == g.rules_module.legal_actions(state, seat)
    assert g.observe(state, seat) == g.rules_module.observe(state, seat)
