"""Tiny Nim's renderer for ``arena match show`` (registered through an ``arena.renderers`` entry point)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text

SCORE_LABEL = "tokens short"


def render_match(record: Any) -> Text:
    return Text(f"Tiny Nim, {len(record.decisions)} turns")


def summary(record: Any) -> None:
    return None


def config_text(config: Mapping[str, Any]) -> str:
    return f"heap {config.get('heap')}"


def progress(before: Any, after: Any, names: Sequence[str]) -> str | None:
    return None
