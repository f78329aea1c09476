"""A tournament's secret seed on real parts (real redis-server, real bot processes over gRPC, a real worker): no
read RPC shows the seed, a match's deal seed or a record while the tournament runs (a spy reads every answer of
every read method and searches it for them); the seed is revealed once the tournament has finished, or has been
cancelled with nothing left to deal; `arena tournament verify` then recomputes the commitment and every deal."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import grpc
from click.testing import CliRunner
from platform_helpers import SLOW_BOT, wait_until

from arena.cli import cli
from arena.core.seeds import deal_seed, seed_hex
from arena.store import Store
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2

ONE_HAND = bot_pb2.GameConfig(take5=bot_pb2.Take5Config(limit=1))  # a 2-seat match ends after one hand


def _every_read(stub: arena_pb2_grpc.ArenaStub, tid: str, match_ids: list[str]) -> list[str]:
    """The text form (decimal numbers, strings) and the raw bytes (hex) of the answer of every read method."""
    answers: list[Any] = [
        stub.GetTournament(arena_pb2.GetTournamentRequest(id=tid)),
        stub.ListTournaments(arena_pb2.ListTournamentsRequest()),
        stub.ListTournaments(arena_pb2.ListTournamentsRequest(game="take5")),
        stub.GetStandings(arena_pb2.GetStandingsRequest(id=tid)),
        stub.ListMatches(arena_pb2.ListMatchesRequest()),
        stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=tid, limit=1000)),
        stub.ListMatches(arena_pb2.ListMatchesRequest(bot="spy-a")),
        stub.ListBots(arena_pb2.ListBotsRequest()),
        stub.GetLadder(arena_pb2.GetLadderRequest(game="take5")),
        stub.ListWorkers(arena_pb2.ListWorkersRequest()),
        stub.GetArenaInfo(arena_pb2.GetArenaInfoRequest()),
    ]
    for mid in match_ids:
        try:
            answers.append(stub.GetMatch(arena_pb2.GetMatchRequest(match_id=mid)))
        except grpc.RpcError as exc:  # not played yet
            assert exc.code() == grpc.StatusCode.NOT_FOUND
            answers.append(exc.details())
    return [a if isinstance(a, str) else f"{a}\n{a.SerializeToString().hex()}" for a in answers]


def _secrets_of(store: Store, tid: str, total: int) -> tuple[int, list[str]]:
    """The tournament's seed (read from Redis, as only the workers do) and every string that would give it or a
    deal of it away: the seed in hex and decimal, and the deal seed of every (round, deal, attempt 0..2)."""
    seed = store.tournament_seed("take5", tid)
    assert seed is not None
    deals = {deal_seed(seed, tid, 0, d, a) for d in range(total) for a in range(3)}
    return seed, [seed_hex(seed), str(seed), seed.to_bytes(32, "big").hex()] + sorted(str(s) for s in deals)


def _leaks(texts: list[str], needles: list[str]) -> list[str]:
    return [n for n in needles if any(n in t for t in texts)]


def test_no_read_shows_the_seed_or_a_deal_while_the_tournament_runs(
        arena_server: Any, store: Store, start_bot: Callable[..., Any], workers: Any) -> None:
    _server, stub = arena_server()  # no embedded worker: nothing is played but by the test's workers
    for name in ("spy-a", "spy-b", "spy-c", "spy-d"):  # a slow Decide keeps the tournament running for a while
        bot = start_bot(SLOW_BOT, extra_args=["--sleep", "0.03", "--name", name])
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint=bot.endpoint, game="take5"))
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["spy-a", "spy-b", "spy-c", "spy-d"], seats_per_match=2, config=ONE_HAND,
        deals="duplicate"))
    # 4 bots at 2 seats: C(4,2) = 6 tables, 2 tables per deal (disjoint pairs), 3 deals
    assert (t.matches_total, t.deal_count, t.tables_per_deal, t.seed_hex) == (6, 3, 2, "")
    ids = [f"{t.id}-{i:06d}" for i in range(t.matches_total)]
    seed, needles = _secrets_of(store, t.id, t.deal_count)
    assert t.seed_commitment == hashlib.sha256(seed.to_bytes(32, "big")).hexdigest()
    assert _leaks(_every_read(stub, t.id, ids), needles) == []  # queued, nothing played

    worker = workers.thread("spy-worker", concurrency=1)
    wait_until(lambda: stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id)).matches_done >= 2,
               "two matches to be played")
    worker.stop()  # its running match finishes; the rest stays queued, so the tournament keeps running
    running = stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))
    assert running.state == "running" and 2 <= running.matches_done < 6
    assert _leaks(_every_read(stub, t.id, ids), needles) == []  # matches played, results shown, deals not
    played = stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=t.id)).matches
    assert played and all(not m.revealed and m.seed == 0 for m in played)
    detail = stub.GetMatch(arena_pb2.GetMatchRequest(match_id=played[0].match_id))
    assert detail.record_json == "" and f"tournament {t.id} is still running" in detail.withheld
    assert list(detail.summary.scores) == list(played[0].scores)  # the result is public

    worker = workers.thread("spy-worker-2", concurrency=2)
    ended = wait_until(lambda: (x := stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))).state == "finished"
                       and x, "the tournament to finish")
    worker.stop()
    assert ended.seed_hex == seed_hex(seed)
    assert hashlib.sha256(bytes.fromhex(ended.seed_hex)).hexdigest() == ended.seed_commitment == t.seed_commitment
    records = {m.match_id: json.loads(stub.GetMatch(arena_pb2.GetMatchRequest(match_id=m.match_id)).record_json)
               for m in stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=t.id)).matches}
    assert len(records) == 6
    # the duplicate plan, as played: the two tables of a deal got the same cards, and no bot met a deal twice
    by_deal: dict[tuple[int, int], list[str]] = {}
    for m in stub.ListMatches(arena_pb2.ListMatchesRequest(tournament_id=t.id)).matches:
        assert records[m.match_id]["seed"] == m.seed == deal_seed(seed, t.id, m.round, m.deal, m.attempt)
        by_deal.setdefault((m.round, m.deal), []).extend(m.seats)
    assert all(len(bots) == 4 == len(set(bots)) for bots in by_deal.values())
    out = CliRunner().invoke(cli, ["tournament", "verify", t.id, "--records", "--server",
                                   f"127.0.0.1:{_server.port}"])
    assert out.exit_code == 0 and "6 matches, each dealt from HMAC-SHA256(seed" in out.stdout, out.output


def test_a_cancelled_tournament_reveals_its_seed_once_nothing_is_left_to_deal(arena_server: Any,
                                                                               store: Store) -> None:
    _server, stub = arena_server(verify_bots=False)  # nothing is played: no bot is called
    for name in ("c-a", "c-b", "c-c"):
        stub.RegisterBot(arena_pb2.RegisterBotRequest(name=name, endpoint="127.0.0.1:1", game="take5"))
    t = stub.CreateTournament(arena_pb2.CreateTournamentRequest(
        game="take5", bots=["c-a", "c-b", "c-c"], seats_per_match=2, config=ONE_HAND))
    seed, needles = _secrets_of(store, t.id, t.deal_count)
    (held,) = store.read_jobs("a-worker", 1, 10)  # one match with a worker: it could still be dealt
    cancelled = stub.CancelTournament(arena_pb2.CancelTournamentRequest(id=t.id))
    assert (cancelled.state, cancelled.matches_cancelled, cancelled.seed_hex) == ("cancelled", 2, "")
    assert _leaks(_every_read(stub, t.id, [f"{t.id}-{i:06d}" for i in range(3)]), needles) == []
    assert store.drop_job(held, "cancelled") == 1  # what that worker does when it sees the state
    revealed = stub.GetTournament(arena_pb2.GetTournamentRequest(id=t.id))
    assert revealed.seed_hex == seed_hex(seed)
    assert hashlib.sha256(bytes.fromhex(revealed.seed_hex)).hexdigest() == t.seed_commitment
    out = CliRunner().invoke(cli, ["tournament", "verify", t.id, "--json", "--server", f"127.0.0.1:{_server.port}"])
    assert out.exit_code == 0 and json.loads(out.stdout)["ok"] is True and json.loads(out.stdout)["matches"] == 0
