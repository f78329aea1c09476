"""At 320 px (the narrowest phone) what a newcomer reads stays readable, in headless Chromium (conftest's
``browser``) against the module's live arena and, where a page needs a moment the arena cannot hold still (matches
playing now) or a record of a chosen shape, on a fake reader or a local record file:

- a wide table (a ladder, standings, a bot's newest matches, the bots) scrolled sideways in its box keeps its rank
  and bot (or match) column in view, on top of the scrolled cells (the bot column scrolled away before);
- the header holds the name and the four menu links (Docs too) in two lines (three before, 139 px);
- the links of the lists of tournaments and matches playing now, and the footer's, are finger-sized (15 x 18 px
  before), and no larger at desktop width;
- a bot page's chart, opened on its newest end, shows its x axis's title whole ("d matches" before); a tournament's
  ratings chart's text is at least 10 px on the screen;
- the viewer's last step of a finished match does not say a choice is hidden; the seats' names break between
  words or before @VERSION, never inside a word ("montecarl o@1.0"); its buttons have names and its keys are said."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_records import play_record
from web_helpers import FAKE_SERVER, FakeReader, WebArena, app_of, mobile_page

from arena.web.app import WebOptions
from arena.web.serving import WebServer
from arena_sdk.games import take5
from arena_sdk.pb import arena_pb2

NARROW = {"width": 320, "height": 700}
HIT = 40  # px: the least height of a finger-sized link (td links and the menu's are 43)

# the box's visible rect, and the rect of row 0's cell ``col`` (0-based) of each table that scrolls, once scrolled to
# its right end; the element on top at that cell's centre is the cell (or inside it)
PINNED = """col => [...document.querySelectorAll('.scroll.pin, .scroll.pin2')]
  .filter(box => box.scrollWidth > box.clientWidth).map(box => {
    box.scrollLeft = box.scrollWidth;
    window.scrollTo(0, box.getBoundingClientRect().top + window.scrollY - 100);  /* elementFromPoint: on screen */
    const room = box.getBoundingClientRect();
    const cells = [...box.querySelectorAll('tbody tr:first-child > td')].slice(0, box.classList.contains('pin2') ? 2 : 1);
    return cells.map(cell => {
      const r = cell.getBoundingClientRect(), x = (r.left + Math.min(r.right, room.right)) / 2, y = (r.top + r.bottom) / 2;
      const top = document.elementFromPoint(x, y);
      return {text: cell.innerText, left: r.left - room.left, right: room.right - r.right, onTop: cell.contains(top),
              scrolled: box.scrollLeft};
    });
  })"""


@pytest.fixture
def narrow(browser: Any) -> Iterator[Any]:
    with mobile_page(browser, NARROW) as page:
        yield page


def _fits(page: Any) -> bool:
    return bool(page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"))


def _size(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def test_a_scrolled_tables_rank_and_bot_stay_in_view_at_320_px(web_arena: WebArena, played: dict[str, Any],
                                                              narrow: Any) -> None:
    tid = played["take5"]["id"]
    pages = {"/ladder/take5": 1, "/ladder/taki": 1, f"/tournaments/{tid}": 2, "/bots/heuristic": 2, "/bots": 1}
    for path, tables in pages.items():
        assert narrow.goto(f"{web_arena.url}{path}").status == 200
        assert _fits(narrow), f"{path} scrolls sideways at 320 px"
        boxes = narrow.evaluate(PINNED)
        assert len(boxes) >= tables, (path, boxes)  # these tables are wider than 288 px: they scroll
        for cells in boxes:
            for cell in cells:  # e.g. "heuristic@1.0" beside the history, not scrolled away (left -496 px before)
                assert cell["scrolled"] > 0 and cell["left"] >= 0 and cell["right"] >= 0 and cell["onTop"], \
                    (path, cell)
    narrow.goto(f"{web_arena.url}/ladder/taki")  # a bot name longer than 7 rem goes on to a second line
    assert narrow.locator("table.ladder tbody tr td:nth-child(2) a").first.inner_text() == "taki-heuristic@1.0"
    assert _size(narrow, "table.ladder tbody tr td:nth-child(2)")["width"] <= 7 * 16 + 16


def test_the_header_is_two_lines_at_320_px(web_arena: WebArena, played: dict[str, Any], narrow: Any) -> None:
    narrow.goto(f"{web_arena.url}/ladder/take5")
    links = narrow.locator("header.top nav a")
    assert "Docs" in links.all_inner_texts()  # the menu's longest form
    tops = {round(links.nth(i).bounding_box()["y"]) for i in range(links.count())}
    assert len(tops) == 1, tops  # the menu on one line, below the name (Docs on a third line before)
    height = _size(narrow, "header.top")["height"]
    assert height <= 100, height  # 139 px before


def test_the_lists_links_are_finger_sized_on_a_phone_and_not_at_desktop(web_arena: WebArena, played: dict[str, Any],
                                                                        narrow: Any, page: Any) -> None:
    narrow.goto(f"{web_arena.url}/")
    for selector in ("ul.cards a", "footer a"):  # a tournament's id ("t4", 15 x 18 px), /api/ (28 x 15 px)
        box = _size(narrow, selector)
        assert box["height"] >= HIT and box["width"] >= 44, (selector, box)
    page.goto(f"{web_arena.url}/")  # at desktop width the list stays as dense as before
    assert _size(page, "ul.cards a")["height"] < 25


class _Playing(FakeReader):
    """t9: a running round robin whose worker is playing three of its matches."""

    async def call(self, method: str, request: Any) -> Any:
        if method == "GetTournament":
            return arena_pb2.Tournament(id="t9", game="take5", format="round_robin", state="running",
                                        seats_per_match=2, bots=["a@1", "b@1"], matches_total=10, matches_done=2,
                                        seed_commitment="ab" * 32)
        if method == "GetStandings":
            return arena_pb2.Standings(tournament_id="t9", entries=[
                arena_pb2.StandingsEntry(rank=k + 1, bot=b, points=2.0 - k, matches=2, rating=1500.0)
                for k, b in enumerate(["a@1", "b@1"])])
        if method == "ListWorkers":
            return arena_pb2.ListWorkersResponse(workers=[arena_pb2.WorkerInfo(
                name="w1", alive=True, concurrency=3, running=[f"t9-{k:06d}" for k in range(2, 5)])])
        return self.empty_or_not_found(method)


def test_the_matches_playing_now_are_finger_sized_links_at_320_px(narrow: Any) -> None:
    server = WebServer(WebOptions(server=FAKE_SERVER), "127.0.0.1:0", app=app_of(_Playing()))
    server.start()
    try:
        narrow.goto(f"{server.url().rstrip('/')}/tournaments/t9")
        assert narrow.locator("#playing a").count() == 3
        box = _size(narrow, "#playing a")
        assert box["height"] >= HIT and box["width"] >= 44, box  # 18 px tall before
        assert _fits(narrow)
    finally:
        server.stop()


def test_the_charts_read_whole_at_320_px(web_arena: WebArena, played: dict[str, Any], narrow: Any) -> None:
    narrow.goto(f"{web_arena.url}/bots/heuristic")
    box = narrow.locator("#game-take5 .chart-box")
    width, room, left = box.evaluate("b => [b.scrollWidth, b.clientWidth, b.scrollLeft]")
    assert width > room and left >= width - room - 1  # opened on its newest end, as before
    title, edges = box.evaluate("""b => { const r = b.getBoundingClientRect();
        const t = [...b.querySelectorAll('text')].find(t => t.textContent === 'rated matches');
        const q = t.getBoundingClientRect(); return [t.textContent, [q.left - r.left, r.right - q.right]]; }""")
    assert title == "rated matches" and min(edges) >= 0, edges  # "d matches" before: cut at the box's left edge
    tid = played["take5"]["id"]
    narrow.goto(f"{web_arena.url}/tournaments/{tid}")
    sizes = narrow.locator(".chart-box svg.chart.narrow text").evaluate_all(
        "ts => ts.map(t => [t.textContent, t.getBoundingClientRect().width > 0 && "
        "parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a])")
    assert sizes and all(size >= 10 for _, size in sizes), sizes  # 7.9-8.6 px before
    assert _fits(narrow)


NAMES = ["montecarlo@1.0", "heuristic-tuned@2.0", "random@1.0", "experimental-gapbot@2.0.1", "montecarlodeep@3.1"]

# per cell of the viewer's tables naming a seat: the characters before which its lines break (a break that is not
# after a space or a hyphen, nor before "@", is inside a word)
BREAKS = """sel => [...document.querySelectorAll(sel)].map(cell => {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), chars = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    for (let i = 0; i < n.length; i += 1) {
      const range = document.createRange(); range.setStart(n, i); range.setEnd(n, i + 1);
      const r = range.getClientRects()[0]; if (r) { chars.push([n.data[i], r.top]); }
    }
  }
  const bad = [];
  for (let i = 1; i < chars.length; i += 1) {
    if (chars[i][1] > chars[i - 1][1] + 2 && !/[ -]/.test(chars[i - 1][0]) && chars[i][0] !== '@') {
      bad.push(chars.slice(Math.max(0, i - 6), i).map(c => c[0]).join('') + '|' +
               chars.slice(i, i + 4).map(c => c[0]).join(''));
    }
  }
  return [cell.textContent, bad];
})"""


def _last_choice_record(tmp_path: Path) -> Path:
    """A local 5-seat Take 5 record whose last decision is a chosen card (sealed from the public when made)."""
    for seed in range(1, 60):
        record, _ = play_record("take5", 5, seed, config=take5.Take5Config(limit=8))
        if record["decisions"][-1]["kind"] == take5.CHOOSE_CARD:
            break
    for seat, name in zip(record["seats"], NAMES):
        seat["name"] = name
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    return path


def test_the_viewers_last_step_names_and_controls_at_320_px(narrow: Any, dead_endpoint: str, tmp_path: Path) -> None:
    server = WebServer(WebOptions(server=dead_endpoint, record=_last_choice_record(tmp_path)), "127.0.0.1:0")
    server.start()
    try:
        url = f"{server.url().rstrip('/')}/record?view=public"
        narrow.goto(f"{url}&turn=1")
        narrow.wait_for_selector("#viewer[data-ready='1']", timeout=30_000)
        assert "hidden from this view" in narrow.locator(".decision").inner_text()  # a card chosen: still sealed
        narrow.keyboard.press("End")
        said = narrow.locator(".decision").inner_text()
        assert narrow.locator("#v-over").count() == 1 and ": choose card" in said, said
        assert "hidden" not in said, said  # the match is over: nothing is being chosen
        for cell, bad in narrow.evaluate(BREAKS, "#seats td:nth-child(2), #take5-scores td:first-child"):
            assert not bad, (cell, bad)  # "montecarl|o@1.0" before
        assert _fits(narrow)
        labels = narrow.locator(".controls button").evaluate_all(
            "bs => bs.map(b => [b.textContent, b.getAttribute('aria-label')])")
        assert all(label for text, label in labels if text not in ("play", "pause")), labels
        keys = narrow.locator("#v-keys")
        assert keys.is_visible() and "Home" in keys.inner_text() and "Space" in keys.inner_text()
        assert keys.bounding_box()["height"] <= 45  # two small lines at most on the narrowest phone
    finally:
        server.stop()


def test_a_ladder_still_fits_at_desktop_width(web_arena: WebArena, played: dict[str, Any], page: Any) -> None:
    page.goto(f"{web_arena.url}/ladder/take5")
    assert page.evaluate("(() => { const b = document.querySelector('.scroll.pin2'); "
                         "return b.scrollWidth <= b.clientWidth; })()")
    assert page.console_errors == []
