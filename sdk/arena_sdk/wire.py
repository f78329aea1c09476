"""Game-independent wire helpers: dispatch of the ``arena.v1`` oneofs to the registered game's codecs, and the
``DecisionKind`` enum.

The oneofs ``GameConfig.game``, ``DecideRequest.view`` and ``DecideResponse.action`` hold one field per game,
named by the game id; each function here finds the game in the registry (``arena_sdk.games``) and calls its
codec. Every ``*_from_*`` function validates what it reads and raises ``WireError`` (a ``ValueError``) naming the
bad field, so a malformed message from a bot or a client becomes a clear error, never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .games import GAMES, get_game
from .games.base import WireError
from .pb import bot_pb2

__all__ = [
    "WireError",
    "action_from_dict",
    "action_from_proto",
    "action_to_dict",
    "action_to_proto",
    "config_from_dict",
    "config_from_proto",
    "config_to_dict",
    "config_to_proto",
    "deal_from_dict",
    "deal_to_dict",
    "known_games",
    "kind_name",
    "kind_value",
    "view_from_request",
    "view_to_request",
]


def known_games() -> tuple[str, ...]:
    """The registered game ids, in registration order."""
    return tuple(GAMES)


# --- configs -----------------------------------------------------------------------------------------------


def config_to_proto(game: str, config: Any) -> bot_pb2.GameConfig:
    """``GameConfig`` message of ``config`` (the game's config dataclass). Raises ``WireError`` for an unknown
    game."""
    return bot_pb2.GameConfig(**{game: get_game(game).config_to_proto(config)})


def config_from_proto(game: str, msg: bot_pb2.GameConfig | None) -> Any:
    """Config dataclass of ``game`` from a ``GameConfig`` message; an absent message (or no field set) means all
    defaults. Raises ``WireError`` for an unknown game, a message for another game, or bad values."""
    g = get_game(game)
    which = None if msg is None else msg.WhichOneof("game")
    if which is None:
        return g.config_from_proto(None)
    if which != game:
        raise WireError(f"config is for game {which!r}, expected {game!r}")
    return g.config_from_proto(getattr(msg, which))


def config_to_dict(game: str, config: Any) -> dict[str, Any]:
    """JSON form of a config (every field). Raises ``WireError`` for an unknown game."""
    return get_game(game).config_to_dict(config)


def config_from_dict(game: str, d: Mapping[str, Any] | None) -> Any:
    """Config dataclass from its JSON form; missing keys take the defaults. Raises ``WireError`` on an unknown
    game, unknown keys or bad values."""
    return get_game(game).config_from_dict(d)


# --- deals -------------------------------------------------------------------------------------------------


def deal_to_dict(game: str, deal: Any) -> dict[str, Any]:
    """JSON form of one of ``game``'s deals."""
    return get_game(game).deal_to_dict(deal)


def deal_from_dict(game: str, d: Mapping[str, Any]) -> Any:
    """One of ``game``'s deals from its JSON form. Raises ``WireError``."""
    if not isinstance(d, Mapping):
        raise WireError(f"a deal must be an object, got {d!r}")
    return get_game(game).deal_from_dict(d)


# --- views -------------------------------------------------------------------------------------------------


def view_to_request(game: str, view: Any, **fields: Any) -> bot_pb2.DecideRequest:
    """A ``DecideRequest`` carrying ``view`` in the oneof field named by ``game``, plus ``fields`` (match_id,
    seat, kind, sequence)."""
    return bot_pb2.DecideRequest(**fields, **{game: get_game(game).view_to_proto(view)})


def view_from_request(request: bot_pb2.DecideRequest, kind: str | None) -> tuple[str, Any]:
    """``(game id, typed view)`` of a ``DecideRequest``, with ``kind`` pending. Raises ``WireError`` when the
    request carries no view, a view of an unknown game, or an inconsistent view."""
    game = request.WhichOneof("view")
    if game is None:
        raise WireError("DecideRequest carries no view")
    g = get_game(game)
    return game, g.view_from_proto(getattr(request, game), kind)


# --- actions -----------------------------------------------------------------------------------------------


def action_to_proto(game: str, action: Any) -> bot_pb2.DecideResponse:
    """``DecideResponse`` carrying ``action`` in the oneof field named by ``game``. Raises ``WireError``."""
    return bot_pb2.DecideResponse(**{game: get_game(game).action_to_proto(action)})


def action_from_proto(game: str, kind: str, response: bot_pb2.DecideResponse) -> Any:
    """The action of decision ``kind`` carried by a bot's ``DecideResponse``. Raises ``WireError`` when the
    response holds no action of ``game`` or the wrong field for the kind. Legality is the engine's job."""
    which = response.WhichOneof("action")
    if which != game:
        raise WireError(f"response carries no {game} action" + (f" (it carries a {which} action)" if which else ""))
    return get_game(game).action_from_proto(kind, getattr(response, game))


def action_to_dict(game: str, action: Any) -> dict[str, Any]:
    """JSON form of an action (the decision kind is recorded beside it)."""
    return get_game(game).action_to_dict(action)


def action_from_dict(game: str, kind: str, d: Any) -> Any:
    """Action of decision ``kind`` from its JSON form. Raises ``WireError`` when it does not match the kind."""
    return get_game(game).action_from_dict(kind, d)


# --- decision kinds ----------------------------------------------------------------------------------------


_KIND_NAMES: dict[int, str] = {
    v.number: v.name for v in bot_pb2.DecisionKind.DESCRIPTOR.values if v.name != "DECISION_KIND_UNSPECIFIED"}


def kind_name(kind: int) -> str:
    """``DecisionKind`` enum value -> name. Raises ``WireError`` for an unknown or unspecified kind."""
    name = _KIND_NAMES.get(kind)
    if name is None:
        if kind == bot_pb2.DECISION_KIND_UNSPECIFIED:
            raise WireError("decision kind is unspecified")
        raise WireError(f"unknown decision kind value {kind}")
    return name


def kind_value(name: str) -> int:
    """``DecisionKind`` name -> enum value. Raises ``WireError`` for an unknown name."""
    try:
        return bot_pb2.DecisionKind.Value(name)
    except ValueError as exc:
        raise WireError(f"unknown decision kind {name!r}: the DecisionKind enum of bot.proto has no value of that name "
                        f"(a game adds one for each of its GameInfo.decision_kinds, named alike; "
                        f"docs/adding-a-game.md)") from exc
