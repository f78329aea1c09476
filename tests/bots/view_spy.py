"""A spy bot for ANY registered game, served in-process by the SDK, that keeps every view it is given, and the
check that those views are exactly the engine's ``observe`` at each decision of a match record."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from any_random_bot import random_bot_class

from arena.match.record import MatchRecord
from arena_sdk import wire
from arena_sdk.games import get_game
from arena_sdk.server import create_server


def spy_class(game_id: str, seen: list[tuple[str, int, Any]]) -> type:
    """A random bot of ``game_id`` that appends (match id, seat, view) to ``seen`` at every decision."""
    base = random_bot_class(game_id)

    def spying(method: Any) -> Any:
        def decide(self: Any, view: Any) -> Any:
            seen.append((self.match.match_id, self.match.seat, view))
            return method(self, view)
        return decide

    namespace = {m: spying(getattr(base, m)) for m in get_game(game_id).decision_methods.values()}
    return type(f"Spy_{game_id}", (base,), namespace)


@contextlib.contextmanager
def spy_servers() -> Iterator[Callable[[str], tuple[str, list[tuple[str, int, Any]]]]]:
    """``serve(game_id) -> (endpoint, seen)``: an in-process SDK server of a spy bot of that game; all stopped on
    exit."""
    servers = []

    def serve(game_id: str) -> tuple[str, list[tuple[str, int, Any]]]:
        seen: list[tuple[str, int, Any]] = []
        server, port = create_server(spy_class(game_id, seen))
        server.start()
        servers.append(server)
        return f"127.0.0.1:{port}", seen

    try:
        yield serve
    finally:
        for server in servers:
            server.stop(0)


def check_views(record: MatchRecord, seen: list[tuple[str, int, Any]]) -> int:
    """Replay ``record``; every decision a bot answered must have been asked with ``observe`` of that moment.
    Returns the number of views compared."""
    game = get_game(record.game)
    state = game.new_game(len(record.seats), wire.config_from_dict(record.game, record.config), seed=record.seed)
    views: dict[int, list[Any]] = {}
    for match_id, seat, view in seen:
        if match_id == record.match_id:
            views.setdefault(seat, []).append(view)
    compared = 0
    for i, d in enumerate(record.decisions):
        seat = d["seat"]
        if d["source"] == "bot":
            expected = game.observe(state, seat)
            got = views[seat].pop(0)
            assert got == expected, f"decision {i} (seat {seat}): the bot's view differs from observe"
            compared += 1
        state = game.apply(state, seat, game.action_from_dict(d["kind"], d["action"]))
    assert all(not rest for rest in views.values()), "a bot got more views than it answered decisions"
    return compared
