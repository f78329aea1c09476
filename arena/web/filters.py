"""Jinja2 filters the templates use to print numbers and times the way the CLI does, and a bot's name as a link to
its page (``bot_link``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from arena.core import text
from arena.core.specs import is_house_bot
from arena.ratings.sprt import estimate_text
from arena.render import score_label, score_unit

# The tooltip of a house bot's name: it has no bot page to link to.
HOUSE_BOT_TITLE = "a house bot: played by the arena itself, not registered (it has no bot page)"


def _real(value: Any) -> float | None:
    """A number of a reply in its proto3 JSON form (where an infinite double is the string "Infinity")."""
    if value is None:
        return None
    if isinstance(value, str):
        return float(value.replace("Infinity", "inf"))
    return float(value)


def points(value: Any, digits: int = 1) -> str:
    """Elo points ("1523.4"); "-" for None; "∞" for an infinite margin; a value that rounds to zero is "0.0", never
    "-0.0" (an Elo change of -8.9e-16 is no loss)."""
    number = _real(value)
    if number is None or math.isnan(number):
        return "-"
    if math.isinf(number):
        return "∞" if number > 0 else "-∞"
    text = f"{number:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def percent(value: Any, digits: int = 1) -> str:
    """A fraction 0..1 as "95.8 %" (``digits`` decimals); "-" for None. Only 0 and 1 themselves print as 0 % and
    100 %: a value that would round to either says it is beyond the last one shown ("> 99.9 %", "< 0.1 %")."""
    number = _real(value)
    if number is None or not math.isfinite(number):
        return "-"
    shown = f"{100 * number:.{digits}f}"
    step = f"{10.0 ** -digits:.{digits}f}"
    if float(shown) >= 100 and number < 1:
        return f"> {100 - float(step):.{digits}f} %"
    if float(shown) <= 0 < number:
        return f"< {step} %"
    return f"{shown} %"


# The tooltip of a likelihood of superiority left out: a bot of the two compared has too few matches.
LOS_HIDDEN_TITLE = ("not shown: one of the two bots compared has too few matches, so their ratings can still move "
                    "far and the likelihood says little")


def los(entry: Any, below: Any = None) -> Markup:
    """A line's likelihood of superiority over the next line down (``entry["los_next"]``, 0..1) as ``percent``;
    ``below`` is that next line (an entry dict; None or Jinja's undefined on the last line). "-" when unset, and a
    "-" with a tooltip (``LOS_HIDDEN_TITLE``) when ``entry`` or ``below`` has ``too_few_matches``. Escaped HTML."""
    if entry.get("too_few_matches") or (isinstance(below, Mapping) and below.get("too_few_matches")):
        return Markup('<span class="muted los-hidden" title="{}">-</span>').format(LOS_HIDDEN_TITLE)
    return Markup("{}").format(percent(entry.get("los_next")))


def number(value: Any) -> str:
    """A score: "12" for a whole number, else "12.25"; "-" for None."""
    real = _real(value)
    if real is None or not math.isfinite(real):
        return "-"
    return str(int(real)) if real.is_integer() else f"{real:.2f}"


def ms(value: Any) -> str:
    """Milliseconds with one decimal ("12.3 ms"); "-" for None."""
    real = _real(value)
    if real is None or not math.isfinite(real):
        return "-"
    return f"{real:.1f} ms"


def when(epoch_s: float) -> str:
    """Seconds since the epoch as "2026-12-03 13:10:27 UTC"; "-" for 0."""
    if not epoch_s:
        return "-"
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(epoch_s: float) -> str:
    """``epoch_s`` as "12 s ago", "3 min ago", "2 h ago" (or the UTC date past a day); "-" for 0."""
    return text.ago(epoch_s, when)


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless n is 1: "1 block", "3 blocks" (``arena.core.text.plural``)."""
    return text.plural(int(n), noun)


def bot_name(bot: Any) -> Markup:
    """A bot id ``NAME@VERSION`` as HTML whose line may break before ``@VERSION`` (a ``<wbr>``) and never inside
    it (class "ver", no wrap), so a narrow table cell shows "experimental-gapbot" / "@2.0.1", not "…@2.0." / "1";
    any other text as it is. Escaped HTML."""
    head, at, version = str(bot).rpartition("@")
    if not at or not head:
        return Markup("{}").format(str(bot))
    return Markup('{}<wbr><span class="ver">@{}</span>').format(head, version)


def bot_link(bot: Any, label: Any = None, breakable: bool = False) -> Markup:
    """``bot`` (a seat name: NAME@VERSION, or NAME) as a link to its page ``/bots/{bot}``, showing ``label`` (else
    the name; ``breakable``: as ``bot_name`` shows it); a house bot (``house:<sample name>``,
    ``arena.core.specs.is_house_bot``) is no registered bot and has no page: its name is plain text, with a tooltip
    (``HOUSE_BOT_TITLE``) saying why. Escaped HTML."""
    name = str(bot)
    shown: Any = (bot_name(name) if breakable else name) if label is None else str(label)
    if is_house_bot(name):
        return Markup('<span class="house-bot" title="{}">{}</span>').format(HOUSE_BOT_TITLE, shown)
    return Markup('<a href="/bots/{}">{}</a>').format(quote(name, safe="@"), shown)


def sprt_estimate(sprt: Any) -> str:
    """The estimate of an SPRT (GetSprt's reply, JSON form) for people (``arena.ratings.sprt.estimate_text``):
    "Elo +12.3 ± 45.6", "nElo -" before a block, and for an infinite one that no finite estimate exists."""
    elo, margin = _real(sprt.get("elo")), _real(sprt.get("elo_margin"))
    return estimate_text(math.nan if elo is None else elo, math.nan if margin is None else margin,
                         sprt.get("statistic") == "score")


def install(env: Any) -> None:
    """Register the filters in the Jinja2 environment ``env``, and the globals ``score_label(game)`` (what a score of
    the game counts, for tooltips: "cards held; stairs: 1000 x stage + cards") and ``score_unit(game)`` (its short
    form, for column titles: "cards held")."""
    env.filters.update(points=points, percent=percent, los=los, number=number, ms=ms, when=when, ago=ago,
                       counted=counted, bot_link=bot_link, bot_name=bot_name, sprt_estimate=sprt_estimate)
    env.globals.update(score_label=score_label, score_unit=score_unit)
