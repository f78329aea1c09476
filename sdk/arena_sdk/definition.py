"""Checks of a bot class beyond what stops it from being served (``server.BotServicer`` refuses those): names that
look like a misspelt decision method, said when the bot starts (``bot_process``)."""

from __future__ import annotations

import difflib

from .bot import Bot
from .games import GAMES, get_game


def decision_method_warnings(bot_cls: type[Bot]) -> list[str]:
    """What looks like a misspelt decision method of ``bot_cls`` (a served bot class), one sentence each: a class
    that overrides none of a game's decision methods (every decision then goes to the game's bot class: a default
    move, or a method that raises), and a public method of its own whose name is close to a decision method it does
    not override ("chose_row": did you mean choose_row?). [] when none."""
    out = []
    sdk = {klass for g in GAMES.values() for klass in g.bot_class.__mro__}  # the SDK's classes, not the author's
    own = {name for klass in bot_cls.__mro__ if klass not in sdk for name, value in vars(klass).items()
           if callable(value) and not name.startswith("_")}
    for game_id in bot_cls.games:
        game = get_game(game_id)
        base, methods = game.bot_class, sorted(set(game.decision_methods.values()))
        kept = [m for m in methods if getattr(bot_cls, m, None) is getattr(base, m, None)]
        candidates = sorted(own - set(methods))
        guesses = {name: close[0] for name in candidates if (close := difflib.get_close_matches(name, kept, 1, 0.75))}
        hint = "".join(f"; it defines {name}: did you mean {match}?" for name, match in guesses.items())
        if len(kept) == len(methods):
            others = [name for name in candidates if name not in guesses and any(
                name in g.decision_methods.values() for g in GAMES.values())]  # another game's decision method
            hint += "".join(f"; it defines {name}, which a {base.__name__} is never asked" for name in others)
            required = [m for m in methods if _raises_not_implemented(getattr(base, m, None))]
            fate = (f", and {base.__name__} has no {' or '.join(required)} of its own: "
                    f"{'it raises' if len(required) == 1 else 'they raise'}, so the bot faults at every such "
                    f"decision and forfeits" if required else "")
            out.append(f"{bot_cls.__name__} overrides none of {base.__name__}'s decision methods "
                       f"({', '.join(methods)}): every {game.info.title} decision goes to {base.__name__}'s own"
                       f"{fate}{hint}")
        elif hint:
            out.append(f"{bot_cls.__name__} does not override {', '.join(kept)} of {base.__name__}{hint}")
    return out


def _raises_not_implemented(method: object) -> bool:
    """True when ``method`` (an SDK bot class's decision method) is a stub for the author to write: its code raises
    ``NotImplementedError`` (Take5Bot.choose_card), not a default move."""
    code = getattr(method, "__code__", None)
    return code is not None and "NotImplementedError" in code.co_names
