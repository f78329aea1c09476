"""What ``arena tournament status`` reads beyond the tournament itself (whose its faults are, which tournaments it is
queued after) and the live progress of ``--watch`` (also ``tournament create --wait``)."""

from __future__ import annotations

import collections
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from arena.cli.app import POLL_INTERVAL_S, AppContext, ArenaClient, PlainLines, RefereeAway
from arena.cli.errors import interruption
from arena.cli.pages import every_page
from arena.cli.tournament_views import settled, swiss_paired, waiting_text
from arena.core.limits import MATCH_LIST
from arena_sdk.pb import arena_pb2

QUEUED_AFTER_READ = 500  # tournaments read at most to say what a running one is queued after
QUEUED_AFTER_ASKED = 10  # of those, the first ones asked how many of their matches are deferred


def queued_after(client: ArenaClient, t: Any) -> str:
    """The running tournaments of the same game created before running tournament ``t`` whose matches are not all
    played: the queue of a game is first in, first out, so theirs come first ("t7 (99,990 matches left)...");
    matches deferred for an unhealthy bot (``Tournament.matches_deferred``, asked of the first
    ``QUEUED_AFTER_ASKED`` such tournaments) are not in the queue and are not counted; "" when there is none (or
    ``t`` is not running)."""
    if t.state != "running":
        return ""
    listed = every_page(client, "ListTournaments", arena_pb2.ListTournamentsRequest(game=t.game, page_size=100),
                        "tournaments", most=QUEUED_AFTER_READ)
    before: list[str] = []
    for o in sorted(listed, key=lambda o: o.created_at):
        left = o.matches_total - o.matches_done - o.matches_cancelled - o.matches_failed
        if o.id != t.id and o.state == "running" and o.created_at < t.created_at and left > 0:
            if len(before) < QUEUED_AFTER_ASKED:  # its deferred matches wait outside the queue
                left -= client.call("GetTournament", arena_pb2.GetTournamentRequest(id=o.id)).matches_deferred
            if left > 0:
                before.append(f"{o.id} ({left:,} {'match' if left == 1 else 'matches'} left)")
    if not before:
        return ""
    return (", ".join(before) + ": the queue of a game is first in, first out, so their matches are played first "
            "(`arena tournament cancel ID` stops one)")


NO_WORKER = ("no worker is alive: its matches wait until one runs (`arena worker`, or `arena serve --workers N`; "
             "`arena worker list` shows them)")
WORKER_CHECK_S = 10.0  # while a watched tournament makes no progress, whether a worker is alive is asked this often


def no_worker(client: ArenaClient, t: Any) -> str:
    """``NO_WORKER`` while tournament ``t`` is running and no worker has sent a heartbeat lately (ListWorkers), else
    "" (also when the referee cannot say)."""
    if t.state != "running":
        return ""
    try:
        workers = client.call("ListWorkers", arena_pb2.ListWorkersRequest(page_size=100)).workers
    except Exception:  # noqa: BLE001 - a hint only: the status is shown without it
        return ""
    return "" if any(w.alive for w in workers) else NO_WORKER


FAULTED_NAMED = 5  # matches with a fault named by the status (newest first)


def faults_text(client: ArenaClient, t: Any) -> str:
    """The faults of tournament ``t``, and whose they are when there are any: "9: demo-montecarlo@1.0 9 (in
    t1-000088, t1-000084, ...; `arena match show ID` says what each fault was)" (from its newest ``MATCH_LIST``
    stored matches)."""
    if not t.faults:
        return "0"
    matches = every_page(client, "ListMatches", arena_pb2.ListMatchesRequest(
        tournament_id=t.id, limit=MATCH_LIST, page_size=MATCH_LIST), "matches", most=MATCH_LIST)
    by_bot: collections.Counter[str] = collections.Counter()
    for m in matches:
        for bot, n in zip(m.seats, m.faults, strict=False):
            by_bot[bot] += n
    whose = ", ".join(f"{bot} {n}" for bot, n in by_bot.most_common() if n)
    faulted = [m.match_id for m in matches if any(m.faults)]
    if not faulted:
        return f"{t.faults}"
    named = ", ".join(faulted[:FAULTED_NAMED]) + (", ..." if len(faulted) > FAULTED_NAMED else "")
    every = len(matches) < MATCH_LIST  # all of its matches read: the count is whole
    more = (f"; `arena match list --tournament {t.id} --faults` lists "
            + (f"all {len(faulted)}" if every else "them") if len(faulted) > FAULTED_NAMED or not every else "")
    return f"{t.faults}: {whose} (in {named}{more}; `arena match show ID` says what each fault was)"


class Stall:
    """Says ``NO_WORKER`` once (and again after a worker came and went) while a watched tournament has made no
    progress for ``WORKER_CHECK_S`` and no worker is alive."""

    def __init__(self, client: ArenaClient) -> None:
        self.client = client
        self.done = -1
        self.since = self.asked = time.monotonic()
        self.said = False

    def check(self, t: Any, say: Any) -> None:
        now = time.monotonic()
        done = t.matches_done + t.matches_failed
        if done != self.done:
            self.done, self.since, self.said = done, now, False
            return
        if self.said or now - self.since < WORKER_CHECK_S or now - self.asked < WORKER_CHECK_S:
            return
        self.asked = now
        text = no_worker(self.client, t)
        if text:
            say(text)
            self.said = True


def follow(app: AppContext, client: ArenaClient, t: Any, *, quiet: bool = False) -> Any:
    """Poll GetTournament every POLL_INTERVAL_S behind a rich progress bar until the tournament is settled
    (``settled``); returns the last Tournament. The bar counts finished and failed matches (failed ones are named
    beside the faults) out of matches_total (a Swiss's counts every round; the rounds paired so far are named beside
    it). Ctrl-C (or SIGTERM) stops watching (exit 130 / 143), the tournament keeps running on the server."""
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("matches · faults {task.fields[faults]}{task.fields[notes]}"), TimeElapsedColumn())
    console = Console(stderr=True) if quiet else app.console

    said = [""]

    def notes(t: Any) -> str:
        waiting = waiting_text(t)
        if waiting != said[0] and not quiet:  # said once, on a line of its own above the bar (whole at any width)
            said[0] = waiting
            progress.console.print(f"waiting for {waiting}" if waiting else "no bot to wait for any more")
        paired = swiss_paired(t)
        return ((f" · failed {t.matches_failed}" if t.matches_failed else "") + (" · waiting" if waiting else "")
                + (f" · {paired}" if paired else ""))

    try:
        with Progress(*columns, console=console, disable=quiet or not console.is_terminal) as progress:
            task = progress.add_task(f"tournament {t.id}", total=t.matches_total or None,
                                     completed=t.matches_done + t.matches_failed, faults=t.faults, notes=notes(t))
            away = RefereeAway(client)  # a referee restarting: the tournament goes on in Redis and the workers
            plain = PlainLines(console, quiet)  # output to a file or a pipe: a plain line now and then
            stalled = Stall(client)
            while not settled(t):
                stalled.check(t, progress.console.print if not quiet else lambda _text: None)
                plain.say(f"tournament {t.id}: {t.matches_done + t.matches_failed}/{t.matches_total} matches, "
                          f"faults {t.faults}" + (f", failed {t.matches_failed}" if t.matches_failed else "")
                          + (f", {paired}" if (paired := swiss_paired(t)) else "")
                          + (f" as last seen; {away.note}" if away.note else ""))
                time.sleep(POLL_INTERVAL_S)
                reply = away.ask("GetTournament", arena_pb2.GetTournamentRequest(id=t.id))
                if reply is None:
                    progress.update(task, notes=f" · {away.note}")
                    continue
                t = reply
                progress.update(task, completed=t.matches_done + t.matches_failed, faults=t.faults,
                                notes=notes(t), total=t.matches_total or None)
    except KeyboardInterrupt as exc:
        raise interruption(f"stopped watching; tournament {t.id} keeps running on the server "
                           f"(`arena tournament status {t.id} --watch` follows it, `arena tournament cancel {t.id}` "
                           f"stops it; running the create again makes a second one)", exc) from None
    return t
