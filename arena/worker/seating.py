"""Who sits at a claimed job's match (``arena.worker.job``): each seat's registered endpoint and secret, the worker's
house bots, and the check that each bot still answers GetInfo as registered, before the match and after one during
which a seat's connection went (``arena.match.channels``: another process may answer on that port now); a job whose
seat cannot be played is deferred (``defer``: parked until the bot answers as registered, or forced later). A match
played through is stored as played: what is found after it only holds the bot's next matches.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from arena.core.specs import MatchSpec, is_house_bot
from arena.match.channels import BotChannels
from arena.match.record import SeatSpec
from arena.store import FORCED_FIELD, Job, MatchInputs, Store
from arena.store.health import MISMATCH_PREFIX
from arena.worker.health import not_as_registered

log = logging.getLogger("arena.worker.loop")  # the scheduler's work: operators filter its log under one name

UNREGISTERED_ENDPOINT = "127.0.0.1:1"  # a seat whose bot is not registered: nothing listens, calls fault "unreachable"
SILENT_IDENTITY = "its GetInfo did not answer after a match whose decisions it answered"  # after MISMATCH_PREFIX
IDENTITY_ASKS, IDENTITY_ASK_GAP_S = 3, 0.1  # GetInfo asked at most 3 times, 0.1 s apart, after a doubtful match


def _seats(spec: MatchSpec, inputs: MatchInputs) -> list[SeatSpec]:
    """The seats of the match, with each registered bot's endpoint and secret; an unregistered bot's seat gets
    ``UNREGISTERED_ENDPOINT`` (its calls fault "unreachable"; logged)."""
    seats = []
    for name, bot in zip(spec.seats, inputs.bots):
        if bot is None and not is_house_bot(name):
            log.warning("match %s: bot %s is not registered; its seat faults as unreachable", spec.match_id, name)
        seats.append(SeatSpec(name=name, endpoint=bot.endpoint if bot else UNREGISTERED_ENDPOINT,
                              secret=bot.secret if bot else ""))
    return seats


def _house_seats(spec: MatchSpec, seats: list[SeatSpec]) -> list[SeatSpec]:
    """``seats`` with every house bot's seat (``house:NAME``) at the endpoint of its process in this worker
    (``arena.worker.house``, started here when first seated). A house bot that names no sample bot, or whose process
    does not start, keeps ``UNREGISTERED_ENDPOINT`` (its calls fault "unreachable"; logged)."""
    from arena.match.local_bots import BotStartError
    from arena.worker.house import HouseBotError, house_endpoint

    out = []
    for seat in seats:
        if is_house_bot(seat.name):
            try:
                endpoint, secret = house_endpoint(seat.name)
                seat = SeatSpec(name=seat.name, endpoint=endpoint, secret=secret)
            except (HouseBotError, BotStartError) as exc:
                log.error("match %s: house bot %s cannot play (%s); its seat faults as unreachable", spec.match_id,
                          seat.name, exc)
        out.append(seat)
    return out


def _absent_if_not_as_registered(store: Store, spec: MatchSpec, seats: list[SeatSpec],
                                 unhealthy: list[str]) -> list[SeatSpec]:
    """``seats`` with each seat whose bot (of ``unhealthy``) is unhealthy for answering GetInfo not as registered
    (``MISMATCH_PREFIX``) moved to ``UNREGISTERED_ENDPOINT``: that seat faults as unreachable and forfeits, and
    whatever answers at the bot's endpoint is never played under the registered name (logged)."""
    health = store.bot_health(spec.game, unhealthy)
    out = []
    for seat in seats:
        state = health.get(seat.name)
        if state is not None and not state.healthy and state.reason.startswith(MISMATCH_PREFIX):
            log.warning("match %s: bot %s does not answer GetInfo as registered (%s); its seat faults as "
                        "unreachable", spec.match_id, seat.name, state.reason)
            seat = SeatSpec(name=seat.name, endpoint=UNREGISTERED_ENDPOINT, secret="")
        out.append(seat)
    return out


async def seats_to_play(store: Store, job: Job, inputs: MatchInputs, channels: BotChannels | None,
                         deadline_ms: int) -> list[SeatSpec] | str:
    """The seats the match is played with (``_seats``; house bots at their processes), or what ``run_job`` returns
    for a job deferred: each seat's bot whose GetInfo, asked once per connection of the worker's channel to it
    (``health.not_as_registered``), does not answer as registered is marked unhealthy and the job deferred; in a
    forced job such bots (and those unhealthy for that reason before) are never played under their registered name
    (``_absent_if_not_as_registered``)."""
    spec = job.spec
    assert spec is not None
    seats = _seats(spec, inputs)
    if any(is_house_bot(name) for name in spec.seats):  # the worker's own sample bots, started when first seated
        seats = await asyncio.to_thread(_house_seats, spec, seats)
    strangers = await _strangers(store, spec, seats, inputs, channels, deadline_ms) if channels is not None else {}
    if strangers and job.fields.get(FORCED_FIELD) != "1":
        return await defer(store, job, sorted(strangers))
    unhealthy = sorted(set(inputs.unhealthy) | strangers.keys())
    if unhealthy:  # a forced match: a bot not as registered is not played under its registered name
        seats = await asyncio.to_thread(_absent_if_not_as_registered, store, spec, seats, unhealthy)
    return seats


async def _strangers(store: Store, spec: MatchSpec, seats: list[SeatSpec], inputs: MatchInputs,
                     channels: BotChannels, deadline_ms: int) -> dict[str, str]:
    """The seats' bots that answer GetInfo not as registered (``health.not_as_registered``: asked only through a
    connection that has not answered it yet), each marked unhealthy (logged): bot id -> why."""
    strangers = await not_as_registered(channels, seats, inputs.bots, deadline_ms / 1000)
    await _mark_unhealthy(store, spec, strangers)
    return strangers


async def _mark_unhealthy(store: Store, spec: MatchSpec, why: dict[str, str]) -> None:
    """Mark each bot of ``why`` (bot id -> the reason, ``MISMATCH_PREFIX`` + what) unhealthy (logged)."""
    for bot, reason in why.items():
        await asyncio.to_thread(store.mark_unhealthy, spec.game, bot, reason)
        log.warning("bot %s (%s) is unhealthy: it answers GetInfo %s", bot, spec.game, reason)


def identity_marks(channels: BotChannels | None, inputs: MatchInputs) -> dict[str, tuple[int, int]]:
    """Per registered bot's endpoint, its ``BotChannels.connection_marks`` once its GetInfo was checked; (-1, -1) for
    a bot whose GetInfo answer is not known then (it did not answer, or a connection went since)."""
    if channels is None:
        return {}
    marks = channels.connection_marks([bot.endpoint for bot in inputs.bots if bot is not None])
    return {e: mark if channels.identity_known(e) else (-1, -1) for e, mark in marks.items()}


async def identities_after(store: Store, job: Job, seats: list[SeatSpec], inputs: MatchInputs,
                           channels: BotChannels | None, marks: dict[str, tuple[int, int]], deadline_ms: int,
                           record: Any) -> None:
    """After a match, before it is stored, check again who answered at each seat whose bot's identity was not known
    at the start (``identity_marks``: -1) or whose connection went during it (its mark moved): GetInfo is asked
    again (``health.not_as_registered``) and a bot that answers not as registered is marked unhealthy so. One whose
    GetInfo did not answer at the start and still does not (asked ``IDENTITY_ASKS`` times) although it answered
    decisions of the match (a process there plays but will not say who it is; failing its last decision on purpose
    changes nothing) is marked unhealthy "not as registered" too; one known at the start whose GetInfo fails only
    now is not (a bot restarting after its last answer: it takes longer than these asks), and is asked again before
    its next match. Either way its next matches wait (deferred) until it answers
    as registered.

    The match itself is stored as played, whoever answered at the endpoint: a match played through is never played
    again because of what one of its bots did, or a bot losing near the end could drop its connection (or answer
    GetInfo otherwise) to have its loss dealt again. A seat's bot gone at the end is stored with its faults."""
    if channels is None:
        return
    now = channels.connection_marks(list(marks))
    went = {e for e, mark in marks.items() if mark[0] >= 0 and now[e] != mark}
    unknown = {e for e, mark in marks.items() if mark[0] < 0}
    if not went and not unknown:
        return
    assert job.spec is not None
    spec = job.spec
    answered = _answered(record, len(seats))
    strangers: dict[str, str] = {}
    for attempt in range(IDENTITY_ASKS):  # a connection that drops again at the wrong moment is not a refusal
        if attempt:
            await asyncio.sleep(IDENTITY_ASK_GAP_S)
        # GetInfo asked again only where it has no answer yet: a retry asks the silent ones alone
        strangers |= await not_as_registered(channels, seats, inputs.bots, deadline_ms / 1000)
        silent = sorted({seat.name for i, seat in enumerate(seats)
                         if answered[i] and seat.endpoint in unknown and seat.name not in strangers
                         and not channels.identity_known(seat.endpoint) and not is_house_bot(seat.name)})
        if not silent:
            break
    await _mark_unhealthy(store, spec, {**strangers, **{bot: MISMATCH_PREFIX + SILENT_IDENTITY for bot in silent}})
    if strangers or silent:
        log.warning("match %s is stored as played; the bot(s) %s may have been another process for part of it: their "
                    "next matches wait until they answer GetInfo as registered", spec.match_id,
                    ", ".join(sorted({*strangers, *silent})))


def _answered(record: Any, n: int) -> list[bool]:
    """Per seat, whether its bot answered any decision of ``record`` (a ``MatchRecord``)."""
    answered = [False] * n
    for decision in record.decisions:
        if decision.get("source") == "bot":
            answered[decision["seat"]] = True
    return answered


async def defer(store: Store, job: Job, sick: list[str]) -> str:
    """Park a job whose match seats an unhealthy bot (``Store.defer_job``); what ``run_job`` returns for it."""
    spec = job.spec
    assert spec is not None
    settled = await asyncio.to_thread(store.defer_job, job.game or spec.game, job.entry_id, spec.match_id,
                                      job.fields, deliveries=job.deliveries)
    if settled == 2:
        return "duplicate"
    if settled == 0:  # settled meanwhile by the worker it was reclaimed from
        return "dropped"
    log.info("match %s deferred: bot %s unhealthy; it is played once the bot answers GetInfo again",
             spec.match_id, ", ".join(sick))
    return "deferred"
