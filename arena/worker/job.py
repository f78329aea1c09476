"""Settling one claimed job of the queue (``arena.worker.loop``'s workers run it for every job they claim): the checks
before the match, the match with the referee, the writes after it (DESIGN.md "Scheduling and storage").

Settling a job (what a worker does with each job it claims, in this order):

1. Delivered more than ``max_deliveries`` times (its workers kept dying, or a platform error every time): a
   *poison* job. It is recorded as failed in its tournament (``Store.drop_job(job, "failed")``, which also lets
   the tournament finish once everything else is settled) and acknowledged without running; the log says so.
2. Its result is already stored (a worker died between storing and acknowledging): acknowledged.
3. Its tournament was cancelled: acknowledged without running, counted in the tournament's matches_cancelled.
4. A seat's bot is unhealthy (and the job is not *forced*): the match is deferred, not played against a corpse;
   its job leaves the stream and is parked in the same atomic step (``Store.defer_job``), and comes back when the
   bot answers GetInfo again, or forced after ``max_deferral_s`` (``arena.worker.health``). In a forced match a
   bot that is unhealthy for answering GetInfo not as registered (another name, game or version) is not called:
   its seat faults as unreachable and forfeits (``arena.worker.seating``). GetInfo is asked again after a match
   during which a seat's connection went: a bot that answers not as registered then (another process took its
   port mid-match), or not at all although it played, is marked so and its next matches wait; the match played
   is stored as played (never played again because of what a bot did).
5. Otherwise the match is played and its result stored, then the job acknowledged. A bad config is recorded as
   failed (it can never run). A result stored now counts in the health of the match's bots
   (``arena.worker.health.charged_outcomes``: a bot that forfeited or answered no call failed; ``unhealthy_after``
   failures in a row make it unhealthy). A match interrupted by our own crash stores nothing and charges nobody:
   it is played again from scratch, and only that result counts. A tournament's match is dealt from the
   tournament's secret seed (``match_deal``: no seed is queued), with the number of times it was started before in
   the HMAC input, so a match played again after a crash of ours never deals cards its bots may have seen.

Costs of the queue: every read before a match (result stored? tournament state and seed, unhealthy seats, the seats'
bots) is one pipelined round trip (``Store.match_inputs``), made in the same thread hop as the job's claim
(``read_inputs``), plus the attempt count of a tournament's match (one more round trip and hop, its seat seeds with
it; outside tournaments the seeds are computed on the event loop, without I/O); after it, the result, its Elo update
(from the ratings read before the match; a rating that moved since costs one more call), the acknowledgement and
the health of the match's bots are one script (``Store.settle_match``), in one thread hop. A match in which no seat
failed (and none was unhealthy) can make no bot unhealthy: it frees its slot as soon as it is over, and the next
match starts while its result is stored (its job stays with the worker, refreshed and drained on stop, until
settled); a match that may make a bot unhealthy keeps its slot until its health is counted, so the next match's
health check sees it.
Prefetch: while every slot plays, a worker claims one job ahead (refreshed with the running ones), started the
moment a slot frees; its pre-match reads are made when it is claimed, and again if a match that kept its slot
settled meanwhile (they may predate a bot turning unhealthy); on stop a job claimed ahead and never started
is handed back (``Store.release_jobs``): the next reclaim of any worker takes it at once, without counting a
delivery.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import redis

from arena.core.seeds import deal_seed, local_seat_seeds, seat_seed
from arena.core.specs import MatchSpec, is_house_bot
from arena.match.channels import BotChannels
from arena.store import EARLIER_DELIVERIES_FIELD, FORCED_FIELD, Job, MatchInputs, Store, write_refusal
from arena.tournaments.controllers import after_match
from arena.worker import metrics
from arena.worker.health import (
    charged_outcomes,
    every_seat_failed,
    seat_failures,
)
from arena.worker.seating import defer, identities_after, identity_marks, seats_to_play
from arena.worker.settings import WorkerSettings

if TYPE_CHECKING:
    from arena.worker.live import LiveHub

log = logging.getLogger("arena.worker.loop")  # the scheduler's work: operators filter its log under one name
# Redis not answering (refused, timed out, still loading after a restart): what fails on it is logged in one line
REDIS_AWAY = (redis.ConnectionError, redis.TimeoutError)

INPUTS_FRESH_S = 1.0  # a job claimed ahead uses its pre-match reads if they started at most this long ago


class InputsAhead:
    """The pre-match reads (``Store.match_inputs``) of a claimed job, made before its match starts: in the same
    thread hop as its claim (``read``: when that read started and what it answered, ``read_inputs``), else started
    here while the worker's matches still play, so that the job's match starts as soon as a slot frees.
    ``fresh()`` is the read's result when it succeeded less than ``INPUTS_FRESH_S`` seconds ago, else None (the
    job reads again)."""

    def __init__(self, store: Store, spec: MatchSpec, read: tuple[float, MatchInputs] | None = None) -> None:
        self.task: asyncio.Future[MatchInputs]
        if read is not None:
            self.read_at = read[0]
            self.task = asyncio.get_running_loop().create_future()
            self.task.set_result(read[1])
            return
        self.read_at = time.monotonic()  # when the read started: its answers are at least this fresh
        self.task = asyncio.create_task(asyncio.to_thread(
            store.match_inputs, spec.game, spec.match_id, spec.tournament, list(spec.seats)))
        self.task.add_done_callback(_consume_exception)

    async def fresh(self) -> MatchInputs | None:
        if time.monotonic() - self.read_at > INPUTS_FRESH_S:
            self.task.cancel()
            return None
        try:
            return await self.task
        except (Exception, asyncio.CancelledError):  # noqa: BLE001 - read again, as if nothing was read ahead
            return None

    def cancel(self) -> None:
        self.task.cancel()

    def known(self) -> MatchInputs | None:
        """The read's answers when it is done and succeeded (however old), else None."""
        task = self.task
        if not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result()


def read_inputs(store: Store, jobs: Sequence[Job]) -> dict[str, tuple[float, MatchInputs]]:
    """The pre-match reads (``Store.match_inputs``) of the claimed ``jobs`` that have a spec, made one after the
    other in the calling thread (the claim's, so a job and its reads cost one thread hop): entry id -> (when the
    read started, ``time.monotonic()``; its answers). A read that fails is left out: its job reads again."""
    out: dict[str, tuple[float, MatchInputs]] = {}
    for job in jobs:
        spec = job.spec
        if spec is None:
            continue
        read_at = time.monotonic()
        try:
            out[job.entry_id] = read_at, store.match_inputs(spec.game, spec.match_id, spec.tournament,
                                                            list(spec.seats))
        except Exception:  # noqa: BLE001 - the job is claimed: it must reach the worker, and reads again
            continue
    return out


def _consume_exception(task: asyncio.Future[Any]) -> None:
    """A read ahead that failed is read again by its job; its exception is not "never retrieved"."""
    if not task.cancelled():
        task.exception()


async def run_job(store: Store, job: Job, *, settings: WorkerSettings | None = None, worker: str = "",
                  channels: BotChannels | None = None, on_played: Callable[[Any, bool], None] | None = None,
                  ahead: InputsAhead | None = None, live: LiveHub | None = None) -> str:
    """Settle one claimed job (see the module docstring for the order of the checks) as ``worker`` with the
    worker's ``settings`` (None: the defaults; it uses ``max_deliveries``, ``call_deadline_ms`` and
    ``unhealthy_after``); its match leases its channels to the bots from ``channels`` (the worker's pool; None:
    the match's own). ``on_played(record, slot_free)`` is called once the match is over, with ``slot_free`` True
    when storing it can make no bot unhealthy (no seat failed, none was unhealthy), so the worker may start its
    next match while this result is stored.
    ``ahead``: its pre-match reads, started when the job was claimed ahead (used when still fresh, ``InputsAhead``).
    ``live``: the worker's ``LiveHub``, which publishes the match for the viewer (None: a hub of the match's own).

    Returns what happened: "stored" (played, result stored now), "duplicate" (the result was stored before),
    "cancelled" (tournament cancelled, not played), "failed" (poison or bad config, recorded as failed),
    "deferred" (a seat's bot is unhealthy: parked, not played), "dropped" (malformed job, acknowledged) or
    "pending" (a platform error: left pending for a reclaim; logged).
    """
    from arena.match.options import RefereeOptions  # the referee is only needed where matches are run
    from arena.match.referee import run_match
    from arena.worker.live import LivePublisher
    from arena_sdk.wire import config_from_dict

    settings = WorkerSettings() if settings is None else settings
    max_deliveries, unhealthy_after = settings.max_deliveries, settings.unhealthy_after

    spec = job.spec
    if spec is None:
        log.error("dropping %s", job.error)
        await asyncio.to_thread(store.drop_job, job, "")
        return "dropped"
    try:
        poisoned = await _drop_poison(store, job, spec, max_deliveries)
        if poisoned is not None:
            return poisoned
        # every read before the match: one pipelined round trip (Store.match_inputs), made ahead when it could be
        inputs: MatchInputs | None = await ahead.fresh() if ahead is not None else None
        if inputs is None:
            inputs = await asyncio.to_thread(store.match_inputs, spec.game, spec.match_id, spec.tournament,
                                             list(spec.seats))
        settled_before = await _settled_before(store, job, spec, inputs)
        if settled_before is not None:
            return settled_before
        try:
            config = config_from_dict(spec.game, spec.config)
        except ValueError as exc:
            log.error("match %s (job %s) has a bad config and can never run: %s; recorded as failed",
                      spec.match_id, job.entry_id, exc)
            await asyncio.to_thread(store.drop_job, job, "failed")
            return "failed"
        if job.fields.get(FORCED_FIELD) != "1" and inputs.unhealthy:
            return await defer(store, job, inputs.unhealthy)
        seats = await seats_to_play(store, job, inputs, channels, settings.call_deadline_ms)
        if isinstance(seats, str):  # deferred: a seat's bot answers GetInfo not as registered
            return seats
        marks = identity_marks(channels, inputs)  # each bot's connection, as its GetInfo check left it
        if spec.tournament:  # counts a start (one round trip): in a thread, seat seeds with it
            seed, deal, seat_seeds = await asyncio.to_thread(_deal_and_seat_seeds, store, spec,
                                                             inputs.tournament_seed)
        else:  # no I/O: here
            seed, deal = spec.seed, None
            seat_seeds = match_seat_seeds(store, spec, seed, deal)
        options = RefereeOptions(deadline_ms=spec.deadline_ms, call_deadline_ms=settings.call_deadline_ms)
        head = {"game": spec.game, "config": spec.config, "seed": seed, "deals": [],
                "seats": [s.name for s in seats], "tournament": spec.tournament}
        # the match viewer follows the match live until its result is stored (then GetMatch has it, or, withheld,
        # the viewer shows the end of this play: ``publisher.stored``)
        async with LivePublisher(store, spec.match_id, head, hub=live) as publisher:
            with metrics.match_playing(spec.game):
                record = await run_match(spec.match_id, spec.game, seats, config, seed=seed, options=options,
                                         channels=channels, seat_seeds=seat_seeds,
                                         on_start=publisher.follow)
            await identities_after(store, job, seats, inputs, channels, marks, settings.call_deadline_ms, record)
            result = record.result
            failures = seat_failures(record)
            outcomes = {bot: why for bot, why in charged_outcomes(record, list(spec.seats), failures).items()
                        if not is_house_bot(bot)}  # a house bot has no health: it is ours
            void = _void(spec, failures)
            if on_played is not None:  # its slot is free now unless storing it may make a bot unhealthy
                on_played(record, not inputs.unhealthy and all(o is None for o in outcomes.values()))
            # every write after it: one hop to a thread (result + Elo in one script, then ack + health in one)
            stored, health = await asyncio.to_thread(_store_and_ack, store, job, spec, record, seed, deal, worker,
                                                     outcomes, unhealthy_after, inputs.ratings or None,
                                                     spec.rated, void)
            publisher.stored = stored  # this play is the match's stored one: its end is shown
        if stored:
            metrics.match_stored(record)
    except asyncio.CancelledError:
        log.warning("match %s cancelled; its job stays pending", spec.match_id)
        raise
    except Exception as exc:  # a platform error, not a bot's: keep the job pending for a reclaim
        _log_failure(exc, "match %s failed; its job %s stays pending (delivery %d of at most %d)", spec.match_id,
                     job.entry_id, job.deliveries, max_deliveries)
        return "pending"
    log.info("match %s %s: scores %s, ranks %s, faults %s", spec.match_id,
             "stored" if stored else "was already stored", list(result.scores), list(result.ranks),
             list(result.faults))
    if stored:
        _log_health(spec.game, spec.match_id, health, unhealthy_after)
    return "stored" if stored else "duplicate"


async def _drop_poison(store: Store, job: Job, spec: MatchSpec, max_deliveries: int) -> str | None:
    """A job delivered more than ``max_deliveries`` times (deliveries before a deferral included) is recorded as
    failed and acknowledged without running (logged); what ``run_job`` returns for it, or None for another job."""
    deliveries = job.deliveries + int(job.fields.get(EARLIER_DELIVERIES_FIELD) or 0)
    if deliveries <= max_deliveries:
        return None
    settled = await asyncio.to_thread(store.drop_job, job, "failed")
    if settled == 2:
        return "duplicate"
    if settled == 0:  # settled meanwhile by the worker it was reclaimed from
        return "dropped"
    log.error("match %s (job %s of %s) was delivered %d times without being settled, more than %d: "
              "recorded as failed and acknowledged without running it", spec.match_id, job.entry_id,
              job.game, deliveries, max_deliveries)
    return "failed"


async def _settled_before(store: Store, job: Job, spec: MatchSpec, inputs: MatchInputs) -> str | None:
    """A match whose result is stored is acknowledged ("duplicate"); one of a cancelled tournament is dropped
    ("cancelled"); None for a match to play."""
    if inputs.has_result:
        log.info("match %s already has a stored result; acknowledging", spec.match_id)
        await asyncio.to_thread(store.ack_job, job)
        return "duplicate"
    if spec.tournament and inputs.tournament_state == "cancelled":
        settled = await asyncio.to_thread(store.drop_job, job, "cancelled")
        log.info("match %s not played: tournament %s is cancelled", spec.match_id, spec.tournament)
        return "duplicate" if settled == 2 else "cancelled"
    return None


def _deal_and_seat_seeds(store: Store, spec: MatchSpec,
                         tournament_seed: int | None) -> tuple[int, dict[str, int] | None, tuple[int, ...]]:
    """``match_deal`` and ``match_seat_seeds`` of a tournament's match, in one call (one thread hop)."""
    seed, deal = match_deal(store, spec, tournament_seed)
    return seed, deal, match_seat_seeds(store, spec, seed, deal, tournament_seed)


def match_seat_seeds(store: Store, spec: MatchSpec, seed: int, deal: dict[str, int] | None,
                     tournament_seed: int | None = None) -> tuple[int, ...]:
    """The seat seed of every seat of ``spec`` played with deal seed ``seed`` (from ``match_deal``, with its
    ``deal``): for a tournament's match ``seat_seed(tournament seed, tournament, round, deal, attempt, seat)``
    (``tournament_seed`` when already read, else read here), for a match outside tournaments
    ``local_seat_seeds(seed, seats)``. Raises ``LookupError`` when the tournament's seed is not stored."""
    if not spec.tournament or deal is None:
        return local_seat_seeds(seed, len(spec.seats))
    secret = tournament_seed if tournament_seed is not None else store.tournament_seed(spec.game, spec.tournament)
    if secret is None:
        raise LookupError(f"match {spec.match_id}: tournament {spec.tournament} has no stored seed")
    return tuple(seat_seed(secret, spec.tournament, deal["round"], deal["deal"], deal["attempt"], seat)
                 for seat in range(len(spec.seats)))


SETTLED = ("stored", "duplicate", "failed", "cancelled")


def _log_failure(exc: Exception, message: str, *args: object) -> None:
    """A failed match or controller call: one warning line when Redis does not answer (``REDIS_AWAY``: it is
    restarting, and every match in flight fails the same way; a traceback would say nothing more) or refuses writes
    (``write_refusal``: a full disk), else an error with its traceback."""
    if isinstance(exc, REDIS_AWAY):
        log.warning(message + "; Redis does not answer (%s: %s)", *args, type(exc).__name__, exc)
    elif refusal := write_refusal(exc):
        log.warning(message + "; Redis refuses writes: %s (its disk full or not writable, or out of memory: see "
                    "its log; matches go on once it accepts them again)", *args, refusal.split(".")[0])
    else:
        log.error(message, *args, exc_info=exc)


async def run_job_and_control(store: Store, job: Job, **kwargs: Any) -> str:
    """``run_job``, then, when the job's tournament match is settled (``SETTLED``), its tournament's controller
    (``arena.tournaments.controllers.after_match``, in a thread), unless the job's pre-match reads (``ahead``) say
    its tournament has none (a round robin: nothing to call, and its two reads saved). A controller's failure is
    logged and left to the next sweep (the match itself is settled). Returns what ``run_job`` returned."""
    ahead: InputsAhead | None = kwargs.get("ahead")
    outcome = await run_job(store, job, **kwargs)
    metrics.job_settled(job, outcome)
    spec = job.spec
    known = ahead.known() if ahead is not None else None
    if known is not None and known.tournament_controlled is False:
        return outcome
    if outcome in SETTLED and spec is not None and spec.tournament:
        try:
            await asyncio.to_thread(after_match, store, spec)
        except Exception as exc:  # noqa: BLE001 - the match is settled; the sweep calls the controller again
            _log_failure(exc, "the controller of tournament %s failed after match %s; the next sweep retries",
                         spec.tournament, spec.match_id)
    return outcome


def _store_and_ack(store: Store, job: Job, spec: MatchSpec, record: Any, seed: int, deal: dict[str, int] | None,
                   worker: str, outcomes: dict[str, str | None], unhealthy_after: int,
                   ratings: list[float | None] | None,
                   rated: bool = True, void: bool = False) -> tuple[bool, tuple[dict[str, str | None], Any]]:
    """Store a played match's result with its Elo update (none when not ``rated`` or ``void``: every seat failed,
    counted in no standings either), acknowledge its job and, when
    stored now, count ``outcomes`` (``charged_outcomes``) in the health of its bots, in one script
    (``Store.settle_match``; a health failure is returned, never raised: health is advice). ``ratings``: the seats'
    ratings read before the match. Returns (stored now, (outcomes, health changes or the exception))."""
    result = record.result
    stored, health = store.settle_match(
        job, spec.game, spec.match_id, list(spec.seats), list(result.scores), list(result.ranks),
        list(result.faults), record.to_dict(), outcomes=outcomes, unhealthy_after=unhealthy_after, ratings=ratings,
        tournament_id=spec.tournament or None, seed=seed, worker=worker, deal=deal, rated=rated, void=void,
        length=record.duration_s)
    return stored, (outcomes if stored else {}, health)


def _void(spec: MatchSpec, failures: Sequence[str | None]) -> bool:
    """Whether a played match (its ``seat_failures``) is void: every seat failed (``every_seat_failed``: stored,
    but neither rated nor counted in its tournament's standings or fit, and charged to nobody; logged)."""
    if every_seat_failed(failures):
        log.warning("match %s: every seat failed (%s); stored but void (not rated, in no standings) and charged to "
                    "nobody: either the arena could not reach or wait for its bots (an overloaded worker, its "
                    "network), or every one of them is down or hangs", spec.match_id,
                    "; ".join(str(why) for why in failures))
        return True
    return False


def _log_health(game: str, match_id: str, health: tuple[dict[str, str | None], Any], unhealthy_after: int) -> None:
    """Log what counting a stored match in the health of its bots changed (``_store_and_ack``)."""
    outcomes, changes = health
    if isinstance(changes, Exception):
        log.warning("match %s: cannot count it in the health of its bots (%s: %s)", match_id,
                    type(changes).__name__, changes)
        return
    for bot, change in changes.items():
        if change == 1:
            log.warning("bot %s (%s) is unhealthy: %d failed matches in a row, the last %s; its matches are "
                        "deferred until it answers GetInfo again", bot, game, unhealthy_after, outcomes[bot])
        elif change == 2:
            log.warning("bot %s (%s) played match %s through: healthy again", bot, game, match_id)


def match_deal(store: Store, spec: MatchSpec,
               tournament_seed: int | None = None) -> tuple[int, dict[str, int] | None]:
    """The deal seed to play ``spec`` with now, and where it comes from.

    A tournament's match: ``deal_seed(tournament seed, tournament, round, deal, attempt)``, the attempt being how
    many times this match was started before (``Store.next_attempt``, counted here, before any card is dealt), so
    a match played again after a crash of ours never gets a deal that bots may have seen; returned with
    ``{"round", "deal", "table", "attempt"}``. A match outside tournaments: its spec's own seed, and ``None``.
    ``tournament_seed``: the tournament's seed when already read (``Store.match_inputs``), else it is read here.
    Raises ``LookupError`` when the tournament's seed is not stored.
    """
    if not spec.tournament:
        return spec.seed, None
    secret = tournament_seed if tournament_seed is not None else store.tournament_seed(spec.game, spec.tournament)
    if secret is None:
        raise LookupError(f"match {spec.match_id}: tournament {spec.tournament} has no stored seed to deal from")
    attempt = store.next_attempt(spec.game, spec.tournament, spec.match_id)
    return (deal_seed(secret, spec.tournament, spec.round, spec.deal, attempt),
            {"round": spec.round, "deal": spec.deal, "table": spec.table, "attempt": attempt})
