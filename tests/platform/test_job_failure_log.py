"""What a worker logs when a match fails for a platform reason (``arena.worker.job._log_failure``): one warning line
while Redis does not answer or refuses writes (a full disk: MISCONF, every match in flight fails the same way, and a
traceback per match said nothing more), an error with its traceback for anything else."""

from __future__ import annotations

import logging

import pytest
import redis

from arena.worker import job

MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
           "Commands that may modify the data set are disabled, because this instance is configured to report errors")


@pytest.mark.parametrize("exc, level, fragment, traceback", [
    (redis.ConnectionError("Connection refused"), logging.WARNING, "Redis does not answer", False),
    (redis.ResponseError(MISCONF), logging.WARNING, "Redis refuses writes: MISCONF Redis is configured", False),
    # inside a script's error (the settling script's write refused)
    (redis.ResponseError("Error running script (call to f_0123): @user_script:12: -" + MISCONF), logging.WARNING,
     "Redis refuses writes: MISCONF Redis is configured", False),
    (redis.ResponseError("ERR some OOMish text"), logging.ERROR, "match m1 failed", True),
    (redis.ResponseError("WRONGTYPE Operation against a key"), logging.ERROR, "match m1 failed", True),
    (ValueError("a bug"), logging.ERROR, "match m1 failed", True),
])
def test_a_platform_failure_is_one_line_when_redis_is_away_or_refuses_writes(
        caplog: pytest.LogCaptureFixture, exc: Exception, level: int, fragment: str, traceback: bool) -> None:
    with caplog.at_level(logging.WARNING, logger="arena.worker"):
        job._log_failure(exc, "match %s failed", "m1")
    (record,) = caplog.records
    assert record.levelno == level and fragment in record.getMessage()
    assert (record.exc_info is not None) == traceback
