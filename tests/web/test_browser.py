"""The pages in headless Chromium against a live arena (``arena serve`` + ``arena web`` + sample bot processes, see
conftest.py): the ladder and its link to a bot, phone width without sideways scrolling, the 404 page, the 503 page
while the referee is down and its recovery when it is back. Screenshots go to tests/web/screenshots/."""

from __future__ import annotations

from typing import Any

from conftest import PHONE, screenshot
from web_helpers import WebArena


def _no_horizontal_overflow(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_the_ladder_lists_the_played_bots(web_arena: WebArena, played: dict[str, Any], page: Any) -> None:
    page.goto(f"{web_arena.url}/ladder/take5")
    rows = page.locator("table.ladder tbody tr")
    assert rows.count() == 2
    ladder = web_arena.json("ladder", "--game", "take5")
    shown = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(2)]
    assert shown == [e["bot"] for e in ladder["entries"]]
    screenshot(page, "ladder")
    assert page.console_errors == []


def test_the_ladder_fits_a_phone(web_arena: WebArena, played: dict[str, Any], browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(f"{web_arena.url}/ladder/take5")
        assert page.locator("table.ladder").is_visible()
        assert _no_horizontal_overflow(page)
        screenshot(page, "ladder-phone")
    finally:
        context.close()


def test_an_unknown_page_is_a_404_page(web_arena: WebArena, page: Any) -> None:
    answer = page.goto(f"{web_arena.url}/ladder/chess")
    assert answer.status == 404
    assert "no game named 'chess'" in page.locator("#not-found").inner_text()


def test_the_503_page_recovers_by_itself_when_the_referee_is_back(web_arena: WebArena, played: dict[str, Any],
                                                                  page: Any) -> None:
    web_arena.stop_referee()
    try:
        answer = page.goto(f"{web_arena.url}/ladder/take5")
        assert answer.status == 503
        assert "does not answer" in page.locator("#arena-down").inner_text()
        screenshot(page, "arena-down")
    finally:
        web_arena.start_referee()
    # The page reloads itself every few seconds: the ladder comes without any action of ours.
    page.locator("table.ladder").wait_for(timeout=60_000)
    assert page.url == f"{web_arena.url}/ladder/take5"
