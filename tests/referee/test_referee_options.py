"""The options objects of the referee and the workers: frozen, validated at construction, defaults from DEFAULTS."""

import dataclasses

import pytest

from arena.core.config import DEFAULTS
from arena.match.options import RefereeOptions
from arena.worker.settings import WorkerSettings


def test_options_are_frozen_and_compare_by_value() -> None:
    options = RefereeOptions(deadline_ms=250)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.deadline_ms = 1  # type: ignore[misc]
    assert options == RefereeOptions(deadline_ms=250) != RefereeOptions()
    assert options.limits.max_faults == DEFAULTS.max_faults


def test_keywords_replace_fields_and_unknown_ones_are_refused() -> None:
    base = RefereeOptions(deadline_ms=250, max_faults=2)
    assert RefereeOptions.with_keywords(base, {}) is base
    assert RefereeOptions.with_keywords(base, {"max_faults": 5}) == RefereeOptions(deadline_ms=250, max_faults=5)
    assert RefereeOptions.with_keywords(None, {"lag_retries": 0}) == RefereeOptions(lag_retries=0)
    with pytest.raises(TypeError, match="unknown referee option.*deadline"):
        RefereeOptions.with_keywords(base, {"deadline": 5})
    with pytest.raises(ValueError, match="max_faults"):
        RefereeOptions.with_keywords(base, {"max_faults": -1})
    settings = WorkerSettings.with_keywords(None, {"concurrency": 3})
    assert (settings.concurrency, settings.block_ms, settings.drain_s) == (3, DEFAULTS.block_ms, DEFAULTS.drain_s)
    with pytest.raises(TypeError, match="unknown worker setting.*speed"):
        WorkerSettings.with_keywords(settings, {"speed": 2})


def test_the_ca_bundle_stays_out_of_repr() -> None:
    assert "BEGIN" not in repr(WorkerSettings(bot_ca=b"-----BEGIN CERTIFICATE-----"))
