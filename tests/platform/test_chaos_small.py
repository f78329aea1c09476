"""`make chaos`, small (issue 8, item 6): a real arena (`arena serve` + an `arena worker` + a private appendonly
redis-server, sample bots of both games as processes) plays a Take 5 and a Taki round robin while a worker, the
referee and Redis are each SIGKILLed once (and restarted); nothing is lost, nothing is stored twice, the ladders
equal their rebuilds, and no bot is charged (none marked unhealthy). ``tools/chaos.py`` does the work."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _chaos():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("arena_chaos_tool", ROOT / "tools" / "chaos.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_a_small_chaos_run_loses_nothing_and_counts_nothing_twice(tmp_path: Path) -> None:
    chaos = _chaos()
    plan = chaos.ChaosPlan(
        take5_bots=(("c-random", "sample:random"), ("c-heuristic", "sample:heuristic"), ("c-random-2", "sample:random")),
        taki_bots=(("c-taki-random", "sample:taki-random"), ("c-taki-heuristic", "sample:taki-heuristic"),
                   ("c-taki-random-2", "sample:taki-random")),
        take5_matches=40, taki_matches=160, extra_workers=1, visibility_timeout_s=2.0, kills=chaos.KINDS,
        kill_gap_s=2.5, timeout_s=240.0)
    lines: list[str] = []
    report = chaos.run_chaos(plan, tmp_path, say=lines.append)
    summary = report.summary()
    where = "\n".join(lines) + "\n" + summary + f"\nlogs: {tmp_path / 'logs'}"
    assert dict(report.kills) == {"worker": 1, "referee": 1, "redis": 1}, where
    assert [g.game for g in report.games] == ["take5", "taki"], where
    for game in report.games:
        assert game.matches_stored == game.matches_total >= 30, where
        assert (game.lost, game.duplicates, game.ladder_equal, game.unhealthy) == (0, 0, True, []), where
    assert report.ok and "result: PASS" in summary, where
    assert report.rerun, where  # a killed worker's or referee's match was reclaimed, played again, stored once
    print(where)


def test_a_small_chaos_run_on_a_redis_cluster_rides_out_a_master_restart(tmp_path: Path) -> None:
    """``make chaos-cluster``, small: the same arena on a private 3-master Redis Cluster; a master is SIGKILLed and
    restarted (its slots are not served meanwhile), then a worker and the referee are killed."""
    chaos = _chaos()
    plan = chaos.ChaosPlan(
        take5_bots=(("cc-random", "sample:random"), ("cc-heuristic", "sample:heuristic"), ("cc-random-2", "sample:random")),
        taki_bots=(("cc-taki-random", "sample:taki-random"), ("cc-taki-heuristic", "sample:taki-heuristic"),
                   ("cc-taki-random-2", "sample:taki-random")),
        take5_matches=40, taki_matches=120, extra_workers=1, visibility_timeout_s=2.0,
        kills=("redis", "worker", "referee"), kill_gap_s=2.5, timeout_s=240.0, cluster=True)
    lines: list[str] = []
    report = chaos.run_chaos(plan, tmp_path, say=lines.append)
    summary = report.summary()
    where = "\n".join(lines) + "\n" + summary + f"\nlogs: {tmp_path / 'logs'}"
    assert any("SIGKILL cluster master 0" in line for line in lines), where
    assert dict(report.kills) == {"worker": 1, "referee": 1, "redis": 1}, where
    for game in report.games:
        assert game.matches_stored == game.matches_total >= 30, where
        assert (game.lost, game.duplicates, game.ladder_equal, game.unhealthy) == (0, 0, True, []), where
    assert report.ok and "result: PASS" in summary, where
    print(where)
