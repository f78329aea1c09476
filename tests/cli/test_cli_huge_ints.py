"""Every integer option and argument of every `arena` command refuses a huge value (2**64) with click's one-line
usage error, never a traceback or "unexpected ValueError". The command tree is walked, so an option added later is
swept too; a value is refused while the command line is parsed, before any server or Redis is needed."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from arena.cli import cli

HUGE = str(2**64)


def _int_params(group: click.Group, prefix: tuple[str, ...] = ()
                ) -> list[tuple[tuple[str, ...], click.Command, click.Parameter]]:
    """Every (command path, command, parameter) of the tree under ``group`` whose type converts to int."""
    found = [(prefix, group, p) for p in group.params if isinstance(p.type, click.types.IntParamType)]
    ctx = click.Context(group, info_name="arena")
    for name in sorted(group.list_commands(ctx)):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            found += _int_params(command, prefix + (name,))
        elif command is not None:
            found += [(prefix + (name,), command, p) for p in command.params
                      if isinstance(p.type, click.types.IntParamType)]
    return found


INT_PARAMS = _int_params(cli)


def _flag(param: click.Parameter) -> str:
    return param.opts[0] if isinstance(param, click.Option) else (param.name or "?")


def _id(item: tuple[tuple[str, ...], click.Command, click.Parameter]) -> str:
    return " ".join(item[0]) + " " + _flag(item[2])


def test_the_sweep_finds_the_integer_options() -> None:
    names = {_id(item) for item in INT_PARAMS}
    assert {"tournament create --rounds", "serve --workers", "worker --concurrency", "play take5 --seed"} <= names
    assert len(names) >= 15, names


@pytest.mark.parametrize("item", INT_PARAMS, ids=_id)
def test_a_huge_integer_is_a_usage_error(item: tuple[tuple[str, ...], click.Command, click.Parameter]) -> None:
    """Parsed as the command line would be (``make_context``: the parameters are converted and checked, the given
    one first, and the command is not run)."""
    path, command, param = item
    args = [param.opts[0], HUGE] if isinstance(param, click.Option) else [HUGE]
    with pytest.raises(click.UsageError) as caught:
        command.make_context(" ".join(("arena", *path)), args, resilient_parsing=False)
    assert isinstance(caught.value, click.BadParameter), caught.value.format_message()
    message = caught.value.format_message()
    assert message.startswith("Invalid value for") and HUGE in message, message


def test_the_cli_says_it_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_REDIS_URL", raising=False)
    result = CliRunner().invoke(cli, ["tournament", "create", "--game", "take5", "--rounds", HUGE])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: Invalid value for '--rounds'"), result.output
    assert "Traceback" not in result.output and "unexpected" not in result.output
