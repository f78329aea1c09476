"""The format registry: every built-in is found by name, the CLI offers exactly the formats CreateTournament
creates, and a request maps to its format (older requests without the oneof keep their meaning)."""

from __future__ import annotations

import pytest

from arena.cli.format_option import FormatChoice
from arena.core.errors import TournamentError
from arena.tournaments.formats import BUILTIN, Format, creatable, format_of_request, formats, get_format, register
from arena_sdk.pb import arena_pb2


def test_every_builtin_format_is_registered_under_its_name() -> None:
    found = formats()
    assert list(found)[:len(BUILTIN)] == list(BUILTIN)
    assert all(f.name == name and isinstance(f, Format) for name, f in found.items())
    assert {n for n, f in found.items() if f.controlled} >= {"until_separated", "sprt", "swiss"}
    assert not found["round_robin"].controlled


def test_the_cli_offers_the_formats_create_tournament_creates() -> None:
    offered = FormatChoice().choices
    assert sorted(n for n in offered if "-" not in n) == sorted(creatable())
    assert "round-robin" in offered and "until-separated" in offered  # hyphens may stand for underscores
    assert "sprt" not in creatable()  # created with CreateSprt


def test_requests_map_to_their_format() -> None:
    def of(**fields: object) -> tuple[str, dict[str, object]]:
        fmt, options = format_of_request(arena_pb2.CreateTournamentRequest(game="take5", **fields))  # type: ignore[arg-type]
        return fmt.name, options

    assert of() == ("round_robin", {})
    assert of(until_separated=True, max_matches=30) == ("until_separated", {"max_matches": 30})
    assert of(separated=arena_pb2.UntilSeparatedOptions(max_matches=7)) == ("until_separated", {"max_matches": 7})
    assert of(swiss=arena_pb2.SwissOptions()) == ("swiss", {"first_round": "rating"})
    assert of(swiss=arena_pb2.SwissOptions(first_round="random")) == ("swiss", {"first_round": "random"})
    assert of(round_robin=arena_pb2.RoundRobinOptions()) == ("round_robin", {})
    for bad in ({"max_matches": 3}, {"until_separated": True, "swiss": arena_pb2.SwissOptions()},
                {"swiss": arena_pb2.SwissOptions(first_round="best")}):
        with pytest.raises(TournamentError):
            of(**bad)


def test_unknown_and_clashing_formats_are_refused() -> None:
    with pytest.raises(TournamentError, match="known formats: round_robin"):
        get_format("knockout")

    class Clash(Format):
        name = "clash"
        option_field = "swiss"

    with pytest.raises(TournamentError, match="option field 'swiss' is taken"):
        register(Clash())
    assert "clash" not in formats()


def test_the_registry_is_whole_for_threads_that_ask_at_once() -> None:
    """A fresh process whose 8 threads ask for the formats at the same moment (a worker's first matches): every
    thread sees every format, none an empty or partial registry."""
    import subprocess
    import sys

    code = ("import threading\n"
            "from arena.tournaments import formats\n"
            "out, barrier = [], threading.Barrier(8)\n"
            "def ask():\n"
            "    barrier.wait()\n"
            "    out.append(sorted(formats.formats()))\n"
            "threads = [threading.Thread(target=ask) for _ in range(8)]\n"
            "[t.start() for t in threads]\n"
            "[t.join() for t in threads]\n"
            "print(len(out), len({tuple(x) for x in out}), len(out[0]))\n")
    for _ in range(3):
        answers, distinct, count = map(int, subprocess.run([sys.executable, "-c", code], capture_output=True,
                                                           text=True, check=True).stdout.split())
        assert (answers, distinct) == (8, 1) and count >= 4


def test_the_format_help_and_the_default_rounds_come_from_each_format() -> None:
    """``--format``'s help lists every format CreateTournament creates with its summary, read from the registry
    (no format named in the CLI), and a request without rounds gets its format's default."""
    from click.testing import CliRunner

    from arena.cli import cli
    from arena.core.config import DEFAULTS

    shown = " ".join(CliRunner().invoke(cli, ["tournament", "create", "--help"], terminal_width=100).output.split())
    for name in creatable():
        assert formats()[name].summary and f"{name}: {formats()[name].summary}." in shown, name
    assert get_format("round_robin").default_rounds(5) == DEFAULTS.rounds
    assert get_format("swiss").default_rounds(16) == 6  # ceil(log2(16)) + 2
