"""Bot health across matches: a bot that keeps failing is marked unhealthy and its matches are deferred, not played
against a corpse, until its GetInfo answers again. The workers apply these rules
(``arena.worker.loop``); the state lives in Redis (``arena.store.health``).

Rules (every number is a worker option with its default in ``arena.core.config.DEFAULTS``):

- **A failed match** (``seat_failures``): a seat that forfeited (any reason of the referee's failure policy: faults,
  timeouts in a row, time limit), or that answered no call of its match at all (every call it got was a fault:
  unreachable, timed out, an error...). A match it played through, even with some faults, is not a failure.
- **Ours is never charged** (``charged_outcomes``): health counts only matches whose result was stored, once per
  match id; a match interrupted by our crash (a worker, the referee or Redis) has no result, is re-run from scratch
  and only the re-run counts. A match in which *every* seat failed is charged to nobody: that is what a worker
  whose network or event loop broke looks like, and one dead bot never makes all its opponents fail.
- **Unhealthy**: ``unhealthy_after`` [3] failed matches in a row mark the bot unhealthy (since then, with the
  last reason); a match it plays through resets the run.
- **Deferral**: a worker that claims a match with an unhealthy seat does not play it: the job is taken off the
  stream and parked as a deferred match in the same atomic step (never lost, never counted as done; its
  tournament keeps running).
- **Recovery**: every ``bot_recheck_s`` [5 s] one worker of the fleet calls the GetInfo of each unhealthy bot at its
  registered endpoint (after ``arena bot update``, the new one), with a deadline of ``verify_timeout_s``; a bot that
  answers is healthy again (one marked "not as registered", below, only once it answers as registered), and the
  deferred matches whose bots are all healthy go back on the queue.
- **Not as registered** (``registration_mismatch``): a bot whose GetInfo gives another name than its registration,
  no longer lists its game, or reports another version (CreateTournament's readiness check, ``arena bot list``,
  this recovery check) is unhealthy with the reason "not as registered: ..." (the other name is never shown): its
  matches are deferred until its GetInfo matches again, and never played under the registered name: in a match
  forced past the cap its seat faults as unreachable and forfeits (``arena.worker.job``). A worker also asks it
  before a match, once per connection of its channel to the bot (``not_as_registered``): a fresh channel, or one
  whose connection was lost, may reach another process that took the bot's port, which is then found before it
  plays a single match under the bot's name.
- **The cap**: a match deferred for ``max_deferral_s`` [600 s], or whose unhealthy bots have all been unhealthy that
  long, goes back on the queue *forced* at the next check (at once when its unhealthy bots are no longer
  registered: nothing to wait for), so the matches of a dead bot paired later (a Swiss round, an until-separated
  round) wait for no second cap. A forced match is played whatever the health of
  its bots, so a dead bot forfeits it (unreachable: at once; hanging: after ``max_consecutive_timeouts`` deadlines)
  and is ranked last, below every honest bot, which keeps its result against the others and gains against the dead
  one. A tournament therefore always ends, at the latest about ``max_deferral_s`` after its bot died, and the dead
  bot pays for its absence, not the honest bots. A bot unhealthy again less than ``max_deferral_s`` after it
  recovered gets no second wait: its matches are forced at the next check (a bot that answered GetInfo only for a
  while after each run of failed matches made each Swiss round wait a whole cap). Deferred matches of a cancelled
  tournament are queued again at the next check and dropped as cancelled.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from arena.core import limits
from arena.core.text import printable
from arena.match.channels import PLAINTEXT_OR_SYSTEM_ROOTS, BotChannels, BotDialer
from arena.match.record import MatchRecord, SeatSpec
from arena.store import BotEntry, Store
from arena.store.health import MISMATCH_PREFIX
from arena_sdk.guard import secret_metadata
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

log = logging.getLogger(__name__)

# A bot that refuses a call for want of credentials is alive: it answers, it only wants its secret.
_ALIVE_CODES = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
NAME_CHANGED = "reports another name in GetInfo than it is registered under"


def registration_mismatch(bot: BotEntry, info: bot_pb2.BotInfo) -> tuple[str, str]:
    """("", "") when the GetInfo answer ``info`` matches the registration ``bot`` (a game it plays, its version, its
    name, checked in that order; name and version are held only when its registration checked GetInfo,
    ``bot.checked``);
    else ("changed", what differs, in one sentence that names no other bot: the other name is never repeated, for
    it is no business of whoever reads a public list)."""
    unverified = not bot.checked
    if bot.game not in info.games:
        played = printable(", ".join(list(info.games)[:limits.GAMES_PER_BOT])) or "no game"
        return "changed", f"now plays {played}, not {bot.game}"
    if not unverified and info.version != bot.version:
        return "changed", f"now reports version {info.version[:limits.VERSION]!r}; register it as a new version"
    if not unverified and info.name != bot.name:
        return "changed", NAME_CHANGED
    return "", ""


def seat_failures(record: MatchRecord) -> list[str | None]:
    """Per seat of a finished match: None when the seat played its match (even with some faults), else why the
    match counts as failed for it: ``"forfeited (REASON)"`` or ``"answered no call (KIND)"``, KIND the kind of its
    last fault (``"unreachable"``, ``"timeout"``, ...)."""
    n = len(record.seats)
    forfeits = list(record.result.forfeits) or [None] * n
    answered = [False] * n
    for decision in record.decisions:
        if decision.get("source") == "bot":
            answered[int(decision["seat"])] = True
    last_fault: list[str | None] = [None] * n
    for fault in record.faults:
        last_fault[fault.seat] = fault.kind
    out: list[str | None] = []
    for seat in range(n):
        if forfeits[seat]:
            out.append(f"forfeited ({forfeits[seat]})")
        elif last_fault[seat] is not None and not answered[seat]:
            out.append(f"answered no call ({last_fault[seat]})")
        else:
            out.append(None)
    return out


def every_seat_failed(failures: Sequence[str | None]) -> bool:
    """True when every seat failed (``failures``: the ``seat_failures`` of a match: forfeited, or answered no call):
    the result then says nothing of the bots' strength (forfeited seats share the last rank), and the fault is
    likely ours (an overloaded worker whose every call came too late, its network), so the match is stored but not
    rated."""
    return all(f is not None for f in failures)


def charged_outcomes(record: MatchRecord, bots: Sequence[str],
                     failures: Sequence[str | None] | None = None) -> dict[str, str | None]:
    """What a stored match counts in the health of each bot (``bots``: the bot ids in seat order): bot id -> None
    (played through) or the reason it failed, with the match id. Empty when every seat failed: then the fault is
    likely ours, and nobody is charged. ``failures``: the match's ``seat_failures`` when known already."""
    failures = seat_failures(record) if failures is None else failures
    if every_seat_failed(failures):
        return {}
    return {bot: None if why is None else f"{why} in match {record.match_id}" for bot, why in zip(bots, failures)}


async def probe(endpoint: str, timeout_s: float, dialer: BotDialer = PLAINTEXT_OR_SYSTEM_ROOTS,
                bot: BotEntry | None = None) -> str | None:
    """Call the GetInfo of the bot at ``endpoint`` (``"tls://host:port"`` over TLS, as ``dialer`` dials) on a
    channel of its own: None when it answers within ``timeout_s`` seconds (without ``bot``, a refusal for want of its
    secret counts as an answer) and, given its registration ``bot``, the answer matches it; else what went wrong
    (status code and message), or ``MISMATCH_PREFIX`` + what differs (``registration_mismatch``; a refusal, which
    tells nothing of who answers)."""
    options = [("grpc.max_receive_message_length", limits.MAX_BOT_INFO_BYTES)]
    try:
        async with dialer.aio_channel(endpoint, options=options) as channel:
            info = await bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=timeout_s,
                                                                metadata=secret_metadata(bot.secret if bot else ""))
    except grpc.aio.AioRpcError as exc:
        if exc.code() in _ALIVE_CODES:  # alive; but whether it is the registered bot only its answer tells
            return None if bot is None else (MISMATCH_PREFIX + f"GetInfo refused ({exc.code().name}): a bot answers "
                                             f"GetInfo to any caller, as at its registration")
        return f"{exc.code().name}: {exc.details()}"
    except Exception as exc:  # noqa: BLE001 - a bad endpoint string must not stop the check of the others
        return f"{type(exc).__name__}: {exc}"
    if bot is not None:
        kind, why = registration_mismatch(bot, info)
        if kind:
            return MISMATCH_PREFIX + why
    return None


def _relapsed(store: Store, game: str, sick: dict[str, float], max_deferral_s: float) -> set[str]:
    """The unhealthy bots of ``sick`` (bot id -> unhealthy since) that ``BotHealth.relapsed``: their matches wait
    for no second cap."""
    health = store.bot_health(game, list(sick)) if sick else {}
    return {bot for bot in sick if (h := health.get(bot)) is not None and h.relapsed(max_deferral_s)}


@dataclass
class CheckReport:
    """What one pass of ``check_bots`` did: bots probed and those healthy again, deferred matches queued again
    (all their bots healthy, or their tournament no longer running) and forced (deferred past the cap)."""

    probed: int = 0
    recovered: int = 0
    released: int = 0
    forced: int = 0


async def check_bots(store: Store, games: Sequence[str], *, max_deferral_s: float, probe_timeout_s: float,
                     now: float | None = None, dialer: BotDialer = PLAINTEXT_OR_SYSTEM_ROOTS) -> CheckReport:
    """One pass of the recovery rules over ``games``: probe every unhealthy bot (all at once, dialed by
    ``dialer``), mark those that answer healthy, then queue again every deferred match whose bots are all healthy
    or whose tournament is no longer running, and force every one first deferred ``max_deferral_s`` seconds ago or
    more (whatever its bots' health now), or whose bots have been unhealthy that long, or that seats a bot
    unhealthy again within the cap of its recovery (read before the probe: it may answer the probe as registered).
    Redis errors pass through (the caller tries again at its next interval)."""
    report = CheckReport()
    for game in games:
        unhealthy = await asyncio.to_thread(store.unhealthy_bots, game)
        # relapsed before this pass's probe marks any healthy: a bot that answers the probe's fresh connection as
        # registered and a worker's not (a flipper) is healthy between two checks and never seen relapsed after
        relapsed = await asyncio.to_thread(_relapsed, store, game, unhealthy, max_deferral_s)
        gone: set[str] = set()
        if unhealthy:
            entries = {bot: await asyncio.to_thread(store.get_bot, game, bot) for bot in unhealthy}
            gone = {bot for bot, entry in entries.items() if entry is None}
            probed = [bot for bot, entry in entries.items() if entry is not None]
            # healthy again only when GetInfo answers as registered (name, version, game), whatever made it
            # unhealthy: another process at its address is not this bot
            problems = await asyncio.gather(*(probe(entries[b].endpoint, probe_timeout_s, dialer,  # type: ignore[union-attr]
                                                    entries[b]) for b in probed))
            report.probed += len(probed)
            for bot, problem in zip(probed, problems):
                if problem is None and await asyncio.to_thread(store.mark_healthy, game, bot):
                    report.recovered += 1
                    log.warning("bot %s (%s) answers GetInfo again: healthy; its deferred matches are queued again",
                                bot, game)
                elif problem is not None and problem.startswith(MISMATCH_PREFIX):
                    await asyncio.to_thread(store.mark_unhealthy, game, bot, problem)
                    log.info("bot %s (%s) is still unhealthy: it answers GetInfo %s", bot, game, problem)
                elif problem is not None:
                    log.debug("bot %s (%s) is still unhealthy: GetInfo %s", bot, game, problem)
        deferred = await asyncio.to_thread(store.deferred_matches, game)
        if not deferred:
            continue
        sick = await asyncio.to_thread(store.unhealthy_bots, game)  # bot id -> unhealthy since
        newly = {bot: since for bot, since in sick.items() if bot not in unhealthy}  # unhealthy since the first read
        relapsed |= await asyncio.to_thread(_relapsed, store, game, newly, max_deferral_s)
        states: dict[str, str | None] = {}
        clock = await asyncio.to_thread(store.server_time) if now is None else now  # one clock for all workers
        for match in deferred:
            spec = match.spec
            seats = set(spec.seats) if spec is not None else set()
            seated = sick.keys() & seats  # its unhealthy bots
            flipped = relapsed & seats  # unhealthy again within the cap of a recovery, before this probe or after
            # deferred past the cap already (its first deferral: the job keeps it), it is not deferred again even
            # when its bots are all healthy now
            forced = clock - match.deferred_at >= max_deferral_s
            if seated or flipped:
                tid = spec.tournament if spec is not None else ""
                if tid and tid not in states:
                    states[tid] = await asyncio.to_thread(store.tournament_state, game, tid)
                running = not tid or states[tid] in ("running", None)
                removed = bool(seated) and seated <= gone  # no longer registered: nothing to wait for
                # the cap counts from the deferral, or from when its bots became unhealthy: a Swiss round paired
                # after a bot died waits for no second cap
                waited = clock - min(match.deferred_at, max(sick[b] for b in seated)) if seated else 0.0
                no_second_wait = seated <= relapsed if seated else True  # relapsed: played at once
                if running and not removed and waited < max_deferral_s and not no_second_wait:
                    continue
                forced = running
            if not await asyncio.to_thread(store.release_deferred, game, match.match_id, forced=forced):
                continue
            if forced and not seated:
                report.forced += 1
                log.warning("match %s was first deferred %.0f s ago%s: queued again, forced (its bots answer as "
                            "registered now; it is not deferred again)", match.match_id, clock - match.deferred_at,
                            f", and {', '.join(sorted(flipped))} unhealthy again within the cap of a recovery"
                            if flipped else ", past the cap")
            elif forced:
                report.forced += 1
                log.warning("match %s was deferred for %.0f s (bots %s unhealthy%s): queued again, forced: it is "
                            "played now and an absent bot forfeits it", match.match_id, clock - match.deferred_at,
                            ", ".join(sorted(seated)), ", no longer registered" if seated <= gone else
                            ", again within the cap of their recovery" if seated <= relapsed else "")
            else:
                report.released += 1
                log.info("deferred match %s queued again", match.match_id)
    return report


async def not_as_registered(channels: BotChannels, seats: Sequence[SeatSpec], bots: Sequence[BotEntry | None],
                            timeout_s: float) -> dict[str, str]:
    """The seats' registered bots (``bots``, per seat, None for one not registered) whose GetInfo, through the
    worker's channel to them, does not match their registration: bot id -> ``MISMATCH_PREFIX`` + what differs
    (``registration_mismatch``). GetInfo is asked only through a connection that has not answered it yet
    (``BotLease.info``, which the referee's choice of the match stream then reuses), all at once, each within
    ``timeout_s``; a bot that does not answer is not in the answer (its calls fault in the match as usual)."""
    leases = {}
    secrets = {}
    for seat, bot in zip(seats, bots):
        if bot is not None and seat.endpoint not in leases:
            leases[seat.endpoint] = channels.lease(seat.endpoint)
            secrets[seat.endpoint] = seat.secret
    try:
        unknown = [(endpoint, lease) for endpoint, lease in leases.items() if lease.info is None]

        async def ask(endpoint: str, lease: Any) -> None:
            try:
                info = await lease.stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=timeout_s,
                                                metadata=secret_metadata(secrets[endpoint]))
            except Exception:  # noqa: BLE001 - down or failing: the match's calls find out and fault it
                return
            if isinstance(info, bot_pb2.BotInfo):  # not an answer that did not decode (UndecodableAnswer)
                lease.info = info

        await asyncio.gather(*(ask(endpoint, lease) for endpoint, lease in unknown))
        strangers = {}
        for seat, bot in zip(seats, bots):
            info = leases[seat.endpoint].info if bot is not None else None
            if bot is not None and isinstance(info, bot_pb2.BotInfo):
                kind, why = registration_mismatch(bot, info)
                if kind:
                    strangers[seat.name] = MISMATCH_PREFIX + why
                    # asked again at the next check: a connection's answer that does not match is not kept (what
                    # answers through it may answer as registered later, a proxy's backend changed back)
                    leases[seat.endpoint].info = None
        return strangers
    finally:
        for lease in leases.values():
            channels.release(lease)
