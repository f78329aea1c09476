"""Play a game in-process between bot objects: no network, no referee. For trying a bot out, tests and benchmarks
of bot strength. The referee (``arena play``) is the real thing: separate processes over gRPC.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .bot import Bot, MatchInfo, MatchResult
from .games import get_game
from .games.base import Outcome


def play_game(
    bots: Sequence[Bot],
    config: Any = None,
    *,
    seed: int | None = None,
    deals: Sequence[Any] = (),
    match_id: str = "local",
    game: str | None = None,
    seat_seeds: Sequence[int] = (),
) -> Outcome:
    """Play one complete game between ``bots`` (one object per seat, seat order) and return its outcome.

    ``game`` is the game id; by default the first game the first bot plays (``type(bots[0]).games[0]``). Like a
    served match: each bot gets ``on_start`` (``MatchInfo`` with the bots' class ``name``s) and ``on_end``, and
    every decision sees only the engine's ``observe`` of its seat. ``seed`` / ``deals`` as in the game's
    ``new_game``; ``seat_seeds``: one seed per seat for
    the bots' own randomness (``MatchInfo.seat_seed``; () gives none: entropy).
    Raises ``RulesError`` for a bad seat count or deal, ``IllegalAnswerError`` when a bot answers
    illegally, ``ValueError`` for an unknown game, no bots or a bot of another game, and whatever a bot's method
    raises (there is no referee here to turn it into a fault).
    """
    if not bots:
        raise ValueError("play_game needs one bot object per seat, got none")
    game_id = game if game is not None else type(bots[0]).games[0]
    g = get_game(game_id)
    strangers = [f"seat {seat}: {type(bot).__name__} plays {', '.join(getattr(bot, 'games', ())) or 'no game'}"
                 for seat, bot in enumerate(bots) if game_id not in getattr(bot, "games", ())]
    if strangers:
        raise ValueError(f"play_game plays {game_id}, but not every bot does ({'; '.join(strangers)}): give bots "
                         f"of one game")
    n = len(bots)
    state = g.new_game(n, config, seed=seed, deals=tuple(deals))
    names = tuple(type(b).name for b in bots)
    config = getattr(state, "config", config)
    for seat, bot in enumerate(bots):
        info = MatchInfo(match_id, game_id, seat, n, names, config, seat_seeds[seat] if seat_seeds else None)
        bot.begin_match(info)
        bot.on_start(info)
    while not g.is_over(state):
        for seat in g.pending_seats(state):
            state = g.apply(state, seat, g.decide(bots[seat], g.observe(state, seat)))
    result = g.outcome(state)
    for seat, bot in enumerate(bots):
        bot.on_end(MatchResult(match_id, seat, result.scores, result.ranks, (0,) * n))
    return result
