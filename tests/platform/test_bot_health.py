"""Bot health (issue 8, item 4) on real parts: a bot process killed mid-tournament fails ``unhealthy_after`` matches,
is marked unhealthy, and its remaining matches are deferred (not played against the corpse) until it is restarted at
the same endpoint, then they complete; a bot that never comes back forfeits its deferred matches after the cap, so
the tournament ends and no honest bot loses rating to it; a match in which every seat failed charges nobody; a
worker SIGKILLed mid-match charges nobody either: the match is re-run from scratch and only the re-run is stored.

Without health, every match of a dead bot is played against it (about 300 faults a tournament in the issue's
trial); here the number of matches it fails is ``unhealthy_after`` with one worker running one match at a time."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from platform_helpers import SLOW_BOT, VERSIONED_BOT, wait_until

from arena.core.specs import MatchSpec
from arena.match.record import MatchRecord
from arena.store import Store, TournamentInfo
from arena.store.bots import UNVERIFIED_VERSION as UNVERIFIED
from arena.tournaments.round_robin import round_robin
from arena.tournaments.until_separated import fit_results
from arena.worker import loop as scheduler
from arena.worker.health import seat_failures

ONE_HAND = {"limit": 1}  # limit 1 bullhead: a 2-seat Take 5 match always ends after its first hand
HEALTH = {"unhealthy_after": 3, "bot_recheck_s": 0.3}


def _tournament(store: Store, bots: list[str], rounds: int, seed: int = 7) -> list[MatchSpec]:
    """A stored round robin of 2-seat one-hand Take 5 matches, queued."""
    tid = store.next_tournament_id()
    specs = round_robin(tid, "take5", bots, 2, rounds, seed, dict(ONE_HAND), deadline_ms=1000)
    store.create_tournament(TournamentInfo(
        id=tid, game="take5", bots=tuple(bots), seats_per_match=2, rounds=rounds, seed=seed, config=dict(ONE_HAND),
        deadline_ms=1000, matches_total=len(specs), created_at=time.time()))
    scheduler.enqueue_matches(store, specs)
    return specs


def _register(store: Store, start_bot: Callable[..., Any], names: list[str]) -> tuple[list[str], list[Any]]:
    procs = [start_bot("sample:random") for _ in names]
    ids = [store.register_bot("take5", name, p.endpoint, version=UNVERIFIED).bot_id  # name not held
           for name, p in zip(names, procs)]
    return ids, procs


def _record(store: Store, match_id: str) -> MatchRecord:
    raw = store.get_match_record(match_id, "take5")
    assert raw is not None
    return MatchRecord.from_dict(raw)


def _failed_seats(store: Store, match_id: str, bot: str) -> bool:
    """True when ``bot`` failed the stored match ``match_id`` (forfeited, or answered no call)."""
    record = _record(store, match_id)
    return any(why is not None for seat, why in zip(record.seats, seat_failures(record)) if seat.name == bot)


def _stored_with(store: Store, specs: list[MatchSpec], bot: str) -> list[str]:
    return [s.match_id for s in specs if bot in s.seats and store.has_result("take5", s.match_id)]


def test_a_bot_killed_mid_tournament_is_deferred_until_it_answers_again(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    (a, b, c), (_, _, doomed) = _register(store, start_bot, ["hale", "hearty", "doomed"])
    per_round = sum(c in s.seats for s in round_robin("t0", "take5", [a, b, c], 2, 1, 7, dict(ONE_HAND)))
    specs = _tournament(store, [a, b, c], rounds=-(-14 // per_round))  # at least 14 matches of the doomed bot
    with_c = [s.match_id for s in specs if c in s.seats]
    workers.thread("w", concurrency=1, max_deferral_s=120.0, **HEALTH)
    wait_until(lambda: _stored_with(store, specs, c), "a first match of the doomed bot")
    doomed.process.kill()
    doomed.process.wait()
    port = int(doomed.endpoint.rsplit(":", 1)[1])
    played_before_kill = set(_stored_with(store, specs, c))

    # after 3 failed matches it is unhealthy; the rest of its matches are deferred, the others all played
    health = wait_until(lambda: (h := store.bot_health("take5", [c])[c]) and not h.healthy and h,
                        "the doomed bot to be marked unhealthy")
    assert health.failures == 3 and health.since is not None and "in match t1-" in health.reason
    assert health.reason.startswith(("forfeited", "answered no call"))
    others = [s.match_id for s in specs if c not in s.seats]
    wait_until(lambda: all(store.has_result("take5", m) for m in others), "the healthy bots' matches")
    left = [m for m in with_c if not store.has_result("take5", m)]
    wait_until(lambda: store.deferred_count("take5") == len(left), f"{len(left)} matches to be deferred")
    time.sleep(1.0)  # several bot checks: the bot stays unhealthy, nothing more is played against it
    assert [m for m in with_c if not store.has_result("take5", m)] == left
    info = store.get_tournament(specs[0].tournament)
    assert info is not None and info.state == "running" and info.matches_done == len(specs) - len(left)
    played_dead = [m for m in _stored_with(store, specs, c) if m not in played_before_kill]
    failed = [m for m in _stored_with(store, specs, c) if _failed_seats(store, m, c)]
    assert len(failed) == 3  # bounded by unhealthy_after (one match at a time), not ~all of its matches
    assert len(played_dead) <= 4  # at most the match it was playing when killed, and the 3 failed ones
    assert len(left) >= 5  # ... while this many of its matches were still to come (of 14: a few may be played
    # between its first stored match and the kill)

    # restarted at the same endpoint: healthy again at the next check, its deferred matches played
    start_bot("sample:random", port=port)
    info = wait_until(lambda: (t := store.get_tournament(specs[0].tournament)) and t.state == "finished" and t,
                      "the tournament to finish")
    assert (info.matches_done, info.matches_failed, info.matches_cancelled) == (len(specs), 0, 0)
    assert store.deferred_count("take5") == 0
    assert store.bot_health("take5", [c])[c].healthy and store.bot_health("take5", [c])[c].failures == 0
    for m in left:
        result = store.get_result("take5", m)
        assert result is not None and result["faults"] == [0, 0], (m, result)
    assert store.check_ladder("take5").equal


def test_a_bot_killed_with_matches_in_flight_has_the_rest_deferred_not_forced(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """Killed while 4 of its matches run at once: those in flight fail (or were played through before the kill,
    and are stored after the failures); the rest wait for it, none forced by a false recovery (a review: every
    remaining match forfeited within seconds)."""
    (a, b, c), (_, _, doomed) = _register(store, start_bot, ["calm", "steady", "fragile"])
    specs = _tournament(store, [a, b, c], rounds=12)
    with_c = [s.match_id for s in specs if c in s.seats]
    workers.thread("w", concurrency=4, max_deferral_s=120.0, **HEALTH)
    wait_until(lambda: len(_stored_with(store, specs, c)) >= 2, "two matches of the bot to be killed")
    doomed.process.kill()
    doomed.process.wait()
    wait_until(lambda: not store.bot_health("take5", [c])[c].healthy, "the killed bot to be marked unhealthy")
    others = [s.match_id for s in specs if c not in s.seats]
    wait_until(lambda: all(store.has_result("take5", m) for m in others), "the other bots' matches")
    time.sleep(1.0)  # several bot checks
    health = store.bot_health("take5", [c])[c]
    assert not health.healthy and health.recovered_at is None, health  # never taken for healthy again
    def unplayed() -> list[str]:
        return [m for m in with_c if not store.has_result("take5", m)]

    wait_until(lambda: store.deferred_count("take5") == len(unplayed()), "its unplayed matches to be deferred")
    assert len(unplayed()) >= 5  # of its 24 (how many it played before the kill varies): none, when forced at once
    failed = [m for m in _stored_with(store, specs, c) if _failed_seats(store, m, c)]
    assert len(failed) <= 3 + 2 * 4  # the run that marks it, each in-flight match played through restarting it


def test_a_bot_that_never_comes_back_forfeits_its_deferred_matches_after_the_cap(
        store: Store, start_bot: Callable[..., Any], workers: Any, caplog: pytest.LogCaptureFixture,
        dead_endpoint: str) -> None:
    caplog.set_level(logging.INFO, logger="arena")
    (a, b), _ = _register(store, start_bot, ["steady", "solid"])
    c = store.register_bot("take5", "gone", dead_endpoint, version="1").bot_id  # its process is gone for good
    specs = _tournament(store, [a, b, c], rounds=2)  # 12 matches, 8 with the absent bot
    with_c = [s.match_id for s in specs if c in s.seats]
    workers.thread("w", concurrency=1, max_deferral_s=1.0, **HEALTH)
    info = wait_until(lambda: (t := store.get_tournament(specs[0].tournament)) and t.state == "finished" and t,
                      "the tournament to finish although a bot never came back")
    assert (info.matches_done, info.matches_failed) == (len(specs), 0)
    deferred = {r.getMessage().split()[1] for r in caplog.records if "deferred: bot" in r.getMessage()}
    forced = {r.getMessage().split()[1] for r in caplog.records if "queued again, forced" in r.getMessage()}
    assert deferred == forced and len(forced) == len(with_c) - 3
    assert not store.bot_health("take5", [c])[c].healthy
    for m in with_c:  # the absent bot forfeits each match, ranked last; its opponent never loses rating to it
        result = store.get_result("take5", m)
        assert result is not None
        seat = result["seats"].index(c)
        assert _record(store, m).result.forfeits[seat] == "faults"
        assert result["ranks"][seat] == 2 and result["ranks"][1 - seat] == 1
        assert result["deltas"][1 - seat] > 0
    assert store.check_ladder("take5").equal


def test_a_match_in_which_every_seat_failed_charges_nobody(
        store: Store, workers: Any, dead_endpoint: str) -> None:
    """Both seats unreachable, five times: that looks like our own network (or an overloaded worker), not two dead
    bots; nobody is marked, and the matches, stored, are not rated (forfeited seats share the last rank: rated, each
    would count as a draw, and pull the seats' ratings together)."""
    bots = [store.register_bot("take5", n, dead_endpoint, version="1").bot_id for n in ("x", "y")]
    specs = [MatchSpec(match_id=f"both-{i}", game="take5", seats=tuple(bots), seed=i, config=dict(ONE_HAND))
             for i in range(5)]
    scheduler.enqueue_matches(store, specs)
    workers.thread("w", concurrency=1, **HEALTH)
    wait_until(lambda: all(store.has_result("take5", s.match_id) for s in specs), "the five matches")
    assert all(r == ["forfeited (faults)"] * 2 for r in (seat_failures(_record(store, s.match_id)) for s in specs))
    assert all(h.healthy and h.failures == 0 for h in store.bot_health("take5", bots).values())
    assert not {e.bot for e in store.ladder("take5")} & set(bots)


def test_a_tournament_match_in_which_every_seat_failed_is_void(store: Store, workers: Any,
                                                               dead_endpoint: str) -> None:
    """In a tournament too, such a match is void: stored and settled (the tournament finishes), its result says so,
    and it is in no standings (it would count as a draw for each bot) nor in the tournament's fit."""
    bots = [store.register_bot("take5", n, dead_endpoint, version="1").bot_id for n in ("x", "y")]
    specs = _tournament(store, bots, rounds=3)
    workers.thread("w", concurrency=1, **HEALTH)
    wait_until(lambda: all(store.has_result("take5", s.match_id) for s in specs), "the three matches")
    tid = specs[0].tournament
    results = [store.get_result("take5", s.match_id) for s in specs]
    assert all(r is not None and r.get("void") is True and r.get("rated") is False for r in results), results
    assert store.tournament_tally("take5", tid) == {}
    info = store.get_tournament(tid)
    assert info is not None and info.matches_done == 3 and info.state == "finished", info
    assert fit_results(store.list_matches(tournament_id=tid, limit=10), tid) is None  # nothing to fit


def test_a_match_interrupted_by_our_crash_charges_the_bots_nothing(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """A worker SIGKILLed mid-match: the match is played again from scratch by another worker; the stored record
    is the re-run's, with no fault and no forfeit, and the bots' health counts nothing against them."""
    bots = []
    for name in ("slow-a", "slow-b"):
        bot = start_bot(SLOW_BOT, extra_args=["--sleep", "0.15"])  # ~2 s a one-hand match
        bots.append(store.register_bot("take5", name, bot.endpoint, version=UNVERIFIED).bot_id)
    spec = MatchSpec(match_id="crash-1", game="take5", seats=tuple(bots), seed=3, config=dict(ONE_HAND))
    doomed = workers.process("doomed", concurrency=1, visibility_timeout_s=1.0, heartbeat_s=0.2)
    wait_until(lambda: any(w.name == "doomed" for w in store.list_workers()), "the doomed worker's heartbeat")
    scheduler.enqueue_matches(store, [spec])
    wait_until(lambda: any(w.running == ("crash-1",) for w in store.list_workers() if w.name == "doomed"),
               "the doomed worker to start the match")
    time.sleep(0.6)  # StartMatch done, a few Decide calls answered
    doomed.kill()
    killed_at = time.time()
    assert not store.has_result("take5", "crash-1")
    workers.thread("rescuer", concurrency=1, visibility_timeout_s=1.0, heartbeat_s=0.2, **HEALTH)
    wait_until(lambda: store.has_result("take5", "crash-1"), "the match to be played again")
    result = store.get_result("take5", "crash-1")
    record = _record(store, "crash-1")
    assert result is not None and result["worker"] == "rescuer" and result["faults"] == [0, 0]
    assert record.started_at > killed_at  # the re-run's record, played from the start
    assert record.faults == () and list(record.result.forfeits) in ([], [None, None])
    assert [d["seq"] for d in record.decisions if d["seat"] == 0][:3] == [0, 1, 2]
    assert all(h.healthy and h.failures == 0 for h in store.bot_health("take5", bots).values())
    assert store.client.llen("arena:{take5}:results") == 1


def test_bot_list_shows_each_bot_s_health(store: Store, arena_server: Any, dead_endpoint: str) -> None:
    from click.testing import CliRunner

    from arena.cli.app import cli
    from arena.cli.bot import _health_text
    from arena_sdk.pb import arena_pb2

    server, stub = arena_server(verify_bots=False)
    for name in ("fine", "shaky", "sick"):
        store.register_bot("take5", name, dead_endpoint, version="1")
    store.record_match_health("take5", "m1", {"shaky@1": "answered no call (timeout) in match m1", "fine@1": None,
                                              "sick@1": "forfeited (faults) in match m1"}, unhealthy_after=2, now=1e9)
    store.record_match_health("take5", "m2", {"sick@1": "forfeited (timeouts) in match m2", "fine@1": None},
                              unhealthy_after=2, now=1e9 + 5)
    by_id = {b.bot_id: b for b in stub.ListBots(arena_pb2.ListBotsRequest(game="take5")).bots}
    assert [(by_id[b].health, by_id[b].consecutive_failures) for b in ("fine@1", "shaky@1", "sick@1")] == [
        ("healthy", 0), ("healthy", 1), ("unhealthy", 2)]
    assert (by_id["sick@1"].unhealthy_since, by_id["sick@1"].health_reason) == (
        1e9 + 5, "forfeited (timeouts) in match m2")
    assert by_id["shaky@1"].unhealthy_since == 0 and by_id["shaky@1"].health_reason == ""

    result = CliRunner().invoke(cli, ["bot", "list", "--json", "--no-check", "--server", f"127.0.0.1:{server.port}"])
    assert result.exit_code == 0, result.output
    health = {b["bot_id"]: b["health"] for b in json.loads(result.output)}
    assert health["sick@1"] == {"state": "unhealthy", "consecutive_failures": 2, "unhealthy_since": 1e9 + 5,
                                "reason": "forfeited (timeouts) in match m2"}
    assert [_health_text(health[b]) for b in ("fine@1", "shaky@1")] == [
        "healthy", "failing: 1 failed match in a row"]
    assert _health_text(health["sick@1"]).startswith("unhealthy since 2001-09-")
    assert _health_text(health["sick@1"]).endswith(": forfeited (timeouts) in match m2")

    assert store.mark_healthy("take5", "sick@1") and not store.mark_healthy("take5", "sick@1")
    sick = store.bot_health("take5", ["sick@1"])["sick@1"]
    assert sick.healthy and sick.failures == 0 and sick.last_failure == "forfeited (timeouts) in match m2"


def test_a_deferred_job_is_parked_once_and_comes_back_with_its_history(store: Store) -> None:
    """Deferral takes the job off the stream and parks it in one step; a release puts it back once (a second
    release by another worker does nothing); its first deferral time and its earlier deliveries travel with it."""
    spec = MatchSpec(match_id="m-1", game="take5", seats=("a@1", "b@1"), seed=1)
    scheduler.enqueue_matches(store, [spec])
    store.read_jobs("w1", 1, 100)
    (job,) = store.reclaim_jobs("w2", 1, 0)  # delivered a second time: the first worker may have started it
    assert store.defer_job("take5", job.entry_id, "m-1", job.fields, deliveries=job.deliveries, now=100.0) == 1
    assert store.defer_job("take5", job.entry_id, "m-1", job.fields, deliveries=job.deliveries) == 0  # settled
    assert store.queued_jobs() == 0 and store.pending_jobs() == 0
    (parked,) = store.deferred_matches("take5")
    assert (parked.match_id, parked.deferred_at, parked.spec) == ("m-1", 100.0, spec)
    assert parked.fields["earlier_deliveries"] == "1"
    assert store.release_deferred("take5", "m-1", forced=True) and not store.release_deferred("take5", "m-1")
    (again,) = store.read_jobs("w3", 5, 100)
    assert again.spec == spec and again.deliveries == 1
    assert (again.fields["forced"], again.fields["deferred_at"], again.fields["earlier_deliveries"]) == (
        "1", "100.0", "1")
    # deferred again (a forced job is not, by the workers; here by hand): the first deferral time and history stay
    assert store.defer_job("take5", again.entry_id, "m-1", again.fields, deliveries=2, now=200.0) == 1
    (parked,) = store.deferred_matches("take5")
    assert parked.deferred_at == 100.0 and parked.fields["earlier_deliveries"] == "2"
    assert "forced" not in parked.fields and store.deferred_count() == 1


def test_the_deferred_matches_of_a_removed_bot_are_played_at_once(
        store: Store, start_bot: Callable[..., Any], workers: Any, dead_endpoint: str) -> None:
    """Nothing to wait for: a removed bot cannot answer again, so its deferred matches are forced at the next check
    (it forfeits them, as an unregistered seat), long before the cap."""
    live = store.register_bot("take5", "live", start_bot("sample:random").endpoint, version=UNVERIFIED).bot_id
    dead = store.register_bot("take5", "dead", dead_endpoint, version="1").bot_id
    specs = [MatchSpec(match_id=f"r-{i}", game="take5", seats=(live, dead), seed=i, config=dict(ONE_HAND))
             for i in range(5)]
    scheduler.enqueue_matches(store, specs)
    workers.thread("w", concurrency=1, max_deferral_s=600.0, **HEALTH)
    wait_until(lambda: store.deferred_count("take5") == 2, "two matches deferred after three failed ones")
    assert not store.bot_health("take5", [dead])[dead].healthy
    store.remove_bot("take5", "dead")
    wait_until(lambda: all(store.has_result("take5", s.match_id) for s in specs), "every match played", timeout=30)
    assert store.deferred_count("take5") == 0
    assert all(store.get_result("take5", s.match_id)["ranks"] == [1, 2] for s in specs)  # type: ignore[index]


def test_deliveries_before_a_deferral_count_towards_max_deliveries(
        store: Store, workers: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A job whose workers kept dying is given up after max_deliveries in all, a deferral in between or not."""
    caplog.set_level(logging.WARNING, logger="arena.worker.loop")
    scheduler.enqueue_matches(store, [MatchSpec(match_id="p-1", game="take5", seats=("a@1", "b@1"), seed=1)])
    (job,) = store.read_jobs("gone", 1, 100)
    assert store.defer_job("take5", job.entry_id, "p-1", job.fields, deliveries=4) == 1  # 3 deliveries before
    assert store.release_deferred("take5", "p-1")
    workers.thread("w", concurrency=1, max_deliveries=3, **HEALTH)
    wait_until(lambda: store.queued_jobs() == 0 and store.pending_jobs() == 0, "the job to be settled")
    assert not store.has_result("take5", "p-1")
    assert any("p-1" in r.getMessage() and "delivered 4 times" in r.getMessage() for r in caplog.records)


def test_deferral_times_are_the_redis_servers_so_a_worker_clock_ahead_forces_nothing(
        store: Store, dead_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker whose clock runs 700 s ahead of another's used to force, at its first check, the matches the other
    had just deferred (the 600 s cap compared two machines' clocks): both sides now read the Redis server's."""
    import asyncio

    from arena.worker.health import check_bots

    sick = store.register_bot("take5", "sick", dead_endpoint, version="1").bot_id
    store.mark_unhealthy("take5", sick, "forfeited (timeouts) in match x")
    spec = MatchSpec(match_id="skew-1", game="take5", seats=(sick, "other@1"), seed=1)
    scheduler.enqueue_matches(store, [spec])
    (job,) = store.read_jobs("w1", 1, 100)
    assert store.defer_job("take5", job.entry_id, "skew-1", job.fields) == 1
    (parked,) = store.deferred_matches("take5")
    assert abs(parked.deferred_at - store.server_time()) < 5
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 700)  # this worker's clock, 700 s ahead
    report = asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=0.5))
    assert report.forced == 0 and [m.match_id for m in store.deferred_matches("take5")] == ["skew-1"]


def test_the_cap_counts_from_when_the_bots_became_unhealthy_so_later_rounds_wait_for_no_second_cap(
        store: Store, dead_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Swiss round paired after a bot died used to wait a whole cap again (each match's own deferral time): a
    match deferred now, whose unhealthy bots have all been unhealthy for the cap, is forced at the next check; one
    that also seats a bot unhealthy only since now waits. The time a bot became unhealthy is the Redis server's too:
    a worker whose clock runs 700 s behind, counting the failure that makes it unhealthy, forces nothing."""
    import asyncio

    from arena.worker.health import check_bots

    dead = store.register_bot("take5", "dead", dead_endpoint, version="1").bot_id
    fresh = store.register_bot("take5", "fresh", dead_endpoint, version="1").bot_id
    late = store.register_bot("take5", "late", dead_endpoint, version="1").bot_id
    store.mark_unhealthy("take5", dead, "forfeited (unreachable) in match x", now=store.server_time() - 601)
    store.mark_unhealthy("take5", fresh, "forfeited (unreachable) in match y")
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() - 700)  # this worker's clock, 700 s behind
    for i in range(3):  # the third failure in a row makes it unhealthy
        store.record_match_health("take5", f"late-{i}", {late: "forfeited (unreachable)"}, unhealthy_after=3)
    monkeypatch.setattr(time, "time", real)
    specs = [MatchSpec(match_id="r6-1", game="take5", seats=(dead, "other@1"), seed=1),
             MatchSpec(match_id="r6-2", game="take5", seats=(dead, fresh), seed=2),
             MatchSpec(match_id="r6-3", game="take5", seats=(late, "other@1"), seed=3)]
    scheduler.enqueue_matches(store, specs)
    for job in store.read_jobs("w1", 3, 100):
        assert store.defer_job("take5", job.entry_id, job.spec.match_id, job.fields) == 1
    report = asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=0.5))
    assert report.forced == 1
    assert sorted(m.match_id for m in store.deferred_matches("take5")) == ["r6-2", "r6-3"]


def test_a_bot_unhealthy_again_within_the_cap_of_its_recovery_gets_no_second_wait(
        store: Store, dead_endpoint: str) -> None:
    """A bot that answers GetInfo for a while after each run of failed matches, then fails again (a review's
    "flipper", in a Swiss tournament: every run cost a whole cap): unhealthy again less than the cap after it
    recovered, its matches are forced at the next check; a bot whose recovery was longer ago than the cap waits."""
    import asyncio

    from arena.worker.health import check_bots

    now = store.server_time()
    flipper = store.register_bot("take5", "flipper", dead_endpoint, version="1").bot_id
    honest = store.register_bot("take5", "honest", dead_endpoint, version="1").bot_id
    for bot, recovered in ((flipper, now - 100), (honest, now - 700)):
        store.mark_unhealthy("take5", bot, "forfeited (timeouts) in match x", now=recovered - 50)
        assert store.mark_healthy("take5", bot, now=recovered)
        store.mark_unhealthy("take5", bot, "forfeited (timeouts) in match y", now=now)
    specs = [MatchSpec(match_id=f"sw-{bot}", game="take5", seats=(bot, "other@1"), seed=1)
             for bot in (flipper, honest)]
    scheduler.enqueue_matches(store, specs)
    for job in store.read_jobs("w1", 2, 100):
        assert store.defer_job("take5", job.entry_id, job.spec.match_id, job.fields) == 1
    report = asyncio.run(check_bots(store, ["take5"], max_deferral_s=600, probe_timeout_s=0.5))
    assert report.forced == 1
    assert [m.match_id for m in store.deferred_matches("take5")] == [f"sw-{honest}"]


def test_another_bot_on_a_registered_bots_port_is_found_before_it_plays_under_its_name(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """A bot dies between matches and another bot (another name) starts on its port: the worker's channel
    reconnects by itself, so the worker asks GetInfo again on that connection before the next match: the bot is
    unhealthy, "not as registered", and its matches are deferred, never played (and rated) under its name."""
    procs = {name: start_bot(VERSIONED_BOT, extra_args=["--bot-version", "1.0", "--name", name])
             for name in ("kept", "mate")}
    kept, mate = (store.register_bot("take5", name, p.endpoint, version="1.0", checked=True).bot_id
                  for name, p in procs.items())
    first = _tournament(store, [kept, mate], rounds=1)
    workers.thread("w", concurrency=1, max_deferral_s=120.0, **HEALTH)
    wait_until(lambda: all(store.has_result("take5", s.match_id) for s in first), "the first tournament")
    port = int(procs["kept"].endpoint.rsplit(":", 1)[1])
    procs["kept"].process.kill()
    procs["kept"].process.wait()
    start_bot(VERSIONED_BOT, port=port, extra_args=["--bot-version", "1.0", "--name", "squatter"])

    second = _tournament(store, [kept, mate], rounds=2)
    health = wait_until(lambda: (h := store.bot_health("take5", [kept])[kept]) and not h.healthy and h,
                        "the bot to be marked not as registered")
    assert health.reason.startswith("not as registered: ") and "squatter" not in health.reason
    wait_until(lambda: store.deferred_count("take5") == len(second), "its matches to be deferred")
    assert not any(store.has_result("take5", s.match_id) for s in second)
    assert {e.bot: e.matches for e in store.ladder("take5")} == {kept: len(first), mate: len(first)}


@contextlib.contextmanager
def _squatted_tournament(store: Store, start_bot: Callable[..., Any], workers: Any, script: str, rounds: int,
                         args: dict[str, list[str]], first: int = 1) -> Iterator[tuple[list[str], list[MatchSpec],
                                                                                          Any, str]]:
    """Bots "kept" (registered behind a ``SwitchForwarder``), "mate" and a squatter, started from ``script`` with
    ``args`` by role; a round robin of ``rounds`` rounds of kept and mate played by one worker until ``first``
    matches are stored. Yields (bot ids, specs, the forwarder, the squatter's endpoint)."""
    from platform_helpers import SwitchForwarder

    kept, mate, squatter = (start_bot(script, extra_args=args[role]) for role in ("kept", "mate", "squatter"))
    door = SwitchForwarder(kept.endpoint)
    try:
        ids = [store.register_bot("take5", "kept", door.endpoint, version="1.0", checked=True).bot_id,
               store.register_bot("take5", "mate", mate.endpoint, version="1.0", checked=True).bot_id]
        specs = _tournament(store, ids, rounds=rounds)
        workers.thread("w", concurrency=1, max_deferral_s=120.0, **HEALTH)
        wait_until(lambda: sum(store.has_result("take5", s.match_id) for s in specs) >= first, "first matches")
        yield ids, specs, door, squatter.endpoint
    finally:
        door.close()


def _versioned(think: str) -> dict[str, list[str]]:
    return {role: ["--bot-version", "1.0", "--name", role, "--think", think] for role in ("kept", "mate", "squatter")}


def _holding(store: Store, match_ids: list[str], word: str) -> list[str]:
    """Of the stored ``match_ids``, those whose record holds ``word`` (a bot's note on its decisions)."""
    return [m for m in match_ids if word in json.dumps(_record(store, m).to_dict())]


def test_a_bot_that_another_process_replaces_mid_tournament_is_caught_after_the_match_in_flight(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """Another bot takes a registered bot's address while its tournament plays, between two calls of a match (here a
    forwarder switches at once, as a fast restart can: the worker's channel reconnects within the call's deadline
    and no call fails). The connection that went tells the worker to ask GetInfo again after the match: the bot is
    unhealthy "not as registered" and its later matches are deferred, so only the match in flight (stored as
    played) holds decisions of the squatter."""
    with _squatted_tournament(store, start_bot, workers, VERSIONED_BOT, 8, _versioned("0.02")) as (
            ids, specs, door, squatter):
        time.sleep(0.1)  # within the next match
        door.switch(squatter)
        health = wait_until(lambda: (h := store.bot_health("take5", [ids[0]])[ids[0]]) and not h.healthy and h,
                            "the bot to be marked not as registered")
        assert health.reason.startswith("not as registered: "), health.reason
        wait_until(lambda: sum(store.has_result("take5", s.match_id) for s in specs) + store.deferred_count("take5")
                   == len(specs), "every match stored or deferred")
        stored = [s.match_id for s in specs if store.has_result("take5", s.match_id)]
        assert 2 <= len(stored) < len(specs)
        assert len(_holding(store, stored, "squatter")) <= 1  # the match in flight at the switch
        assert len(_holding(store, stored, '"kept"')) >= len(stored) - 1


@pytest.mark.parametrize("match_stream", [True, False])
def test_a_connection_that_goes_mid_match_is_told_to_the_pool(start_bot: Callable[..., Any],
                                                               match_stream: bool) -> None:
    """On both paths, a match during which a seat's connection went and came back at once (the match stream broke
    and was opened again; a unary call found the bot unreachable and got through when called again; the connection
    went between two matches, so the next call reconnected without any error) tells the worker's pool, which
    forgets the bot's GetInfo answer and moves its connection mark; a match without it moves nothing."""
    import asyncio

    from platform_helpers import SwitchForwarder

    from arena.match.channels import BotChannels
    from arena.match.options import RefereeOptions
    from arena.match.record import SeatSpec
    from arena.match.referee import run_match
    from arena_sdk.games import take5

    one_hand = take5.Take5Config(limit=1)
    think = ["--think", "0.1"]  # a call in flight nearly all the time: the switch drops one (unary path)
    bots = [start_bot(VERSIONED_BOT, extra_args=["--name", name, *think]) for name in ("a", "b", "c")]
    door = SwitchForwarder(bots[0].endpoint)
    seats = [SeatSpec("a", door.endpoint), SeatSpec("b", bots[1].endpoint)]
    options = RefereeOptions(deadline_ms=2000, match_stream=match_stream)

    async def play(switch: str) -> tuple[tuple[int, int], Any]:
        pool = BotChannels()
        try:
            await run_match("warm", "take5", seats, one_hand, seed=1, options=options, channels=pool)
            before = pool.connection_marks([door.endpoint])[door.endpoint]
            if switch == "idle":  # no call in flight: the match's first call reconnects without an error
                door.switch(bots[2].endpoint if door.target == bots[0].endpoint else bots[0].endpoint)
                await asyncio.sleep(0.2)
            match = asyncio.create_task(run_match("m", "take5", seats, one_hand, seed=2, options=options,
                                                  channels=pool))
            if switch == "mid":
                await asyncio.sleep(0.35)
                door.switch(bots[2].endpoint if door.target == bots[0].endpoint else bots[0].endpoint)
            record = await match
            lease = pool.lease(door.endpoint)
            info = lease.info
            pool.release(lease)
            after = pool.connection_marks([door.endpoint])[door.endpoint]
            return (before[1], after[1]) if before[0] == after[0] else (-1, -1), (record, info)
        finally:
            await pool.close()

    try:
        (lost_before, lost_after), (record, info) = asyncio.run(play(switch="none"))
        assert lost_after == lost_before and (info is not None or not match_stream)  # unary: GetInfo not asked
        for switch in ("mid", "idle"):
            (lost_before, lost_after), (record, info) = asyncio.run(play(switch=switch))
            assert lost_after > lost_before, switch
            assert info is None or switch == "idle"  # idle: the stream path asked GetInfo again at its start
            assert not record.faults  # got through at once: nobody was charged
    finally:
        door.close()


def test_a_match_during_which_a_bots_connection_drops_is_stored_as_played_never_dealt_again(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """A bot whose connection drops and comes back during its matches (here a forwarder drops it every 0.25 s; a bot
    losing near the end could do it on purpose, then answer GetInfo as registered) has every match stored as played,
    the first time: none is deferred to be dealt again, and the bot stays healthy."""
    with _squatted_tournament(store, start_bot, workers, VERSIONED_BOT, 4, _versioned("0.03")) as (
            ids, specs, door, _):
        deferred = 0
        while not all(store.has_result("take5", s.match_id) for s in specs):
            door.switch(door.target)  # the same bot, on a new connection
            for _ in range(10):
                deferred = max(deferred, store.deferred_count("take5"))
                time.sleep(0.025)
        assert deferred == 0
        assert store.bot_health("take5", [ids[0]])[ids[0]].healthy


@pytest.mark.parametrize("known_at_start", [True, False])
def test_a_bot_whose_getinfo_fails_after_its_last_answer_is_marked_only_if_it_failed_at_the_start_too(
        store: Store, dead_endpoint: str, known_at_start: bool) -> None:
    """A seat that answered decisions and whose GetInfo does not answer after the match (nothing listens there
    now): a bot known at the start whose connection went (an honest bot restarting after its last answer,
    which takes longer than the asks) is not marked; one whose GetInfo did not answer at the start either (a
    process that plays but will not say who it is) is marked "not as registered". The match is stored either way
    (``identities_after`` returns nothing to say otherwise)."""
    import asyncio
    from types import SimpleNamespace

    from arena.match.channels import BotChannels
    from arena.match.record import SeatSpec
    from arena.store import Job, MatchInputs
    from arena.worker.seating import identities_after

    bot = store.register_bot("take5", "ender", dead_endpoint, version="1", checked=True)
    spec = MatchSpec(match_id="end-1", game="take5", seats=(bot.bot_id, "other@1"), seed=1)
    inputs = MatchInputs(has_result=False, tournament_state=None, tournament_seed=None, unhealthy=[],
                         bots=[bot, None])
    seats = [SeatSpec(bot.bot_id, dead_endpoint), SeatSpec("other@1", "127.0.0.1:1")]
    # it answered a decision, and failed its last on purpose (a review's impostor did, to escape the mark)
    record = SimpleNamespace(decisions=[{"seat": 0, "source": "bot"}, {"seat": 1, "source": "default"},
                                        {"seat": 0, "source": "default"}])

    async def main() -> None:
        pool = BotChannels()
        try:
            lease = pool.lease(dead_endpoint)
            marks = pool.connection_marks([dead_endpoint])
            if known_at_start:
                BotChannels.connection_went(lease)  # the connection went during the match: its mark moved
            else:
                marks = {dead_endpoint: (-1, -1)}  # GetInfo did not answer before the match
            pool.release(lease)
            await identities_after(store, Job("1-0", spec), seats, inputs, pool, marks, 500, record)
        finally:
            await pool.close()

    asyncio.run(main())
    health = store.bot_health("take5", [bot.bot_id])[bot.bot_id]
    assert health.healthy is known_at_start, health
    if not known_at_start:
        assert health.reason == "not as registered: its GetInfo did not answer after a match whose decisions it answered"


def test_an_impostor_that_will_not_answer_getinfo_is_caught_after_its_first_whole_match(
        store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    """Another process takes a unary bot's address mid-tournament and answers GetInfo with an error (so it is never
    found "not as registered" by its answer), but plays: after a match that it started with no GetInfo answer and
    played through, still with none, the bot is marked "not as registered" and its next matches wait, so at most
    the match in flight, the next one and one whose reads were made ahead hold the impostor's decisions."""
    from platform_helpers import INFO_BOT

    args = {"kept": ["--name", "kept", "--note", "kept"], "mate": ["--name", "mate"],
            "squatter": ["--name", "kept", "--refuse-info", "--note", "squatter"]}
    with _squatted_tournament(store, start_bot, workers, INFO_BOT, 30, args, first=2) as (ids, specs, door, squatter):
        door.switch(squatter)
        health = wait_until(lambda: (h := store.bot_health("take5", [ids[0]])[ids[0]]) and not h.healthy and h,
                            "the bot to be marked not as registered")
        assert health.reason.startswith("not as registered: its GetInfo did not answer"), health.reason
        wait_until(lambda: store.deferred_count("take5") >= 2, "its next matches deferred")
        stored = [s.match_id for s in specs if store.has_result("take5", s.match_id)]
        assert 1 <= len(_holding(store, stored, "squatter")) <= 3


def test_a_registration_holds_the_name_and_version_only_when_it_checked_them(store: Store) -> None:
    """``BotEntry.checked``: written by the registration; a record from before the flag is checked unless its
    version is the unverified one."""
    from arena.store.keys import bot_key
    from arena.worker.health import registration_mismatch
    from arena_sdk.pb import bot_pb2

    other = bot_pb2.BotInfo(name="someone-else", version="9", games=["take5"])
    held = store.register_bot("take5", "held", "127.0.0.1:9", version="1.0", checked=True)
    loose = store.register_bot("take5", "loose", "127.0.0.1:9", version="1.0")
    assert store.get_bot("take5", "held@1.0").checked and not store.get_bot("take5", "loose@1.0").checked
    assert registration_mismatch(held, other)[0] == "changed" and registration_mismatch(loose, other) == ("", "")
    store.client.hdel(bot_key("take5", "held@1.0"), "checked")  # written before the flag existed
    assert store.get_bot("take5", "held@1.0").checked
    store.register_bot("take5", "old", "127.0.0.1:9")
    store.client.hdel(bot_key("take5", f"old@{UNVERIFIED}"), "checked")
    assert not store.get_bot("take5", f"old@{UNVERIFIED}").checked


def test_a_match_played_through_does_not_clear_not_as_registered(store: Store) -> None:
    """"Not as registered" clears only when GetInfo answers as registered again: a match that began before it was
    found, played through, leaves it; any other reason clears with such a match."""
    store.register_bot("take5", "swapped", "127.0.0.1:9", version="1.0", checked=True)
    store.register_bot("take5", "failing", "127.0.0.1:9", version="1.0", checked=True)
    store.mark_unhealthy("take5", "swapped@1.0", "not as registered: reports another name in GetInfo")
    for k in range(3):
        store.record_match_health("take5", f"x{k}", {"failing@1.0": "answered no call"}, unhealthy_after=3)
    assert not store.bot_health("take5", ["failing@1.0"])["failing@1.0"].healthy
    store.record_match_health("take5", "ok-1", {"swapped@1.0": None, "failing@1.0": None}, unhealthy_after=3)
    health = store.bot_health("take5", ["swapped@1.0", "failing@1.0"])
    assert not health["swapped@1.0"].healthy and health["swapped@1.0"].reason.startswith("not as registered: ")
    assert health["failing@1.0"].healthy


def test_a_match_that_started_before_the_bot_became_unhealthy_does_not_heal_it(store: Store) -> None:
    """A bot killed while it played 8 matches at once: a match it finished before dying, stored after those that
    failed since, told nothing of it now, yet it made the bot healthy (recovered_at), so the failure 0.3 s later was
    a relapse within the cap and every remaining match was forced at once (a review: 888 forfeits in 12 s). Such a
    match still ends a run of failures (a flaky bot's runs are as before); it heals only a bot that became unhealthy
    before the match started, its start taken on the same clock as ``since`` (now minus the match's length), so no
    worker's clock counts."""
    store.register_bot("take5", "dying", "127.0.0.1:9", version="1.0", checked=True)
    bot = "dying@1.0"
    for k, at in enumerate((1000.0, 1000.5)):
        store.record_match_health("take5", f"f{k}", {bot: "answered no call"}, unhealthy_after=2, now=at, length=3.0)
    health = store.bot_health("take5", [bot])[bot]
    assert not health.healthy and health.since == 1000.5
    # started at 997.3 (stored at 1001.3 after 4 s): before it became unhealthy
    assert store.record_match_health("take5", "ok-early", {bot: None}, unhealthy_after=2, now=1001.3,
                                     length=4.0) == {bot: 0}
    health = store.bot_health("take5", [bot])[bot]
    assert not health.healthy and health.recovered_at is None and health.failures == 0
    # started at 1005 (stored at 1010 after 5 s), after it became unhealthy: healthy again
    assert store.record_match_health("take5", "ok-after", {bot: None}, unhealthy_after=2, now=1010.0,
                                     length=5.0) == {bot: 2}
    health = store.bot_health("take5", [bot])[bot]
    assert health.healthy and health.failures == 0 and health.recovered_at == 1010.0
    # a length unknown: any match played through heals, as before
    for k, at in enumerate((1020.0, 1020.5)):
        store.record_match_health("take5", f"g{k}", {bot: "answered no call"}, unhealthy_after=2, now=at)
    assert store.record_match_health("take5", "ok-unknown", {bot: None}, unhealthy_after=2, now=1021.0) == {bot: 2}


def test_a_getinfo_answer_that_does_not_decode_is_no_identity(store: Store) -> None:
    """A bot answering GetInfo with bytes that are no BotInfo: the worker's check finds nothing (the match's own
    calls fault it), and the channel keeps no answer for the referee to read."""
    import asyncio
    from concurrent import futures

    import grpc

    from arena.match.channels import BotChannels
    from arena.match.record import SeatSpec
    from arena.worker.health import not_as_registered

    def junk(request: bytes, context: grpc.ServicerContext) -> bytes:
        return b"\xff\xff\xff"  # no BotInfo

    class Junk(grpc.GenericRpcHandler):
        def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
            return grpc.unary_unary_rpc_method_handler(junk) if details.method.endswith("/GetInfo") else None

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((Junk(),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    endpoint = f"127.0.0.1:{port}"
    bot = store.register_bot("take5", "garbled", endpoint, version="1.0", checked=True)

    async def check() -> tuple[dict[str, str], bool | None]:
        pool = BotChannels()
        try:
            found = await not_as_registered(pool, [SeatSpec("garbled@1.0", endpoint)], [bot], 2.0)
            lease = pool.lease(endpoint)
            stream = lease.serves_match_stream  # no answer kept: asked again by the referee, never an error
            pool.release(lease)
            return found, stream
        finally:
            await pool.close()

    try:
        assert asyncio.run(check()) == ({}, None)
    finally:
        server.stop(None)


def test_a_call_made_while_its_channel_is_not_ready_tells_of_a_new_connection(start_bot: Callable[..., Any]) -> None:
    """A connection lost between two calls of a match comes back with the next call, without any error: the call
    is made on a channel that is not READY, and that alone tells the pool (``BotCalls._check_connection``)."""
    import asyncio

    import grpc

    from arena.match.bot_calls import BotCalls
    from arena_sdk.pb import bot_pb2, bot_pb2_grpc

    bot = start_bot(VERSIONED_BOT, extra_args=["--name", "ready"])

    class Calls(BotCalls):
        def __init__(self, channel: Any) -> None:
            self.channels = [channel]
            self.went: list[int] = []

        def _connection_went(self, seat: int) -> None:
            self.went.append(seat)

    async def scenario() -> tuple[list[int], list[int]]:
        async with grpc.aio.insecure_channel(bot.endpoint) as channel:
            fresh = Calls(channel)
            fresh._check_connection(0)  # IDLE: the call would connect
            await bot_pb2_grpc.BotStub(channel).GetInfo(bot_pb2.GetInfoRequest(), timeout=10)
            ready = Calls(channel)
            ready._check_connection(0)  # READY: the connection the last call used
            return fresh.went, ready.went

    assert asyncio.run(scenario()) == ([0], [])
