"""Fixtures of the web tests, on real parts: one arena per test module (``arena serve`` with an embedded worker on
the session's redis-server, ``arena web`` reading it, sample bot processes registered through the CLI, and one
finished round robin of each game), and headless Chromium driven by Playwright.

The browser is Debian's ``/usr/bin/chromium`` (``.ci/run`` installs it); Playwright downloads nothing. When it
cannot start, the browser tests FAIL; ``ARENA_WEB_TESTS_OPTIONAL=1`` lets them skip instead (a machine without
Chromium, locally only).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from web_helpers import DESKTOP, Proc, WebArena, free_port, serve_process

from arena.match.local_bots import start_bots
from arena.store.redis_server import PrivateRedis

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# Sample bots of the module's arena: (sample, game).
SAMPLE_BOTS = [("random", "take5"), ("heuristic", "take5"), ("taki-random", "taki"), ("taki-heuristic", "taki")]


@pytest.fixture(scope="module")
def web_arena(redis_server: PrivateRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebArena]:
    """The module's arena, its sample bots registered (take5: random, heuristic; taki: taki-random,
    taki-heuristic); nothing played yet (see ``played``)."""
    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    root = tmp_path_factory.mktemp("web-arena")
    data_dir = root / "data"
    server = f"127.0.0.1:{free_port()}"
    serve = serve_process(server, data_dir, redis_server.url)
    web = Proc(["web", "--listen", "127.0.0.1:0", "--server", server], root / "web.log")
    arena = WebArena(server=server, url="", data_dir=data_dir, redis_url=redis_server.url, serve=serve, web=web)
    try:
        arena.url = web.wait_for("arena web serving ").split("serving ", 1)[1].split()[0].rstrip("/")
        arena.bots = start_bots([f"sample:{sample}" for sample, _ in SAMPLE_BOTS])
        for (_, game), bot in zip(SAMPLE_BOTS, arena.bots):
            arena.json("bot", "register", bot.name, bot.endpoint, "--game", game)
        yield arena
    finally:
        for bot in arena.bots:
            bot.stop()
        web.stop()
        arena.serve.stop()


@pytest.fixture(scope="module")
def played(web_arena: WebArena) -> dict[str, Any]:
    """One finished round robin of each game between the module's bots: ``{game: Tournament as JSON}``."""
    done = {}
    for game in ("take5", "taki"):
        bots = ",".join(b.name for (_, g), b in zip(SAMPLE_BOTS, web_arena.bots) if g == game)
        done[game] = web_arena.json("tournament", "create", "--game", game, "--bots", bots, "--seats", "2",
                                    "--rounds", "2", "--wait")
    return done


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (``CHROMIUM``) under Playwright, for the module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        except Exception as exc:
            if os.environ.get("ARENA_WEB_TESTS_OPTIONAL") == "1":
                pytest.skip(f"Chromium at {CHROMIUM} does not start ({exc}); ARENA_WEB_TESTS_OPTIONAL=1")
            pytest.fail(f"Chromium at {CHROMIUM} does not start: {exc} (install Debian's chromium; "
                        f"ARENA_WEB_TESTS_OPTIONAL=1 skips the browser tests locally)")
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser page at desktop size; its console errors (a CSP refusal, a script error) are in
    ``page.console_errors``."""
    context = browser.new_context(viewport=DESKTOP)
    tab = context.new_page()
    tab.console_errors = []
    tab.on("console", lambda m: tab.console_errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: tab.console_errors.append(str(e)))
    try:
        yield tab
    finally:
        context.close()
