"""The base class a Taki bot author subclasses, and the checks of its answers.

A Taki bot has one method per decision kind: ``take_turn(view)`` (``TAKI_TURN``: return one of
``legal_actions(view)``) and ``react(view)`` (``TAKI_REACT``: True plays a +3 Breaker out of turn). The view is
typed (``TakiView``, never protobuf) and lists every legal answer, so a bot never re-derives the rules.

    from arena_sdk import TakiBot, legal_plays, serve

    class FirstCard(TakiBot):
        name = "firstcard"

        def take_turn(self, view):
            plays = legal_plays(view)
            return plays[0] if plays else legal_actions(view)[0]

    if __name__ == "__main__":
        serve(FirstCard)
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...bot import Bot, IllegalAnswerError
from .cards import card_token
from .state import GAME_ID, REACT, TURN, Draw, EndTurn, PlayCard, React, TakiAction, TakiView


def legal_actions(view: TakiView) -> tuple[TakiAction, ...]:
    """Every legal answer of the pending decision, in the engine's order (``PlayCard``, ``Draw``, ``EndTurn`` for
    ``TAKI_TURN``; ``React(True)`` / ``React(False)`` for ``TAKI_REACT``)."""
    return view.legal


def legal_plays(view: TakiView) -> tuple[PlayCard, ...]:
    """The legal ``PlayCard`` answers only (every card, named colour and declaration variant)."""
    return tuple(a for a in view.legal if isinstance(a, PlayCard))


def can_draw(view: TakiView) -> bool:
    """True when drawing (one card, or the +2 stack) is a legal answer now."""
    return Draw() in view.legal


def describe(action: TakiAction) -> str:
    """A short text of an action for logs: ``"play R5 last-card"``, ``"draw"``, ``"end"``, ``"react yes"``."""
    if isinstance(action, PlayCard):
        parts = ["play", card_token(action.card)]
        if action.color is not None:
            parts.append("RYGB"[action.color])
        if action.close_run:
            parts.append("close")
        if action.last_card:
            parts.append("last-card")
        return " ".join(parts)
    if isinstance(action, Draw):
        return "draw"
    if isinstance(action, EndTurn):
        return "end"
    if isinstance(action, React):
        return "react yes" if action.play else "react no"
    return repr(action)


class TakiBot(Bot):
    """Base class of a Taki bot. Subclass it, set ``name`` (and ``version``), override ``take_turn``.

    ``name``, ``version``, ``author``, the hooks ``on_start``/``on_end`` and ``add_arguments``: see
    ``arena_sdk.Bot``.

    Decision methods (each receives the seat's complete ``TakiView``):
        ``take_turn(view)``: one of ``legal_actions(view)``: a ``PlayCard`` (with its named colour, run closing and
            "last card" declaration), ``Draw()`` or ``EndTurn()``. Called for every step of the turn (a run is
            played one card at a time; after a King or a Plus the same seat is asked again). Default: the first
            legal play, declaring "last card" when that is allowed; else draw, else end the turn.
        ``react(view)``: a +3 was played and this seat holds a +3 Breaker: True plays it (the +3's player draws
            three instead of everyone else), False does not. Default: True.

    A method that raises, or returns an action that is not in ``view.legal``, makes the SDK answer the referee
    with gRPC status INTERNAL; the referee records a fault and plays its default action.
    """

    games: ClassVar[tuple[str, ...]] = (GAME_ID,)

    def take_turn(self, view: TakiView) -> TakiAction:
        """The action of this step of the turn (decision ``TAKI_TURN``); must be one of ``legal_actions(view)``."""
        return sensible_action(view)

    def react(self, view: TakiView) -> bool:
        """Play a +3 Breaker out of turn (decision ``TAKI_REACT``)? Default: yes."""
        return True


def sensible_action(view: TakiView) -> TakiAction:
    """A simple legal answer: the first legal play, with the "last card" declaration when allowed, else draw,
    else end the turn. Raises ``IllegalAnswerError`` when the view lists no legal action."""
    plays = legal_plays(view)
    if plays:
        declared = [p for p in plays if p.last_card]
        return declared[0] if declared else plays[0]
    for action in (Draw(), EndTurn()):
        if action in view.legal:
            return action
    if view.legal:
        return view.legal[0]
    raise IllegalAnswerError(f"{view.kind}: the view lists no legal action")


def check_answer(view: TakiView, answer: Any) -> TakiAction:
    """The checked engine action of a bot's answer to ``view.kind``: ``take_turn`` must return an action of
    ``view.legal``; ``react`` a bool (or a ``React``). Raises ``IllegalAnswerError`` saying what the bot
    returned and what was allowed."""
    kind = view.kind
    if kind == REACT:
        if isinstance(answer, React):
            action: Any = answer
        elif isinstance(answer, bool):
            action = React(answer)
        else:
            raise IllegalAnswerError(f"{kind}: react() returned {answer!r}, not True or False")
    elif kind == TURN:
        if not isinstance(answer, (PlayCard, Draw, EndTurn)):
            raise IllegalAnswerError(f"{kind}: take_turn returned {answer!r} ({type(answer).__name__}), not an "
                                     f"action: return one of legal_actions(view) (a PlayCard, Draw() or EndTurn())"
                                     f"{_hint(view, answer)}")
        action = answer
    else:
        raise IllegalAnswerError(f"unknown decision kind {kind!r}")
    if action not in view.legal:
        shown = ", ".join(describe(a) for a in view.legal)
        got = describe(action) if isinstance(action, (PlayCard, Draw, EndTurn, React)) else repr(action)
        raise IllegalAnswerError(f"{kind}: the bot returned {got}, not legal now; legal: {shown}")
    return action  # type: ignore[no-any-return]


def _hint(view: TakiView, answer: Any) -> str:
    """What a ``take_turn`` that returned a bare card (an int of ``view.hand``) meant to return, else ""."""
    if type(answer) is not int or answer not in view.hand:
        return ""
    if any(a.card == answer for a in legal_plays(view)):
        return f"; the PlayCard of legal_plays(view) whose .card is {answer} plays that card ({card_token(answer)})"
    return f"; that card ({card_token(answer)}) cannot be played now"


def decide(bot: TakiBot, view: TakiView) -> TakiAction:
    """Ask ``bot`` the decision ``view.kind`` and return the checked engine action (in-process play and the SDK
    server). Raises ``IllegalAnswerError`` for an illegal answer and whatever the bot's method raises.

    Before the method, ``bot.rng`` gets the generator of this decision's place: its index in the seat's own
    sequence of decisions in the match (0, 1, 2, ...: ``Bot.begin_decision()``; Taki's draw pile makes hand and turn a
    poor place, a different earlier play changing them)."""
    bot.begin_decision()
    if view.kind == REACT:
        return check_answer(view, bot.react(view))
    if view.kind == TURN:
        return check_answer(view, bot.take_turn(view))
    raise IllegalAnswerError(f"view.kind must be a Taki decision kind, got {view.kind!r}")
