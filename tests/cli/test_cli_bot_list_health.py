"""`arena bot list` names its health column "match health" (what the bot's last matches say) and, for a bot whose
endpoint does not answer now, says that a healthy record is about its last matches, so that "no: connection
refused" beside it does not read as a contradiction."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli.app import AppContext, cli
from arena.cli.bot import _health_text
from arena_sdk.pb import arena_pb2


def _health(state: str = "healthy", failures: int = 0) -> dict[str, Any]:
    return {"state": state, "consecutive_failures": failures, "unhealthy_since": 1e9 if state != "healthy" else None,
            "reason": "forfeited (timeouts) in match m2" if state != "healthy" else None}


@pytest.mark.parametrize(("health", "answers", "text"), [
    (_health(), None, "healthy"),
    (_health(), True, "healthy"),
    (_health(), False, "no failed match yet"),
    (_health(failures=2), True, "failing: 2 failed matches in a row"),
    (_health(failures=1), None, "failing: 1 failed match in a row"),
    (_health(failures=2), False, "failing: 2 failed matches in a row"),
])
def test_a_healthy_record_of_a_bot_that_does_not_answer_says_it_is_about_its_last_matches(
        health: dict[str, Any], answers: bool | None, text: str) -> None:
    assert _health_text(health, answers) == text


def test_an_unhealthy_record_reads_the_same_whether_the_bot_answers_or_not() -> None:
    unhealthy = _health("unhealthy", 3)
    assert _health_text(unhealthy, False) == _health_text(unhealthy, True) == _health_text(unhealthy)
    assert _health_text(unhealthy).endswith(": forfeited (timeouts) in match m2")


class _Arena:
    server = "fake:1"

    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def call(self, method: str, request: Any, **kwargs: Any) -> Any:
        assert method == "ListBots"
        return self.reply


def test_bot_list_shows_match_health_beside_whether_the_bot_answers_now(monkeypatch: pytest.MonkeyPatch) -> None:
    reply = arena_pb2.ListBotsResponse(bots=[
        arena_pb2.BotRecord(bot_id="gone@1.0", name="gone", version="1.0", game="take5", endpoint="127.0.0.1:50051",
                            registered_at=1.7e9, endpoint_checked=True, endpoint_problem="connection refused"),
        arena_pb2.BotRecord(bot_id="here@1.0", name="here", version="1.0", game="take5", endpoint="127.0.0.1:50052",
                            registered_at=1.7e9, endpoint_checked=True)])
    monkeypatch.setattr(AppContext, "arena", lambda self, server: _Arena(reply))
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["bot", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any("match health" in line for line in lines)
    gone = next(line for line in lines if "gone@1.0" in line)
    here = next(line for line in lines if "here@1.0" in line)
    assert "no: connection refused" in gone and "no failed match yet" in gone
    assert " yes " in here and " healthy " in here and "last matches" not in here
