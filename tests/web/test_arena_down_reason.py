"""A page while the referee cannot answer says whose fault it is: a referee whose Redis is down answers (its
UNAVAILABLE says so), and the page says that, not that the referee does not answer. In process, on a fake reader."""

from __future__ import annotations

import logging
from typing import Any

import grpc
import pytest
from starlette.testclient import TestClient
from web_helpers import FakeReader, app_of

from arena.core.errors import REDIS_DOWN
from arena.web import responses
from arena.web.client import ArenaDown


class _Reader(FakeReader):
    def __init__(self, detail: str, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE) -> None:
        super().__init__()
        self.detail, self.code = detail, code

    async def call(self, method: str, request: Any) -> Any:
        raise ArenaDown(method, self.code, self.detail)


def _ladder(detail: str, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE) -> Any:
    with TestClient(app_of(_Reader(detail, code))) as client:
        return client.get("/api/ladder/take5")


def test_a_referee_whose_redis_is_down_is_told_apart_from_one_that_does_not_answer() -> None:
    redis_down = _ladder(REDIS_DOWN)
    assert redis_down.status_code == 503
    assert redis_down.json()["error"] == "the arena's referee answers, but its Redis cannot be used now"
    gone = _ladder("failed to connect to all addresses; last error: UNAVAILABLE: ipv4:10.0.0.7:50051: Socket closed")
    assert gone.status_code == 503 and gone.json()["error"] == "the arena's referee does not answer (unavailable)"
    assert "10.0.0.7" not in gone.text  # the referee's address stays out of the answer


def test_the_log_suggests_tls_only_when_the_referee_is_unreachable_and_slowness_when_it_is_late(
        caplog: pytest.LogCaptureFixture) -> None:
    responses._LAST_DOWN[0] = ""  # logged once per reason: none logged yet
    with caplog.at_level(logging.WARNING, logger="arena.web"):
        _ladder("Deadline Exceeded", grpc.StatusCode.DEADLINE_EXCEEDED)
        _ladder("failed to connect to all addresses; last error: UNAVAILABLE: Socket closed")
    late, gone = [r.getMessage() for r in caplog.records if "does not answer" in r.getMessage()]
    assert "slow to answer" in late and "TLS" not in late
    assert "if it serves TLS, `arena web` needs its CA: --tls-ca" in gone


@pytest.mark.parametrize("code", [grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED])
def test_a_slow_answer_says_the_referee_was_slow_not_that_it_does_not_answer(code: grpc.StatusCode) -> None:
    """Late (DEADLINE_EXCEEDED), or too long waiting for the web app's share of the referee (RESOURCE_EXHAUSTED)."""
    with TestClient(app_of(_Reader("Deadline Exceeded", code))) as client:
        mirror = client.get("/api/ladder/take5")
        html = client.get("/ladder/take5").text
        home = client.get("/").text
    assert mirror.status_code == 503 and mirror.headers["retry-after"] == "3"
    assert mirror.json()["error"] == (f"the arena's referee was slow to answer ({code.name.lower()}): it is up but "
                                      f"busy; reload the page")
    assert "<h1>The arena was slow to answer</h1>" in html and "not answering" not in html
    assert "does not answer" not in html and "does not answer" not in home and "slow to answer" in home
    with TestClient(app_of(_Reader("connection refused"))) as client:  # unavailable: still "not answering"
        down = client.get("/ladder/take5").text
    assert "<h1>The arena is not answering</h1>" in down and "does not answer (unavailable)" in down
