"""Tournament formats -> lists of match specs, the deal secret's derivations, and tournament standings (pure: no
Redis, no clock, no global randomness).

Round robin on duplicate deals (DESIGN.md "Deals are secret and never seen twice"): with B bots and k seats per
match, every k-subset of the bots plays one match (a *table*) in each of R rounds. The tables of a round are
grouped into *deals*: the same cards are dealt at every table of a deal (seat j holds hand j of the deal), like a
board of duplicate bridge played at several tables; the tables of one deal seat pairwise disjoint sets of bots,
and of owners, so no bot (and no two bots of one owner) ever receives cards of a deal twice. See ``deal_plan``
for the exact plan and its guarantee. ``--deals rotate`` (``deals="rotate"``) keeps the older plan for trusted
self-play only: every k-subset plays every seat rotation of the same deal, so each bot meets each deal k times.

Deals are secret (STYLE.md habit 14): a tournament's seed is 256 bits from the operating system's CSPRNG (drawn
by the service, never by a client), published as ``seed_commitment`` (SHA-256) at creation and revealed only when
no match of the tournament can be dealt any more. Each match's deal seed is ``deal_seed`` = HMAC-SHA256(tournament
seed, "<tournament>/<round>/<deal>/<attempt>"), computed by the worker when it plays the match; a match played
again after a crash of ours gets the next attempt number, so a fresh deal. ``verify_deals`` checks a revealed
tournament.

Bots are named by their ladder identity ``NAME@VERSION`` (a bot id); ``NAME`` alone is accepted where the caller
resolves it (the service turns it into the latest registered version before expanding).

Standings of one tournament (issue 3, item 4) decompose every match into pairs, like the ladder's Elo: in a match,
a bot scores 1 point per opponent it finished ahead of and 1/2 per opponent it tied with (its pairwise wins and
ties); ``standings`` ranks the bots by points and adds the Elo performance.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.config import MAX_DEADLINE_MS, MIN_DEADLINE_MS
from arena_sdk.games import GAMES

BOT_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
VERSION_RE = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")
BOT_REF_RE = re.compile(r"^(?P<name>[A-Za-z0-9_.-]{1,64})(@(?P<version>[A-Za-z0-9_.+-]{1,64}))?$")
TOURNAMENT_ID_RE = re.compile(r"^t[1-9][0-9]*$")
MAX_MATCHES = 100_000  # a tournament larger than this is refused (it would flood the queue)
SEED_BITS = 256  # a tournament seed: 256 bits, the HMAC key of its deals
MAX_TOURNAMENT_SEED = 2**SEED_BITS - 1
MAX_SEED = 2**63 - 1  # a match's deal seed (what the game's new_game receives), 0 .. 2**63-1
DEAL_PLANS = ("duplicate", "rotate")
ROTATE_WARNING = ("--deals rotate: every bot plays every seat of each of its deals, so it sees every deal k times "
                  "and can remember its opponents' hands; use it only for trusted self-play")


class TournamentError(ValueError):
    """A tournament request that cannot be expanded; the message names the bad value and the allowed range."""


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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what a job on the stream carries)."""
        return {
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


# --- the secret seed: commitment, deal seeds, verification -----------------------------------------------------


def seed_bytes(seed: int) -> bytes:
    """The 32 bytes (big-endian) of a tournament seed, 0 .. 2**256-1: the HMAC key of its deals and the preimage of
    its commitment. Raises ``TournamentError`` outside that range."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_TOURNAMENT_SEED:
        raise TournamentError(f"tournament seed must be a whole number in 0..2**{SEED_BITS}-1, got {seed!r}")
    return seed.to_bytes(SEED_BITS // 8, "big")


def seed_hex(seed: int) -> str:
    """A tournament seed as 64 hex digits (how it is revealed)."""
    return seed_bytes(seed).hex()


def seed_commitment(seed: int) -> str:
    """The public commitment to a tournament seed: SHA-256 of its 32 bytes (``seed_bytes``), 64 hex digits.
    Published at creation; anyone holding the revealed seed checks it with ``verify_deals``."""
    return hashlib.sha256(seed_bytes(seed)).hexdigest()


def deal_seed(tournament_seed: int, tournament_id: str, round_: int, deal: int, attempt: int = 0) -> int:
    """Seed of one deal (what the game's ``new_game`` receives), 0 .. 2**63-1: the first 8 bytes of
    HMAC-SHA256(key = ``seed_bytes(tournament_seed)``, message = ``f"{tournament_id}/{round_}/{deal}/{attempt}"``)
    as a big-endian number, top bit cleared.

    Keyed by the secret seed, so nobody can compute a deal from public inputs before the seed is revealed; every
    table of one deal shares it (the table is not in the message); ``attempt`` is how many times the match was
    started before (0 the first time), so a match played again gets a fresh deal.
    """
    message = f"{tournament_id}/{round_}/{deal}/{attempt}".encode()
    digest = hmac.new(seed_bytes(tournament_seed), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def parse_seed_hex(text: str) -> int:
    """Inverse of ``seed_hex``; raises ``TournamentError`` unless ``text`` is 64 hex digits."""
    if not isinstance(text, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raise TournamentError(f"a revealed tournament seed is 64 hex digits, got {text!r}")
    return int(text, 16)


def verify_deals(tournament_id: str, seed_text: str, commitment: str,
                 matches: Iterable[Mapping[str, Any]], twice_allowed: Iterable[str] = ()) -> list[str]:
    """Check a revealed tournament: its seed against its commitment, and every match's deal seed against the seed.

    Args:
        tournament_id: e.g. ``"t3"``. seed_text: the revealed seed, 64 hex digits. commitment: the SHA-256 hex
            published at creation.
        matches: one mapping per stored match with ``match_id``, ``seed`` and its deal coordinates ``round``,
            ``deal``, ``table``, ``attempt``, ``seats`` (e.g. the ``--json`` of ``arena match list``), plus an
            optional ``record_seed`` (the seed in the match record, when it was fetched).
        twice_allowed: bots that may receive cards of one deal (and attempt) in two matches, never more: V1 and V2
            of a head-to-head SPRT, which play each other at both tables of every block by design
            (``arena.sprt_plan``).
    Returns:
        One sentence per problem found (empty when everything checks): a commitment that is not the seed's, a
        match whose seed is not HMAC-SHA256(seed, "<tournament>/<round>/<deal>/<attempt>"), a record seed that
        differs from its match's, two matches on one deal and attempt sharing a bot, or a table played twice.
    """
    try:
        seed = parse_seed_hex(seed_text)
    except TournamentError as exc:
        return [str(exc)]
    problems = []
    if seed_commitment(seed) != commitment.lower():
        problems.append(f"the revealed seed does not match the commitment: SHA-256 of the seed is "
                        f"{seed_commitment(seed)}, the commitment published at creation is {commitment}")
    allowed = frozenset(twice_allowed)
    seen_at: dict[tuple[int, int, int], dict[str, str]] = {}
    seen_twice: dict[tuple[int, int, int], set[str]] = {}
    tables: dict[tuple[int, int, int], str] = {}
    for m in matches:
        mid = str(m.get("match_id", "?"))
        try:
            r, d, t, a = (int(m[key]) for key in ("round", "deal", "table", "attempt"))
        except (KeyError, TypeError, ValueError):
            problems.append(f"match {mid} does not say its deal (round, deal, table, attempt)")
            continue
        expected = deal_seed(seed, tournament_id, r, d, a)
        if int(m.get("seed") or 0) != expected:
            problems.append(f"match {mid}: seed {m.get('seed')} is not the deal seed {expected} of round {r}, deal "
                            f"{d}, attempt {a}")
        if m.get("record_seed") is not None and int(m["record_seed"]) != expected:
            problems.append(f"match {mid}: its record was played with seed {m['record_seed']}, not {expected}")
        if (r, d, t) in tables:
            problems.append(f"matches {tables[(r, d, t)]} and {mid} are both table {t} of round {r}, deal {d}")
        tables[(r, d, t)] = mid
        holders = seen_at.setdefault((r, d, a), {})
        twice = seen_twice.setdefault((r, d, a), set())
        for bot in m.get("seats", ()):
            if bot in holders and holders[bot] != mid and bot in allowed and bot not in twice:
                twice.add(bot)  # its second table of this deal: expected
            elif bot in holders:
                problems.append(f"bot {bot} received cards of round {r}, deal {d} twice: matches {holders[bot]} "
                                f"and {mid}")
            holders[bot] = mid
    return problems


# --- deal plans ------------------------------------------------------------------------------------------------


def tables_per_deal(num_bots: int, seats_per_match: int, deals: str = "duplicate") -> int:
    """T, the most tables that play one deal: ``max(1, min(k, B // k))`` for "duplicate" (tables of a deal seat
    disjoint bots, so at most B // k of them; at most k, like the k seat rotations of the older plan), k for
    "rotate"."""
    if deals == "rotate":
        return seats_per_match
    return max(1, min(seats_per_match, num_bots // seats_per_match))


def round_robin_size(num_bots: int, seats_per_match: int, rounds: int, deals: str = "duplicate") -> int:
    """Number of matches of a round robin: C(B, k) * R on duplicate deals, C(B, k) * k * R with "rotate"."""
    per_round = math.comb(num_bots, seats_per_match)
    return per_round * (seats_per_match if deals == "rotate" else 1) * rounds


def round_robin_formula(num_bots: int, seats_per_match: int, rounds: int, deals: str = "duplicate",
                        deal_count: int | None = None) -> str:
    """How a round robin's match count follows from its size, for people, e.g.
    ``(4, 3, 2) -> "C(4,3) subsets x 2 rounds = 8"``, ``(4, 3, 2, "rotate") -> "C(4,3) subsets x 3 seat
    rotations x 2 rounds = 24"``; with ``deal_count``, how many deals they are played on and T
    (``tables_per_deal``): ``"... = 8, on 8 deals of at most T = max(1, min(k, B // k)) = 1 table"``."""
    total = round_robin_size(num_bots, seats_per_match, rounds, deals)
    subsets = math.comb(num_bots, seats_per_match)
    rotations = f" x {seats_per_match} seat rotations" if deals == "rotate" else ""
    text = (f"C({num_bots},{seats_per_match}) {'subset' if subsets == 1 else 'subsets'}{rotations} x "
            f"{rounds} {'round' if rounds == 1 else 'rounds'} = {total}")
    if deal_count is not None:
        t = tables_per_deal(num_bots, seats_per_match, deals)
        how = "T = k" if deals == "rotate" else "T = max(1, min(k, B // k))"
        text += (f", on {deal_count} {'deal' if deal_count == 1 else 'deals'} of at most {how} = {t} "
                 f"{'table' if t == 1 else 'tables'}")
    return text


def _owner_classes(bots: Sequence[str], owners: Mapping[str, str] | None) -> list[int]:
    """Owner class of each bot (bots of one owner share one): ``owners[bot]`` when given and not empty, else the
    bot's NAME (so the versions of one NAME always share an owner)."""
    keys: dict[str, int] = {}
    out = []
    for b in bots:
        given = (owners or {}).get(b)
        key = f"owner:{given}" if given else f"name:{b.split('@', 1)[0]}"
        out.append(keys.setdefault(key, len(keys)))
    return out


PACK_WINDOW = 256  # open deals a table is tried against before it opens a new deal (bounds the planning time)
PACK_ORDER_SEED = 20240601  # fixed: the order tables are packed in is a pure function of B and k


def _pack_deals(subsets: Sequence[tuple[int, ...]], owner_of: Sequence[int], per_deal: int) -> list[list[int]]:
    """Group table indexes into deals of at most ``per_deal`` tables whose owner sets are pairwise disjoint: first
    fit, in a fixed shuffled order of the tables (consecutive subsets in combination order overlap too much to
    share deals), against the ``PACK_WINDOW`` most recently opened deals that still have room."""
    order = list(range(len(subsets)))
    if per_deal > 1:
        random.Random(PACK_ORDER_SEED).shuffle(order)  # a private generator with a fixed seed: deterministic
    deals: list[list[int]] = []
    open_deals: list[tuple[set[int], list[int]]] = []
    for index in order:
        owners = {owner_of[i] for i in subsets[index]}
        for pos in range(len(open_deals) - 1, max(-1, len(open_deals) - 1 - PACK_WINDOW), -1):
            taken, tables = open_deals[pos]
            if taken.isdisjoint(owners):
                taken |= owners
                tables.append(index)
                if len(tables) == per_deal:
                    del open_deals[pos]
                break
        else:
            tables = [index]
            deals.append(tables)
            if per_deal > 1:
                open_deals.append((set(owners), tables))
    return deals


def _balanced_seats(tables: Sequence[tuple[int, ...]], k: int) -> list[tuple[int, ...]]:
    """Seat the bots of every table so that each bot's tables, in order, taken k at a time, hold every seat once.

    An equitable edge colouring of the bipartite graph tables x bots (de Werra): each bot's i-th table joins its
    vertex number i // k, so every vertex has at most k edges and a proper k-colouring exists (König). It is built
    edge by edge: a colour free at both ends, else the two free colours are swapped along an alternating path
    (which, the graph being bipartite, cannot reach the bot's vertex). Colour = seat.
    """
    at_table: list[list[int | None]] = [[None] * k for _ in tables]  # table -> seat -> bot vertex
    at_left: list[list[int | None]] = []  # bot vertex -> seat -> table
    left_bot: list[int] = []
    current: dict[int, int] = {}  # bot -> its current vertex
    used: dict[int, int] = {}  # bot -> tables seen so far
    for t, bots in enumerate(tables):
        vertices = []
        for b in bots:
            n = used.get(b, 0)
            used[b] = n + 1
            if n % k == 0:
                current[b] = len(at_left)
                at_left.append([None] * k)
                left_bot.append(b)
            vertices.append(current[b])
        table_t = at_table[t]
        # first the seats that a matching of the table's bots to seats still free for them gives (no swaps) ...
        free = [[c for c in range(k) if at_left[u][c] is None] for u in vertices]
        matched: list[int | None] = []
        for options in free:  # most often, first come first served finds one
            seat = next((c for c in options if c not in matched), None)
            if seat is None:
                matched = _match_seats(free, k)
                break
            matched.append(seat)
        late = []
        for u, seat in zip(vertices, matched):
            if seat is None:
                late.append(u)
            else:
                at_left[u][seat] = t
                table_t[seat] = u
        # ... then each other bot: a seat free for both, else swap two seats along an alternating path
        for u in late:
            left_u = at_left[u]
            seat = next((c for c in range(k) if left_u[c] is None and table_t[c] is None), None)
            if seat is None:
                seat = next(c for c in range(k) if left_u[c] is None)  # taken at t
                other = next(c for c in range(k) if table_t[c] is None)  # taken at u
                _swap_path(at_table, at_left, t, seat, other)
            left_u[seat] = t
            table_t[seat] = u
    return [tuple(left_bot[u] for u in seats if u is not None) for seats in at_table]


def _match_seats(free: Sequence[Sequence[int]], k: int) -> list[int | None]:
    """A maximum matching of rows to seats, row i taking one of ``free[i]`` (augmenting paths; k <= 10)."""
    owner: list[int | None] = [None] * k  # seat -> row

    def place(row: int, seen: set[int]) -> bool:
        for c in free[row]:
            if c not in seen:
                seen.add(c)
                holder = owner[c]
                if holder is None or place(holder, seen):
                    owner[c] = row
                    return True
        return False

    for row in range(len(free)):
        place(row, set())
    out: list[int | None] = [None] * len(free)
    for c, holder in enumerate(owner):
        if holder is not None:
            out[holder] = c
    return out


def _swap_path(at_table: list[list[int | None]], at_left: list[list[int | None]], t: int, a: int, b: int) -> None:
    """Swap colours ``a`` and ``b`` along the path that leaves table ``t`` by its ``a`` edge and alternates
    ``b``, ``a``, ... (``t`` has no ``b`` edge): afterwards ``a`` is free at ``t``."""
    path: list[tuple[int, int, int]] = []  # (bot vertex, table, colour)
    node, on_table, colour = t, True, a
    while True:
        nxt = (at_table if on_table else at_left)[node][colour]
        if nxt is None:
            break
        path.append((nxt, node, colour) if on_table else (node, nxt, colour))
        node, on_table, colour = nxt, not on_table, b if colour == a else a
    for left, table, colour in path:
        at_left[left][colour] = None
        at_table[table][colour] = None
    for left, table, colour in path:
        swapped = b if colour == a else a
        at_left[left][swapped] = table
        at_table[table][swapped] = left


def deal_plan(bots: Sequence[str], seats_per_match: int, rounds: int, deals: str = "duplicate",
              owners: Mapping[str, str] | None = None) -> list[PlannedMatch]:
    """The matches of a round robin and the deal each is played on, in order (round, deal, table).

    ``deals="duplicate"`` (the default). With B bots, k seats and R rounds:

    - every k-subset of the bots plays exactly one match (table) per round: C(B, k) * R matches; each bot plays
      C(B-1, k-1) * R of them, and every two bots meet C(B-2, k-2) * R >= R times;
    - the tables of a round are grouped into deals of at most T = ``tables_per_deal`` = max(1, min(k, B // k))
      tables (first fit, in a fixed order); **the tables of one deal seat pairwise disjoint sets of owners**, so no
      bot, and no two bots of one owner (``owners``: bot id -> owner key; a bot without one is owned by its
      NAME), sit at two tables of one deal; and no deal is used in two rounds, or twice in a round (each
      (round, deal) has its own HMAC input, see ``deal_seed``). Hence no bot and no owner ever receives cards of
      one deal in two matches. (Bots of one owner may sit at the same table: they then see one deal once, in one
      match, like any table.)
    - seat j of every table holds hand j of the deal (the game deals by seat), so each hand of a deal is held by
      a different bot at each of its tables;
    - seats are balanced: each bot's matches, taken k at a time (in combination order of their subsets, round
      after round), hold every seat exactly once (the last, shorter block: distinct seats), so over the tournament
      each bot holds each seat floor(m/k) or ceil(m/k) times for its m matches (within 1).

    With B < 2k there is one table per deal (T = 1): every match has a deal of its own.

    ``deals="rotate"`` (trusted self-play only): every k-subset plays the k seat rotations of one deal per round
    (table r seats ``subset[(i + r) % k]`` at seat i): C(B, k) * k * R matches, each bot in each seat of each of
    its deals once, so each bot sees each of its deals k times.

    Bots are taken in sorted order; the plan does not depend on the order they are listed in. Raises
    ``TournamentError`` for an unknown plan or k outside 1..B.
    """
    if deals not in DEAL_PLANS:
        raise TournamentError(f"unknown deal plan {deals!r}; choose one of {', '.join(DEAL_PLANS)}")
    k = seats_per_match
    ordered = sorted(bots)
    if not 1 <= k <= len(ordered):
        raise TournamentError(f"{k} seats per match need at least {k} bots, got {len(ordered)}")
    subsets = list(itertools.combinations(range(len(ordered)), k))
    out: list[PlannedMatch] = []
    if deals == "rotate":
        for round_ in range(rounds):
            for index, subset in enumerate(subsets):
                for r in range(k):
                    out.append(PlannedMatch(round_, index, r, tuple(ordered[subset[(i + r) % k]] for i in range(k))))
        return out
    packed = _pack_deals(subsets, _owner_classes(ordered, owners), tables_per_deal(len(ordered), k))
    # seats: coloured in combination order, round after round (short alternating paths), then laid out by deal
    seated = _balanced_seats([subset for _ in range(rounds) for subset in subsets], k)
    for round_ in range(rounds):
        base = round_ * len(subsets)
        for d, tables in enumerate(packed):
            for t, index in enumerate(tables):
                out.append(PlannedMatch(round_, d, t, tuple(ordered[i] for i in seated[base + index])))
    return out


def deal_count(plan: Sequence[PlannedMatch]) -> int:
    """Distinct deals of a plan (its (round, deal) pairs)."""
    return len({(m.round, m.deal) for m in plan})


def validate_round_robin(game: str, bots: Sequence[str], seats_per_match: int, rounds: int, seed: int = 0,
                         deadline_ms: int = 1000, deals: str = "duplicate") -> None:
    """Check a round-robin request; raises ``TournamentError`` naming the first problem found.

    Rules: a known game; at least as many bots as the game's fewest players; bots named NAME or NAME@VERSION
    (``split_bot_ref``), no repeats; the game's player range
    (see its GameInfo) holds k; k <= B; R >= 1; a deal plan of ``DEAL_PLANS``; at most ``MAX_MATCHES`` matches; a
    tournament seed in 0 .. 2**256-1; a Decide deadline of ``MIN_DEADLINE_MS``..``MAX_DEADLINE_MS`` (10..60000) ms.
    """
    if game not in GAMES:
        raise TournamentError(f"unknown game {game!r}; known games: {', '.join(sorted(GAMES))}")
    info = GAMES[game].info
    for name in bots:
        split_bot_ref(name)
    counts: dict[str, int] = {}
    for b in bots:
        counts[b] = counts.get(b, 0) + 1
    dups = sorted(b for b, n in counts.items() if n > 1)
    if dups:
        raise TournamentError(f"bots listed more than once: {', '.join(dups)}")
    if len(bots) < info.min_players:
        raise TournamentError(f"a {info.title} tournament needs at least {info.min_players} bots, got {len(bots)}")
    if not info.min_players <= seats_per_match <= info.max_players:
        raise TournamentError(
            f"{info.title} is played by {info.min_players}..{info.max_players} seats, "
            f"got {seats_per_match} seats per match"
        )
    if seats_per_match > len(bots):
        raise TournamentError(
            f"{seats_per_match} seats per match need at least {seats_per_match} bots, got {len(bots)}"
        )
    if rounds < 1:
        raise TournamentError(f"rounds must be at least 1, got {rounds}")
    if deals not in DEAL_PLANS:
        raise TournamentError(f"unknown deal plan {deals!r}; choose one of {', '.join(DEAL_PLANS)}")
    total = round_robin_size(len(bots), seats_per_match, rounds, deals)
    if total > MAX_MATCHES:
        raise TournamentError(
            f"{len(bots)} bots, {seats_per_match} seats, {rounds} rounds make {total} matches; "
            f"the limit is {MAX_MATCHES}: use fewer bots or rounds, or other seats per match"
        )
    seed_bytes(seed)
    if not MIN_DEADLINE_MS <= deadline_ms <= MAX_DEADLINE_MS:
        raise TournamentError(
            f"deadline_ms (of each Decide call) must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms, got {deadline_ms}")


def round_robin(
    tournament_id: str,
    game: str,
    bots: Sequence[str],
    seats_per_match: int,
    rounds: int,
    seed: int,
    config: dict[str, Any] | None = None,
    deadline_ms: int = 1000,
    *,
    deals: str = "duplicate",
    owners: Mapping[str, str] | None = None,
) -> list[MatchSpec]:
    """Expand a round robin into its matches, on the deal plan ``deals`` (see ``deal_plan``, whose order the
    match ids number 0, 1, 2, ...).

    Args:
        tournament_id: e.g. ``"t3"``. game: game id. bots: registered bot names (B of them, no repeats).
        seats_per_match: k. rounds: R. seed: the tournament's secret seed, 0 .. 2**256-1 (only validated here:
            the specs carry no seed; a worker derives each match's deal with ``deal_seed`` when it plays it).
        config: the game's config in JSON form, copied into every spec. deadline_ms: Decide deadline, ms.
        deals: "duplicate" or "rotate". owners: bot id -> owner key (see ``deal_plan``).
    Returns:
        ``round_robin_size(B, k, R, deals)`` match specs.
    Raises:
        TournamentError: see ``validate_round_robin``.
    """
    validate_round_robin(game, bots, seats_per_match, rounds, seed, deadline_ms, deals)
    return [
        MatchSpec(match_id=match_id(tournament_id, i), game=game, seats=m.seats, config=dict(config or {}),
                  deadline_ms=deadline_ms, tournament=tournament_id, round=m.round, deal=m.deal, table=m.table)
        for i, m in enumerate(deal_plan(bots, seats_per_match, rounds, deals, owners))
    ]


# --- standings -------------------------------------------------------------------------------------------------


@dataclass
class BotTally:
    """One bot's counts over the matches of one tournament.

    Attributes:
        matches: matches played. score_sum: sum of its game scores (lower is better).
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


def tally_match(tally: dict[str, BotTally], seats: Sequence[str], scores: Sequence[float],
                ranks: Sequence[int]) -> None:
    """Add one match to ``tally`` (bot id -> ``BotTally``, updated in place).

    Args: seats: bot ids in seat order (distinct). scores: game score per seat. ranks: competition rank per seat,
    1 = best (lower rank = finished ahead). Raises ``ValueError`` when the lengths differ.
    """
    if not len(seats) == len(scores) == len(ranks):
        raise ValueError(f"one score and one rank per seat: {len(seats)} seats, {len(scores)} scores, "
                         f"{len(ranks)} ranks")
    for i, bot in enumerate(seats):
        t = tally.setdefault(bot, BotTally())
        t.matches += 1
        t.score_sum += float(scores[i])
        for j, opponent in enumerate(seats):
            if i == j:
                continue
            t.pairs += 1
            t.opponents[opponent] = t.opponents.get(opponent, 0) + 1
            if ranks[i] < ranks[j]:
                t.wins += 1
                t.half_points += 2
            elif ranks[i] == ranks[j]:
                t.half_points += 1
            else:
                t.losses += 1


@dataclass(frozen=True)
class StandingsLine:
    """One bot's line of a tournament's standings.

    Attributes:
        rank: standard competition rank by points (1, 2, 2, 4), 1 = best.
        bot: bot id. points: pairwise points (1 per opponent finished ahead of, 1/2 per tie).
        matches: matches played. mean_score: game score per match (lower is better).
        performance: Elo performance, points: mean opponent rating + 400 * (wins - losses) / pairs.
        score_rate: points / pairs, 0..1. pairs, wins, losses: see ``BotTally``.
    """

    rank: int
    bot: str
    points: float
    matches: int
    mean_score: float
    performance: float
    score_rate: float
    pairs: int
    wins: int
    losses: int


def standings(tally: dict[str, BotTally], ratings: dict[str, float], initial_rating: float) -> list[StandingsLine]:
    """Rank the bots of ``tally`` (only bots that played) by points.

    Args:
        tally: bot id -> its counts in the tournament (``tally_match``).
        ratings: current rating of each bot (the live ladder), Elo points; a bot absent from it counts as
            ``initial_rating``.
    Returns:
        Lines sorted by points (best first), then score rate, then bot id; equal points share a rank (1, 2, 2, 4).
        The Elo performance of a bot is the mean rating of the opponents it met (weighted by pairs) plus
        400 * (pairwise wins - pairwise losses) / pairs.
    """
    lines = []
    for bot, t in tally.items():
        if t.matches == 0 or t.pairs == 0:
            continue
        opp_sum = sum(n * ratings.get(opp, initial_rating) for opp, n in t.opponents.items())
        points = t.half_points / 2
        lines.append((bot, points, t, opp_sum / t.pairs + 400.0 * (t.wins - t.losses) / t.pairs))
    lines.sort(key=lambda x: (-x[1], -x[1] / x[2].pairs, x[0]))
    out = []
    for bot, points, t, performance in lines:
        rank = 1 + sum(1 for other in lines if other[1] > points)
        out.append(StandingsLine(rank=rank, bot=bot, points=points, matches=t.matches,
                                 mean_score=t.score_sum / t.matches, performance=performance,
                                 score_rate=points / t.pairs, pairs=t.pairs, wins=t.wins, losses=t.losses))
    return out
