"""The spy audit (issue 8 item 7; STYLE.md habits 3 and 14): spy bot processes (``tests/bots/spy_any_bot.py``: real
SDK bots of every registered game that answer at random and log every request they receive, raw) play seeded matches
of each game, in process (``arena.match.referee.run_match``, all seats spies, several matches at once) and in a tournament
per game through the real queue (Arena server with an embedded worker on the session's redis-server) while an
outsider polls every Arena read method and every web page and /api/ answer (``arena.web``, served beside the referee).
The checks (``spy_checks``) then re-simulate every match with the engine and
assert that no spy ever saw another seat's cards, the undealt cards or the draw pile, another seat's choice before the
reveal, which seat was asked about a +3 Breaker, a seed, the tournament secret, a token, or cards of a deal it had
received before; and that no read reply, web page or /api/ answer showed the secret, a deal or its seed while the deal was
in play, or a token.

This module is the same for every game: what the audit knows of one game (its hidden information, the matches that
exercise it, its tournament and the tests that its checks catch each leak) is that game's ``GameAuditor``, in
``tests/games/<game>/spy_auditor.py``, found by game id (``spy_checks.auditor_of``).

Sizes: ``ARENA_AUDIT_MATCHES`` seeded matches per game (default 200): a tournament's (the game's ``TournamentPlan``:
e.g. Take 5 two rounds of 20 matches, Taki one, per 200 matches), the rest in process; e.g. ``ARENA_AUDIT_MATCHES=2000 pytest -s tests/audit`` for a larger
run. With ``-s`` each test prints its counts, and the module the totals per game.

Every check can fail: the ``test_checker_*`` tests feed the checkers doctored logs and replies and a leaky engine
(each game's own cases too), a real ``--deals rotate`` tournament must be caught giving bots their deals twice, and the tournament test checks that
its own replies after the end (the revealed seed, deal seeds and records) would have been caught before it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import httpx2 as httpx  # the HTTP client the dev extra installs (starlette.testclient uses it too)
import pytest

from arena.match.options import RefereeOptions
from arena.match.record import MatchRecord
from arena.match.referee import run_match
from arena.store import Store
from arena.web.app import WebOptions
from arena.web.serving import WebServer
from arena_sdk import wire
from arena_sdk.games import GAMES
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

from .conftest import Spy
from .spy_checks import (
    AUDITORS,
    SEED_BASE,
    Counts,
    Forbidden,
    Plan,
    Reply,
    Run,
    audit_doctored,
    audit_match,
    by_match,
    deal_repeat_problems,
    first_call,
    registered_games_without_auditor,
    reply_problems,
)

MATCHES = int(os.environ.get("ARENA_AUDIT_MATCHES", "200"))  # per game: in process + through the queue
ROUNDS = max(1, MATCHES // 200)  # of each game's tournament, times its TournamentPlan.rounds
TOURNAMENTS = {game: (a.tournament.bots, a.tournament.seats, a.tournament.rounds * ROUNDS, a.tournament.config)
               for game, a in AUDITORS.items()}  # game -> (bots, seats per match, rounds, config)
TOURNAMENT_MATCHES = {game: math.comb(bots, seats) * rounds for game, (bots, seats, rounds, _c) in TOURNAMENTS.items()}
IN_PROCESS = {game: max(MATCHES - n, 1) for game, n in TOURNAMENT_MATCHES.items()}
CONCURRENCY = 8  # matches played at once in process
DEADLINE_MS = 5000  # generous: a busy machine must not turn answers into faults (default actions)
WAIT_S = 120.0  # a hang guard, not a speed requirement


def show(*parts: Any) -> None:
    print("[spy audit]", *parts, flush=True)


TOTALS: dict[str, Counts] = {}  # game -> everything the audit tests of this module looked at
READS = [0]  # read replies audited


@pytest.fixture(scope="module", autouse=True)
def total_summary() -> Any:
    """Lines after the module: every message, match and read reply the audit checked (shown with ``-s``)."""
    yield
    for game, counts in sorted(TOTALS.items()):
        show(f"total {game}: {counts}")
    show(f"total: {READS[0]} Arena read replies")


# --- in-process matches ----------------------------------------------------------------------------------------


def play_in_process(plans: list[Plan], fleet: list[Spy]) -> list[MatchRecord]:
    """Every plan played by the in-process referee against the spy processes (seat j of plan i: spy (i + j) mod
    fleet), ``CONCURRENCY`` matches at once in one event loop."""

    async def play_all() -> list[MatchRecord]:
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(i: int, plan: Plan) -> MatchRecord:
            seats = [fleet[(i + j) % len(fleet)].seat() for j in range(plan.seats)]
            async with gate:
                return await run_match(plan.match_id, plan.game, seats, plan.config, seed=plan.seed, deals=plan.deals,
                                       options=RefereeOptions(deadline_ms=DEADLINE_MS),
                                       seat_seeds=[SEED_BASE + 7919 * (i * 16 + j) for j in range(plan.seats)])

        return list(await asyncio.gather(*(one(i, p) for i, p in enumerate(plans))))

    return asyncio.run(play_all())


def collect(game: str, fleet: list[Spy], records: list[MatchRecord], forbidden: Forbidden, seconds: float,
            since: float = 0.0) -> Run:
    """The run's records and every call the spies logged for them (since ``since``: tournament match ids repeat
    from one test's Redis to the next)."""
    ids = {r.match_id for r in records}
    calls = [c for spy in fleet for c in spy.calls() if c.time >= since]
    matches = {mid: cs for mid, cs in by_match(calls).items() if mid in ids}
    others = [c for c in calls if c.method == "GetInfo"]
    return Run(game, records, matches, {s.name: s.secret for s in fleet}, forbidden, seconds, others)


def in_process_run(game: str, fleet: list[Spy]) -> Run:
    plans = AUDITORS[game].plans(IN_PROCESS[game])
    t0 = time.monotonic()
    records = play_in_process(plans, fleet)
    forbidden = Forbidden()
    for plan in plans:
        forbidden.add_int(plan.seed, f"the seed of match {plan.match_id}")
    return collect(game, fleet, records, forbidden, time.monotonic() - t0)


@pytest.fixture(scope="module")
def runs(spy_fleet: list[Spy]) -> Callable[[str], Run]:
    """``run_of(game)``: the game's in-process run (``IN_PROCESS`` matches against the fleet), played once."""
    played: dict[str, Run] = {}

    def run_of(game: str) -> Run:
        if game not in played:
            played[game] = in_process_run(game, spy_fleet)
        return played[game]

    return run_of


def audit_run(run: Run, counts: Counts) -> list[str]:
    rng = random.Random(11)
    problems = []
    for record in run.records:
        problems += audit_match(record, run.calls.get(record.match_id, []), run.forbidden, rng, run.secrets_of,
                                counts)
    return problems


def summary(problems: list[str], counts: Counts, what: str) -> str:
    head = f"spy audit, {what}: {counts}; {len(problems)} problems"
    return head + ("" if not problems else ":\n  " + "\n  ".join(problems[:20]))


# --- the audit, in process ------------------------------------------------------------------------------------


def test_every_registered_game_has_an_auditor() -> None:
    """A new game joins the audit by registering a ``GameAuditor`` (STYLE.md habit 13): until then this fails."""
    assert registered_games_without_auditor() == []
    assert set(AUDITORS) == set(GAMES)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_spies_see_only_their_own_view_in_process(game: str, runs: Callable[[str], Run]) -> None:
    """``IN_PROCESS`` seeded matches of the game, every seat a spy: every message every spy received is
    audited."""
    run = runs(game)
    t0 = time.monotonic()
    cpu = time.process_time()
    counts = Counts()
    problems = audit_run(run, counts)
    faults = sum(len(r.faults) for r in run.records)
    text = summary(problems, counts, f"{game} in process")
    show(f"{text} (played in {run.seconds:.1f} s, audited in {time.monotonic() - t0:.1f} s, "
         f"{time.process_time() - cpu:.1f} s CPU; {faults} faults)")
    TOTALS.setdefault(game, Counts()).add(counts)
    assert problems == [], text
    assert counts.matches == len(run.records) == IN_PROCESS[game], text
    assert counts.decisions == sum(d["seq"] is not None for r in run.records for d in r.decisions), text
    kinds = {d["kind"] for r in run.records for d in r.decisions}
    assert kinds == set(GAMES[game].info.decision_kinds), f"decision kinds not exercised: {kinds}"
    assert AUDITORS[game].run_problems(counts) == [], text


# --- a tournament through the queue, and every read method while it runs ----------------------------------------


class ReadPoller:
    """An outsider (no token) calling every read method of the Arena again and again from a thread; keeps each
    reply with the time it came back."""

    def __init__(self, address: str, game: str, bots: list[str]) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = arena_pb2_grpc.ArenaStub(self.channel)
        self.game = game
        self.bots = bots
        self.tournament = ""
        self.planned = 0
        self.rounds = 0
        self.replies: list[Reply] = []
        self.web: WebServer | None = None
        self.web_answers: list[WebAnswer] = []
        self.picked: list[str] = []
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.web_thread = threading.Thread(target=self._run_web, daemon=True)

    def call(self, method: str, request: Any, text: str = "") -> Any:
        try:
            message = getattr(self.stub, method)(request, timeout=10)
        except grpc.RpcError as exc:
            self.replies.append(Reply(method, text, time.time(), error=exc.details() or ""))
            return None
        self.replies.append(Reply(method, text, time.time(), message))
        return message

    def round(self) -> None:
        game, tid = self.game, self.tournament
        self.call("GetArenaInfo", arena_pb2.GetArenaInfoRequest())
        self.call("ListWorkers", arena_pb2.ListWorkersRequest())
        self.call("ListBots", arena_pb2.ListBotsRequest())
        self.call("ListBots", arena_pb2.ListBotsRequest(game=game), game)
        self.call("GetLadder", arena_pb2.GetLadderRequest(game=game), game)
        self.call("ListTournaments", arena_pb2.ListTournamentsRequest())
        self.call("ListTournaments", arena_pb2.ListTournamentsRequest(game=game), game)
        self.call("GetTournament", arena_pb2.GetTournamentRequest(id=tid), tid)
        self.call("GetStandings", arena_pb2.GetStandingsRequest(id=tid), tid)
        self.call("ListMatches", arena_pb2.ListMatchesRequest(limit=1000))
        self.call("ListMatches", arena_pb2.ListMatchesRequest(bot=self.bots[0], limit=1000), self.bots[0])
        listed = self.call("ListMatches", arena_pb2.ListMatchesRequest(tournament_id=tid, limit=1000), tid)
        ids = [m.match_id for m in listed.matches] if listed is not None else []
        self.rounds += 1
        picked = [ids[(self.rounds * 3 + j) % len(ids)] for j in range(min(3, len(ids)))] if ids else []
        picked.append(f"{tid}-{self.planned - 1:06d}")  # most likely not played yet: its NOT_FOUND text is read too
        for mid in picked:  # a few finished matches a round (all of them over the rounds), so rounds stay short
            self.call("GetMatch", arena_pb2.GetMatchRequest(match_id=mid), mid)
        self.picked = picked

    def web_round(self, match_ids: list[str]) -> None:
        """Every page and /api/ answer of the web app once (matches: those of ``match_ids``)."""
        assert self.web is not None
        game, tid, bot = self.game, self.tournament, self.bots[0]
        paths = ["/", "/api/", f"/ladder/{game}", f"/api/ladder/{game}", f"/ladder/{game}?method=fit", "/bots",
                 "/api/bots", f"/bots/{bot}", f"/api/bots/{bot}", "/tournaments", "/api/tournaments",
                 f"/tournaments/{tid}", f"/tournaments/{tid}/live", f"/api/tournaments/{tid}"]
        for mid in match_ids:
            paths += [f"/matches/{mid}", f"/api/matches/{mid}", f"/api/matches/{mid}/live",
                      f"/api/matches/{mid}/frames?view=all"]
        with httpx.Client(base_url=self.web.url().rstrip("/"), timeout=30) as client:
            for path in paths:
                answer = client.get(path)
                self.web_answers.append(WebAnswer(path, time.time(), answer.status_code, answer.text))

    def _run(self) -> None:
        while not self.stop_event.is_set():
            self.round()
            self.stop_event.wait(0.05)

    def _run_web(self) -> None:
        """The web pages in a thread of their own, so the read methods keep their pace."""
        while not self.stop_event.is_set():
            self.web_round(list(self.picked))
            self.stop_event.wait(0.05)

    def start(self) -> None:
        self.thread.start()
        if self.web is not None:
            self.web_thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(WAIT_S)
        self.round()  # once more after the end: the secret may be revealed now, tokens still never
        if self.web is not None:
            self.web_thread.join(WAIT_S)
            self.web_round(list(self.picked))
        self.channel.close()


@dataclass
class WebAnswer:
    """One answer of the web app to the outsider: its path, when it came back, status and body."""

    path: str
    at: float
    status: int
    text: str


def web_problems(answers: list[WebAnswer], reads: Forbidden) -> list[str]:
    """Forbidden texts (tokens, bot secrets, the tournament secret and deal seeds before their time) in web
    answers."""
    return [f"GET {a.path} ({a.status}) shows {label}" for a in answers for label in reads.check_text(a.text, a.at)]


@dataclass
class TournamentRun:
    """A tournament the spies played through the queue, what they logged, and what the outsider read meanwhile."""

    id: str
    matches_total: int
    records: list[MatchRecord]
    results: list[dict[str, Any]]
    secret: int
    finished_at: float
    seconds: float
    since: float
    replies: list[Reply]
    owner_tokens: dict[str, str]
    admin_token: str
    spies: list[Spy]
    web_answers: list[WebAnswer] = dataclasses.field(default_factory=list)

    def bot_of(self, record: MatchRecord, seat: int) -> str:
        return next(s.name for s in self.spies if s.endpoint == record.seats[seat].endpoint)

    def deal_ends(self) -> dict[int, float]:
        """Deal seed -> when the last table of that deal finished (stored)."""
        ends: dict[int, float] = {}
        for result in self.results:
            seed = int(result["seed"])
            ends[seed] = max(ends.get(seed, 0.0), float(result["stored_at"]))
        return ends


def play_tournament(game: str, spies: list[Spy], arena_server: Any, redis_url: str, seats: int, rounds: int,
                    config: Any, deals: str = "") -> TournamentRun:
    """Register the spies (each with its bot secret) with a new Arena server that has one embedded worker, create a
    round robin (organiser token), and poll every read method as an outsider until it has finished."""
    server, stub = arena_server(workers=1, concurrency=2)
    owner_tokens = {}
    for spy in spies:
        reply = stub.RegisterBot(arena_pb2.RegisterBotRequest(name=spy.name, endpoint=spy.endpoint, game=game,
                                                              bot_secret=spy.secret))
        owner_tokens[spy.name] = reply.owner_token
    poller = ReadPoller(f"127.0.0.1:{server.port}", game, [s.name for s in spies])
    poller.web = WebServer(WebOptions(server=f"127.0.0.1:{server.port}"), "127.0.0.1:0")
    poller.web.start()
    t0 = time.monotonic()
    since = time.time()
    tournament = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game=game, bots=[s.name for s in spies], seats_per_match=seats, rounds=rounds, deadline_ms=DEADLINE_MS,
        config=wire.config_to_proto(game, config), deals=deals))
    poller.tournament, poller.planned = tournament.id, tournament.matches_total
    poller.start()
    store = Store.from_url(redis_url)
    try:
        deadline = time.monotonic() + WAIT_S
        while (info := store.get_tournament(tournament.id)) is not None and info.state != "finished":
            assert time.monotonic() < deadline, f"the tournament did not finish: {info}"
            time.sleep(0.05)
        poller.stop()
        poller.web.stop()
        assert info is not None and info.matches_done == info.matches_total == tournament.matches_total
        results = store.list_matches(tournament_id=tournament.id, limit=100_000)
        records = []
        for result in results:
            raw = store.get_match_record(result["match_id"], game)
            assert raw is not None
            records.append(MatchRecord.from_dict(raw))
    finally:
        store.close()
    return TournamentRun(tournament.id, tournament.matches_total, sorted(records, key=lambda r: r.match_id),
                         results, int(info.seed), float(info.finished_at or time.time()), time.monotonic() - t0,
                         since, poller.replies, owner_tokens, server.admin_token, spies, poller.web_answers)


def read_checks(t: TournamentRun) -> tuple[Forbidden, Callable[[str, float], str | None]]:
    """What no read reply may show, and until when: the secret and every seat seed until the tournament finished,
    each deal's seed and records until its last table finished, tokens and bot secrets never."""
    reads = Forbidden()
    reads.add_int(t.secret, f"the secret of tournament {t.id}", until=t.finished_at)
    ends = t.deal_ends()
    for seed, end in ends.items():
        reads.add_int(seed, "the seed of a deal still in play", until=end)
    for record in t.records:  # every seat's seat seed: secret until the tournament has ended
        for k, value in enumerate(record.seat_seeds):
            reads.add_int(value, f"the seat seed of seat {k} of match {record.match_id}", until=t.finished_at)
    for name, token in t.owner_tokens.items():
        reads.add_text(token, f"the owner token of {name}")
    for spy in t.spies:
        reads.add_text(spy.secret, f"the bot secret of {spy.name}")
    reads.add_text(t.admin_token, "the admin token")
    deal_end = {r["match_id"]: ends[int(r["seed"])] for r in t.results}

    def live_record(match_id: str, at: float) -> str | None:
        end = deal_end.get(match_id)
        return f"its deal was still being played until {end - at:.2f} s later" if end and at < end else None

    return reads, live_record


@pytest.mark.parametrize("game", sorted(GAMES))
def test_spy_audit_of_a_tournament_and_every_read_method(game: str, spy_fleet: list[Spy], arena_server: Any,
                                                         redis_url: str) -> None:
    """A round robin of six spies (registered with their bot secrets) through the real queue: every message they
    received is audited as in process, with the tournament's secret, its deal seeds and every token forbidden; no
    spy receives a deal twice; and no reply of any read method, polled by an outsider while it runs, shows a
    secret."""
    nbots, seats, rounds, config = TOURNAMENTS[game]
    t = play_tournament(game, spy_fleet[:nbots], arena_server, redis_url, seats, rounds, config)

    # What each bot received: every message of every match; the secret, every deal seed and every token forbidden.
    forbidden = Forbidden()
    forbidden.add_int(t.secret, f"the secret of tournament {t.id}")
    for seed in t.deal_ends():
        forbidden.add_int(seed, "a deal seed of the tournament")
    for name, token in t.owner_tokens.items():
        forbidden.add_text(token, f"the owner token of {name}")
    forbidden.add_text(t.admin_token, "the admin token")
    run = collect(game, t.spies, t.records, forbidden, t.seconds, t.since)
    counts = Counts()
    problems = audit_run(run, counts)
    for call in run.other_calls:  # GetInfo (registration, health checks): nothing but the call
        problems += [f"{call.method} to {call.bot}: {p}" for p in forbidden.scan(call.message, walk=True)]
    repeats = deal_repeat_problems(t.records, t.bot_of, run.calls)

    # What the read methods showed while the tournament ran, and after.
    reads, live_record = read_checks(t)
    read_problems = reply_problems(t.replies, reads, live_record)
    during = [r for r in t.replies if r.at < t.finished_at]
    records_read = sum(bool(getattr(r.message, "record_json", "")) for r in during)
    after = [r for r in t.replies if r.at >= t.finished_at]
    # The same replies had they come before the end: the checker must see the revealed secret, seeds and records.
    revealed = reply_problems([dataclasses.replace(r, at=t.finished_at - 1.0) for r in after], reads, live_record)
    methods = sorted({r.method for r in t.replies})
    # What the web pages and /api/ showed while it ran and after; had the answers after the end come before it,
    # the revealed seed on the tournament's page must be caught.
    pages_problems = web_problems(t.web_answers, reads)
    pages_during = [a for a in t.web_answers if a.at < t.finished_at]
    pages_revealed = web_problems([dataclasses.replace(a, at=t.finished_at - 1.0) for a in t.web_answers
                                   if a.at >= t.finished_at], reads)
    pages_failed = [(a.path, a.status) for a in t.web_answers if a.status != 200 and "/matches/" not in a.path]

    listed_during = sum(bool(r.message is not None and getattr(r.message, "matches", None))
                        for r in during if r.method == "ListMatches")
    text = summary(problems, counts, f"{game} tournament {t.id}")
    show(f"{text}; {len(t.records)} matches through the queue in {t.seconds:.1f} s; deals received twice by a "
         f"bot: {len(repeats)}; {len(t.replies)} read replies of {len(methods)} methods, {len(during)} while it ran "
         f"({listed_during} listing finished matches, {records_read} with a record): {len(read_problems)} problems; "
         f"{len(t.web_answers)} web answers, {len(pages_during)} while it ran: {len(pages_problems)} problems")
    TOTALS.setdefault(game, Counts()).add(counts)
    READS[0] += len(t.replies)
    assert problems == [], text
    assert counts.matches == len(t.records) == t.matches_total == TOURNAMENT_MATCHES[game]
    assert counts.decisions == sum(d["seq"] is not None for r in t.records for d in r.decisions), text
    assert methods == ["GetArenaInfo", "GetLadder", "GetMatch", "GetStandings", "GetTournament", "ListBots",
                       "ListMatches", "ListTournaments", "ListWorkers"]
    assert sorted({r.method for r in during}) == methods, "not every read method was called while it ran"
    assert listed_during, "no read while the tournament ran saw a finished match of it"
    assert repeats == [], f"{len(repeats)} deals received twice by a bot: {repeats[:5]}"
    assert read_problems == [], f"{len(read_problems)} read replies leak: {read_problems[:10]}"
    assert pages_during, "no web page was read while the tournament ran"
    assert pages_failed == [], pages_failed[:10]
    assert pages_problems == [], f"{len(pages_problems)} web answers leak: {pages_problems[:10]}"
    assert any(f"the secret of tournament {t.id}" in p for p in pages_revealed), pages_revealed[:5]
    assert any(f"the secret of tournament {t.id}" in p for p in revealed), revealed[:5]
    assert any("the seed of a deal still in play" in p for p in revealed), revealed[:5]
    assert any("shows the record of match" in p for p in revealed), revealed[:5]
    assert all(len(r.seat_seeds) == len(r.seats) for r in t.records)  # the worker gave every seat its seed
    assert any("the seat seed of seat" in p for p in revealed), revealed[:5]


# --- every check can fail: doctored logs, replies and a leaky engine -----------------------------------------------


@pytest.mark.parametrize("game", sorted(GAMES))
def test_checker_catches_seeds_tokens_unknown_fields_and_metadata(game: str, runs: Callable[[str], Run]) -> None:
    run = runs(game)
    record, call, _ = first_call(run, lambda r, c, s, d: True)
    seed = record.seed
    assert seed is not None
    for doctor in ("sequence", "match_id"):
        leaked = bot_pb2.DecideRequest()
        leaked.CopyFrom(call.message)
        if doctor == "sequence":
            leaked.sequence = seed
        else:
            leaked.match_id = f"{record.match_id}-{seed:x}"
        problems = audit_doctored(run, record, call, call.doctored(leaked))
        assert any(f"the seed of match {record.match_id}" in p for p in problems), (doctor, problems)
    smuggled = dataclasses.replace(call, raw=call.raw + b"\xf8\x07\x05",
                                   message=bot_pb2.DecideRequest.FromString(call.raw + b"\xf8\x07\x05"))
    problems = audit_doctored(run, record, call, smuggled)
    assert any("unknown to the protocol" in p for p in problems), problems
    other = next(name for name in run.secrets_of if name != call.bot)
    overheard = dataclasses.replace(call, metadata=(*call.metadata, ("x-hint", run.secrets_of[other])))
    problems = audit_doctored(run, record, call, overheard)
    assert any(f"the bot secret of {other}" in p for p in problems), problems
    anonymous = dataclasses.replace(call, metadata=tuple(m for m in call.metadata if m[0] != "arena-bot-secret"))
    problems = audit_doctored(run, record, call, anonymous)
    assert any("does not carry its own bot secret" in p for p in problems), problems


@pytest.mark.parametrize("game", sorted(GAMES))
def test_checker_catches_a_leak_inside_the_engine(game: str, runs: Callable[[str], Run]) -> None:
    """The information-set check catches what no direct check names: a leaky ``observe`` (the referee sending
    exactly what it computes; the game auditor's ``leaky_observe``, e.g. another seat's hand hidden in a number
    field, or the draw pile's top card)."""
    run, auditor = runs(game), AUDITORS[game]
    record, call, state = first_call(run, auditor.can_leak)
    leaked = bot_pb2.DecideRequest()
    leaked.CopyFrom(call.message)
    getattr(leaked, game).CopyFrom(GAMES[game].view_to_proto(auditor.leaky_observe(state, call.message.seat)))
    problems = audit_doctored(run, record, call, call.doctored(leaked), observe=auditor.leaky_observe)
    assert any("depends on hidden information" in p for p in problems), (game, problems)


GAME_CASES = [(game, case) for game in sorted(AUDITORS) for case in AUDITORS[game].checker_cases()]


@pytest.mark.parametrize("game, case", GAME_CASES, ids=[f"{g}-{c}" for g, c in GAME_CASES])
def test_checker_catches_what_the_game_hides(game: str, case: str, runs: Callable[[str], Run]) -> None:
    """The game's own cases (``GameAuditor.checker_cases``): a doctored view showing what the game hides (another
    seat's card, an undealt or draw-pile card, a choice before the reveal, who was asked about a +3 Breaker) is
    caught and named."""
    AUDITORS[game].checker_cases()[case](runs(game))


@pytest.mark.parametrize("game", sorted(GAMES))
def test_checker_catches_a_deal_received_twice(game: str, runs: Callable[[str], Run]) -> None:
    run = runs(game)
    first, second = run.records[0], run.records[1]
    assert deal_repeat_problems([first, second], lambda r, s: "spy") == []
    replayed = dataclasses.replace(second, match_id="replayed", seed=first.seed, seats=first.seats,
                                   config=first.config, decisions=first.decisions)
    problems = deal_repeat_problems([first, replayed], lambda r, s: "spy")
    assert any(f"match {first.match_id} (seat 0) and match replayed" in p for p in problems), problems


def test_checker_catches_read_replies_that_leak() -> None:
    secret = random.Random(3).getrandbits(256)
    deal = SEED_BASE + 12345
    forbidden = Forbidden()
    forbidden.add_int(secret, "the tournament secret", until=100.0)
    forbidden.add_int(deal, "the seed of a deal still in play", until=50.0)
    forbidden.add_text("owner-token-0123456789", "an owner token")

    def live(match_id: str, at: float) -> str | None:
        return "its deal is still in play" if match_id == "t1-000001" and at < 50.0 else None

    record = json.dumps({"match_id": "t1-000001", "decisions": []})
    leaky = [
        Reply("ListMatches", "", 10.0, arena_pb2.ListMatchesResponse(
            matches=[arena_pb2.MatchSummary(match_id="t1-000000", seed=secret & (2**64 - 1))])),
        Reply("GetTournament", "t1", 10.0, arena_pb2.Tournament(id="t1", seed_hex=f"{secret:064x}")),
        Reply("ListMatches", "t1", 40.0, arena_pb2.ListMatchesResponse(
            matches=[arena_pb2.MatchSummary(match_id="t1-000001", seed=deal)])),
        Reply("GetMatch", "t1-000001", 40.0, arena_pb2.MatchDetail(record_json=record)),
        Reply("ListBots", "", 10.0, arena_pb2.ListBotsResponse(
            bots=[arena_pb2.BotRecord(name="spy0", author="owner-token-0123456789")])),
        Reply("GetMatch", "t1-000009", 10.0, error="no finished match; owner-token-0123456789"),
    ]
    expected = ["64 bits of the tournament secret", "the tournament secret", "the seed of a deal still in play",
                "shows the record of match t1-000001", "an owner token", "an owner token"]
    for reply, named in zip(leaky, expected):
        problems = reply_problems([reply], forbidden, live)
        assert problems and all(named in p for p in problems), (reply.method, problems)
    later = [dataclasses.replace(r, at=200.0) for r in leaky[:4]]  # revealed once it ended: allowed
    assert reply_problems(later, forbidden, live) == []


@pytest.mark.parametrize("game", sorted(GAMES))
def test_checker_catches_deals_seen_twice_in_a_rotate_tournament(game: str, spy_fleet: list[Spy], arena_server: Any,
                                                                   redis_url: str) -> None:
    """On real data: ``--deals rotate`` (trusted self-play only) deals every deal to the same bots once per seat
    rotation, so every bot receives each of its deals twice; the deal check must say so."""
    t = play_tournament(game, spy_fleet[:3], arena_server, redis_url, 2, 1, AUDITORS[game].tournament.config,
                        deals="rotate")
    assert len(t.records) == 6
    calls = {mid: cs for mid, cs in by_match(c for s in t.spies for c in s.calls() if c.time >= t.since).items()}
    repeats = deal_repeat_problems(t.records, t.bot_of, calls)
    show(f"rotate tournament {t.id}: {len(t.records)} matches, {len(repeats)} deals received twice by a bot")
    assert len(repeats) == 6 and all("received cards of one deal twice" in p for p in repeats), repeats
