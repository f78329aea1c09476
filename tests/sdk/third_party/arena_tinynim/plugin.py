"""Tiny Nim's registry entry: ``PackageGame`` forwards to ``rules``, ``wire`` and ``bot``; only what differs here."""

from __future__ import annotations

from typing import Any

from arena_sdk.games.base import PackageGame

from .bot import TinyNimBot
from .rules import TAKE, Take, TinyNimConfig


class TinyNimGame(PackageGame):
    config_type = TinyNimConfig
    bot_class = TinyNimBot
    decision_methods = {TAKE: "take"}

    def view_legal_actions(self, view: Any) -> tuple[Any, ...]:
        return tuple(Take(n) for n in range(1, min(view.take_max, view.heap) + 1)) if view.kind else ()

    def answer_of(self, action: Any) -> Any:
        return action.count


GAME = TinyNimGame()
