"""The garbage collector's thresholds for a process that runs matches (``arena worker``, ``arena serve``).

A worker holding hundreds of matches keeps thousands of coroutines, futures and grpc.aio call states alive, and
allocates thousands more per second. With CPython's default thresholds (700, 10, 10) the collector scans the young
ones about a hundred times a second and the whole heap every few seconds: measured with 400 matches in flight
(``make scale-inflight``), 4.6 s of collections in a 25 s run, full collections of up to 200 ms (the event loop's
lag p99 followed them). With a young generation of 10,000 objects most of them die before a collection (their
references are dropped, not found cyclic), so 1.2 s in the same run and no full collection in it.
"""

from __future__ import annotations

import gc

MATCH_PROCESS_THRESHOLDS = (10_000, 20, 100)  # gen0 allocations, gen0 collections per gen1, gen1 per gen2


def tune_for_matches() -> None:
    """Set ``MATCH_PROCESS_THRESHOLDS`` (``gc.set_threshold``) unless the young generation's threshold is already
    at least as high, or 0 (automatic collection off), or the collector is disabled: an operator's or embedding
    program's choice wins. Process-wide, idempotent."""
    young = gc.get_threshold()[0]
    if gc.isenabled() and 0 < young < MATCH_PROCESS_THRESHOLDS[0]:
        gc.set_threshold(*MATCH_PROCESS_THRESHOLDS)
