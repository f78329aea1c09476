"""Match records for people (``arena match show``, ``arena play``): one renderer module per game, pure, no I/O.

A renderer module provides ``render_match(record) -> rich renderable`` (the whole match, turn by turn),
``summary(record) -> rich renderable | None`` (the short progress table ``arena play`` prints), ``SCORE_LABEL``
(what a score counts, e.g. "bullheads"), ``config_text(config: dict) -> str`` (the rule options in a few
words) and ``progress(state_before, state_after, names) -> str | None`` (a line for a game shown live); optionally
``position_text(hand, turn)`` and ``score_label_of(config)``.

The renderer of a registered game is found by its id, by convention: the module ``arena.render.<game id>`` (the
games shipped with the arena), else the module an entry point of the group ``arena.renderers`` (``ENTRY_POINT_GROUP``)
named by the game id points at (a third-party game's own renderer). Adding a game adds one module; nothing here
changes.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping, Sequence
from importlib import metadata
from types import ModuleType
from typing import Any

from rich.console import RenderableType

from arena.match.record import MatchRecord, RecordError
from arena.render.base import RenderError
from arena_sdk.games import GAMES

ENTRY_POINT_GROUP = "arena.renderers"

__all__ = ["ENTRY_POINT_GROUP", "RenderError", "as_record", "config_text", "position_text", "progress", "render_match",
           "renderer", "renderer_module", "score_label", "summary"]


def renderer_module(game: str) -> str | None:
    """The name of the module that renders ``game`` (a registered game id), or None when it has none:
    ``arena.render.<game>`` when that module exists, else the ``arena.renderers`` entry point named ``game``."""
    if game not in GAMES:
        return None
    own = f"{__name__}.{game}"
    if game.isidentifier() and importlib.util.find_spec(own) is not None:
        return own
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP, name=game):
        return entry_point.module
    return None


def renderer(game: str) -> ModuleType:
    """The renderer module of ``game``. Raises ``RenderError`` for a game that is not registered or has none."""
    module = renderer_module(game) if isinstance(game, str) else None
    if module is None:
        with_one = [g for g in GAMES if renderer_module(g) is not None]
        raise RenderError(f"no renderer for game {game!r}; games with one: {', '.join(sorted(with_one))}")
    return importlib.import_module(module)


def as_record(record: MatchRecord | Mapping[str, Any]) -> MatchRecord:
    """``record`` as a ``MatchRecord`` (a JSON object is read with ``MatchRecord.from_dict``). Raises
    ``RenderError`` for anything that is not a well-formed match record."""
    if isinstance(record, MatchRecord):
        return record
    if not isinstance(record, Mapping):
        raise RenderError(f"not a match record: a JSON object is needed, got {type(record).__name__}")
    try:
        return MatchRecord.from_dict(dict(record))
    except RecordError as exc:
        raise RenderError(f"not a match record: {exc}") from exc


def render_match(record: MatchRecord | Mapping[str, Any]) -> RenderableType:
    """The whole match turn by turn, by the renderer of its game. Raises ``RenderError``."""
    rec = as_record(record)
    return renderer(rec.game).render_match(rec)  # type: ignore[no-any-return]


def summary(record: MatchRecord | Mapping[str, Any]) -> RenderableType | None:
    """The short table ``arena play`` prints after a game (None when the game has none). Raises ``RenderError``."""
    rec = as_record(record)
    return renderer(rec.game).summary(rec)  # type: ignore[no-any-return]


def progress(game: str, before: Any, after: Any, names: Sequence[str]) -> str | None:
    """A line telling what a round of decisions changed, for a game shown live; None when nothing worth a line."""
    return renderer(game).progress(before, after, list(names))  # type: ignore[no-any-return]


def position_text(game: str, hand: int, turn: int) -> str:
    """Where in a game a fault happened, for a person: "hand 2 turn 5", or "turn 12" for a game without hands."""
    try:
        module = renderer(game)
    except RenderError:
        module = None
    if module is not None and hasattr(module, "position_text"):
        return str(module.position_text(hand, turn))
    return f"hand {hand + 1} turn {turn + 1}"


def score_label(game: str, config: Mapping[str, Any] | None = None) -> str:
    """What a score of ``game`` counts, for column titles ("bullheads", "cards held"); with ``config`` (JSON
    form) the label of that variant when the renderer knows one (Taki's stairs); "score" for an unknown game."""
    try:
        module = renderer(game)
    except RenderError:
        return "score"
    if config is not None and hasattr(module, "score_label_of"):
        return str(module.score_label_of(config))
    return str(module.SCORE_LABEL)


def score_unit(game: str, config: Mapping[str, Any] | None = None) -> str:
    """The short unit of a score of ``game``, for a column title: its ``score_label`` up to the first "; " or " ("
    ("cards held; stairs: 1000 x stage + cards" -> "cards held", "bullheads" -> "bullheads")."""
    label = score_label(game, config)
    for cut in ("; ", " ("):
        label = label.partition(cut)[0]
    return label.strip() or "score"


def config_text(game: str, config: Mapping[str, Any]) -> str:
    """The rule options of a config (JSON form) in a few words."""
    try:
        return str(renderer(game).config_text(config))
    except RenderError:
        return ", ".join(f"{k} {v}" for k, v in config.items())
