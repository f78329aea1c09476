"""Tiny Nim's bot base class and the check of its answers."""

from __future__ import annotations

from typing import ClassVar

from arena_sdk.bot import Bot, IllegalAnswerError

from .rules import GAME_ID, Take, TinyNimView


class TinyNimBot(Bot):
    """Override ``take(view)``: how many tokens to take (1..min(take_max, heap)). Default: one."""

    games: ClassVar[tuple[str, ...]] = (GAME_ID,)

    def take(self, view: TinyNimView) -> int:
        return 1


def decide(bot: TinyNimBot, view: TinyNimView) -> Take:
    count = bot.take(view)
    if not isinstance(count, int) or not 1 <= count <= min(view.take_max, view.heap):
        raise IllegalAnswerError(f"take: the bot returned {count!r}")
    return Take(count)
