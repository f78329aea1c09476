"""The match viewer in headless Chromium against a live arena (``arena serve`` + ``arena web`` + sample bot
processes, see conftest.py): a finished Take 5 match stepped to its last turn shows the record's rows; a Taki
match shows the leading card and card counts of the record at several turns; perspectives show only their own
hand (public: none); a running match is followed live without reloading and never shows a hand; an unknown
match is a 404 page. Screenshots go to tests/web/screenshots/ (viewer-take5.png, viewer-taki.png, ...)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from web_helpers import PHONE, WebArena, screenshot, wait_until

from arena.match.local_bots import start_bots
from arena_sdk import wire
from arena_sdk.games import GAMES, taki
from arena_sdk.games.taki.cards import tokens

SLUGGISH_BOT = str(Path(__file__).resolve().parent.parent / "cli" / "bots" / "sluggish_bot.py")


def _get(web_arena: WebArena, path: str) -> Any:
    with urllib.request.urlopen(f"{web_arena.url}{path}", timeout=30) as answer:
        return json.loads(answer.read())


def _match_ids(web_arena: WebArena, tournament: dict[str, Any]) -> list[str]:
    matches = web_arena.json("match", "list", "--tournament", tournament["id"])
    return sorted(m["match_id"] for m in matches)


def _states(record: dict[str, Any]) -> list[Any]:
    """The engine state before each decision of ``record`` and after the last (replayed from the rules)."""
    engine = GAMES[record["game"]]
    config = wire.config_from_dict(record["game"], record["config"])
    state = engine.new_game(len(record["seats"]), config, seed=record["seed"],
                            deals=tuple(engine.deal_from_dict(d) for d in record["deals"]))
    states = [state]
    for dec in record["decisions"]:
        state = engine.apply(state, dec["seat"], engine.action_from_dict(dec["kind"], dec["action"]))
        states.append(state)
    return states


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#viewer[data-ready='1']", timeout=30_000)


def _rows_shown(page: Any) -> list[list[int]]:
    rows = page.locator("#take5-rows li.row")
    return [[int(t) for t in rows.nth(r).locator(".card").all_inner_texts()] for r in range(rows.count())]


def test_a_finished_take5_match_stepped_to_its_end_shows_the_records_rows(web_arena: WebArena,
                                                                           played: dict[str, Any],
                                                                           page: Any) -> None:
    match_id = _match_ids(web_arena, played["take5"])[0]
    record = _get(web_arena, f"/api/matches/{match_id}/record")
    final = _states(record)[-1]
    _open(page, f"{web_arena.url}/matches/{match_id}?view=all")
    count = int(page.get_attribute("#viewer", "data-frames-count"))
    assert count > len(record["decisions"])  # reveals are split into one frame per card placed
    page.keyboard.press("End")
    assert page.get_attribute("#viewer", "data-index") == str(count - 1)
    assert page.locator("#v-over").inner_text().strip() == "· the match is over"  # the last step says so
    assert _rows_shown(page) == [list(r) for r in final.rows]
    totals = page.locator("#take5-scores td.total").all_inner_texts()
    assert [int(t) for t in totals] == list(final.totals) == [int(s) for s in record["result"]["scores"]]
    legend = page.locator("#take5-legend")  # the card colours explained, without hovering (a phone)
    assert legend.locator(".chip").all_inner_texts() == ["1 bh", "2 bh", "3 bh", "5 bh", "7 bh"]
    assert legend.locator(".card").count() == 0  # nothing in it reads as a card
    assert f"turn={count - 1}" in page.url
    page.keyboard.press("ArrowLeft")
    assert page.get_attribute("#viewer", "data-index") == str(count - 2) and f"turn={count - 2}" in page.url
    assert page.locator("#v-over").count() == 0  # only there
    page.click("#v-start")
    assert page.get_attribute("#viewer", "data-index") == "0"
    assert _rows_shown(page) == [list(r) for r in _states(record)[0].rows]
    page.click("#v-round-next")
    assert int(page.get_attribute("#viewer", "data-index")) > 1  # a round is several frames
    page.fill("#v-turn", "6")
    page.press("#v-turn", "Enter")
    assert page.get_attribute("#viewer", "data-index") == "6"
    page.keyboard.press("ArrowRight")  # Enter handed the keys back to the board
    assert page.get_attribute("#viewer", "data-index") == "7"
    what = page.text_content(".decision .what") or ""
    assert ": choose " in what and "take5" not in what, what  # "choose card", not "take5 choose card"
    assert page.locator(".hand").count() == len(record["seats"])  # all hands
    screenshot(page, "viewer-take5")
    assert page.console_errors == []
    # a URL per turn: opening it again lands on that frame
    _open(page, f"{web_arena.url}/matches/{match_id}?view=all&turn=7")
    assert page.get_attribute("#viewer", "data-index") == "7"
    # a reveal's later boards (each card placed, the table after) say they are what the last choice led to
    frames = _get(web_arena, f"/api/matches/{match_id}/frames?view=all")["frames"]
    later = next(f for f in frames if f.get("part", 0) > 0)
    first = frames[later["index"] - later["part"]]
    assert first.get("part") == 0 and first["decision"] == later["decision"] and later["parts"] > 1
    for frame, said in ((first, None), (later, f" · step {later['part'] + 1} of {later['parts']}")):
        _open(page, f"{web_arena.url}/matches/{match_id}?view=all&turn={frame['index']}")
        what = page.text_content(".decision .what") or ""
        assert what.startswith("after ") == (said is not None) and (said is None or what.endswith(said)), what


def test_a_taki_match_shows_the_leading_card_and_counts_of_the_record(web_arena: WebArena, played: dict[str, Any],
                                                                       page: Any) -> None:
    match_id = _match_ids(web_arena, played["taki"])[0]
    record = _get(web_arena, f"/api/matches/{match_id}/record")
    states = _states(record)
    frames = _get(web_arena, f"/api/matches/{match_id}/frames?view=public")["frames"]
    for n in sorted({0, 1, len(frames) // 3, len(frames) // 2, len(frames) - 1}):
        _open(page, f"{web_arena.url}/matches/{match_id}?view=public&turn={n}")
        state = states[frames[n]["decision"] + 1]
        assert page.locator("#taki-leading").inner_text() == taki.card_token(state.discard_pile[-1]), n
        counts = [int(c) for c in page.locator("#taki-counts td.count").all_inner_texts()]
        assert counts == [len(h) for h in state.hands], n
        assert page.locator(".hand").count() == 0  # public: no hand
    screenshot(page, "viewer-taki")
    assert page.console_errors == []


def test_a_perspective_shows_its_own_hand_only(web_arena: WebArena, played: dict[str, Any], page: Any) -> None:
    match_id = _match_ids(web_arena, played["taki"])[-1]
    record = _get(web_arena, f"/api/matches/{match_id}/record")
    states = _states(record)
    _open(page, f"{web_arena.url}/matches/{match_id}?view=public&turn=6")
    page.keyboard.press("ArrowRight")  # the perspective links follow the viewer: seat 1 opens at this moment
    page.wait_for_selector("#viewer[data-index='7']")
    page.click("#perspectives a[data-view='seat:1']")
    page.wait_for_selector("#viewer[data-ready='1'][data-view='seat:1']")
    assert "turn=7" in page.url and page.get_attribute("#viewer", "data-index") == "7"
    hands = page.locator(".hand")
    assert hands.count() == 1 and hands.get_attribute("data-seat") == "1"
    frames = _get(web_arena, f"/api/matches/{match_id}/frames?view=seat:1")["frames"]
    shown = page.locator(".hand .tcard").all_inner_texts()
    assert shown == frames[7]["board"]["hands"]["1"]
    assert frames[0]["board"]["hands"]["1"] == tokens(states[0].hands[1])


def test_the_viewer_fits_a_phone(web_arena: WebArena, played: dict[str, Any], browser: Any) -> None:
    match_id = _match_ids(web_arena, played["take5"])[-1]
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    try:
        page = context.new_page()
        _open(page, f"{web_arena.url}/matches/{match_id}?view=all&turn=5")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        screenshot(page, "viewer-take5-phone")
    finally:
        context.close()


def test_an_unknown_match_is_a_404_page(web_arena: WebArena, page: Any) -> None:
    answer = page.goto(f"{web_arena.url}/matches/t999-000001")
    assert answer.status == 404
    assert "t999-000001" in page.locator("#not-found").inner_text()


def test_a_running_match_is_followed_live_and_never_shows_a_hand(web_arena: WebArena, page: Any) -> None:
    names = ["sluggish0", "sluggish1"]
    # 0.4 s a decision: the match lasts long enough for a loaded machine's browser to reach it while it runs
    bots = [start_bots([SLUGGISH_BOT], extra_args=["--sleep", "0.4", "--name", name])[0] for name in names]
    try:
        for name, bot in zip(names, bots):
            web_arena.json("bot", "register", name, bot.endpoint, "--game", "take5")
        created = web_arena.json("tournament", "create", "--game", "take5", "--bots", ",".join(names), "--seats",
                                 "2", "--rounds", "1", "--limit", "20", "--no-wait")

        # the tournament's page links the matches being played now
        page.goto(f"{web_arena.url}/tournaments/{created['id']}")
        page.wait_for_selector("#playing a", timeout=60_000)
        link = page.locator("#playing a").first.get_attribute("href")
        assert link is not None and link.startswith(f"/matches/{created['id']}-")
        page.goto(f"{web_arena.url}{link}")  # a match not published yet: a page that reloads until it is
        page.wait_for_selector("#viewer[data-ready='1'][data-live='1']", timeout=30_000)
        assert page.locator("#live-note").is_visible()
        screenshot(page, "viewer-live")
        assert page.locator("#perspectives a").all_inner_texts() == ["public"]  # no hand while it runs
        first = int(page.get_attribute("#viewer", "data-frames-count"))
        seen = []
        for _ in range(6):
            page.wait_for_timeout(700)
            if page.locator("#live-note").count() == 0:
                break  # finished and reloaded
            seen.append(int(page.get_attribute("#viewer", "data-frames-count") or 0))
            assert page.locator(".hand").count() == 0
            assert page.locator("#v-board").inner_text().count("holds:") == 0
        assert seen and max(seen) > first, (first, seen)  # new frames came without a reload
        # once it has finished the page reloads as the finished match's
        page.wait_for_selector("#seats td:nth-child(3):not(:empty)", timeout=120_000)
        wait_until(lambda: page.locator("#live-note").count() == 0, "the page to show the finished match",
                   timeout=120)
        # at its end, where the viewer was following it, not at the step the URL held when the match ended
        page.wait_for_selector("#viewer[data-ready='1']", timeout=30_000)
        count = int(page.get_attribute("#viewer", "data-frames-count") or 0)
        assert count > 1 and page.get_attribute("#viewer", "data-index") == str(count - 1)
        assert page.locator("#v-over").count() == 1 and f"turn={count - 1}" in page.url
        assert page.console_errors == []
    finally:
        for bot in bots:
            bot.stop()


def test_a_live_match_that_ends_while_its_tournament_runs_keeps_what_was_shown(web_arena: WebArena,
                                                                             page: Any) -> None:
    """Followed live, a match of a tournament that still runs afterwards (its record withheld until the tournament
    ends): when it ends the page shows its last public frames, to its end, with a note saying why nothing more
    comes, instead of reloading into a page with no frame; a page opened then shows the same."""
    names = [f"ender{i}" for i in range(4)]
    bots = [start_bots([SLUGGISH_BOT], extra_args=["--sleep", "0.15", "--name", name])[0] for name in names]
    try:
        for name, bot in zip(names, bots):
            web_arena.json("bot", "register", name, bot.endpoint, "--game", "take5")
        created = web_arena.json("tournament", "create", "--game", "take5", "--bots", ",".join(names), "--seats",
                                 "2", "--rounds", "1", "--limit", "20", "--deals", "unique", "--no-wait")
        page.goto(f"{web_arena.url}/tournaments/{created['id']}")
        page.wait_for_selector("#playing a", timeout=60_000)
        link = page.locator("#playing a").first.get_attribute("href")
        assert link is not None
        page.goto(f"{web_arena.url}{link}")
        page.wait_for_selector("#viewer[data-ready='1'][data-live='1']", timeout=30_000)
        page.wait_for_selector("#viewer[data-ended='1']", timeout=120_000)
        note = page.locator("#live-note").inner_text()
        assert note.startswith("This match has ended: ender") and "(rank " in note and "still running" in note, note
        assert "every move of it the public saw, to its end" in note, note  # its last publication, marked ended
        shown = int(page.get_attribute("#viewer", "data-frames-count") or 0)
        assert shown > 0 and page.get_attribute("#viewer", "data-index") == str(shown - 1)
        fresh = page.context.new_page()  # opened fresh: the same last public frames (or, the tournament over, all)
        fresh.goto(f"{web_arena.url}{link}")
        fresh.wait_for_selector("#viewer[data-ready='1']", timeout=30_000)
        if fresh.locator("#live-note").count():
            fresh.wait_for_selector("#viewer[data-ended='1']", timeout=30_000)
            assert int(fresh.get_attribute("#viewer", "data-frames-count") or 0) == shown
        # once the tournament has ended (its record revealed) both pages become the finished match's by themselves
        wait_until(lambda: page.locator("#live-note").count() == 0, "the finished match's page", timeout=150)
        page.wait_for_selector("#viewer[data-ready='1']", timeout=30_000)
        assert int(page.get_attribute("#viewer", "data-frames-count") or 0) > 0
        fresh.wait_for_selector("#viewer[data-ready='1']", timeout=60_000)
        assert page.console_errors == []
    finally:
        for bot in bots:
            bot.stop()


def test_a_live_match_whose_worker_went_silent_says_so_instead_of_looking_frozen(web_arena: WebArena,
                                                                                  page: Any) -> None:
    """A match published live whose worker has written nothing for two minutes (as after a kill -9): its JSON says
    ``stale`` with the age, and the page's live note says the worker may have stopped, at phone width."""
    from viewer_records import play_record

    from arena.store import Store
    from arena.store.keys import live_head_key
    from arena_sdk.games import take5

    record, _ = play_record("take5", 3, 424_242, config=take5.Take5Config(limit=10))
    head = {"game": "take5", "config": record["config"], "seed": record["seed"], "deals": [],
            "seats": [s["name"] for s in record["seats"]], "tournament": ""}
    match_id = "m-silent-worker"
    store = Store.from_url(web_arena.redis_url)
    try:
        store.live_start(match_id, head, [{"d": d} for d in record["decisions"][:6]])
        key = live_head_key(match_id)
        published = json.loads(store.client.get(key))
        published["updated_at"] -= 120.0  # its worker's last publication, two minutes ago
        store.client.set(key, json.dumps(published), ex=300)
        answer = _get(web_arena, f"/api/matches/{match_id}/live")
        assert answer["live"] is True and answer["stale"] is True and answer["age_s"] >= 119
        for view in ("all", "seat:0"):  # as the page: a running match shows no hand
            with pytest.raises(urllib.error.HTTPError) as refused:
                _get(web_arena, f"/api/matches/{match_id}/live?view={view}")
            assert refused.value.code == 400 and "view must be one of public" in refused.value.read().decode()
        page.set_viewport_size(PHONE)
        page.goto(f"{web_arena.url}/matches/{match_id}")
        page.wait_for_selector("#viewer[data-ready='1'][data-live='1'][data-stale='1']", timeout=30_000)
        note = page.locator("#live-note").inner_text()
        assert "has sent nothing for" in note and "may have stopped" in note, note
        screenshot(page, "viewer-live-stale")
        assert page.console_errors == []
    finally:
        store.live_end(match_id)
        store.close()


def test_a_live_match_polled_in_parts_holds_what_a_fresh_page_shows(web_arena: WebArena, page: Any,
                                                                    browser: Any) -> None:
    """Each poll of a live match asks for the frames from the last answer's ``settled_frames`` on and replaces what
    the page holds from there. Published up to a +3 whose hidden Breaker question waits for its answer (decision 2 of
    this Taki record: the +3 is not shown yet), then further: the page holds what a page opened fresh shows (frame
    count, and the board of every frame from the first that could have changed); then the match started again
    (another ``started_at``, fewer decisions): the page takes every frame anew."""
    from viewer_records import play_record

    from arena.store import Store

    record, _ = play_record("taki", 3, 5, policy_seed=2, config=taki.TakiConfig(turn_cap=200))
    assert record["decisions"][2]["kind"] == taki.REACT
    head = {"game": "taki", "config": record["config"], "seed": record["seed"], "deals": [],
            "seats": [s["name"] for s in record["seats"]], "tournament": "", "started_at": 1.0}
    entries = [{"d": d} for d in record["decisions"]]
    match_id = "m-live-in-parts"
    url = f"{web_arena.url}/matches/{match_id}"
    store = Store.from_url(web_arena.redis_url)

    def frames_now() -> int:
        return int(page.get_attribute("#viewer", "data-frames-count") or 0)

    def board(tab: Any, index: int) -> str:
        tab.locator("#v-turn").fill(str(index))
        tab.locator("#v-turn").dispatch_event("change")
        tab.wait_for_selector(f"#viewer[data-index='{index}']", timeout=10_000)
        return str(tab.locator("#v-board").inner_text())

    fresh = browser.new_page()
    try:
        store.live_start(match_id, head, entries[:2])  # up to the +3, whose Breaker question waits for its answer
        early = _get(web_arena, f"/api/matches/{match_id}/live")
        assert early["settled_frames"] == early["frame_count"] == 2  # the table and decision 0: the +3 waits
        page.goto(url)
        page.wait_for_selector("#viewer[data-ready='1'][data-live='1']", timeout=30_000)
        for since, upto in ((2, 12), (12, 30)):
            store.live_append(match_id, entries[since:upto], head)
            count = _get(web_arena, f"/api/matches/{match_id}/live")["frame_count"]
            wait_until(lambda: frames_now() == count, f"the page to hold {count} frames", timeout=30)
        _open(fresh, url)
        assert int(fresh.get_attribute("#viewer", "data-frames-count")) == frames_now()
        for index in range(early["settled_frames"], frames_now()):
            assert board(page, index) == board(fresh, index), index
        store.live_start(match_id, dict(head, started_at=2.0), entries[:2])
        count = _get(web_arena, f"/api/matches/{match_id}/live")["frame_count"]
        wait_until(lambda: frames_now() == count, f"the page to start again with {count} frames", timeout=30)
        assert page.console_errors == []
    finally:
        fresh.close()
        store.live_end(match_id)
        store.close()


def test_a_match_started_but_not_yet_published_gets_a_page_that_reloads_until_it_shows(web_arena: WebArena) -> None:
    """The tournament page links the matches workers are playing; one whose worker has not yet published it (the
    first publication comes within a second) answers a page that reloads, not a 404; an id no worker plays is a
    404."""
    import time

    from arena.store import Store, WorkerStatus
    from arena.store.keys import WORKERS, worker_key

    store = Store.from_url(web_arena.redis_url)
    try:
        now = time.time()
        store.heartbeat(WorkerStatus(name="w-starting", host="h", pid=1, started_at=now, last_seen=now,
                                     concurrency=1, running=("t77-000003",), matches_done=0, timeout_s=30.0))
        with urllib.request.urlopen(f"{web_arena.url}/matches/t77-000003", timeout=30) as answer:
            body = answer.read().decode()
        assert answer.status == 200 and 'http-equiv="refresh"' in body and 'id="starting"' in body
        try:
            urllib.request.urlopen(f"{web_arena.url}/matches/t77-000004", timeout=30)
            raise AssertionError("a match no worker plays should be a 404")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
    finally:
        store.client.delete(worker_key("w-starting"))
        store.client.zrem(WORKERS, "w-starting")
        store.close()


def test_a_cancelled_tournament_lists_and_follows_its_last_matches_until_they_end(web_arena: WebArena) -> None:
    """A cancelled tournament's page lists the matches workers still play for it and keeps its live part polling
    (data-live) while they do; once none plays, it stops."""
    import time

    from arena.store import Store, WorkerStatus
    from arena.store.keys import WORKERS, worker_key

    created = web_arena.json("tournament", "create", "--game", "take5", "--bots", "random,heuristic", "--seats", "2",
                             "--rounds", "12", "--no-wait")  # not all played before the cancellation below
    tid = created["id"]
    cancelled = web_arena.run("tournament", "cancel", tid)
    assert cancelled.exit_code == 0, cancelled.output
    store = Store.from_url(web_arena.redis_url)
    try:
        now = time.time()
        store.heartbeat(WorkerStatus(name="w-last", host="h", pid=1, started_at=now, last_seen=now, concurrency=1,
                                     running=(f"{tid}-000009",), matches_done=0, timeout_s=30.0))
        with urllib.request.urlopen(f"{web_arena.url}/tournaments/{tid}/live", timeout=30) as answer:
            part = answer.read().decode()
        assert 'data-state="cancelled"' in part and 'data-live="1"' in part, part[:300]
        assert f'href="/matches/{tid}-000009"' in part and "under way" in part
    finally:
        store.client.delete(worker_key("w-last"))
        store.client.zrem(WORKERS, "w-last")
        store.close()

    def part() -> str:
        with urllib.request.urlopen(f"{web_arena.url}/tournaments/{tid}/live", timeout=30) as answer:
            return str(answer.read().decode())

    # the tournament's own matches may still be under way (listed meanwhile): once they are done the part stops
    last = wait_until(lambda: text if "data-live" not in (text := part()) else None, "the last match to end", 120)
    assert 'data-state="cancelled"' in last and f"{tid}-000009" not in last and 'id="playing"' not in last
