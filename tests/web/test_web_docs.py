"""The documentation site under /docs (``arena.web.docs``): in process on a small site of our own (its files, the
redirect, the 404s, the policy that admits exactly its inline scripts), then the real site ``make docs`` builds,
served by an ``arena web`` process and read in headless Chromium from the ladder's "Docs" link, and its 404 page,
whose links, styles and scripts point under /docs/ (tools/mkdocs_hooks.py) at any depth; the CLI reference page (the
help texts, through mkdocs-click) fits a phone and shows every example block of a help text (click's ``\\b``
paragraphs) line by line in a code block."""

from __future__ import annotations

import base64
import hashlib
import html
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from starlette.testclient import TestClient
from web_helpers import PHONE, Proc, screenshot

from arena.cli import cli
from arena.web import create_app
from arena.web.app import CONTENT_SECURITY_POLICY, WebOptions
from arena.web.docs import DEFAULT_DOCS_DIR, inline_script_hashes

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "var x = 1;"


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    (folder / "bots").mkdir(parents=True)
    (folder / "index.html").write_text(f"<h1>Home</h1><script>{SCRIPT}</script>"
                                       '<script id="c" type="application/json">{"a": 1}</script>'
                                       '<script src="assets/bundle.js"></script>')
    (folder / "bots" / "take5.html").write_text("<h1>Your first Take 5 bot</h1><script>var y = 2;</script>")
    (folder / "bots" / "index.html").write_text("<h1>Bots</h1>")
    (folder / "404.html").write_text("<h1>Not here</h1>")
    (tmp_path / "secret.txt").write_text("outside the site")
    return folder


def _client(dead_endpoint: str, docs: Path | None) -> TestClient:
    return TestClient(create_app(WebOptions(server=dead_endpoint, docs=docs)), follow_redirects=False)


def test_the_site_is_served_under_docs(site: Path, dead_endpoint: str) -> None:
    with _client(dead_endpoint, site) as client:
        moved = client.get("/docs")
        assert moved.status_code == 308 and moved.headers["location"] == "/docs/"
        home = client.get("/docs/")
        assert home.status_code == 200 and "<h1>Home</h1>" in home.text
        assert "<h1>Your first Take 5 bot</h1>" in client.get("/docs/bots/take5.html").text
        assert "<h1>Bots</h1>" in client.get("/docs/bots/").text
        missing = client.get("/docs/no-such-page.html")
        assert missing.status_code == 404 and "Not here" in missing.text
        assert client.get("/docs/../secret.txt").status_code == 404
        assert "outside the site" not in client.get("/docs/%2e%2e/secret.txt").text


def test_the_sites_policy_admits_its_own_inline_scripts_only(site: Path, dead_endpoint: str) -> None:
    assert inline_script_hashes(site) == sorted([_sha(SCRIPT), _sha("var y = 2;")])
    with _client(dead_endpoint, site) as client:
        policy = client.get("/docs/").headers["content-security-policy"]
        scripts = next(p for p in policy.split(";") if p.strip().startswith("script-src")).split()
        assert scripts[1:] == ["'self'", *sorted([_sha(SCRIPT), _sha("var y = 2;")])]
        assert "unsafe-inline" not in " ".join(scripts) and "frame-ancestors 'none'" in policy
        assert "https:" not in policy and "http:" not in policy
        answer = client.get("/docs/bots/take5.html")
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["cache-control"] == "no-cache"
        # the rest of the app keeps its own, stricter policy
        assert client.get("/nowhere").headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_without_a_built_site_docs_says_how_to_build_it(tmp_path: Path, dead_endpoint: str) -> None:
    for docs in (None, tmp_path / "empty"):
        with _client(dead_endpoint, docs) as client:
            for path in ("/docs", "/docs/", "/docs/bots/take5.html"):
                answer = client.get(path)
                assert answer.status_code == 404 and "run `make docs`" in answer.text, (docs, path)
            assert client.get("/api/ladder/take5").status_code == 503  # the rest of the app is untouched


def test_a_site_built_after_the_app_started_is_served_without_a_restart(site: Path, tmp_path: Path,
                                                                      dead_endpoint: str) -> None:
    later = tmp_path / "later"
    with _client(dead_endpoint, later) as client:
        assert client.get("/docs/").status_code == 404
        shutil.copytree(site, later)  # `make docs` run while the pages are up
        assert client.get("/docs", follow_redirects=False).status_code == 308
        answer = client.get("/docs/")
        assert answer.status_code == 200 and "content-security-policy" in answer.headers


@pytest.fixture(scope="module")
def built_site() -> Path:
    """The repository's site: ``make test`` builds it before the tests; built here when it is missing."""
    if not (DEFAULT_DOCS_DIR / "index.html").is_file():
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet"], cwd=ROOT, check=True,
                       env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)})
    return DEFAULT_DOCS_DIR


@pytest.fixture
def docs_web(built_site: Path, dead_endpoint: str, tmp_path: Path) -> Iterator[str]:
    web = Proc(["web", "--listen", "127.0.0.1:0", "--server", dead_endpoint, "--docs", str(built_site)],
               tmp_path / "web.log")
    try:
        yield web.wait_for("arena web serving ").split("serving ", 1)[1].split()[0].rstrip("/")
    finally:
        web.stop()


def test_the_real_site_opens_from_the_pages_in_a_browser(docs_web: str, page: Any) -> None:
    page.goto(f"{docs_web}/ladder/take5")  # the referee is down: the 503 page still has the header's links
    page.click("header nav a[href='/docs/']")
    page.wait_for_url(f"{docs_web}/docs/")
    page.console_errors.clear()  # the 503 answer of the ladder page is logged; the site's own page starts here
    page.reload()
    assert page.title().startswith("Bot arena")
    page.locator("article a[href='bots/take5.html']").first.click()  # the link in the home page's text
    page.wait_for_url("**/docs/bots/take5.html")
    assert "Take 5" in page.locator("h1").first.inner_text()
    screenshot(page, "docs-take5")
    # the theme's page scripts, its file:// search shim included, run under the site's policy: nothing refused
    assert page.console_errors == [], page.console_errors


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_real_sites_404_page_links_under_docs(docs_web: str, page: Any) -> None:
    for missing in ("/docs/no-such-page.html", "/docs/bots/deeper/no-such-page.html"):
        status, text = _get(docs_web + missing)
        assert status == 404 and "404" in text, missing
        stylesheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', text)
        assert stylesheets and all(href.startswith("/docs/assets/") for href in stylesheets), stylesheets
        assert 'href="/docs/index.html"' in text and 'href="/docs/bots/take5.html"' in text
        assert not re.search(r'(?:href|src)="/(?!docs/)', text), "a root address outside /docs/"
        scripts = re.findall(r'<script src="(/[^"]+)"', text)
        assert scripts and all(src.startswith("/docs/assets/") for src in scripts), scripts
        for url in (*stylesheets, *scripts):
            assert _get(docs_web + url)[0] == 200, url
    # in a browser: styled by the theme (its stylesheet applied), scripts running, its link home into the site
    page.set_viewport_size({"width": 1280, "height": 900})  # wide enough for the theme's navigation beside the text
    page.goto(f"{docs_web}/docs/bots/deeper/no-such-page.html")
    assert page.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
    page.click("nav a.md-nav__link[href='/docs/index.html']")  # Home, in the site's navigation
    page.wait_for_url(f"{docs_web}/docs/index.html")
    assert page.title().startswith("Bot arena")
    refused = [e for e in page.console_errors if "404" not in e]
    assert refused == [], refused


def test_the_cli_reference_page_fits_a_phone(docs_web: str, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    try:
        page = context.new_page()
        assert page.goto(f"{docs_web}/docs/reference/cli.html").status == 200
        assert page.locator("[id='arena-serve']").count() == 1  # the generated commands are there
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the CLI reference is {width} px wide at {PHONE['width']} px"
        screenshot(page, "docs-cli-phone")
    finally:
        context.close()


def _example_blocks(command: click.Command) -> Iterator[tuple[str, list[str]]]:
    """Every example block of the help texts, command by command: (command path, the block's lines, stripped). A
    block is a paragraph that starts with click's ``\\b``, which ``--help`` prints line by line, unwrapped."""
    def walk(command: click.Command, path: str) -> Iterator[tuple[str, list[str]]]:
        for paragraph in (command.help or "").split("\n\n"):
            lines = paragraph.strip("\n").splitlines()
            if lines and lines[0].strip() == "\b":
                yield path, [line.strip() for line in lines[1:] if line.strip()]
        for name, sub in sorted(getattr(command, "commands", {}).items()):  # as mkdocs-click: hidden ones left out
            if not sub.hidden:
                yield from walk(sub, f"{path} {name}")
    yield from walk(command, "arena")


def _pre_lines(page: str) -> set[str]:
    """The lines of every pre block of an HTML page, tags removed, entities decoded, stripped."""
    return {html.unescape(re.sub(r"<[^>]+>", "", line)).strip()
            for block in re.findall(r"<pre[^>]*>(.*?)</pre>", page, flags=re.S) for line in block.splitlines()}


def test_the_cli_reference_shows_each_example_line_on_its_own_line_in_a_code_block(built_site: Path) -> None:
    in_pre = _pre_lines((built_site / "reference" / "cli.html").read_text())
    # the root's "A typical session": eight command lines, most with a # comment, each a line of a code block
    session = [line.strip() for line in (cli.help or "").splitlines() if line.strip().startswith(("arena ", "python "))]
    assert len(session) == 8 and session[0].startswith("arena serve ") and "# referee" in session[0], session
    assert [line for line in session if line not in in_pre] == []
    # and so every example block of every command
    blocks = list(_example_blocks(cli))
    assert len(blocks) >= 20 and {"arena", "arena sprt", "arena play take5"} <= {path for path, _ in blocks}
    missing = [(path, line) for path, lines in blocks for line in lines if line not in in_pre]
    # the shape that both read well: "Examples:", a blank line, then a \b paragraph indented four more spaces
    # (a Markdown code block on the page; --help prints it unwrapped)
    assert missing == [], missing


def test_no_page_of_the_site_loads_a_script_or_style_from_another_origin(built_site: Path) -> None:
    """Arenas run offline and the site's policy admits its own files only: the offline plugin's file:// search
    shim (it would link https://unpkg.com/iframe-worker/shim) is served with the site."""
    pages = sorted(built_site.rglob("*.html"))
    foreign = [(str(p.relative_to(built_site)), src) for p in pages
               for src in re.findall(r'<(?:script|link)[^>]+(?:src|href)="((?:https?:)?//[^"]+)"', p.read_text())]
    assert len(pages) > 20 and foreign == [], foreign[:5]
    assert all("assets/javascripts/iframe-worker-shim.js" in p.read_text() for p in pages if p.name != "404.html")
