"""Rating mathematics of the arena (pure: no Redis, no network, no clock): ``docs/DESIGN.md``, "Ratings".

* ``elo``: the live multiplayer Elo (pairwise decomposition), applied per result in arrival order;
* ``fit``: the batch fit over whole matches (Bradley-Terry on the Elo scale with seat and deal-luck effects),
  95 % intervals from a bootstrap over deals, likelihood of superiority;
* ``margins``: Elo difference +/- margin and LOS from win/draw/loss counts (the chess tools' formulas), and a
  margin that stays finite for a perfect record;
* ``groups``: the connected groups of a ladder (bots linked by chains of shared tables), each rated on its own;
* ``sprt``: the sequential probability ratio test on paired blocks ("is V2 better than V1?").

Usage: ``from arena.ratings import fit_ratings, RatedMatch, elo_margin, SprtState`` and
``from arena.ratings import sprt`` then ``sprt.update(state, outcome)``, ``sprt.llr(...)``, ``sprt.verdict(...)``.
The live-Elo names are imported here eagerly (the store needs them and they cost nothing); the names of the other
modules resolve on first use, so that importing the arena does not import numpy and scipy.
"""

from __future__ import annotations

import importlib
from typing import Any

from arena.ratings.elo import INITIAL_RATING, K_FACTOR, elo_deltas, expected_score, pair_score

_LAZY = {
    # fit
    "DEFAULT_REPLICATES": "fit", "FitError": "design", "FitResult": "fit", "RatedMatch": "design", "Standing": "fit",
    "fit_ratings": "fit",
    # margins
    "ELO_PER_LOGIT": "margins", "EloEstimate": "margins", "elo_margin": "margins", "elo_to_score": "margins",
    "los": "margins", "pairwise_counts": "margins", "score_to_elo": "margins", "bounded_margin": "margins",
    "MIN_MATCHES": "margins",
    # groups
    "connected_groups": "groups", "group_numbers": "groups", "groups_note": "groups", "group_sections": "groups",
    # sprt (its functions update, llr, verdict, status ... are used as ``sprt.update`` and so on)
    "SprtError": "sprt", "SprtState": "sprt", "SprtStatus": "sprt", "block_outcome": "sprt",
}

__all__ = ["INITIAL_RATING", "K_FACTOR", "elo_deltas", "expected_score", "pair_score", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
