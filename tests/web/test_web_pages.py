"""Every page and its /api/ mirror over HTTP against the module's live arena (``arena web`` reading ``arena
serve``, real bots, see conftest.py): each shows what the Arena read methods answer (compared with the CLI's
``--json`` of the same reads), unknown bots and tournaments are 404 pages, and an ended tournament's seed checks."""

from __future__ import annotations

from typing import Any

import httpx2 as httpx  # the HTTP client the dev extra installs
import pytest
from web_helpers import WebArena


def _get(web_arena: WebArena, path: str) -> httpx.Response:
    return httpx.get(f"{web_arena.url}{path}", timeout=60)


def test_the_ladder_mirror_is_the_ladder_with_history_and_fault_rate(web_arena: WebArena,
                                                                      played: dict[str, Any]) -> None:
    for game in ("take5", "taki"):
        ladder = web_arena.json("ladder", "--game", game)
        mirror = _get(web_arena, f"/api/ladder/{game}").json()
        assert [(e["bot"], round(e["rating"], 6), e["matches"], e["wins"]) for e in mirror["entries"]] == \
            [(e["bot"], round(e["rating"], 6), e["matches"], e["wins"]) for e in ladder["entries"]]
        for entry in mirror["entries"]:
            # the live Elo after each of its matches: from the start rating to its rating now
            assert len(entry["history"]) == entry["matches"] + 1
            assert entry["history"][0] == 1500.0 and entry["history"][-1] == round(entry["rating"], 2)
            assert entry["faults_per_match"] == 0.0
    fit = _get(web_arena, "/api/ladder/take5?method=fit").json()
    assert fit["method"] == "fit"


def test_a_bot_page_shows_versions_ladder_latency_and_matches(web_arena: WebArena, played: dict[str, Any]) -> None:
    data = _get(web_arena, "/api/bots/heuristic").json()
    assert [v["bot_id"] for v in data["versions"]] == ["heuristic@1.0"]
    take5 = data["games"]["take5"]
    assert [e["bot"] for e in take5["ladder"]] == ["heuristic@1.0"]
    records = take5["records"]
    assert records["matches"] == played["take5"]["matches_total"] == 2
    assert records["decisions"] > 0 and records["faults"] == {}
    latency = records["latency_ms"]
    assert 0 <= latency["p50"] <= latency["p95"] <= latency["max"]
    listed = web_arena.json("match", "list", "--bot", "heuristic")
    assert [m["match_id"] for m in data["matches"]] == [m["match_id"] for m in listed]
    html = _get(web_arena, "/bots/heuristic@1.0").text
    assert "<svg" in html and "latency p95" in html and f'href="/matches/{listed[0]["match_id"]}"' in html


def test_an_ended_tournament_shows_its_seed_and_that_it_verifies(web_arena: WebArena, played: dict[str, Any]) -> None:
    tid = played["take5"]["id"]
    data = _get(web_arena, f"/api/tournaments/{tid}").json()
    assert data["tournament"]["state"] == "finished"
    assert data["verify"] == {"ok": True, "matches": 2, "problems": []}
    cli = web_arena.json("tournament", "verify", tid)
    assert cli["ok"] and cli["seed_hex"] == data["tournament"]["seed_hex"]
    html = _get(web_arena, f"/tournaments/{tid}").text
    assert data["tournament"]["seed_hex"] in html and "verified" in html
    listed = _get(web_arena, "/api/tournaments").json()["tournaments"]
    assert {t["id"] for t in listed} >= {played["take5"]["id"], played["taki"]["id"]}


@pytest.mark.parametrize("path, what", [("/bots/nobody", "no bot named 'nobody'"),
                                        ("/tournaments/t999", "t999"),
                                        ("/api/bots/nobody", "no bot named 'nobody'")])
def test_unknown_bots_and_tournaments_are_404(web_arena: WebArena, path: str, what: str) -> None:
    answer = _get(web_arena, path)
    assert answer.status_code == 404
    assert what in (answer.json()["error"] if path.startswith("/api/") else answer.text.replace("&#39;", "'"))


def test_every_page_answers(web_arena: WebArena, played: dict[str, Any]) -> None:
    tid = played["taki"]["id"]
    for path in ("/", "/api/", "/bots", "/api/bots", "/tournaments", "/tournaments?game=taki", "/api/tournaments",
                 f"/tournaments/{tid}", f"/tournaments/{tid}/live", "/ladder/taki?method=fit"):
        answer = _get(web_arena, path)
        assert answer.status_code == 200, (path, answer.text[:500])


def test_a_swiss_tournament_shows_its_rounds_and_pairings_once_ended(web_arena: WebArena,
                                                                    played: dict[str, Any]) -> None:
    t = web_arena.json("tournament", "create", "--game", "take5", "--bots", "random,heuristic", "--seats", "2",
                       "--format", "swiss", "--rounds", "2", "--wait")
    data = _get(web_arena, f"/api/tournaments/{t['id']}").json()
    assert data["tournament"]["format"] == "swiss" and data["tournament"]["rounds_paired"] == 2
    assert [(r["round"], len(r["matches"])) for r in data["pairings"]] == [(0, 1), (1, 1)]
    assert sorted(data["pairings"][0]["matches"][0]["seats"]) == ["heuristic@1.0", "random@1.0"]
    html = _get(web_arena, f"/tournaments/{t['id']}").text
    assert "<h3>Round 2</h3>" in html and "tiebreak" in html


def test_an_sprt_page_draws_the_llr_after_each_block(web_arena: WebArena, played: dict[str, Any]) -> None:
    from pathlib import Path

    from arena.match.local_bots import start_bot

    version2 = start_bot(str(Path(__file__).resolve().parent.parent / "cli" / "bots" / "version2_bot.py"))
    web_arena.bots.append(version2)  # stopped with the module's arena
    assert web_arena.json("bot", "register", "random", version2.endpoint)["bot_id"] == "random@2.0"
    done = web_arena.json("sprt", "start", "random@1.0", "random@2.0", "--max-blocks", "4", "--window", "2")
    tid = done["tournament"]["id"]
    data = _get(web_arena, f"/api/tournaments/{tid}").json()
    sprt, history = data["sprt"], data["sprt_llr_history"]
    assert sprt["blocks"] == 4 and sprt["verdict"] == "inconclusive"
    # the LLR after each block, from the two tables' ranks, ends where the referee's own count does
    assert [x for x, _ in history] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert abs(history[-1][1] - sprt["llr"]) < 1e-9
    html = _get(web_arena, f"/tournaments/{tid}").text
    assert "is random@2.0 better than random@1.0?" in html and "H1 (upper bound)" in html


def test_bots_are_listed_by_name_in_pages_that_reach_every_version(web_arena: WebArena) -> None:
    """More versions than one page of /bots holds (a flood of versions, sorted before the real bots): the real
    bots are a "Next page" away, never cut off; each NAME is one row with its newest versions."""
    from arena.store import Store
    from arena.web.pages import BOTS_PAGE

    store = Store.from_url(web_arena.redis_url)
    junk = [(f"aaa-flood-{n}", f"{v}.0") for n in range(6) for v in range(90)]  # 540 > BOTS_PAGE versions
    assert len(junk) > BOTS_PAGE
    try:
        for name, version in junk:
            store.register_bot("take5", name, "127.0.0.1:1", version=version)
        first = _get(web_arena, "/api/bots").json()
        assert len(first["bots"]) == BOTS_PAGE and first["next_page"]
        assert {n["name"] for n in first["names"]} <= {name for name, _ in junk}  # the flood sorts first
        row = first["names"][0]
        assert row["versions"][0]["name"] == row["name"] and len({b["version"] for b in row["versions"]}) > 5
        html = _get(web_arena, "/bots").text
        assert 'rel="next"' in html and html.count("<tr>") == len(first["names"]) + 1  # one row per NAME
        assert "older, " in html  # more than 5 versions: the newest 5 linked
        assert first["names"][-1]["split"] and not any(n["split"] for n in first["names"][:-1])
        assert "(more on <a href=\"/bots/" in html  # the NAME cut by the page's end points to its own page
        later = _get(web_arena, f"/api/bots?page={httpx.QueryParams({'t': first['next_page']})['t']}").json()
        shown = {n["name"] for n in later["names"]}
        assert {"random", "heuristic", "taki-random", "taki-heuristic"} <= shown  # reached, not cut off
        assert later["next_page"] == ""
        for typed in ("not-a-token", "2"):  # a page number typed by hand: said in words, not in the protocol's
            refused = _get(web_arena, f"/bots?page={typed}")
            assert refused.status_code == 400 and "start from /bots" in refused.text, refused.text
            assert "page_token" not in refused.text and "ListBots" not in refused.text
    finally:
        for name in {name for name, _ in junk}:
            store.remove_bot("take5", name)
        store.close()


def test_a_bot_name_typed_in_another_letter_case_leads_to_its_page(web_arena: WebArena) -> None:
    """A NAME is one owner's in every letter case, but lookups are exact: the page redirects to the NAME as held,
    and ``arena match list --bot`` names it."""
    for typed, held in (("/bots/HEURISTIC", "/bots/heuristic"),
                        ("/api/bots/Heuristic@1.0", "/api/bots/heuristic@1.0"),
                        ("/bots/Heuristic@9.9", "/bots/heuristic")):  # no such version: the NAME's page
        answer = _get(web_arena, typed)
        assert (answer.status_code, answer.headers["location"]) == (307, held)
        assert httpx.get(f"{web_arena.url}{typed}", timeout=60, follow_redirects=True).status_code == 200
    listed = web_arena.run("match", "list", "--bot", "Heuristic@1.0")
    assert listed.exit_code == 1, listed.output
    assert "unknown bot Heuristic@1.0: did you mean heuristic@1.0?" in listed.output, listed.output
    listed = web_arena.run("match", "list", "--bot", "HEURISTIC@9.9")
    assert "unknown bot HEURISTIC@9.9: did you mean heuristic?" in listed.output, listed.output
