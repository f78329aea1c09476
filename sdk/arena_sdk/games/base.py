"""Game-independent shapes shared by every rules engine, the referee and the SDK.

A rules engine is a module of pure functions over frozen state (see ``../shared/DESIGN.md``):
``new_game``, ``pending_seats``, ``legal_actions``, ``apply``, ``observe``, ``is_over``, ``outcome``.
Nothing here assumes Take 5's shape (simultaneous turns, penalty points): Taki will plug in the same way.
"""

from __future__ import annotations

from dataclasses import dataclass


class RulesError(ValueError):
    """Base class of every rules-engine error."""


class IllegalActionError(RulesError):
    """An action that the rules do not allow in this state; the message names the action and the reason."""


@dataclass(frozen=True)
class GameInfo:
    """Static metadata a game declares.

    Attributes:
        game: game id used on the wire and in the CLI, e.g. ``"take5"``.
        title: human name, e.g. ``"Take 5!"``.
        min_players / max_players: allowed seat counts (inclusive).
        simultaneous: True when several seats may have a decision pending at once (Take 5 card choice).
        imperfect_information: True when seats hide information from each other.
        decision_kinds: the decision kinds the game asks (wire names of ``DecisionKind``).
        lower_score_is_better: True when the final score is a penalty (Take 5 bullheads).
    """

    game: str
    title: str
    min_players: int
    max_players: int
    simultaneous: bool
    imperfect_information: bool
    decision_kinds: tuple[str, ...]
    lower_score_is_better: bool


@dataclass(frozen=True)
class Outcome:
    """Final result of a game, in seat order.

    Attributes:
        scores: the game's score of every seat (Take 5: bullhead total; lower is better there).
        ranks: standard competition rank of every seat, 1 = best, equal scores share a rank (1, 2, 2, 4).
    """

    scores: tuple[float, ...]
    ranks: tuple[int, ...]


def competition_ranks(scores: tuple[float, ...] | list[float], lower_is_better: bool) -> tuple[int, ...]:
    """Standard competition ranking ("1224") of ``scores``: 1 + the number of strictly better scores.

    >>> competition_ranks([10, 20, 20, 30], lower_is_better=True)
    (1, 2, 2, 4)
    """
    if lower_is_better:
        return tuple(1 + sum(1 for o in scores if o < s) for s in scores)
    return tuple(1 + sum(1 for o in scores if o > s) for s in scores)
