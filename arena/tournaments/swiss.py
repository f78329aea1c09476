"""Swiss tournaments for k-seat tables (format "swiss", ``arena tournament create --format swiss``).

A Swiss of B bots (2..128) at k seats plays R rounds (default ceil(log2(B)) + 2, at 2 seats at most the rounds in
which every pair can be new) of B // k tables; B mod k bots sit out each round (a bye, worth ``bye_points(k)`` =
(k - 1) / 2 points). Round 1 is ordered by the live ladder's ratings ("rating", the default) or at random ("random": an
order drawn from the tournament's secret seed); every later round orders the bots by their standings so far
(``swiss_standings``: points, then opponents' mean points, then the first round's order) and groups neighbours into
tables, avoiding repeat meetings where possible, with seats balanced over the rounds
(``arena.tournaments.swiss_pairing.pair_round``).

Deals: each round's tables are grouped into duplicate deals of at most T = max(1, min(k, B // k)) tables that seat
pairwise disjoint owners (``deals.pack_deals``, the round robins' packing), and every (round, deal) has its own
HMAC input (``deal_seed``), so no bot, and no two bots of one owner, ever receive cards of one deal twice. With
``deals="unique"`` every table is a deal of its own (T = 1). "rotate" is refused.

Control: a round is paired only when every match of the previous one is settled (done, failed or cancelled). The
controller (``Swiss.control``) then reads the results, pairs the next round and queues it together with its
pairing (the format state field ``round:<r>``) in one transaction, a compare-and-set on the stored matches_total
(``Store.extend_tournament``), which counts the matches queued so far: two workers, a sweep or a crash between two
steps queue each round once, and a round's pairing is stored if and only if its matches are. After the last round
is settled the tournament is finished.

Totals: the ``Tournament`` message of a Swiss (``Swiss.describe``) counts every round's matches in its
matches_total (``matches_expected``: R x B // k), so every progress shown is out of the whole tournament, and
rounds_paired says how many rounds are queued so far; a cancelled Swiss counts the matches it had queued (its later
rounds are never paired).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from arena.core.errors import TournamentError
from arena.core.kept import Kept
from arena.core.seeds import seed_bytes
from arena.core.specs import MatchSpec, match_id
from arena.core.text import plural
from arena.tournaments.deals import owner_classes, owner_labels, pack_deals, tables_per_deal
from arena.tournaments.formats import Entry, Format, Planned
from arena.tournaments.round_robin import MAX_MATCHES, validate_field
from arena.tournaments.standings import StandingsLine
from arena.tournaments.swiss_pairing import SwissLine, SwissRound, bye_points, pair_round, swiss_standings

if TYPE_CHECKING:
    from arena.store import Store
    from arena.store.tournaments import TournamentInfo
    from arena_sdk.pb import arena_pb2

log = logging.getLogger(__name__)

KIND = "swiss"
FIRST_ROUND = ("rating", "random")
MAX_BOTS = 128
TIEBREAK = "points, then opponents' mean points (Buchholz per opponent)"


def default_rounds(num_bots: int, seats: int = 2) -> int:
    """ceil(log2(B)) + 2 rounds (at least 3), but at 2 seats no more than ``new_meeting_rounds``: a round past them
    pairs bots that met before."""
    rounds = max(1, math.ceil(math.log2(max(2, num_bots)))) + 2
    return min(rounds, new_meeting_rounds(num_bots)) if seats == 2 else rounds


def matches_expected(num_bots: int, seats: int, rounds: int) -> int:
    """The matches of a whole Swiss of ``num_bots`` bots at ``seats`` seats over ``rounds`` rounds: ``rounds`` x
    ``num_bots // seats`` tables (the ``num_bots % seats`` bots with a bye play none that round)."""
    return rounds * (num_bots // seats)


def new_meeting_rounds(num_bots: int) -> int:
    """At 2 seats, the most rounds in which every pair can be new: B - 1 for an even B, B for an odd one (each
    round one bot sits out)."""
    return max(1, num_bots - 1 if num_bots % 2 == 0 else num_bots)


def first_order(bots: Sequence[str], how: str, ratings: Mapping[str, float], seed: int, tournament_id: str,
                initial_rating: float = 1500.0) -> tuple[str, ...]:
    """The order of round 1: by rating (best first, ties by bot id), or "random": a shuffle seeded with
    HMAC-SHA256(seed, "<tournament>/swiss-order"), so it is hidden until the seed is revealed, then checkable."""
    if how == "random":
        key = hmac.new(seed_bytes(seed), f"{tournament_id}/swiss-order".encode(), hashlib.sha256).digest()
        order = sorted(bots)
        random.Random(int.from_bytes(key, "big")).shuffle(order)
        return tuple(order)
    return tuple(sorted(bots, key=lambda b: (-ratings.get(b, initial_rating), b)))


@dataclass(frozen=True)
class SwissPlan:
    """What a Swiss keeps in its ``extra``: first_round ("rating" | "random"); order (round 1's order, also the
    last tiebreak); owners (bot id -> owner class label, "" for none, as the first round packed them)."""

    first_round: str
    order: tuple[str, ...]
    owners: dict[str, str]

    def to_extra(self) -> dict[str, Any]:
        return {"first_round": self.first_round, "order": list(self.order), "owners": dict(self.owners)}

    @classmethod
    def of(cls, info: TournamentInfo) -> SwissPlan:
        """The plan of a stored Swiss. Raises ``TournamentError`` when its extra lacks it."""
        e = info.extra
        try:
            return cls(str(e["first_round"]), tuple(str(b) for b in e["order"]),
                       {str(k): str(v) for k, v in dict(e.get("owners") or {}).items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise TournamentError(f"tournament {info.id} is a Swiss but keeps no plan: {exc}") from exc


def round_field(round_: int) -> str:
    """The format state field of round ``round_``'s pairing."""
    return f"round:{round_}"


def counted_rounds(paired: list[tuple[SwissRound, int]], matches_total: int) -> list[tuple[SwissRound, int]]:
    """The first of ``paired`` whose matches the tournament's ``matches_total`` counts: a round paired after the
    totals were read (the format state is read a moment later) is left out, so a reply's rounds and totals agree."""
    counted, out = 0, []
    for pairing, deals in paired:
        counted += len(pairing.tables)
        if counted > matches_total:
            break
        out.append((pairing, deals))
    return out


def rounds_of(state: Mapping[str, str]) -> list[tuple[SwissRound, int]]:
    """The rounds paired so far (pairing, deals it is played on), in order, from a Swiss's format state. Raises
    ``TournamentError`` for a state with a gap or a malformed round."""
    out = []
    for r in range(len(state)):
        raw = state.get(round_field(r))
        if raw is None:
            break
        try:
            data = json.loads(raw)
            out.append((SwissRound.from_dict(data["round"]), int(data["deals"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise TournamentError(f"round {r} of a Swiss is malformed: {exc}") from exc
    return out


def round_specs(info_id: str, game: str, config: Mapping[str, Any], deadline_ms: int, round_: int, start: int,
                pairing: SwissRound, bots: Sequence[str], owners: Mapping[str, str],
                k: int, deals: str = "duplicate") -> tuple[list[MatchSpec], int]:
    """The matches of one paired round, ids ``match_id(info_id, start)`` on, and how many deals they use: the
    tables packed into deals of at most ``tables_per_deal(B, k, deals)`` tables (1 for "unique") with pairwise
    disjoint owner classes."""
    ordered = sorted(bots)
    index = {b: i for i, b in enumerate(ordered)}
    subsets = [tuple(index[b] for b in table) for table in pairing.tables]
    packed = pack_deals(subsets, owner_classes(ordered, owners), tables_per_deal(len(ordered), k, deals))
    specs: list[MatchSpec] = []
    for d, tables in enumerate(packed):
        for t, i in enumerate(tables):
            specs.append(MatchSpec(match_id=match_id(info_id, start + len(specs)), game=game,
                                   seats=tuple(pairing.tables[i]), config=dict(config), deadline_ms=deadline_ms,
                                   tournament=info_id, round=round_, deal=d, table=t))
    return specs, len(packed)


def state_value(pairing: SwissRound, deals: int) -> str:
    return json.dumps({"round": pairing.to_dict(), "deals": deals}, separators=(",", ":"))


def standings_of(info: TournamentInfo, results: Sequence[Mapping[str, Any]],
                 rounds: Sequence[SwissRound], plan: SwissPlan) -> list[SwissLine]:
    """The Swiss standings of stored results (``Store.list_matches`` dicts) over the rounds paired so far."""
    played = [(list(r["seats"]), [int(x) for x in r["ranks"]]) for r in results]
    return swiss_standings(info.bots, info.seats_per_match, played, rounds, plan.order)


def formula(num_bots: int, k: int, rounds: int, deal_count: int | None = None, deals: str = "duplicate") -> str:
    """E.g. ``"Swiss: 5 rounds x 5 tables of 4 (0 byes a round) = 25 matches"``; with ``deal_count``, ``", on 10
    deals so far"`` ("unique deals" for the unique plan)."""
    tables, byes = divmod(num_bots, k)
    text = (f"Swiss: {plural(rounds, 'round')} x {plural(tables, 'table')} of {k} "
            f"({plural(byes, 'bye')} a round) = {plural(matches_expected(num_bots, k, rounds), 'match')}")
    if k == 2 and rounds > new_meeting_rounds(num_bots):
        text += f" (from round {new_meeting_rounds(num_bots) + 1} on, pairs meet again)"
    if deals == "unique":
        text += (f", on {plural(deal_count, 'unique deal')} so far" if deal_count is not None
                 else ", on unique deals (every table its own deal)")
    elif deal_count is not None:
        text += f", on {plural(deal_count, 'deal')} so far"
    return text


class Swiss(Format):
    """The Swiss format (module docstring)."""

    name = KIND

    def __init__(self) -> None:
        # the newest 32 standings computed, by (game, tournament id, matches done, rounds paired): a stored result
        # raises matches done, so a kept entry is never stale, and GetStandings of a large Swiss (up to MAX_BOTS // 2
        # x rounds results, ~24 us each to read) reads its results once per new result, not per call
        self._kept: Kept[tuple[str, str, int, int], list[SwissLine]] = Kept(32)
    title = "Swiss"
    summary = ("each round seats bots of similar standing together, B // SEATS tables, byes for the rest (spread "
               "fairly), repeat meetings avoided; ROUNDS defaults to ceil(log2(BOTS)) + 2 (at 2 seats at most the "
               "rounds in which every pair can be new)")
    option_field = "swiss"
    controlled = True

    def options_of(self, message: Any) -> dict[str, Any]:
        how = (message.first_round if message is not None else "") or "rating"
        if how not in FIRST_ROUND:
            raise TournamentError(f"unknown first_round {how[:16]!r}; choose one of {', '.join(FIRST_ROUND)}")
        return {"first_round": how}

    def default_rounds(self, num_bots: int, seats: int = 2) -> int:
        return default_rounds(num_bots, seats)

    def check(self, entry: Entry) -> None:
        validate_field(entry.game, entry.bots, entry.seats, entry.rounds, entry.seed, entry.deadline_ms,
                       entry.deals)
        if entry.deals == "rotate":
            raise TournamentError("a Swiss plays duplicate or unique deals (no bot sees a deal twice), not rotate")
        if not 2 <= len(entry.bots) <= MAX_BOTS:
            raise TournamentError(f"a Swiss takes 2..{MAX_BOTS} bots, got {len(entry.bots)}")
        total = matches_expected(len(entry.bots), entry.seats, entry.rounds)
        if total > MAX_MATCHES:
            raise TournamentError(f"{entry.rounds} Swiss rounds of {len(entry.bots) // entry.seats} tables make "
                                  f"{total} matches; the limit is {MAX_MATCHES}")

    def plan(self, tournament_id: str, entry: Entry) -> Planned:
        how = str(entry.options.get("first_round") or "rating")
        classes = owner_labels(entry.owners)
        order = first_order(entry.bots, how, entry.ratings, entry.seed, tournament_id)
        plan = SwissPlan(how, order, classes)
        pairing = pair_round(order, entry.seats, [])
        specs, deals = round_specs(tournament_id, entry.game, entry.config, entry.deadline_ms, 0, 0, pairing,
                                   entry.bots, classes, entry.seats, entry.deals)
        total = matches_expected(len(entry.bots), entry.seats, entry.rounds)
        return Planned(rounds=entry.rounds, specs=tuple(specs), matches_total=total, deal_count=deals,
                       formula=formula(len(entry.bots), entry.seats, entry.rounds, deals=entry.deals),
                       extra=plan.to_extra(),
                       state={round_field(0): state_value(pairing, deals)})

    def control(self, store: Store, info: TournamentInfo, spec: MatchSpec | None) -> None:
        """Nothing until every queued match is settled; then finish after the last round, else pair and queue the
        next one (module docstring). Idempotent; Redis errors propagate (the sweep retries)."""
        if info.state != "running" or info.kind != KIND:
            return
        if info.matches_done + info.matches_cancelled + info.matches_failed < info.matches_total:
            return
        plan = SwissPlan.of(info)
        paired = rounds_of(store.format_state(info.game, info.id))
        if len(paired) >= info.rounds:
            if store.finish_tournament(info.game, info.id):
                log.info("Swiss %s finished after %s", info.id, plural(len(paired), "round"))
            return
        rounds = [p for p, _ in paired]
        results = store.list_matches(tournament_id=info.id, limit=max(1, info.matches_total))
        lines = standings_of(info, results, rounds, plan)
        pairing = pair_round([x.bot for x in lines], info.seats_per_match, rounds)
        specs, deals = round_specs(info.id, info.game, info.config, info.deadline_ms, len(rounds),
                                   info.matches_total, pairing, info.bots, plan.owners, info.seats_per_match,
                                   info.deals)
        if store.extend_tournament(info.game, info.id, specs, expect_total=info.matches_total,
                                   state={round_field(len(rounds)): state_value(pairing, deals)}):
            log.info("Swiss %s: round %d of %d paired, %s queued", info.id, len(rounds) + 1, info.rounds,
                     plural(len(specs), "match"))

    def describe(self, message: arena_pb2.Tournament, info: TournamentInfo,
                 store: Store | None) -> arena_pb2.Tournament:
        """``message`` with the Swiss's fields: matches_total the whole tournament's (``matches_expected``; a
        cancelled one's, the matches it had queued), rounds_paired, byes, first_round, deal_count and formula of the
        rounds paired so far (module docstring)."""
        if info.state != "cancelled":  # info.matches_total counts the rounds queued so far; the rest follow
            message.matches_total = max(info.matches_total,
                                        matches_expected(len(info.bots), info.seats_per_match, info.rounds))
        try:
            plan = SwissPlan.of(info)
            paired = rounds_of(store.format_state(info.game, info.id)) if store is not None else []
            paired = counted_rounds(paired, info.matches_total)
        except TournamentError as exc:
            log.warning("%s", exc)
            return message
        message.first_round = plan.first_round
        message.rounds_paired = len(paired)
        for r, (pairing, _) in enumerate(paired):
            for bot in pairing.byes:
                message.byes.add(round=r, bot=bot)
        if store is not None:
            message.deal_count = sum(d for _, d in paired)
            message.formula = (formula(len(info.bots), info.seats_per_match, info.rounds, message.deal_count,
                                       info.deals) + f"; round {len(paired)} of {info.rounds} paired")
        else:
            message.formula = formula(len(info.bots), info.seats_per_match, info.rounds, info.deal_count,
                                      info.deals) + \
                " (round 1; each later round is paired when the previous one is settled)"
        return message

    def standings(self, store: Store, info: TournamentInfo,
                  lines: Sequence[StandingsLine]) -> tuple[list[StandingsLine], str] | None:
        try:
            plan = SwissPlan.of(info)
            rounds = [p for p, _ in rounds_of(store.format_state(info.game, info.id))]
        except TournamentError as exc:
            log.warning("%s", exc)
            return None
        key = (info.game, info.id, info.matches_done, len(rounds))
        swiss_lines = self._kept.get(key)
        if swiss_lines is None:  # one more than counted: a result stored since ``info`` was read is not kept
            results = store.list_matches(tournament_id=info.id, limit=info.matches_done + 1)
            swiss_lines = standings_of(info, results, rounds, plan)
            if len(results) == info.matches_done:
                self._kept.put(key, swiss_lines)
        generic = {x.bot: x for x in lines}
        out = []
        for s in swiss_lines:
            if s.matches == 0 and s.byes == 0:
                continue
            base = generic.get(s.bot)
            if base is None:  # only byes so far
                base = StandingsLine(rank=s.rank, bot=s.bot, points=0.0, matches=0, mean_score=0.0, performance=0.0,
                            score_rate=0.0, pairs=0, wins=0, losses=0)
            out.append(replace(base, rank=s.rank, points=s.points, tiebreak=s.tiebreak, byes=s.byes))
        return out, TIEBREAK


FORMAT = Swiss()

__all__ = ["FORMAT", "KIND", "Swiss", "SwissPlan", "bye_points", "default_rounds", "first_order", "matches_expected",
           "rounds_of"]
