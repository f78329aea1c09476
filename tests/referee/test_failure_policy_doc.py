"""docs/failure-policy.md states every limit with its default in brackets; those defaults are the ones the referee
(``RefereeOptions``) and the workers (``WorkerSettings``) use."""

import re
from pathlib import Path

import pytest

from arena.match.options import RefereeOptions
from arena.worker.settings import WorkerSettings

POLICY = Path(__file__).resolve().parents[2] / "docs" / "failure-policy.md"
REFEREE = ["deadline_ms", "call_deadline_ms", "max_faults", "max_consecutive_timeouts", "match_time_limit_s",
           "lag_threshold_ms", "lag_retries"]
WORKER = ["unhealthy_after", "max_deferral_s", "max_deliveries"]


def stated_default(name: str) -> float:
    found = re.findall(rf"(?<![a-z_]){name}`? \[([0-9.]+)", POLICY.read_text(encoding="utf-8"))
    assert found, f"docs/failure-policy.md states no default for {name}"
    assert len(set(found)) == 1, f"docs/failure-policy.md states several defaults for {name}: {found}"
    return float(found[0])


@pytest.mark.parametrize("name", REFEREE)
def test_the_policy_states_the_referee_defaults(name: str) -> None:
    assert stated_default(name) == getattr(RefereeOptions(), name)


@pytest.mark.parametrize("name", WORKER)
def test_the_policy_states_the_worker_defaults(name: str) -> None:
    assert stated_default(name) == getattr(WorkerSettings(), name)


def test_the_referee_points_at_the_policy() -> None:
    from arena.match import referee

    assert "docs/failure-policy.md" in (referee.__doc__ or "")
    assert "| What happens |" not in (referee.__doc__ or "")  # the table lives in the docs only
