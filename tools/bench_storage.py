"""Storage cost of stored matches (part of ``make bench``): bytes of Redis memory and of appendonly file per
stored match, measured on a private redis-server (appendonly, in a temporary folder).

Matches: ``--matches`` 4-seat Take 5 games (to 66 bullheads) between sample bot processes (random, heuristic)
through the real referee, stored with ``Store.record_result`` exactly as workers store them (the packed record,
the result, the results log entry, the indexes, the ladder). Reported: the packed record's bytes (median, min,
max), the record's JSON bytes for comparison, Redis ``used_memory`` growth per match, appendonly file growth per
match, and what a million such matches would take.

Usage: python tools/bench_storage.py [--matches N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.match.local_bots import started_bots  # noqa: E402
from arena.match.record import SeatSpec  # noqa: E402
from arena.match.referee import run_match_sync
from arena.store import Store  # noqa: E402
from arena.store.codec import pack_record  # noqa: E402
from arena.store.redis_server import PrivateRedis  # noqa: E402


def bench_storage(matches: int) -> dict:
    """Play and store ``matches`` 4-seat Take 5 matches; return the per-match storage figures."""
    with tempfile.TemporaryDirectory() as tmp, PrivateRedis(Path(tmp)) as redis_server:
        store = Store.from_url(redis_server.url)
        aof = Path(tmp) / "appendonly.aof"
        mem0 = int(store.client.info("memory")["used_memory"])
        aof0 = aof.stat().st_size if aof.exists() else 0
        packed, plain = [], []
        with started_bots(["sample:random", "sample:heuristic", "sample:random", "sample:heuristic"],
                          timeout=120.0) as bots:  # a loaded machine starts processes slowly
            seats = [SeatSpec(f"bench{i}@1.0", b.endpoint) for i, b in enumerate(bots)]
            for m in range(matches):
                record = run_match_sync(f"s-{m:06d}", "take5", seats, seed=1000 + m).to_dict()
                packed.append(len(pack_record(record)))
                plain.append(len(json.dumps(record)))
                r = record["result"]
                store.record_result("take5", record["match_id"], [s.name for s in seats], r["scores"], r["ranks"],
                                    r["faults"], record, tournament_id=None)
        mem1 = int(store.client.info("memory")["used_memory"])
        aof1 = aof.stat().st_size if aof.exists() else 0
        store.close()
    per_mem = (mem1 - mem0) / matches
    per_aof = (aof1 - aof0) / matches
    return {
        "matches": matches,
        "record_packed_bytes_median": statistics.median(packed), "record_packed_bytes_min": min(packed),
        "record_packed_bytes_max": max(packed), "record_json_bytes_median": statistics.median(plain),
        "redis_memory_per_match": round(per_mem), "aof_bytes_per_match": round(per_aof),
        "million_matches_memory_gb": round(per_mem * 1e6 / 1e9, 2),
        "million_matches_aof_gb": round(per_aof * 1e6 / 1e9, 2),
    }


def print_storage(r: dict) -> None:
    print(f"Storage: {r['matches']} stored 4-seat Take 5 matches (games to 66, sample bots)")
    print(f"  packed record: median {r['record_packed_bytes_median']} bytes (min {r['record_packed_bytes_min']}, "
          f"max {r['record_packed_bytes_max']}); as JSON: {r['record_json_bytes_median']} bytes")
    print(f"  Redis memory: {r['redis_memory_per_match']} bytes per match (record, result, log entry, indexes); "
          f"appendonly file: {r['aof_bytes_per_match']} bytes per match")
    print(f"  a million matches: about {r['million_matches_memory_gb']} GB of Redis memory and "
          f"{r['million_matches_aof_gb']} GB of appendonly file")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=30, help="matches to store (default 30)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    r = bench_storage(args.matches)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print_storage(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
