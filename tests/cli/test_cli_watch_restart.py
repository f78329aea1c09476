"""`arena tournament status ID --watch` rides out a referee restart, as `arena sprt show --watch` does: the
tournament goes on in Redis, so the watcher asks again until the referee answers (a real Arena server stopped and
started again on the same port and redis-server, the real CLI in a thread)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import grpc
from click.testing import CliRunner

from arena.cli import cli
from arena.cli.app import admin_signer
from arena.server.app import ArenaServer
from arena.store import Store
from arena_sdk.pb import arena_pb2, arena_pb2_grpc


def _server(port: int, redis_url: str, token: str | None) -> tuple[ArenaServer, Any, grpc.Channel]:
    server = ArenaServer(f"127.0.0.1:{port}", redis_url, workers=0, verify_bots=False, admin_token=token)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(channel).result(timeout=10)
    return server, arena_pb2_grpc.ArenaStub(grpc.intercept_channel(channel, admin_signer(channel,
                                                                                         server.admin_token))), channel


def test_status_watch_waits_through_a_referee_restart(redis_url: str, free_tcp_port: int, tmp_path: Path) -> None:
    port = free_tcp_port
    store = Store.from_url(redis_url)
    server, stub, channel = _server(port, redis_url, None)
    token = server.admin_token
    for name in ("w1", "w2"):
        store.register_bot("take5", name, "127.0.0.1:1", version="1")
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(game="take5", bots=["w1@1", "w2@1"], rounds=2))
    out: dict[str, Any] = {}

    def watch() -> None:
        out["result"] = CliRunner(env={"ARENA_DATA_DIR": str(tmp_path)}).invoke(
            cli, ["tournament", "status", t.id, "--watch", "--server", f"127.0.0.1:{port}"])

    watcher = threading.Thread(target=watch)
    watcher.start()
    time.sleep(1.0)
    channel.close()
    server.stop()  # the referee goes away while the watcher polls
    time.sleep(2.0)
    server, stub, channel = _server(port, redis_url, token)
    try:
        stub.CancelTournament(arena_pb2.CancelTournamentRequest(id=t.id))
        watcher.join(30)
        assert not watcher.is_alive()
        result = out["result"]
        assert result.exit_code == 0, result.output
        assert "cancelled" in result.output
    finally:
        channel.close()
        server.stop()


class _Failed(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._code.name


def test_a_poll_cut_off_by_a_stopping_referee_is_asked_again() -> None:
    """A poll under way when the referee shuts down may end CANCELLED rather than UNAVAILABLE (a race of the
    restart above): both are the referee going away, asked again; another failure is the error at once."""
    from types import SimpleNamespace

    from arena.cli.app import RefereeAway
    from arena.cli.errors import ArenaCliError

    answers: list[Any] = [_Failed(grpc.StatusCode.CANCELLED), _Failed(grpc.StatusCode.UNAVAILABLE), "reply",
                          _Failed(grpc.StatusCode.NOT_FOUND)]

    def get(request: Any, timeout: float) -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    away = RefereeAway(SimpleNamespace(stub=SimpleNamespace(GetTournament=get), server="127.0.0.1:1"))  # type: ignore[arg-type]
    assert away.note == ""
    assert away.ask("GetTournament", None) is None and away.ask("GetTournament", None) is None
    assert away.note.startswith("the referee does not answer (")  # what a piped --wait's plain lines say now
    assert away.ask("GetTournament", None) == "reply" and away.away_s == 0.0 and away.note == ""
    try:
        away.ask("GetTournament", None)
    except ArenaCliError as exc:
        assert "NOT_FOUND" in str(exc)
    else:
        raise AssertionError("NOT_FOUND was not raised")
