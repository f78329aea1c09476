"""Tiny Nim's JSON forms. It has no ``arena.v1`` messages: the protobuf codecs refuse."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from arena_sdk.games.base import RulesError, WireError

from .rules import Take, TinyNimConfig


def config_from_dict(data: Mapping[str, Any] | None) -> TinyNimConfig:
    try:
        return TinyNimConfig(**dict(data or {}))
    except (TypeError, RulesError) as exc:
        raise WireError(f"tinynim config: {exc}") from None


def config_to_dict(config: TinyNimConfig) -> dict[str, Any]:
    return asdict(config)


def deal_from_dict(data: Mapping[str, Any]) -> Any:
    raise WireError("Tiny Nim has no deals")


def deal_to_dict(deal: Any) -> dict[str, Any]:
    raise WireError("Tiny Nim has no deals")


def action_from_dict(kind: str, data: Any) -> Take:
    return Take(int(data["take"]))


def action_to_dict(action: Take) -> dict[str, Any]:
    return {"take": action.count}


def _no_messages(*args: Any) -> Any:
    raise WireError("Tiny Nim has no arena.v1 messages: it plays in process only")


config_to_proto = config_from_proto = view_to_proto = view_from_proto = _no_messages
action_to_proto = action_from_proto = _no_messages
