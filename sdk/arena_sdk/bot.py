"""The base class a Take 5 bot author subclasses, and the small records its hooks receive.

A bot is a class with a ``name``, a ``version`` and one method per decision kind of the game. The SDK's server
(``arena_sdk.server``) makes **one object per (match id, seat)**, so an author keeps per-match state in ``self``;
each method receives the seat's complete typed view (``take5.Take5View``, never protobuf) and returns a plain int.

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

import argparse
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from .games import take5

BOT_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class BotDefinitionError(ValueError):
    """A bot class that cannot be served (missing or invalid ``name``, wrong base class); says what to fix."""


@dataclass(frozen=True)
class MatchInfo:
    """What a bot learns when a match starts (``Take5Bot.on_start``).

    Attributes:
        match_id: unique id of the match, e.g. ``"t7-000042"``.
        game: game id, ``"take5"``.
        seat: the seat this bot object plays, 0-based.
        num_players: seats in the match (Take 5: 2..10).
        player_names: registered bot names in seat order; () when the object was created by a ``Decide`` for a
            match the bot never saw start (e.g. the bot process restarted mid-match).
        config: the match's rules options (``take5.Take5Config``).
    """

    match_id: str
    game: str
    seat: int
    num_players: int
    player_names: tuple[str, ...]
    config: take5.Take5Config


@dataclass(frozen=True)
class MatchResult:
    """The final result of a match (``Take5Bot.on_end``), in seat order.

    Attributes:
        match_id, seat: which match and which seat this object played.
        scores: every seat's score (Take 5: bullhead total, lower is better).
        ranks: standard competition rank of every seat, 1 = best, ties share (1, 2, 2, 4).
        faults: faults the referee recorded against each seat (timeouts, errors, illegal answers).
    """

    match_id: str
    seat: int
    scores: tuple[float, ...]
    ranks: tuple[int, ...]
    faults: tuple[int, ...]

    @property
    def score(self) -> float | None:
        """This seat's score, or None when the result holds no entry for the seat."""
        return self.scores[self.seat] if self.seat < len(self.scores) else None

    @property
    def rank(self) -> int | None:
        """This seat's rank (1 = best), or None when the result holds no entry for the seat."""
        return self.ranks[self.seat] if self.seat < len(self.ranks) else None


class Take5Bot:
    """Base class of a Take 5 bot. Subclass it, set ``name`` and ``version``, override ``choose_card``.

    Class attributes:
        name: registered bot name, 1..64 characters of ``[A-Za-z0-9_.-]`` (required).
        version: free-form version string, e.g. ``"1.2.0"``.
        author: optional author or team name.

    Decision methods (each receives the seat's complete ``take5.Take5View`` and returns an int):
        ``choose_card(view)``: a card of ``view.hand`` to play this turn (every turn; required).
        ``choose_row(view)``: Take 5 rule 4, ``view.resolving_card`` is below every row end; the row 0..3 to take.
            Default: the row with the fewest bullheads, lowest index on ties.
        ``draft_pick(view)``: draft variant, a card of ``view.draft_pool``. Default: the lowest card.

    Hooks: ``on_start(match)`` (a ``MatchInfo``) and ``on_end(result)`` (a ``MatchResult``); both do nothing by
    default. ``self.match`` holds the ``MatchInfo`` (set by the SDK before ``on_start``; None when the object is
    used in-process without a server).

    Command-line options: override the classmethod ``add_arguments(parser)`` to add options to
    ``python my_bot.py``; each parsed option (dest name) is passed to the constructor as a keyword argument, so
    ``--seed 7`` becomes ``MyBot(seed=7)``. The constructor must accept them (and work without arguments).

    A method that raises, or returns something that is not a legal card/row of the view, makes the SDK answer
    the referee with gRPC status INTERNAL; the referee records a fault and plays its default action.
    """

    name: ClassVar[str] = ""
    version: ClassVar[str] = "0.0.0"
    author: ClassVar[str] = ""
    games: ClassVar[tuple[str, ...]] = (take5.GAME_ID,)

    match: MatchInfo | None = None

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

    # --- hooks -----------------------------------------------------------------------------------------------

    def on_start(self, match: MatchInfo) -> None:
        """Called once when the match starts (or when the object is created for an unknown match)."""

    def on_end(self, result: MatchResult) -> None:
        """Called once when the match is over; the object is dropped afterwards."""

    # --- command line ----------------------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Add bot-specific options to the ``serve()`` command line (default: none)."""

    # --- checks ----------------------------------------------------------------------------------------------

    @classmethod
    def check_definition(cls) -> None:
        """Raise ``BotDefinitionError`` when the class cannot be served (name missing or invalid)."""
        if not isinstance(cls.name, str) or not BOT_NAME_RE.fullmatch(cls.name):
            raise BotDefinitionError(
                f"{cls.__name__}.name must be 1..64 characters of [A-Za-z0-9_.-], got {cls.name!r}"
            )
        if not isinstance(cls.version, str):
            raise BotDefinitionError(f"{cls.__name__}.version must be a string, got {cls.version!r}")


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
    value = answer.__index__()
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


class IllegalAnswerError(ValueError):
    """A bot method returned something that is not a legal answer of the decision; the message says what."""


def decide(bot: Take5Bot, view: take5.Take5View) -> take5.Take5Action:
    """Ask ``bot`` the decision ``view.kind`` and return the checked engine action (in-process play).

    Raises ``IllegalAnswerError`` for an illegal answer, ``ValueError`` when ``view.kind`` is not a Take 5
    decision kind, and whatever the bot's method raises.
    """
    if view.kind == take5.CHOOSE_CARD:
        return take5.ChooseCard(check_answer(view, view.kind, bot.choose_card(view)))
    if view.kind == take5.CHOOSE_ROW:
        return take5.ChooseRow(check_answer(view, view.kind, bot.choose_row(view)))
    if view.kind == take5.DRAFT_PICK:
        return take5.DraftPick(check_answer(view, view.kind, bot.draft_pick(view)))
    raise ValueError(f"view.kind must be a Take 5 decision kind, got {view.kind!r}")
