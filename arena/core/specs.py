"""Shared shapes of the arena's data: bot ids and references, match ids, the match spec a job carries, a planned
table and a bot's tally in one tournament (pure; every layer may import it).

Bots are named by their ladder identity ``NAME@VERSION`` (a bot id); ``NAME`` alone is accepted where the caller
resolves it (the service turns it into the latest registered version before expanding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from arena.core.errors import TournamentError

BOT_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")
VERSION_RE = re.compile(r"^[A-Za-z0-9_.+-]{1,64}\Z")
BOT_REF_RE = re.compile(r"^(?P<name>[A-Za-z0-9_.-]{1,64})(@(?P<version>[A-Za-z0-9_.+-]{1,64}))?\Z")
TOURNAMENT_ID_RE = re.compile(r"^t[1-9][0-9]*\Z")
HOUSE_PREFIX = "house:"  # a house bot's seat name: "house:<sample name>", never a registered name (no ":" there)
HOUSE_BOT_RE = re.compile(r"^house:(?P<sample>[A-Za-z0-9_.-]{1,64})\Z")


def is_house_bot(name: str) -> bool:
    """True for a house bot's seat name, ``"house:<sample name>"`` (e.g. ``"house:heuristic"``): one of the arena's
    own sample bots, run by the worker, a fresh object per match; not a registered bot."""
    return isinstance(name, str) and HOUSE_BOT_RE.match(name) is not None


@dataclass(frozen=True)
class MatchSpec:
    """One match of a tournament, as queued for the workers.

    Attributes:
        match_id: ``"<tournament>-<index 6 digits>"``, e.g. ``"t3-000041"``; unique, the idempotency key.
        game: game id (a key of the game registry).
        seats: registered bot names in seat order (seat 0 first); seat j holds hand j of the deal.
        seed: deal seed of a match outside tournaments; 0 for a tournament's match, whose deal seed the worker
            derives from the tournament's secret seed when it plays it (``deal_seed``), so no seed is queued.
        config: the game's config in JSON form (``arena_sdk.wire.config_to_dict``).
        deadline_ms: deadline of every Decide call, milliseconds.
        tournament: id of the tournament, e.g. ``"t3"``.
        round: round number, 0-based. deal: index of the deal within the round (every table of one deal gets
            the same cards). table: index of the table within its deal (under ``deals="rotate"``: the seat
            rotation).
        rated: whether the result counts on the public ladder (False: stored and counted in its tournament only,
            e.g. an SPRT whose one owner's versions share deals). In the job only when False.
    """

    match_id: str
    game: str
    seats: tuple[str, ...]
    seed: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    deadline_ms: int = 1000
    tournament: str = ""
    round: int = 0
    deal: int = 0
    table: int = 0
    rated: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what a job on the stream carries)."""
        out: dict[str, Any] = {
            "match_id": self.match_id,
            "game": self.game,
            "seats": list(self.seats),
            "seed": self.seed,
            "config": dict(self.config),
            "deadline_ms": self.deadline_ms,
            "tournament": self.tournament,
            "round": self.round,
            "deal": self.deal,
            "table": self.table,
        }
        if not self.rated:
            out["rated"] = False
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchSpec:
        """Inverse of ``to_dict`` (jobs queued before deal plans name the deal "subset" and the table
        "rotation"). Raises ``TournamentError`` when a field is missing or of the wrong type."""
        try:
            spec = cls(
                match_id=str(d["match_id"]),
                game=str(d["game"]),
                seats=tuple(str(s) for s in d["seats"]),
                seed=int(d.get("seed") or 0),
                config=dict(d.get("config") or {}),
                deadline_ms=int(d["deadline_ms"]),
                tournament=str(d.get("tournament", "")),
                round=int(d.get("round", 0)),
                deal=int(d.get("deal", d.get("subset", 0))),
                table=int(d.get("table", d.get("rotation", 0))),
                rated=d.get("rated", True) is not False,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TournamentError(f"malformed match spec {d!r}: {exc}") from exc
        if not spec.match_id or len(spec.seats) < 2:
            raise TournamentError(f"malformed match spec {d!r}: needs a match_id and at least 2 seats")
        return spec


@dataclass(frozen=True)
class PlannedMatch:
    """One table of a deal plan: ``round`` (0-based), ``deal`` (index within the round), ``table`` (index within
    the deal) and ``seats`` (bot ids in seat order; seat j holds hand j of the deal)."""

    round: int
    deal: int
    table: int
    seats: tuple[str, ...]


def bot_id(name: str, version: str) -> str:
    """Ladder identity of a bot version: ``"heur", "1.2" -> "heur@1.2"``."""
    return f"{name}@{version}"


# look-alikes of a bot NAME to a reader, in the order they are replaced (``name_skeleton``)
_LOOK_ALIKES = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("0", "o"), ("1", "l"), ("i", "l"), ("5", "s"))


def name_skeleton(name: str) -> str:
    """What a reader sees of bot NAME ``name`` (after Unicode TR39's skeletons, for the ASCII of bot names): lower
    case, without ``.``, ``-`` and ``_``, and with rn -> m, vv -> w, cl -> d, 0 -> o, 1 -> l, i -> l, 5 -> s; e.g.
    "Heuristic.", "heur1stic" and "heuri5tic" -> "heurlstlc", "rnontecarlo" -> "montecarlo", "ranclom" ->
    "random". Two names of one skeleton read as one, so the arena gives them to one owner only."""
    text = "".join(c for c in name.lower() if c not in ".-_")
    for seen, read in _LOOK_ALIKES:
        text = text.replace(seen, read)
    return text


def split_bot_ref(ref: str) -> tuple[str, str | None]:
    """``"NAME@VERSION" -> (NAME, VERSION)``, ``"NAME" -> (NAME, None)``.

    Raises ``TournamentError`` when ``ref`` is neither: NAME is 1..64 characters of [A-Za-z0-9_.-], VERSION 1..64
    of [A-Za-z0-9_.+-].
    """
    m = BOT_REF_RE.match(ref) if isinstance(ref, str) else None
    if m is None:
        raise TournamentError(f"bad bot name {ref!r}: use NAME or NAME@VERSION, NAME 1..64 characters of "
                              f"A-Z a-z 0-9 _ . - and VERSION 1..64 of A-Z a-z 0-9 _ . + -")
    return m.group("name"), m.group("version")


def match_id(tournament_id: str, index: int) -> str:
    """Match id of the ``index``-th match (0-based) of a tournament: ``"t3", 41 -> "t3-000041"``."""
    return f"{tournament_id}-{index:06d}"


@dataclass
class BotTally:
    """One bot's counts over the matches of one tournament.

    Attributes:
        matches: matches played. score_sum: sum of its game scores (``GameInfo.lower_score_is_better``).
        half_points: pairwise points x 2 (2 per opponent finished ahead of, 1 per tie): whole numbers, exact.
        pairs: opponents met, counted once per match (a 4-seat match is 3 pairs).
        wins / losses: pairs where it finished ahead of / behind the opponent (ties are neither).
        opponents: pairs per opponent bot id.
    """

    matches: int = 0
    score_sum: float = 0.0
    half_points: int = 0
    pairs: int = 0
    wins: int = 0
    losses: int = 0
    opponents: dict[str, int] = field(default_factory=dict)

