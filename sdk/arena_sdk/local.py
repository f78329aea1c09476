"""Play Take 5 in-process between bot objects: no network, no referee. For trying a bot out, tests and
benchmarks of bot strength. The referee (``arena play``) is the real thing: separate processes over gRPC.
"""

from __future__ import annotations

from collections.abc import Sequence

from .bot import MatchInfo, MatchResult, Take5Bot, decide
from .games import take5


def play_game(
    bots: Sequence[Take5Bot],
    config: take5.Take5Config | None = None,
    *,
    seed: int | None = None,
    deals: Sequence[take5.Take5Deal] = (),
    match_id: str = "local",
) -> take5.Outcome:
    """Play one complete Take 5 game between ``bots`` (one object per seat, seat order) and return its outcome.

    Like a served match: each bot gets ``on_start`` (``MatchInfo`` with the bots' class ``name``s) and ``on_end``,
    and every decision sees only ``take5.observe`` of its seat. ``seed`` / ``deals`` as in ``take5.new_game``.
    Raises ``RulesError`` for a bad seat count or deal, ``IllegalAnswerError`` when a bot answers illegally, and
    whatever a bot's method raises (there is no referee here to turn it into a fault).
    """
    n = len(bots)
    state = take5.new_game(n, config, seed=seed, deals=tuple(deals))
    names = tuple(type(b).name for b in bots)
    for seat, bot in enumerate(bots):
        info = MatchInfo(match_id, take5.GAME_ID, seat, n, names, state.config)
        bot.match = info
        bot.on_start(info)
    while not take5.is_over(state):
        for seat in take5.pending_seats(state):
            state = take5.apply(state, seat, decide(bots[seat], take5.observe(state, seat)))
    result = take5.outcome(state)
    for seat, bot in enumerate(bots):
        bot.on_end(MatchResult(match_id, seat, result.scores, result.ranks, (0,) * n))
    return result
