"""The match viewer's pages in process (Starlette's test client), on a local record file (``arena web --record``,
no referee needed: the referee address is one where nothing answers): the page and its frames with all hands, a
record that fails to decode shows an error (not a blank page), perspectives cut on the server, the download."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from viewer_records import play_record

from arena.web import create_app
from arena.web.app import WebOptions
from arena_sdk.games import take5, taki


def _client(dead_endpoint: str, record: Path | None) -> TestClient:
    return TestClient(create_app(WebOptions(server=dead_endpoint, record=record)))


@pytest.fixture
def take5_file(tmp_path: Path) -> tuple[Path, dict]:
    record, _ = play_record("take5", 3, 21, config=take5.Take5Config(limit=8))
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    return path, record


@pytest.fixture
def client(dead_endpoint: str, take5_file: tuple[Path, dict]) -> Iterator[TestClient]:
    with _client(dead_endpoint, take5_file[0]) as c:
        yield c


def test_a_local_record_opens_in_the_viewer_with_all_hands(client: TestClient, take5_file: tuple[Path, dict]) -> None:
    _, record = take5_file
    page = client.get("/record")
    assert page.status_code == 200
    assert 'id="viewer"' in page.text and 'data-frames="/api/record/frames?view=all"' in page.text
    assert "/static/viewer-take5.js" in page.text and "<script>" not in page.text
    frames = client.get("/api/record/frames").json()
    assert frames["perspective"] == "all" and frames["match_id"] == record["match_id"]
    assert set(frames["frames"][0]["board"]["hands"]) == {"0", "1", "2"}
    public = client.get("/api/record/frames?view=public").json()
    assert all(f["board"]["hands"] == {} for f in public["frames"])
    seat = client.get("/api/record/frames?view=seat:1").json()
    assert all(set(f["board"]["hands"]) == {"1"} for f in seat["frames"])
    assert client.get("/api/record/frames?view=seat:9").status_code == 400
    download = client.get("/api/record/download")
    assert download.json() == record and "attachment" in download.headers["content-disposition"]


@pytest.mark.parametrize("content", ["{not json", json.dumps({"game": "take5", "seats": []}), json.dumps([1, 2])])
def test_an_undecodable_record_shows_an_error_not_a_blank_page(dead_endpoint: str, tmp_path: Path,
                                                                content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with _client(dead_endpoint, path) as c:
        page = c.get("/record")
        assert page.status_code == 200
        assert 'id="record-error"' in page.text and "cannot be shown" in page.text
        answer = c.get("/api/record/frames")
        assert answer.status_code == 422 and "cannot be shown" in answer.json()["error"]


def test_without_a_record_file_the_record_page_is_404(dead_endpoint: str) -> None:
    with _client(dead_endpoint, None) as c:
        assert c.get("/record").status_code == 404
        assert c.get("/api/record/frames").json()["status"] == 404


def test_a_match_page_while_the_referee_is_down_is_503(client: TestClient) -> None:
    assert client.get("/matches/t1-000001").status_code == 503
    assert client.get("/api/matches/t1-000001/frames").status_code == 503


def test_a_taki_record_draws_with_its_own_board_script(dead_endpoint: str, tmp_path: Path) -> None:
    record, states = play_record("taki", 2, 4, config=taki.TakiConfig(turn_cap=40))
    path = tmp_path / "taki.json"
    path.write_text(json.dumps(record))
    with _client(dead_endpoint, path) as c:
        assert "/static/viewer-taki.js" in c.get("/record").text
        frames = c.get("/api/record/frames?view=public").json()["frames"]
        assert frames[-1]["board"]["counts"] == [len(h) for h in states[-1].hands]
        assert c.get("/static/viewer-taki.js").status_code == 200


def test_a_record_that_stops_replaying_shows_its_frames_up_to_there_and_why(dead_endpoint: str, tmp_path: Path,
                                                                            take5_file: tuple[Path, dict]) -> None:
    _, record = take5_file
    decisions = record["decisions"]
    tampered = dict(record, decisions=decisions[:3] + [dict(decisions[3], action={"card": 999})] + decisions[4:])
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(tampered))
    with _client(dead_endpoint, path) as c:
        answer = c.get("/api/record/frames")
        assert answer.status_code == 200
        frames = answer.json()
        assert "stops replaying at decision 3" in frames["stopped"] and frames["frames"][-1]["decision"] == 2


@pytest.mark.parametrize("turn", ["-1", "\u0661\u0662", "9" * 31, "1.5", "", " 3"])
def test_a_turn_that_is_not_a_frame_number_is_a_clear_400(client: TestClient, turn: str) -> None:
    answer = client.get("/record", params={"turn": turn})
    assert answer.status_code == 400 and "turn must be a whole number 0..999999" in answer.text, turn
    assert "9" * 31 not in answer.text


def test_a_turn_past_the_end_opens_the_page_and_links_are_paths(client: TestClient) -> None:
    answer = client.get("/record?turn=999999", headers={"host": "evil.example:666"})
    assert answer.status_code == 200 and 'data-turn="999999"' in answer.text  # the viewer shows its last frame
    assert "evil.example" not in answer.text and 'href="/static/viewer.css"' in answer.text
    assert 'data-turn="999999"' in client.get("/record?turn=end").text  # "end": the last step, however many


def test_a_seat_that_forfeited_says_why_in_the_result_table(dead_endpoint: str, tmp_path: Path) -> None:
    record, _ = play_record("take5", 3, 21, config=take5.Take5Config(limit=8))
    path = tmp_path / "forfeit.json"
    path.write_text(json.dumps(record))
    with _client(dead_endpoint, path) as client:
        assert "<th>forfeit</th>" not in client.get("/record").text  # nobody forfeited: no column
    record["result"]["forfeits"] = [None, "faults", None]
    path.write_text(json.dumps(record))
    with _client(dead_endpoint, path) as client:
        html = client.get("/record").text
    table = html[html.index('id="seats"'):html.index("</table>")]
    assert "<th>forfeit</th>" in table
    rows = table.split("<tr>")[2:]
    assert '<td class="why">faults</td>' in rows[1] and '<td class="why">faults</td>' not in rows[0] + rows[2]


def test_a_game_without_its_own_board_script_gets_no_script_tag(client: TestClient, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # a game of another package has no static/viewer-GAME.js: the generic viewer draws its frames, no 404 asked for
    from arena.web import matches

    monkeypatch.setattr(matches, "VIEWER_SCRIPTS", tmp_path)
    page = client.get("/record")
    assert page.status_code == 200 and 'id="viewer"' in page.text
    assert "viewer-take5.js" not in page.text and "/static/viewer.js" in page.text
