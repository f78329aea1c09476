"""Round robins that keep adding rounds until their bots are separated (tournament kind
"until_separated", ``arena tournament create --until-separated``), so an organiser stops paying for matches that
add nothing.

The tournament starts with its ``rounds`` rounds, as any round robin (``arena.tournaments.round_robin``). Its
controller (``control``, registered in ``arena.tournaments.controllers``) waits until every queued match is settled
(matches_done + cancelled + failed = matches_total), then fits the tournament's stored results
(``arena.ratings.fit.fit_ratings``: Plackett-Luce with seat and deal-luck effects, ``REPLICATES`` bootstrap
replicates over deals, seeded from the tournament id so every worker and every rerun gets the same fit) and
``decide``s:

- **separated**: every two bots adjacent in the fit's own order (best rating first) have disjoint 95 % intervals,
  and the results span at least ``MIN_DEALS`` deals: the tournament is finished, "separated after R rounds, M
  matches: A > B > C";
- else, when one more round would take matches_total above ``max_matches``: finished, "cap reached, not separated
  ...: bots X and Y overlap";
- else the next round is queued (``round_specs``: the same deal plan, fresh deals, match ids going on).

Why ``MIN_DEALS``: a bootstrap over a handful of deals understates the spread (with a perfect record it has none:
two equal random bots whose single match one of them won would be "separated" after one match; the fit now floors
that spread by the information sd, so a perfect record needs some 40..50 wins per pair). Caveat: the check
is a 95 % one and is repeated after every round, so with bots of equal strength the chance that some check is
passed by luck grows with the rounds played (optional stopping); the cap bounds it. To ask "is version 2 better?"
with controlled error rates, use ``arena sprt``.

Every deal plan may be used: "duplicate" (each added round brings new deals, no bot sees a deal twice), "unique"
(every table of every round on a deal of its own) or "rotate" (trusted self-play: each bot sees each of its deals k
times, as in a plain round robin).

Idempotent (the worker calls the controller after every settled match, and sweeps): the next round is queued with
a compare-and-set on matches_total (``Store.extend_tournament(expect_total=...)``) and the stop is stored with the
tournament's finish in one transaction watched on matches_total (``arena.store.separation.stop_separation``), so
two workers settling the last two matches of a round at once, or a sweep, add that round exactly once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.core.errors import TournamentError
from arena.core.specs import MatchSpec, match_id
from arena.core.text import plural
from arena.ratings.design import FitError, fitted_matches
from arena.ratings.fit import FitResult, fit_ratings
from arena.store.separation import note_check, separation_record, stop_separation
from arena.tournaments.deals import deal_count, deal_plan, owner_labels
from arena.tournaments.formats import Entry, Format, Planned
from arena.tournaments.round_robin import FORMAT as ROUND_ROBIN
from arena.tournaments.round_robin import MAX_MATCHES, round_robin_formula, round_robin_size

if TYPE_CHECKING:
    from arena.store import Store
    from arena.store.separation import SeparationRecord
    from arena.store.tournaments import TournamentInfo
    from arena_sdk.pb import arena_pb2

log = logging.getLogger(__name__)

KIND = "until_separated"
MIN_DEALS = 10  # bootstrap groups (deals) the results must span before a separation counts
REPLICATES = 200  # bootstrap replicates of each check's fit
DEFAULT_CAP_ROUNDS = 10  # max_matches 0 means this many rounds' matches (at most MAX_MATCHES)


@dataclass(frozen=True)
class Plan:
    """What an until-separated tournament keeps in its ``extra``: max_matches (the cap, matches); per_round (matches
    of one round, C(B, k), times k under "rotate"); deals_per_round; owners (bot id -> owner label, "" for none:
    the owner classes of the deal plan, kept so that every added round seats owners as the first ones did)."""

    max_matches: int
    per_round: int
    deals_per_round: int
    owners: dict[str, str]

    def to_extra(self) -> dict[str, Any]:
        return {"max_matches": self.max_matches, "per_round": self.per_round,
                "deals_per_round": self.deals_per_round, "owners": dict(self.owners)}

    @classmethod
    def of(cls, info: TournamentInfo) -> Plan:
        """The plan of a stored until-separated tournament. Raises ``TournamentError`` when its extra lacks it."""
        e = info.extra
        try:
            return cls(int(e["max_matches"]), int(e["per_round"]), int(e["deals_per_round"]),
                       {str(k): str(v) for k, v in dict(e.get("owners") or {}).items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise TournamentError(f"tournament {info.id} is of kind {KIND} but keeps no plan: {exc}") from exc


def check_request(until_separated: bool, max_matches: int, num_bots: int, seats: int, rounds: int,
                  deals: str) -> int:
    """Check the stopping fields of a CreateTournament request (after ``validate_round_robin``) and return the cap,
    matches (0 without ``until_separated``). ``max_matches`` 0 means ``DEFAULT_CAP_ROUNDS`` rounds' worth, at least
    the first ``rounds`` rounds and at most ``MAX_MATCHES``. Raises ``TournamentError`` for a cap without
    ``until_separated``, a cap below the matches of the first rounds, or above ``MAX_MATCHES``."""
    if not until_separated:
        if max_matches:
            raise TournamentError(f"max_matches ({max_matches}) caps a tournament run until its bots are separated; "
                                  f"set until_separated too, or leave max_matches out")
        return 0
    per_round = round_robin_size(num_bots, seats, 1, deals)
    first = per_round * rounds
    cap = max_matches or min(MAX_MATCHES, max(first, DEFAULT_CAP_ROUNDS * per_round))
    if cap > MAX_MATCHES:
        raise TournamentError(f"max_matches must be at most {MAX_MATCHES}, got {cap}")
    if cap < first:
        raise TournamentError(
            f"max_matches {cap} is below the {first} matches of the first {rounds} round{'s' if rounds != 1 else ''} "
            f"({per_round} a round): raise it to at least {first}, or start with fewer rounds")
    return cap


def request_plan(until_separated: bool, max_matches: int, bots: Sequence[str], seats: int, rounds: int, deals: str,
                 owners: Mapping[str, str]) -> Plan | None:
    """The plan of a new tournament (None without ``until_separated``): the cap of ``check_request``, and
    ``owners`` (bot id -> owner key, as for ``deal_plan``) kept as classes only ("o0", "o1", ...; "" for none).
    Raises ``TournamentError`` as ``check_request``."""
    cap = check_request(until_separated, max_matches, len(bots), seats, rounds, deals)
    if not until_separated:
        return None
    classes = owner_labels(owners)
    per = deal_count(deal_plan(bots, seats, 1, deals, classes))
    return Plan(cap, round_robin_size(len(bots), seats, 1, deals), per, classes)


def rounds_queued(info: TournamentInfo, plan: Plan) -> int:
    """Rounds queued so far: the first ``info.rounds`` and every round added (each adds ``plan.per_round``)."""
    return info.matches_total // plan.per_round


def round_specs(info: TournamentInfo, plan: Plan, round_: int) -> list[MatchSpec]:
    """The matches of round ``round_`` (0-based) of the tournament, ids from ``match_id(info.id, matches_total)``
    on: the deal plan of one round (``deal_plan(bots, k, 1, deals, owners)``: tables, deals, disjoint bots and
    owners per deal) with every table's seats rotated by ``round_`` places (seat i holds the plan's seat
    (i + round_) % k), so over any k added rounds each bot holds each seat equally often. The round index makes
    the deals new (``deal_seed``): no bot meets a deal of an earlier round."""
    k = info.seats_per_match
    shift = round_ % k
    out = []
    for i, m in enumerate(deal_plan(info.bots, k, 1, info.deals, plan.owners)):
        seats = m.seats[shift:] + m.seats[:shift]
        out.append(MatchSpec(match_id=match_id(info.id, info.matches_total + i), game=info.game, seats=seats,
                             config=dict(info.config), deadline_ms=info.deadline_ms, tournament=info.id,
                             round=round_, deal=m.deal, table=m.table))
    return out


def bootstrap_seed(tournament_id: str) -> int:
    """Seed of a tournament's bootstrap draws: the first 8 bytes of SHA-256 of its id (so every check of every
    worker, and any rerun, draws the same replicates)."""
    return int.from_bytes(hashlib.sha256(f"separation/{tournament_id}".encode()).digest()[:8], "big")


def fit_results(results: Sequence[Mapping[str, Any]], tournament_id: str) -> FitResult | None:
    """The batch fit of a tournament's stored results (``Store.list_matches`` dicts), with seat and deal-luck
    effects and ``REPLICATES`` replicates, void results left out (``fitted_matches``); None when there is no other
    result (or the results cannot be fitted)."""
    try:
        matches = fitted_matches(results)
        if not matches:
            return None
        return fit_ratings(matches, replicates=REPLICATES,
                           seed=bootstrap_seed(tournament_id), deal_effects=True)
    except FitError as exc:
        log.warning("tournament %s: its results cannot be fitted: %s", tournament_id, exc)
        return None


@dataclass(frozen=True)
class Decision:
    """What the controller does after a check: ``action`` "finish" or "extend"; ``stopped_by`` ("separated" |
    "cap", "" for "extend"); ``text``, one sentence for people; ``order``: bot ids, best first by the fit (empty
    without one)."""

    action: str
    stopped_by: str
    text: str
    order: tuple[str, ...]


def why_not_separated(fit: FitResult | None, bots: Sequence[str], min_deals: int = MIN_DEALS) -> str:
    """Why ``fit`` does not separate ``bots`` ("" when it does): bots without a result, adjacent bots whose
    intervals overlap (with the likelihood that the upper one is better), or too few deals."""
    missing = sorted(b for b in bots if fit is None or b not in fit.ratings)
    if missing:
        return f"{', '.join(missing)} {'has' if len(missing) == 1 else 'have'} no result yet"
    assert fit is not None
    overlapping = [f"bots {hi} and {lo} overlap (LOS {100 * fit.los(hi, lo):.0f} %)"
                   for hi, lo in zip(fit.bots, fit.bots[1:]) if not fit.upper[lo] < fit.lower[hi]]
    if overlapping:
        return "; ".join(overlapping)
    if fit.groups < min_deals:
        return f"only {plural(fit.groups, 'deal')} played, {min_deals} needed before the intervals are trusted"
    return ""


def decide(fit: FitResult | None, bots: Sequence[str], *, rounds: int, played: int, matches_total: int,
           per_round: int, max_matches: int, min_deals: int = MIN_DEALS) -> Decision:
    """The controller's decision once every queued match is settled (pure).

    Args:
        fit: the fit of the tournament's results (with bootstrap), None without results. bots: the tournament's
            bot ids. rounds: rounds queued so far. played: matches with a stored result. matches_total: matches
            queued so far. per_round: matches one more round adds. max_matches: the cap. min_deals: deals the
            results must span before a separation counts.
    Returns:
        "finish"/"separated" when ``why_not_separated`` finds nothing; else "finish"/"cap" when matches_total +
        per_round > max_matches; else "extend" (queue round ``rounds``).
    """
    order = fit.bots if fit is not None else ()
    why = why_not_separated(fit, bots, min_deals)
    after = f"after {plural(rounds, 'round')}, {plural(played, 'match')}"
    if not why:
        return Decision("finish", "separated", f"separated {after}: {' > '.join(order)}", order)
    if matches_total + per_round > max_matches:
        return Decision("finish", "cap", f"cap reached, not separated {after} (another round would make "
                                         f"{matches_total + per_round} > {max_matches} matches): {why}", order)
    return Decision("extend", "", f"not separated {after}: {why}; round {rounds + 1} queued", order)


def control(store: Store, info: TournamentInfo, spec: MatchSpec | None) -> None:
    """The controller of "until_separated" tournaments (``arena.tournaments.controllers``): nothing until every queued
    match is settled, then one check (module docstring). Idempotent; Redis errors propagate (the sweep retries)."""
    if info.state != "running" or info.kind != KIND:
        return
    if info.matches_done + info.matches_cancelled + info.matches_failed < info.matches_total:
        return
    plan = Plan.of(info)
    results = store.list_matches(tournament_id=info.id, limit=max(1, info.matches_total))
    fit = fit_results(results, info.id)
    rounds = rounds_queued(info, plan)
    d = decide(fit, info.bots, rounds=rounds, played=len(results), matches_total=info.matches_total,
               per_round=plan.per_round, max_matches=plan.max_matches)
    if d.action == "extend":
        specs = round_specs(info, plan, rounds)
        if store.extend_tournament(info.game, info.id, specs, expect_total=info.matches_total):
            note_check(store, info.game, info.id, info.matches_total, d.text, d.order)
            log.info("tournament %s: %s (%d matches)", info.id, d.text, len(specs))
        return
    if stop_separation(store, info.game, info.id, expect_total=info.matches_total, stopped_by=d.stopped_by,
                       reason=d.text, rounds=rounds, matches=len(results), order=d.order):
        log.info("tournament %s finished: %s", info.id, d.text)


# --- what GetTournament shows -----------------------------------------------------------------------------------


def with_plan(message: arena_pb2.Tournament, plan: Plan | None) -> arena_pb2.Tournament:
    """``message`` (a Tournament, e.g. a dry run's) with the stopping fields of ``plan`` (unchanged for None)."""
    if plan is not None:
        message.until_separated = True
        message.max_matches = plan.max_matches
        message.formula += (f"; rounds are added until the bots are separated, at most {plan.max_matches} "
                            f"matches")
    return message


def with_status(message: arena_pb2.Tournament, info: TournamentInfo, store: Store,
                record: SeparationRecord | None = None) -> arena_pb2.Tournament:
    """``message`` (``service.tournament_message(info)``) with the stopping state of an until-separated tournament:
    rounds and deals queued so far, the cap, the last check and why it stopped (``record``, read from ``store``
    when not given). Other tournaments' messages are returned unchanged."""
    if info.kind != KIND:
        return message
    try:
        plan = Plan.of(info)
    except TournamentError:
        return message
    record = record or separation_record(store, info.game, info.id)
    rounds = rounds_queued(info, plan)
    message.rounds = rounds
    message.deal_count = rounds * plan.deals_per_round
    message.formula = round_robin_formula(len(info.bots), info.seats_per_match, rounds, info.deals,
                                          message.deal_count)
    with_plan(message, plan)
    message.stopped_by = record.stopped_by
    message.stop_reason = record.reason
    message.last_check = record.last_check
    return message


class UntilSeparated(Format):
    """Round robins that add rounds until their bots are separated (module docstring)."""

    name = KIND
    title = "until separated"
    summary = "the same as --until-separated"
    option_field = "separated"
    controlled = True

    def options_of(self, message: Any) -> dict[str, Any]:
        return {"max_matches": int(message.max_matches) if message is not None else 0}

    def check(self, entry: Entry) -> None:
        ROUND_ROBIN.check(entry)
        check_request(True, int(entry.options.get("max_matches") or 0), len(entry.bots), entry.seats,
                      entry.rounds, entry.deals)

    def plan(self, tournament_id: str, entry: Entry) -> Planned:
        """The round robin's first rounds (``round_robin.FORMAT``), with the stopping plan as extra."""
        plan = request_plan(True, int(entry.options.get("max_matches") or 0), entry.bots, entry.seats,
                            entry.rounds, entry.deals, entry.owners)
        assert plan is not None
        return dataclasses.replace(ROUND_ROBIN.plan(tournament_id, entry), extra=plan.to_extra())

    def control(self, store: Store, info: TournamentInfo, spec: MatchSpec | None) -> None:
        control(store, info, spec)

    def describe(self, message: arena_pb2.Tournament, info: TournamentInfo,
                 store: Store | None) -> arena_pb2.Tournament:
        if store is None:
            return with_plan(message, Plan.of(info))
        return with_status(message, info, store)


FORMAT = UntilSeparated()
