"""`arena tournament status` says whose a tournament's faults are (``arena.cli.tournament_status.faults_text``), from
the per-seat fault counts of its stored matches, with the commands that say what each fault was, and which running
tournaments of its game it is queued after (``queued_after``)."""

from __future__ import annotations

from typing import Any

from arena.cli.tournament_status import faults_text, queued_after
from arena_sdk.pb import arena_pb2


class _Matches:
    """The one call ``faults_text`` makes: ListMatches of the tournament, one page."""

    def __init__(self, matches: list[arena_pb2.MatchSummary]) -> None:
        self.matches = matches
        self.asked: list[Any] = []

    def call(self, method: str, request: Any) -> arena_pb2.ListMatchesResponse:
        self.asked.append((method, request.tournament_id))
        return arena_pb2.ListMatchesResponse(matches=self.matches)


def _match(seats: list[str], faults: list[int], number: int = 1) -> arena_pb2.MatchSummary:
    return arena_pb2.MatchSummary(match_id=f"t4-{number:06d}", tournament_id="t4", seats=seats, faults=faults)


def test_the_faults_are_named_by_bot_most_first_with_the_matches_they_are_in() -> None:
    client = _Matches([_match(["a@1", "mc@1", "b@1"], [0, 4, 1], 3), _match(["a@1", "mc@1", "b@1"], [0, 0, 0], 2),
                       _match(["mc@1", "a@1", "b@1"], [5, 0, 0], 1)])
    text = faults_text(client, arena_pb2.Tournament(id="t4", faults=10))  # type: ignore[arg-type]
    assert text == "10: mc@1 9, b@1 1 (in t4-000003, t4-000001; `arena match show ID` says what each fault was)"
    assert "a@1" not in text and client.asked == [("ListMatches", "t4")]
    # past 5 matches with a fault, the first 5 are named and `match list --faults` lists them all
    many = [_match(["mc@1", "b@1"], [1, 0], n) for n in range(9, 0, -1)]
    text = faults_text(_Matches(many), arena_pb2.Tournament(id="t4", faults=9))  # type: ignore[arg-type]
    assert "(in t4-000009, t4-000008, t4-000007, t4-000006, t4-000005, ...; " in text
    assert "`arena match list --tournament t4 --faults` lists all 9;" in text


def test_no_faults_reads_nothing() -> None:
    client = _Matches([])
    assert faults_text(client, arena_pb2.Tournament(id="t4", faults=0)) == "0"  # type: ignore[arg-type]
    assert client.asked == []


def test_ctrl_c_while_the_arena_creates_a_tournament_says_it_may_exist() -> None:
    """The call may have reached the arena: "Aborted." left a tournament of 99,996 matches nobody knew of."""
    from types import SimpleNamespace

    import pytest

    from arena.cli.errors import ArenaInterrupted, ArenaTerminated, Terminated
    from arena.cli.tournament import _create_tournament

    for interrupt, error in ((KeyboardInterrupt, ArenaInterrupted), (Terminated, ArenaTerminated)):
        def create(request: Any, timeout: float, raised: type[BaseException] = interrupt) -> None:
            raise raised()

        client = SimpleNamespace(stub=SimpleNamespace(CreateTournament=create), server="127.0.0.1:1")
        with pytest.raises(error) as caught:
            _create_tournament(client, arena_pb2.CreateTournamentRequest())  # type: ignore[arg-type]
        assert "it may have been created all the same; `arena tournament list` shows it" in caught.value.message


class _Tournaments:
    """The calls ``queued_after`` makes: ListTournaments of the game, one page; GetTournament of earlier ones (their
    deferred matches: ``deferred``, by id)."""

    def __init__(self, tournaments: list[arena_pb2.Tournament], deferred: dict[str, int] | None = None) -> None:
        self.tournaments = tournaments
        self.deferred = deferred or {}

    def call(self, method: str, request: Any) -> Any:
        if method == "GetTournament":
            return arena_pb2.Tournament(id=request.id, matches_deferred=self.deferred.get(request.id, 0))
        assert method == "ListTournaments" and request.game == "take5"
        return arena_pb2.ListTournamentsResponse(tournaments=self.tournaments)


def _tournament(tid: str, created: float, total: int, done: int, state: str = "running") -> arena_pb2.Tournament:
    return arena_pb2.Tournament(id=tid, game="take5", state=state, created_at=created, matches_total=total,
                                matches_done=done)


def test_a_running_tournament_says_which_earlier_ones_its_matches_wait_behind() -> None:
    mine = _tournament("t8", 200.0, 2, 0)
    listed = [mine, _tournament("t9", 300.0, 5, 0), _tournament("t7", 100.0, 99_996, 6),
              _tournament("t6", 50.0, 10, 10), _tournament("t5", 40.0, 10, 2, "cancelled"),
              _tournament("t4", 30.0, 3, 1)]
    text = queued_after(_Tournaments(listed), mine)  # type: ignore[arg-type]
    assert text.startswith("t4 (2 matches left), t7 (99,990 matches left): the queue of a game is first in, first out")
    assert queued_after(_Tournaments(listed), _tournament("t3", 10.0, 2, 0)) == ""  # nothing before it
    assert queued_after(_Tournaments(listed), _tournament("t8", 200.0, 2, 2, "finished")) == ""
    # matches deferred for an unhealthy bot are not in the queue: not counted, and a tournament with no other
    # match left is not ahead at all
    text = queued_after(_Tournaments(listed, {"t4": 2, "t7": 90}), mine)  # type: ignore[arg-type]
    assert text.startswith("t7 (99,900 matches left): the queue"), text


class _Workers:
    """The one call ``no_worker`` makes: ListWorkers, one page."""

    def __init__(self, alive: list[bool]) -> None:
        self.alive = alive
        self.asked = 0

    def call(self, method: str, request: Any) -> arena_pb2.ListWorkersResponse:
        assert method == "ListWorkers"
        self.asked += 1
        return arena_pb2.ListWorkersResponse(workers=[arena_pb2.WorkerInfo(name=f"w{i}", alive=a)
                                                      for i, a in enumerate(self.alive)])


def test_a_running_tournament_without_a_live_worker_says_so_once_while_it_makes_no_progress(monkeypatch: Any) -> None:
    """`arena serve --workers 0` and no `arena worker`: status, create --wait and sprt said "running 0/N" for ever."""
    from arena.cli import tournament_status
    from arena.cli.tournament_status import NO_WORKER, Stall, no_worker

    running = _tournament("t8", 200.0, 10, 0)
    assert no_worker(_Workers([False, False]), running) == NO_WORKER  # type: ignore[arg-type]
    assert no_worker(_Workers([False, True]), running) == ""  # type: ignore[arg-type]
    assert no_worker(_Workers([]), _tournament("t8", 200.0, 10, 10, "finished")) == ""  # type: ignore[arg-type]

    clock = [0.0]
    monkeypatch.setattr(tournament_status.time, "monotonic", lambda: clock[0])
    client, said = _Workers([]), []
    stall = Stall(client)  # type: ignore[arg-type]
    for second in range(30):
        clock[0] = float(second)
        stall.check(running, said.append)
    assert said == [NO_WORKER] and client.asked == 1  # asked after 10 s without progress, said once
    stall.check(_tournament("t8", 200.0, 10, 1), said.append)  # a match was played: a worker came
    assert said == [NO_WORKER]


class _Paged:
    """ListMatches in pages of ``size`` of ``matches`` (newest first), with page tokens; counts the pages asked."""

    def __init__(self, matches: list[arena_pb2.MatchSummary], size: int) -> None:
        self.matches, self.size, self.pages = matches, size, 0
        self.server = "127.0.0.1:1"

    def call(self, method: str, request: Any) -> arena_pb2.ListMatchesResponse:
        self.pages += 1
        start = int(request.page_token or 0)
        end = start + self.size
        return arena_pb2.ListMatchesResponse(matches=self.matches[start:end],
                                             next_page_token=str(end) if end < len(self.matches) else "")


def test_match_list_faults_keeps_the_matches_that_charged_a_fault_to_the_bot_asked() -> None:
    """`arena match list --faults`: the tournament status named a command that listed 50 of a bot's 108 matches, none
    of the faulted ones among them (a newcomer review)."""
    from arena.cli.match import _faults_note, has_faults
    from arena.cli.pages import read_pages

    matches = [_match(["mc@1", "mc@2", "b@1"], faults, n) for n, faults in
               ((9, [0, 0, 0]), (8, [0, 2, 0]), (7, [0, 0, 1]), (6, [1, 0, 0]), (5, [0, 0, 0]), (4, [3, 0, 0]))]
    ids = {ref: [m.match_id[-1] for m in matches if has_faults(ref)(m)] for ref in (None, "mc", "mc@1", "b@1", "a")}
    assert ids == {None: ["8", "7", "6", "4"], "mc": ["8", "6", "4"], "mc@1": ["6", "4"], "b@1": ["7"], "a": []}

    request = arena_pb2.ListMatchesRequest(tournament_id="t4")
    client = _Paged(matches, 2)
    read = read_pages(client, "ListMatches", request, "matches", most=3, keep=has_faults("mc"))
    assert [m.match_id for m in read.entries] == ["t4-000008", "t4-000006", "t4-000004"]
    assert (read.read, read.more, client.pages) == (6, False, 3)  # the list read to its end: nothing more
    read = read_pages(_Paged(matches, 2), "ListMatches", request, "matches", most=2, keep=has_faults(None))
    assert [m.match_id for m in read.entries] == ["t4-000008", "t4-000007"] and read.more  # a third kept
    read = read_pages(_Paged(matches, 2), "ListMatches", request, "matches", most=9, keep=has_faults("b@1"),
                      read_most=4)
    assert [m.match_id for m in read.entries] == ["t4-000007"] and (read.read, read.more) == (4, True)
    assert _faults_note(1, False, True, 4).startswith("only the newest 4 matches were looked through for faults")
    assert _faults_note(2, True, False, 6).startswith("the newest 2 matches with a fault shown; `--limit N`")
    assert _faults_note(1, False, False, 6) == ""


def test_match_list_faults_of_a_removed_bot_without_faults_is_an_empty_list_not_an_unknown_bot() -> None:
    """A re-attack: `match list --bot random --faults` of a removed bot with 11 matches, none faulted, said "unknown
    bot random: no bot of that name is registered and no stored match has it"."""
    import pytest

    from arena.cli.errors import ArenaCliError
    from arena.cli.match import _check_known

    class _Removed:
        def __init__(self, played: bool) -> None:
            self.played = played

        def call(self, method: str, request: Any) -> Any:
            if method == "ListMatches":
                assert request.bot == "random" and request.limit == 1
                return arena_pb2.ListMatchesResponse(matches=[_match(["random@1.0", "b@1"], [0, 0])] * self.played)
            assert method == "ListBots"
            return arena_pb2.ListBotsResponse()  # not registered

    _check_known(_Removed(True), "random", faults_only=True)  # known by its matches: no error
    for played, faults_only in ((False, True), (True, False)):
        with pytest.raises(ArenaCliError, match="unknown bot random"):
            _check_known(_Removed(played), "random", faults_only)


def test_the_status_of_a_tournament_past_the_matches_it_reads_gives_no_count_of_its_faulted_ones() -> None:
    """A re-attack: the status reads the newest MATCH_LIST matches only, so "lists all N" could understate."""
    from arena.core.limits import MATCH_LIST

    matches = [_match(["mc@1", "b@1"], [1 if n == 5 else 0, 0], n) for n in range(MATCH_LIST, 0, -1)]
    text = faults_text(_Matches(matches), arena_pb2.Tournament(id="t4", faults=3))  # type: ignore[arg-type]
    assert "(in t4-000005; `arena match list --tournament t4 --faults` lists them; " in text, text


def test_match_list_faults_says_where_the_faults_kinds_are(monkeypatch: Any) -> None:
    """A cross-language review: `match list --faults` showed a count of faults per match and nothing of their
    kinds or where to read them; a line on stderr now names `arena match show` with the newest such match."""
    from click.testing import CliRunner

    from arena.cli import cli
    from arena.cli.app import AppContext

    matches = [_match(["mc@1", "b@1"], faults, n) for n, faults in ((9, [0, 0]), (8, [0, 2]), (7, [1, 0]))]
    monkeypatch.setattr(AppContext, "arena", lambda self, server: _Paged(matches, 2))
    listed = CliRunner().invoke(cli, ["match", "list", "--tournament", "t4", "--faults"])
    assert listed.exit_code == 0, listed.output
    assert "t4-000008" in listed.stdout and "t4-000009" not in listed.stdout
    assert "each fault's kind, turn and detail: `arena match show t4-000008`" in listed.stderr
    plain = CliRunner().invoke(cli, ["match", "list", "--tournament", "t4"])
    assert plain.exit_code == 0 and "arena match show" not in plain.stderr
