"""The registry of tournament formats: round robin, until separated, SPRT, Swiss, and any a package adds.

A format is one module that defines ``FORMAT``, an instance of a ``Format`` subclass, which

- reads its options from its message of ``CreateTournamentRequest.format`` (``options_of``) and validates the
  request (``check``: the bots, seats and rounds, its options; ``TournamentError`` naming the first problem);
- plans the matches queued at creation (``plan``: specs, the stored ``extra``, the format state and the text that
  says how the matches follow from the request), with the shared deal plan, seat balancing and seed derivation of
  ``arena.tournaments.deals`` and ``arena.core.seeds``;
- controls the tournament while it runs, if it grows (``controlled`` and ``control``: called by the workers after
  every settled match and by their sweeps, see ``arena.tournaments.controllers``);
- describes its status (``describe``: the format's fields of the ``Tournament`` message) and may order its
  standings its own way (``standings``).

The built-in formats are listed in ``BUILTIN``; another package registers one through the entry-point group
``arena.formats`` (``name = "package.module:FORMAT"``). A stored tournament names its format by ``kind``, which is
the format's ``name``. docs/adding-a-format.md lists the files a new format touches.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from arena.core.config import DEFAULTS
from arena.core.errors import TournamentError
from arena.core.specs import MatchSpec

if TYPE_CHECKING:
    from arena.store import Store
    from arena.store.tournaments import TournamentInfo
    from arena.tournaments.standings import StandingsLine
    from arena_sdk.pb import arena_pb2

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "arena.formats"
BUILTIN: dict[str, str] = {
    "round_robin": "arena.tournaments.round_robin",
    "until_separated": "arena.tournaments.until_separated",
    "sprt": "arena.tournaments.sprt_controller",
    "swiss": "arena.tournaments.swiss",
}
"""Format name -> the module whose ``FORMAT`` it is."""


@dataclass(frozen=True)
class Entry:
    """A tournament request as a format sees it.

    Attributes: game (game id); bots (bot ids once resolved, the names as given while ``check`` runs); seats (k);
    rounds (as requested, 0 = the format's default); deals (deal plan, "duplicate", "unique" or "rotate", resolved:
    never ""); config (the game's config, JSON form); deadline_ms (Decide deadline, ms); options (the format's own,
    ``options_of``); owners (bot id -> owner key, "" for none: bots of one owner never sit at two tables of one
    deal); ratings (bot id -> live ladder rating, Elo points); seed (the tournament's SECRET seed, 0 .. 2**256-1: a
    format may derive hidden choices from it, as the deals are, and must never show it).
    """

    game: str
    bots: tuple[str, ...]
    seats: int
    rounds: int
    deals: str
    config: dict[str, Any]
    deadline_ms: int
    options: Mapping[str, Any] = field(default_factory=dict)
    owners: Mapping[str, str] = field(default_factory=dict)
    ratings: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0


@dataclass(frozen=True)
class Planned:
    """What a format plans at creation.

    Attributes: rounds (the tournament's rounds: planned in full, or the first ones of a growing tournament);
    specs (the matches queued now, ids ``match_id(tournament, 0)`` on); matches_total (the matches the request
    stands for: ``len(specs)``, or more for a format that queues rounds as it goes, which a dry run shows);
    deal_count (distinct deals of ``specs``); formula (how matches_total follows from the request, for people);
    extra (JSON-able, stored with the tournament: what ``control`` and ``describe`` need); state (field -> text,
    the format state stored in the same transaction, ``Store.format_state``).
    """

    rounds: int
    specs: tuple[MatchSpec, ...]
    matches_total: int
    deal_count: int
    formula: str
    extra: dict[str, Any] = field(default_factory=dict)
    state: dict[str, str] = field(default_factory=dict)


class Format:
    """A tournament format (module docstring). Subclasses set ``name``, ``title`` and ``option_field`` and override
    what they need; the defaults describe a tournament planned in full at creation that needs no controller."""

    name: ClassVar[str] = ""
    """Registry name, also the stored ``TournamentInfo.kind`` and ``Tournament.format``: lower case, underscores."""
    title: ClassVar[str] = ""
    """For people, e.g. "Swiss"."""
    summary: ClassVar[str] = ""
    """One sentence for people: what the format plays (``tournament create --format``'s help lists it)."""
    option_field: ClassVar[str] = ""
    """The field of the ``CreateTournamentRequest.format`` oneof that carries the options; "" for a format that
    CreateTournament does not create (an SPRT has its own call)."""
    controlled: ClassVar[bool] = False
    """True for a tournament that grows while it runs: then only ``control`` finishes it."""

    def options_of(self, message: Any) -> dict[str, Any]:
        """The options of ``message`` (this format's message of the oneof, None when it was not set) as JSON-able
        values. Raises ``TournamentError`` for an option out of range."""
        return {}

    def default_rounds(self, num_bots: int, seats: int = 2) -> int:
        """Rounds when the request says 0, for ``num_bots`` bots at ``seats`` seats a table: ``DEFAULTS.rounds``."""
        return DEFAULTS.rounds

    def check(self, entry: Entry) -> None:
        """Validate a request; raises ``TournamentError`` naming the first problem. ``entry.bots`` are the names
        as given (not yet resolved) and ``entry.rounds`` is resolved (never 0)."""
        raise TournamentError(f"the {self.title or self.name} format cannot be created with CreateTournament")

    def plan(self, tournament_id: str, entry: Entry) -> Planned:
        """The matches queued at creation (``Planned``), for a checked request with resolved bots. Raises
        ``TournamentError``."""
        raise TournamentError(f"the {self.title or self.name} format cannot be created with CreateTournament")

    def control(self, store: Store, info: TournamentInfo, spec: MatchSpec | None) -> None:
        """Called after a match of a running ``controlled`` tournament is settled (``spec``), or from a sweep
        (``spec`` None); idempotent (see ``arena.tournaments.controllers``)."""

    def describe(self, message: arena_pb2.Tournament, info: TournamentInfo,
                 store: Store | None) -> arena_pb2.Tournament:
        """``message`` (the generic ``Tournament`` of ``info``) with this format's fields; ``store`` None for a
        dry run (nothing stored: describe from ``info`` alone)."""
        return message

    def standings(self, store: Store, info: TournamentInfo,
                  lines: Sequence[StandingsLine]) -> tuple[list[StandingsLine], str] | None:
        """The standings lines in this format's order, and what orders them (``Standings.order``), from the
        generic ``lines`` (points order); None keeps those."""
        return None


_FORMATS: dict[str, Format] = {}
_LOADED = False  # loading has begun (in the thread holding _LOAD_LOCK)
_COMPLETE = False  # every format is registered
_LOAD_LOCK = threading.RLock()


def _load() -> None:
    """Import the built-in formats and those of the ``arena.formats`` entry points (once; a broken third-party
    format is logged and left out). Thread-safe: a thread that asks while another loads waits for the whole
    registry (a format module that asks while it is imported, in the loading thread, gets what is there so far)."""
    global _LOADED, _COMPLETE
    if _COMPLETE:
        return
    with _LOAD_LOCK:
        if _LOADED:
            return
        _LOADED = True
        for name, module in BUILTIN.items():
            register(importlib.import_module(module).FORMAT, expect=name)
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            try:
                register(ep.load(), expect=ep.name)
            except Exception:  # noqa: BLE001 - another package's format must not break the arena's own
                log.exception("format %s (%s) of entry point group %s cannot be loaded", ep.name, ep.value,
                              ENTRY_POINT_GROUP)
        _COMPLETE = True


def register(fmt: Format, expect: str | None = None) -> None:
    """Add ``fmt`` to the registry. Raises ``TournamentError`` for something that is not a ``Format``, a name
    other than ``expect``, or a name (or oneof field) taken by another format."""
    if not isinstance(fmt, Format) or not fmt.name:
        raise TournamentError(f"not a tournament format: {fmt!r}")
    if expect is not None and fmt.name != expect:
        raise TournamentError(f"format registered as {expect!r} is named {fmt.name!r}")
    other = _FORMATS.get(fmt.name)
    if other is not None and other is not fmt:
        raise TournamentError(f"format {fmt.name!r} is registered already")
    if fmt.option_field and any(f.option_field == fmt.option_field and f is not fmt for f in _FORMATS.values()):
        raise TournamentError(f"format option field {fmt.option_field!r} is taken")
    _FORMATS[fmt.name] = fmt


def formats() -> dict[str, Format]:
    """Every registered format by name, built-ins first."""
    _load()
    return dict(_FORMATS)


def get_format(name: str) -> Format:
    """The format called ``name``. Raises ``TournamentError`` naming the known ones."""
    found = formats().get(name)
    if found is None:
        raise TournamentError(f"unknown tournament format {name!r}; known formats: {', '.join(formats())}")
    return found


def creatable() -> list[str]:
    """Names of the formats CreateTournament creates (those with an ``option_field``)."""
    return [name for name, f in formats().items() if f.option_field]


def format_of_request(request: arena_pb2.CreateTournamentRequest) -> tuple[Format, dict[str, Any]]:
    """The format of a CreateTournament request and its options: the one whose message the ``format`` oneof
    holds; without one, "until_separated" when the older field ``until_separated`` is set (options: its
    ``max_matches``), else "round_robin". Raises ``TournamentError`` for the older fields mixed with the oneof, or
    an option out of range."""
    chosen = request.WhichOneof("format")
    if chosen is None:
        if request.until_separated:
            return get_format("until_separated"), {"max_matches": request.max_matches}
        if request.max_matches:
            raise TournamentError(f"max_matches ({request.max_matches}) caps a tournament run until its bots are "
                                  f"separated; set until_separated too, or leave max_matches out")
        return get_format("round_robin"), {}
    fmt = next((f for f in formats().values() if f.option_field == chosen), None)
    if fmt is None:  # a oneof field this server has no format for
        raise TournamentError(f"this arena has no format for the request's {chosen!r} options")
    if request.until_separated or request.max_matches:
        raise TournamentError(f"until_separated and max_matches belong to the older form of the request; with the "
                              f"{fmt.name} format give its options in the {chosen!r} message instead")
    return fmt, fmt.options_of(getattr(request, chosen))
