"""The help texts of `arena`, as `--help` prints them and as the CLI reference page (docs/reference/cli.md, made
by mkdocs-click) shows them: no text that reads as an HTML tag (``<data-dir>``: the page would swallow it), and
every ``ARENA_...`` variable a help text names is one that an option of the CLI reads."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from arena.cli import cli

TAG_LIKE = re.compile(r"<[A-Za-z/!][^<>\n]*>")  # what Markdown passes on as HTML: <data-dir>, <match id>, </x>
ENV_NAME = re.compile(r"\bARENA_[A-Z0-9][A-Z0-9_]*\b")
# The help's name for the pattern of every other option's variable, not a variable itself (the root's help).
PATTERN = "ARENA_COMMAND_OPTION"


def _commands() -> Iterator[tuple[tuple[str, ...], click.Command, click.Context]]:
    """Every command of the tree, the root included, with the context it runs in (its ``auto_envvar_prefix``)."""
    def walk(command: click.Command, path: tuple[str, ...],
             ctx: click.Context) -> Iterator[tuple[tuple[str, ...], click.Command, click.Context]]:
        yield path, command, ctx
        if isinstance(command, click.Group):
            for name, sub in sorted(command.commands.items()):
                yield from walk(sub, (*path, name), click.Context(sub, parent=ctx, info_name=name))
    yield from walk(cli, (), click.Context(cli, info_name="arena", **cli.context_settings))


COMMANDS = list(_commands())


def _help_texts(command: click.Command) -> list[str]:
    return [command.help or "", command.short_help or "", command.epilog or "",
            *(getattr(p, "help", None) or "" for p in command.params)]


def _options() -> list[tuple[click.Option, click.Context]]:
    return [(p, ctx) for _, command, ctx in COMMANDS for p in command.params if isinstance(p, click.Option)]


@pytest.mark.parametrize("path", [path for path, _, _ in COMMANDS], ids=lambda p: " ".join(p) or "arena")
def test_no_help_text_reads_as_an_html_tag(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="arena", terminal_width=200)
    assert result.exit_code == 0, result.output
    assert TAG_LIKE.findall(result.output) == [], " ".join(path)


def test_the_tag_check_finds_a_tag() -> None:
    assert TAG_LIKE.findall("saved in <data-dir>/tokens.json, default records/<match id>.json; 1 < 2 > 0") == [
        "<data-dir>", "<match id>"]


def _named_variables() -> dict[str, list[str]]:
    """Every ``ARENA_...`` name in a help text -> the commands whose help names it."""
    named: dict[str, list[str]] = {}
    for path, command, _ in COMMANDS:
        for text in _help_texts(command):
            for name in ENV_NAME.findall(text):
                named.setdefault(name, []).append(" ".join(("arena", *path)))
    return named


def test_help_texts_name_variables() -> None:
    named = _named_variables()  # the check below has something to check: the root's help names its examples
    assert {"ARENA_SERVER", "ARENA_ADMIN_TOKEN", "ARENA_SERVE_WORKERS", "ARENA_LADDER_JSON",
            "ARENA_TOURNAMENT_CREATE_BOTS", PATTERN} <= set(named)


@pytest.mark.parametrize("name", sorted(set(_named_variables()) - {PATTERN}))
def test_every_variable_a_help_text_names_is_read_by_an_option(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in list(os.environ):
        if var.startswith("ARENA_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv(name, "from-env")
    readers = [max(p.opts, key=len) for p, ctx in _options() if p.resolve_envvar_value(ctx) == "from-env"]
    assert readers, f"{name} (named by {', '.join(_named_variables()[name])}) is read by no option"


def test_the_pattern_is_no_variable_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PATTERN, "from-env")
    assert [p for p, ctx in _options() if p.resolve_envvar_value(ctx) == "from-env"] == []
