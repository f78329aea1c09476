"""Controllers of tournaments that grow while they run (an SPRT adding paired blocks, a round robin adding rounds
until its bots are separated).

A tournament's ``kind`` (``TournamentInfo.kind``, stored with it) names its format
(``arena.tournaments.formats``), whose ``control`` is its controller when the format is ``controlled``; a plain
round robin ("round_robin") has none and finishes by itself when its last match is settled. A *controlled* tournament is
never finished by the result script: its controller decides, after each settled match, whether to queue more
matches (``Store.extend_tournament``) or to finish it (``Store.finish_tournament``).

The worker calls ``after_match`` once a job of a tournament is settled (its result stored now or before, or the
match given up as failed or cancelled), from a thread (controllers use the synchronous store), and ``sweep``
now and then for every running controlled tournament, so that a controller call lost to a crash between the
acknowledgement and the hook (a worker SIGKILLed, Redis restarting) is made up for. A controller must therefore
be idempotent: called twice for one match, or with ``spec=None`` from a sweep, it changes nothing that was
already done (it keeps its own state in Redis and counts each match once).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from arena.core.specs import MatchSpec
from arena.tournaments.formats import formats

if TYPE_CHECKING:
    from arena.store import Store
    from arena.store.tournaments import TournamentInfo

log = logging.getLogger(__name__)

Controller = Callable[["Store", "TournamentInfo", "MatchSpec | None"], None]
"""``controller(store, tournament, spec)``: ``spec`` is the settled match, or ``None`` from a sweep."""


def controller_of(kind: str) -> Controller | None:
    """The controller of tournaments of ``kind`` (a format's name, ``arena.tournaments.formats``): its format's
    ``control`` when the format is ``controlled``; ``None`` for a plain round robin or an unknown kind."""
    fmt = formats().get(kind)
    if fmt is None or not fmt.controlled:
        return None
    return fmt.control


def after_match(store: Store, spec: MatchSpec) -> None:
    """Run the controller of ``spec``'s tournament after that match was settled; nothing for a match outside a
    tournament or of a tournament without one. Errors propagate (the worker logs them; ``sweep`` makes up)."""
    if not spec.tournament:
        return
    info = store.get_tournament(spec.tournament)
    if info is None or not info.controlled or info.state != "running":
        return
    controller = controller_of(info.kind)
    if controller is None:
        log.error("tournament %s is of kind %r, which has no controller here", info.id, info.kind)
        return
    controller(store, info, spec)


def sweep(store: Store) -> int:
    """Call the controller of every running controlled tournament once with ``spec=None``; returns how many were
    called. A failure of one is logged and the others still run."""
    called = 0
    for info in store.list_tournaments():
        if info.state != "running" or not info.controlled:
            continue
        controller = controller_of(info.kind)
        if controller is None:
            continue
        try:
            controller(store, info, None)
            called += 1
        except Exception:  # noqa: BLE001 - one tournament's trouble must not stop the others
            log.exception("controller of tournament %s (%s) failed in a sweep", info.id, info.kind)
    return called
