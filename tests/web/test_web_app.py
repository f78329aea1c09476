"""The web app's own behaviour, in process (Starlette's test client), against a referee address where nothing
answers (a real refused connection): the 503 page and its JSON mirror, 404 for unknown pages and games, the
security and cache headers, assets served by the app itself."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from arena.web import create_app
from arena.web.app import CONTENT_SECURITY_POLICY
from arena_sdk.games import game_ids


@pytest.fixture
def client(dead_endpoint: str) -> Iterator[TestClient]:
    with TestClient(create_app(dead_endpoint)) as c:
        yield c


def test_a_referee_that_does_not_answer_is_a_503_page_that_retries(client: TestClient, dead_endpoint: str) -> None:
    answer = client.get("/ladder/take5")
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "3"
    assert '<meta http-equiv="refresh" content="3">' in answer.text
    assert "the arena&#39;s referee does not answer (unavailable)" in answer.text
    assert dead_endpoint not in answer.text  # an address of the organiser's network is nobody else's business
    mirror = client.get("/api/ladder/take5")
    assert mirror.status_code == 503
    assert mirror.json() == {"error": "the arena's referee does not answer (unavailable)", "status": 503,
                             "retry_after_s": 3}


def test_unknown_pages_and_games_are_404_pages(client: TestClient) -> None:
    answer = client.get("/no/such/page")
    assert answer.status_code == 404 and "no page at /no/such/page" in answer.text
    game = client.get("/ladder/chess")
    assert game.status_code == 404 and "no game named &#39;chess&#39;" in game.text
    assert client.get("/api/ladder/chess").json() == {
        "error": f"no game named 'chess' (games: {', '.join(game_ids())})", "status": 404}


def test_a_bad_method_is_400(client: TestClient) -> None:
    answer = client.get("/api/ladder/take5?method=guess")
    assert answer.status_code == 400 and "method must be one of elo, fit" in answer.json()["error"]


def test_every_answer_carries_the_security_headers(client: TestClient) -> None:
    for path, cache in (("/", "no-cache"), ("/ladder/take5", "no-cache"), ("/nowhere", "no-cache"),
                        ("/static/arena.css", "public, max-age=3600")):
        headers = client.get(path).headers
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
        assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe-inline" not in CONTENT_SECURITY_POLICY
        assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
        assert headers["x-content-type-options"] == "nosniff", path
        assert headers["referrer-policy"] == "no-referrer", path
        assert headers["cache-control"] == cache, path


def test_pages_use_no_inline_script_and_no_outside_asset(client: TestClient) -> None:
    text = client.get("/").text
    assert "<script>" not in text and "<script " not in text.replace('<script src="/static/', "")
    assert "http://" not in text.replace("http://testserver", "") and "https://" not in text
    assert 'href="/static/arena.css"' in text or 'href="http://testserver/static/arena.css"' in text


def test_the_reader_calls_only_public_read_methods(dead_endpoint: str) -> None:
    import asyncio

    from arena.web.client import READ_METHODS, ArenaReader
    from arena_sdk.pb import arena_pb2

    reader = ArenaReader(dead_endpoint)
    with pytest.raises(ValueError, match="CreateTournament is not a public read method"):
        asyncio.run(reader.call("CreateTournament", arena_pb2.CreateTournamentRequest()))
    assert all(m.startswith(("List", "Get")) for m in READ_METHODS) and "GetChallenge" not in READ_METHODS
    assert "GetOwner" not in READ_METHODS and "ListOwners" not in READ_METHODS


class _BrokenReader:
    """A reader whose every read fails with an error of the web app itself (not the referee's)."""

    async def call(self, method: str, request: object) -> object:
        raise RuntimeError("a bug of the pages")

    async def close(self) -> None:
        return None


def test_a_500_of_the_app_carries_the_security_headers_and_no_traceback(dead_endpoint: str) -> None:
    with TestClient(create_app(dead_endpoint, reader=_BrokenReader()), raise_server_exceptions=False) as c:
        for path in ("/ladder/take5", "/api/ladder/take5"):
            answer = c.get(path)
            assert answer.status_code == 500, path
            assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
            assert answer.headers["x-frame-options"] == "DENY" and answer.headers["cache-control"] == "no-cache"
            assert "a bug of the pages" not in answer.text and "Traceback" not in answer.text


def test_a_missing_asset_is_not_cached(client: TestClient) -> None:
    answer = client.get("/static/no-such-file.js")
    assert answer.status_code == 404 and answer.headers["cache-control"] == "no-cache"
    assert client.get("/static/arena.css").headers["cache-control"] == "public, max-age=3600"


def test_a_tournaments_live_part_opened_in_the_browser_goes_to_the_whole_page(client: TestClient) -> None:
    answer = client.get("/tournaments/t7/live", headers={"sec-fetch-mode": "navigate"}, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/tournaments/t7"
    assert client.get("/tournaments/t7/live", headers={"sec-fetch-mode": "cors"}).status_code == 503  # live.js


def test_favicon_ico_leads_to_the_sites_icon(client: TestClient) -> None:
    """Browsers ask for /favicon.ico on pages with no icon link (an /api/ answer opened in a tab)."""
    answer = client.get("/favicon.ico", follow_redirects=False)
    assert answer.status_code == 301 and answer.headers["location"] == "/static/favicon.svg"
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
