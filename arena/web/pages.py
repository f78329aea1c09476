"""The pages of the arena and their ``/api/`` mirrors: the home page, the ladder of each game.

Each page route reads the Arena service (``request.app.state.arena``) and renders a template; its mirror under
``/api/`` answers the same facts as JSON (the read replies in their proto3 JSON form, plus what the page derives).
Matches link to the viewer at ``/matches/{match_id}``; bots to ``/bots/{bot}``.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from arena.web.responses import api, message_dict, page
from arena_sdk.games import GAMES, game_ids
from arena_sdk.pb import arena_pb2

LADDER_METHODS = {"elo": "live Elo", "fit": "batch fit"}


def games() -> list[dict[str, str]]:
    """Every registered game as ``{"id", "title"}``, in id order."""
    return [{"id": g, "title": GAMES[g].info.title} for g in game_ids()]


def _game(request: Request) -> str:
    game = request.path_params["game"]
    if game not in GAMES:
        raise HTTPException(404, f"no game named {game!r} (games: {', '.join(game_ids())})")
    return str(game)


def _method(request: Request) -> str:
    method = request.query_params.get("method", "elo") or "elo"
    if method not in LADDER_METHODS:
        raise HTTPException(400, f"method must be one of {', '.join(LADDER_METHODS)}, not {method[:16]!r}")
    return method


async def ladder_data(request: Request, game: str, method: str) -> dict[str, Any]:
    """The ladder of ``game`` by ``method`` ("elo" or "fit") as GetLadder answers it."""
    ladder = await request.app.state.arena.call("GetLadder", arena_pb2.GetLadderRequest(game=game, method=method))
    return message_dict(ladder)


async def index(request: Request) -> Response:
    return page(request, "index.html", {"games": games(), "title": "Arena"})


async def api_index(request: Request) -> Response:
    info = await request.app.state.arena.call("GetArenaInfo", arena_pb2.GetArenaInfoRequest())
    return api({"games": games(), "arena": message_dict(info)})


async def ladder(request: Request) -> Response:
    game, method = _game(request), _method(request)
    data = await ladder_data(request, game, method)
    return page(request, "ladder.html", {"game": game, "title": f"Ladder: {GAMES[game].info.title}",
                                         "method": method, "methods": LADDER_METHODS, "ladder": data,
                                         "games": games()})


async def api_ladder(request: Request) -> Response:
    game, method = _game(request), _method(request)
    return api(await ladder_data(request, game, method))


routes = [
    Route("/", index, name="index"),
    Route("/api/", api_index, name="api_index"),
    Route("/ladder/{game}", ladder, name="ladder"),
    Route("/api/ladder/{game}", api_ladder, name="api_ladder"),
]
