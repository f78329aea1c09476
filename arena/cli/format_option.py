"""``--format`` of ``arena tournament create``: the formats CreateTournament creates, read from the registry
(``arena.tournaments.formats``) when the option is first used or shown, not when the CLI starts; no format is
named here."""

from __future__ import annotations

from typing import Any

import click

from arena.cli.options import ArenaOption, option


class FormatChoice(click.Choice[str]):
    """``--format``: the formats CreateTournament creates (``arena.tournaments.formats.creatable``: the built-in
    ones and any another package registers), each also with hyphens for underscores. The registry is read when the
    option is first used or shown, not when the CLI starts."""

    def __init__(self) -> None:
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        from arena.tournaments.formats import creatable

        names = creatable()
        return (*names, *(n.replace("_", "-") for n in names if "_" in n))

    @choices.setter
    def choices(self, _value: Any) -> None:  # click.Choice sets it; the registry says it here
        pass


class FormatOption(ArenaOption):
    """``--format``, whose help lists every format CreateTournament creates with its ``Format.summary``, read from
    the registry when the help is shown."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from arena.tournaments.formats import formats

        listed = " ".join(f"{f.name}: {f.summary or f.title}." for f in formats().values() if f.option_field)
        self.help = f"Tournament format. {listed} `arena sprt` runs an SPRT. Hyphens may stand for underscores."
        return super().get_help_record(ctx)


def _format_name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    return value.replace("-", "_") if value else value


format_option = option("--format", "format_name", type=FormatChoice(), cls=FormatOption, default=None,
                       callback=_format_name)
"""The decorator of ``--format NAME``: the command receives ``format_name`` (underscores), None when not given."""
