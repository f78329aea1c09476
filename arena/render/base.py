"""What every game's renderer shares."""

from __future__ import annotations


class RenderError(ValueError):
    """A record that cannot be rendered at all: not a well-formed record, or a game no renderer can show."""
