"""The pages in headless Chromium against a live arena (``arena serve`` + ``arena web`` + sample bot processes, see
conftest.py): the ladder and its link to a bot, phone width without sideways scrolling, the 404 page, the 503 page
while the referee is down and its recovery when it is back. Screenshots go to tests/web/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest
from web_helpers import PHONE, WebArena, screenshot


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


def test_every_page_fits_a_phone(web_arena: WebArena, played: dict[str, Any], browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    tid = played["take5"]["id"]
    try:
        page = context.new_page()
        for path, name in (("/ladder/take5", "ladder-phone"), ("/", "home-phone"), ("/bots/heuristic", "bot-phone"),
                           ("/tournaments", "tournaments-phone"), (f"/tournaments/{tid}", "tournament-phone")):
            answer = page.goto(f"{web_arena.url}{path}")
            assert answer.status == 200, path
            assert _no_horizontal_overflow(page), f"{path} scrolls sideways at {PHONE['width']} px"
            screenshot(page, name)
        page.goto(f"{web_arena.url}/ladder/take5")
        assert page.locator("table.ladder").is_visible()
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


def test_the_ladder_links_to_a_bot_page(web_arena: WebArena, played: dict[str, Any], page: Any) -> None:
    page.goto(f"{web_arena.url}/ladder/taki")
    first = page.locator("table.ladder tbody tr").first.locator("td").nth(1).inner_text()
    page.get_by_role("link", name=first, exact=True).click()
    page.wait_for_url(f"{web_arena.url}/bots/{first}")
    assert page.locator("h1").inner_text() == f"Bot {first}"
    assert page.locator("table.versions tbody tr").count() == 1
    assert page.locator("#game-taki svg.chart").count() == 1
    assert "latency p95" in page.locator("#game-taki dl.latency").inner_text()
    screenshot(page, "bot")
    page.set_viewport_size(PHONE)  # the chart keeps a readable width and scrolls: it opens on its newest end
    page.reload()
    box = page.locator("#game-taki .chart-box")
    width, room, left = box.evaluate("b => [b.scrollWidth, b.clientWidth, b.scrollLeft]")
    assert width > room and left >= width - room - 1, (width, room, left)
    assert page.console_errors == []


def test_a_running_tournament_is_followed_without_reloading(web_arena: WebArena, played: dict[str, Any],
                                                           page: Any) -> None:
    rounds = 24
    t = web_arena.json("tournament", "create", "--game", "take5", "--bots", "random,heuristic", "--seats", "2",
                       "--rounds", str(rounds))
    page.goto(f"{web_arena.url}/tournaments/{t['id']}")
    page.evaluate("window.notReloaded = true")
    assert page.locator("#total").inner_text() == str(rounds)
    first = int(page.locator("#done").inner_text())
    assert page.locator("#state").inner_text() == "running" and first < rounds
    page.locator("#state", has_text="finished").wait_for(timeout=180_000)
    assert page.evaluate("window.notReloaded === true"), "the page was reloaded"
    assert page.locator("#done").inner_text() == str(rounds)
    assert page.locator("table.standings tbody tr").count() == 2
    assert page.locator("table.matches tbody tr").count() == rounds  # the newest matches came in too
    assert "verified" in page.locator("#verify").inner_text()  # and, once it ended, its seed and its check
    screenshot(page, "tournament")
    assert page.console_errors == []


WIDE = {"width": 1280, "height": 800}


def _table_fits(page: Any, table: str) -> bool:
    """True when ``table`` (a selector) is no wider than its scrolling box: every column is in view."""
    return bool(page.evaluate(f"(() => {{ const box = document.querySelector('{table}').closest('.scroll'); "
                              "return box.scrollWidth <= box.clientWidth; })()"))


def _header_height(page: Any, table: str) -> float:
    return float(page.locator(f"{table} thead").bounding_box()["height"])


@pytest.mark.parametrize("game", ["take5", "taki"])
def test_ladder_and_standings_show_every_column_at_1280_px_and_short_titles_on_a_phone(
        web_arena: WebArena, played: dict[str, Any], browser: Any, game: str) -> None:
    tid = played[game]["id"]
    for viewport in (WIDE, PHONE):
        context = browser.new_context(viewport=viewport)
        try:
            page = context.new_page()
            for path, table in ((f"/ladder/{game}", "table.ladder"), (f"/tournaments/{tid}", "table.standings")):
                assert page.goto(f"{web_arena.url}{path}").status == 200
                if viewport is WIDE:
                    assert _table_fits(page, table), f"{path}: columns off screen at {WIDE['width']} px"
                    screenshot(page, f"{table.split('.')[1]}-{game}-wide")
                else:  # the titles wrap to a few lines, not to a tall empty block
                    height = _header_height(page, table)
                    assert height < 80, f"{path}: header {height:.0f} px tall at {PHONE['width']} px"
        finally:
            context.close()


def test_a_bot_pages_own_result_is_in_view_on_a_phone(web_arena: WebArena, played: dict[str, Any],
                                                       browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    try:
        page = context.new_page()
        assert page.goto(f"{web_arena.url}/bots/heuristic").status == 200
        first = page.locator("table.matches tbody tr").first
        rank, score = first.locator("td.own").nth(0), first.locator("td.own").nth(1)
        assert " of 2" in rank.inner_text() and score.inner_text().isdigit()
        for cell in (rank, score):
            box = cell.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        screenshot(page, "bot-matches-phone")
    finally:
        context.close()


def test_the_home_page_shows_the_head_of_each_ladder(web_arena: WebArena, played: dict[str, Any], page: Any) -> None:
    page.goto(f"{web_arena.url}/")
    for game in ("take5", "taki"):
        ladder = web_arena.json("ladder", "--game", game)
        rows = page.locator(f"#ladder-{game} table.top tbody tr")
        shown = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(rows.count())]
        assert shown == [e["bot"] for e in ladder["entries"]][:5] and shown
    screenshot(page, "home")
    page.locator("#ladder-taki").get_by_role("link", name="Full ladder").click()
    page.wait_for_url(f"{web_arena.url}/ladder/taki")
    assert page.console_errors == []
