"""A Taki round robin end to end: separately running SDK bot processes, matches queued on the real redis-server,
a worker running them through the referee over gRPC, results and the Taki ladder (kept apart from Take 5's), and
the ladder rebuilt from the stored results."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.match.record import MatchRecord
from arena.match.replay import replay
from arena.store import Store, TournamentInfo
from arena.tournaments.round_robin import round_robin
from arena.worker import loop as scheduler
from arena.worker.settings import WorkerSettings

WAIT_S = 120.0  # a hang guard, not a speed requirement
RANDOM_BOT = str(Path(__file__).resolve().parent.parent / "bots" / "any_random_bot.py")


def test_a_taki_round_robin_reaches_the_taki_ladder(redis_url: str, store: Store,
                                                   start_bot: Callable[..., Any]) -> None:
    bots = {f"taki-{i}": start_bot(RANDOM_BOT, extra_args=["--game", "taki", "--seed", str(i)]) for i in range(3)}
    for name, bot in bots.items():
        store.register_bot("taki", name, bot.endpoint)
    tid = store.next_tournament_id()
    config = {"turn_cap": 400}
    specs = round_robin(tid, "taki", sorted(bots), 3, 3, 7, config, deadline_ms=2000)
    # 3 bots at 3 seats: one table per deal (a bot may not see a deal twice), each bot once in each seat
    assert len(specs) == 3 and [(s.round, s.deal, s.table) for s in specs] == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]
    assert all(sorted(s.seats[i] for s in specs) == sorted(bots) for i in range(3))
    store.create_tournament(TournamentInfo(
        id=tid, game="taki", bots=tuple(sorted(bots)), seats_per_match=3, rounds=3, seed=7, config=config,
        deadline_ms=2000, matches_total=len(specs), created_at=time.time()))
    scheduler.enqueue_matches(store, specs)
    stop = threading.Event()
    worker = threading.Thread(target=scheduler.run_worker,
                              args=(redis_url, WorkerSettings(concurrency=3, block_ms=100)),
                              kwargs={"stop": stop, "name": "taki-worker"},
                              daemon=True)
    worker.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while (info := store.get_tournament(tid)) is not None and info.state != "finished":
            assert time.monotonic() < deadline, f"the Taki tournament did not finish: {info}"
            time.sleep(0.05)
    finally:
        stop.set()
        worker.join(WAIT_S)
    assert info is not None and (info.matches_done, info.faults) == (3, 0)
    for spec in specs:
        record = store.get_match_record(spec.match_id)
        assert record is not None and record["game"] == "taki" and record["config"]["turn_cap"] == 400
        assert replay(MatchRecord.from_dict(record)) == []
        ranks = record["result"]["ranks"]
        assert sorted(ranks)[0] == 1
    ladder = store.ladder("taki")
    assert {e.bot: e.matches for e in ladder} == {name: 3 for name in bots}
    assert sum(e.rating for e in ladder) == pytest.approx(1500.0 * 3, abs=1e-6)
    assert store.ladder("take5") == []
    assert store.rebuild_ladder("taki") == ladder
