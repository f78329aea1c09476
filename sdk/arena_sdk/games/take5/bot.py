"""The base class a Take 5 bot author subclasses, and the checks of its answers.

A Take 5 bot has one method per decision kind (``choose_card``, ``choose_row``, ``draft_pick``); each receives the
seat's complete typed view (``Take5View``, never protobuf) and returns a plain int.

    from arena_sdk import Take5Bot, serve

    class Lowest(Take5Bot):
        name = "lowest"
        version = "1.0"

        def choose_card(self, view):
            return min(view.hand)

    if __name__ == "__main__":
        serve(Lowest)
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...bot import Bot, IllegalAnswerError
from . import rules as take5


class Take5Bot(Bot):
    """Base class of a Take 5 bot. Subclass it, set ``name`` and ``version``, override ``choose_card``.

    ``name``, ``version``, ``author``, the hooks ``on_start``/``on_end`` and ``add_arguments``: see ``arena_sdk.Bot``.

    Decision methods (each receives the seat's complete ``take5.Take5View`` and returns an int):
        ``choose_card(view)``: a card of ``view.hand`` to play this turn (every turn; required).
        ``choose_row(view)``: Take 5 rule 4, ``view.resolving_card`` is below every row end; the row 0..3 to take.
            Default: the row with the fewest bullheads, lowest index on ties.
        ``draft_pick(view)``: draft variant, a card of ``view.draft_pool``. Default: the lowest card.

    A method that raises, or returns something that is not a legal card/row of the view, makes the SDK answer
    the referee with gRPC status INTERNAL; the referee records a fault and plays its default action.
    """

    games: ClassVar[tuple[str, ...]] = (take5.GAME_ID,)

    # --- decisions -------------------------------------------------------------------------------------------

    def choose_card(self, view: take5.Take5View) -> int:
        """The card of ``view.hand`` to play this turn (decision ``TAKE5_CHOOSE_CARD``). Override this."""
        raise NotImplementedError(f"{type(self).__name__} must implement choose_card(view)")

    def choose_row(self, view: take5.Take5View) -> int:
        """Take 5 rule 4: the row (0..3) to take for ``view.resolving_card`` (decision ``TAKE5_CHOOSE_ROW``).

        Default: the row with the fewest bullheads (lowest index on ties). Taking a costlier row can be tactical.
        """
        return cheapest_row(view)

    def draft_pick(self, view: take5.Take5View) -> int:
        """Draft variant: the card of ``view.draft_pool`` to take into the hand (``TAKE5_DRAFT_PICK``).

        Default: the lowest card of the pool.
        """
        return min(view.draft_pool)


def cheapest_row(view: take5.Take5View) -> int:
    """Index (0..3) of the row with the fewest bullheads, lowest index on ties (the referee's default too)."""
    return min(range(len(view.rows)), key=lambda r: (view.row_bullheads(r), r))


def check_answer(view: take5.Take5View, kind: str, answer: Any) -> int:
    """The answer of a decision method as a plain int, after checking it is legal in ``view``.

    Rules: ``CHOOSE_CARD`` needs a card of ``view.hand``; ``CHOOSE_ROW`` a row 0..3; ``DRAFT_PICK`` a card of
    ``view.draft_pool``. Raises ``IllegalAnswerError`` saying what the bot returned and what was allowed.
    """
    if isinstance(answer, bool) or not hasattr(answer, "__index__"):
        raise IllegalAnswerError(f"{kind}: the bot returned {answer!r} ({type(answer).__name__}), not an int")
    value: int = int(answer.__index__())
    if kind == take5.CHOOSE_CARD:
        if value not in view.hand:
            raise IllegalAnswerError(f"{kind}: the bot returned card {value}, not in its hand {list(view.hand)}")
    elif kind == take5.CHOOSE_ROW:
        if not 0 <= value < take5.NUM_ROWS:
            raise IllegalAnswerError(f"{kind}: the bot returned row {value}, rows are 0..{take5.NUM_ROWS - 1}")
    elif kind == take5.DRAFT_PICK:
        if value not in view.draft_pool:
            raise IllegalAnswerError(
                f"{kind}: the bot returned card {value}, not in the draft pool {list(view.draft_pool)}"
            )
    else:
        raise IllegalAnswerError(f"unknown decision kind {kind!r}")
    return value


def decide(bot: Take5Bot, view: take5.Take5View) -> take5.Take5Action:
    """Ask ``bot`` the decision ``view.kind`` and return the checked engine action (in-process play).

    Raises ``IllegalAnswerError`` for an illegal answer, ``ValueError`` when ``view.kind`` is not a Take 5
    decision kind, and whatever the bot's method raises.
    Before the method, ``bot.rng`` gets the generator of this decision's place: (hand, turn, kind, draft pick).
    """
    bot.begin_decision(view.hand_number, view.turn, str(view.kind), len(view.draft_picks))
    if view.kind == take5.CHOOSE_CARD:
        return take5.ChooseCard(check_answer(view, view.kind, bot.choose_card(view)))
    if view.kind == take5.CHOOSE_ROW:
        return take5.ChooseRow(check_answer(view, view.kind, bot.choose_row(view)))
    if view.kind == take5.DRAFT_PICK:
        return take5.DraftPick(check_answer(view, view.kind, bot.draft_pick(view)))
    raise ValueError(f"view.kind must be a Take 5 decision kind, got {view.kind!r}")
