"""The documentation site (mkdocs.yml, docs/) says what the code does.

- Every `arena` command in a shell block of README.md or of a docs page parses as the CLI would parse it: its
  command path exists, every option it gives is one of that command's options, and its arguments are complete.
  Placeholders (files, ids, tokens) are only checked for shape, not looked up.
- Every link of the README into docs/ names a page that exists (the strict site build checks the links between
  pages; the README is not one of them).
- The Python blocks of the pages compute what the arena computes: the deal-seed check of "Verifying deals" against
  ``arena.core.seeds``, and the in-process test of "Testing locally" passes with the README's first bot.
- `make test` builds the site with ``--strict``, and the site's output folder is git-ignored.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli import cli
from arena.core import seeds

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
CLI_PREFIX = ".venv/bin/arena"


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def page_block(page: Path, language: str) -> str:
    blocks = code_blocks(page.read_text(), language)
    assert len(blocks) == 1, f"{page.relative_to(ROOT)}: expected one {language} block, found {len(blocks)}"
    return blocks[0]


SUBSTITUTED = "0123456789abcdef" * 2  # what `$(cat my.secret)` prints in the docs' examples


def arena_commands(text: str) -> list[list[str]]:
    """The argument lists of every `.venv/bin/arena ...` command in the sh blocks of ``text`` (continuation lines
    joined, comments, redirections, pipes and `&` dropped; `a && b` is two commands; ``$(...)`` replaced by
    ``SUBSTITUTED``, as the shell would run it)."""
    commands: list[list[str]] = []
    for block in code_blocks(text, "sh"):
        for line in block.replace("\\\n", " ").splitlines():
            code = re.sub(r"\s+#.*$", "", line)
            for part in re.split(r"&&|\|", code):
                words = shlex.split(part.split(">", 1)[0].removesuffix("&"))
                if CLI_PREFIX in words:  # a $(command) becomes what it prints: here a secret's 32 hex digits
                    commands.append([re.sub(r"\$\([^)]*\)", SUBSTITUTED, w) for w in words[words.index(CLI_PREFIX) + 1:]])
    return commands


def parse(args: list[str]) -> list[str]:
    """Parses ``args`` as `arena ARGS` down to the last subcommand, without running anything; returns the command
    path. Raises ``click.UsageError`` for an unknown command or option, a missing argument or a bad value."""
    command: click.Command = cli
    ctx: click.Context | None = None
    path: list[str] = []
    name = "arena"
    while True:
        ctx = command.make_context(name, list(args), parent=ctx)
        if not isinstance(command, click.Group):
            return path
        rest = [*ctx._protected_args, *ctx.args]
        if not rest:
            return path
        resolved, sub, args = command.resolve_command(ctx, rest)
        assert resolved is not None and sub is not None
        name = resolved
        path.append(resolved)
        command = sub


DOC_COMMANDS = [(page.relative_to(ROOT).as_posix(), args) for page in [ROOT / "README.md", *PAGES]
                for args in arena_commands(page.read_text())]


def test_the_docs_show_many_commands() -> None:
    assert len(DOC_COMMANDS) >= 35
    assert {"README.md", "docs/bots/take5.md", "docs/organisers/sprt.md"} <= {page for page, _ in DOC_COMMANDS}


@pytest.mark.parametrize(("page", "args"), DOC_COMMANDS, ids=[f"{p}:{' '.join(a)[:60]}" for p, a in DOC_COMMANDS])
def test_every_arena_command_in_the_docs_parses(page: str, args: list[str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty folder holding an empty file for each file the command names (a bot, a record, a
    certificate), so a command that needs a file finds one and nothing is read from the repository."""
    for variable in [v for v in os.environ if v.startswith("ARENA_")]:
        monkeypatch.delenv(variable)
    monkeypatch.chdir(tmp_path)
    for word in args:
        if re.fullmatch(r"[\w.-]+\.(py|pem|key|json)", word):
            (tmp_path / word).touch()
    try:
        path = parse(args)
    except click.UsageError as exc:
        pytest.fail(f"{page}: `arena {shlex.join(args)}` does not parse: {exc.format_message()}")
    assert path, f"{page}: `arena {shlex.join(args)}` names no command"


def test_the_parser_refuses_what_the_cli_refuses() -> None:
    assert parse(["tournament", "verify", "t3", "--records"]) == ["tournament", "verify"]
    assert parse(["sprt", "a@1", "b@2", "--elo0", "-5"]) == ["sprt", "start"]
    with pytest.raises(click.NoSuchOption):
        parse(["tournament", "verify", "t3", "--recordz"])
    with pytest.raises(click.UsageError):
        parse(["tournamnet", "list"])
    with pytest.raises(click.MissingParameter):
        parse(["bot", "register", "lowrisk"])


def test_the_readme_links_into_docs_name_existing_pages() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)", (ROOT / "README.md").read_text())
    assert len(links) >= 15
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, f"README.md links to missing pages: {missing}"


def test_every_page_is_in_the_nav_or_marked_for_the_lead() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    nav = config.split("\nnav:\n", 1)[1]
    for page in PAGES:
        assert f": {page.relative_to(DOCS).as_posix()}" in nav, f"{page} is not in the nav of mkdocs.yml"


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**256 - 1), round_=st.integers(0, 10_000), deal=st.integers(0, 10_000),
       attempt=st.integers(0, 5), tournament=st.from_regex(r"t[0-9a-z-]{1,20}", fullmatch=True))
def test_the_verification_recipe_matches_the_arena(seed: int, round_: int, deal: int, attempt: int,
                                                   tournament: str) -> None:
    namespace: dict[str, object] = {}
    exec(page_block(DOCS / "organisers" / "verifying-deals.md", "python"), namespace)  # noqa: S102 - the page's code
    seed_hex = seeds.seed_hex(seed)
    assert namespace["commitment"](seed_hex) == seeds.seed_commitment(seed)  # type: ignore[operator]
    assert (namespace["deal_seed"](seed_hex, tournament, round_, deal, attempt)  # type: ignore[operator]
            == seeds.deal_seed(seed, tournament, round_, deal, attempt))


def test_the_testing_page_example_passes_with_the_first_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme_bot = code_blocks((ROOT / "README.md").read_text().split("## Write your first bot", 1)[1], "python")[0]
    assert '\nif __name__ == "__main__":' in readme_bot  # importable: serve() runs only when run as a program
    (tmp_path / "my_bot.py").write_text(readme_bot)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_bot", raising=False)
    namespace: dict[str, object] = {}
    exec(page_block(DOCS / "bots" / "testing.md", "python"), namespace)  # noqa: S102 - the page's code
    namespace["test_lowrisk_beats_random_play"]()  # type: ignore[operator]


def test_make_test_builds_the_site_strictly_and_its_output_is_ignored() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "MKDOCS := NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build" in makefile
    assert "\t$(MKDOCS) --strict" in recipe
    assert "site/" in (ROOT / ".gitignore").read_text().splitlines()
    assert "site_dir: site" in (ROOT / "mkdocs.yml").read_text()
