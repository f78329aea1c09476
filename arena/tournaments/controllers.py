"""Controllers of tournaments that grow while they run (an SPRT adding paired blocks, a round robin adding rounds
until its bots are separated).

A tournament's ``kind`` (``TournamentInfo.kind``, stored with it) names its controller; a plain round robin
("round_robin") has none and finishes by itself when its last match is settled. A *controlled* tournament is
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

if TYPE_CHECKING:
    from arena.store import Store
    from arena.store.tournaments import TournamentInfo

log = logging.getLogger(__name__)

Controller = Callable[["Store", "TournamentInfo", "MatchSpec | None"], None]
"""``controller(store, tournament, spec)``: ``spec`` is the settled match, or ``None`` from a sweep."""

CONTROLLERS: dict[str, Controller] = {}


def register_controller(kind: str, controller: Controller) -> None:
    """Make ``controller`` the controller of tournaments of ``kind``. Raises ``ValueError`` for "round_robin"
    (plain round robins have none) or a kind registered twice with another controller."""
    if kind == "round_robin":
        raise ValueError("a plain round robin has no controller")
    if CONTROLLERS.get(kind, controller) is not controller:
        raise ValueError(f"tournament kind {kind!r} has a controller already")
    CONTROLLERS[kind] = controller


def _load_builtin() -> None:
    """Import the modules that register the built-in controllers (kept lazy: they need numpy and scipy)."""
    import importlib

    for module in BUILTIN_CONTROLLERS:
        importlib.import_module(module)


BUILTIN_CONTROLLERS: tuple[str, ...] = ("arena.tournaments.sprt_controller", "arena.tournaments.until_separated")
"""Modules that call ``register_controller`` when imported."""


def controller_of(kind: str) -> Controller | None:
    """The controller of tournaments of ``kind``, or ``None`` (a plain round robin, or an unknown kind)."""
    if kind not in CONTROLLERS:
        _load_builtin()
    return CONTROLLERS.get(kind)


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
