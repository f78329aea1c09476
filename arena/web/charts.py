"""Charts drawn on the server as SVG text (no script, no style attribute: the pages' CSP allows neither inline):
a line chart of one or more series with optional horizontal bands, and intervals on one axis.

Every function is pure: numbers in, markup out (``markupsafe.Markup``, every text escaped).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from arena.core.text import cut

COLOURS = ("#2b5797", "#b42318", "#067647", "#b54708", "#6941c6", "#0e7090", "#c11574", "#475467")


INTERVAL_LABEL = 56  # characters of a row's label kept in an intervals chart (a bot id may have 129)


@dataclass(frozen=True)
class Series:
    """One line: ``points`` as (x, y) pairs in x order, its ``label`` for the legend."""

    label: str
    points: Sequence[tuple[float, float]]


@dataclass(frozen=True)
class Level:
    """A horizontal line at ``y`` (e.g. an SPRT bound), dashed, with its ``label``."""

    y: float
    label: str
    colour: str = "#667085"


@dataclass(frozen=True)
class Frame:
    """Size of a chart in SVG units and its margins for the axes' labels."""

    width: int = 640
    height: int = 240
    left: int = 52
    right: int = 52
    top: int = 12
    bottom: int = 28
    extra: dict[str, str] = field(default_factory=dict)


def _finite(values: Sequence[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def _span(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    pad = (high - low) * 0.06
    return low - pad, high + pad


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def line_chart(series: Sequence[Series], *, levels: Sequence[Level] = (), x_label: str = "", y_label: str = "",
               title: str = "", frame: Frame = Frame()) -> Markup:
    """A line chart of ``series`` (each its colour, a legend line per series) with ``levels`` as dashed lines.
    Non-finite y values are left out. An empty chart (no finite point) is a box saying "no data yet"."""
    xs = [x for s in series for x, y in s.points if math.isfinite(y)]
    ys = _finite([y for s in series for _, y in s.points]) + [lv.y for lv in levels if math.isfinite(lv.y)]
    w, h = frame.width, frame.height
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h + 18 * len(series)}" '
             f'data-series="{len(series)}" role="img" aria-label="{escape(title or y_label)}">']
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    parts.append(f'<rect x="{frame.left}" y="{frame.top}" width="{w - frame.left - frame.right}" '
                 f'height="{h - frame.top - frame.bottom}" fill="#fafafa" stroke="#d0d5dd"/>')
    if not xs or not ys:
        parts.append(f'<text x="{w / 2}" y="{h / 2}" text-anchor="middle" fill="#667085" font-size="14">'
                     f"no data yet</text></svg>")
        return Markup("".join(parts))
    x0, x1 = (min(xs), max(xs)) if max(xs) > min(xs) else (min(xs), min(xs) + 1)  # one x: no axis below it
    y0, y1 = _span(ys)
    plot_w, plot_h = w - frame.left - frame.right, h - frame.top - frame.bottom

    def px(x: float) -> float:
        return frame.left + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return frame.top + (1 - (y - y0) / (y1 - y0)) * plot_h

    # the y axis is labelled on both sides: a chart scrolled to its newest points at phone width reads its values
    for tick in (y0 + (y1 - y0) * i / 4 for i in range(5)):
        text = f"{tick:.0f}" if abs(y1 - y0) > 8 else f"{tick:.2f}"
        text = text[1:] if text.lstrip("-0.") == "" and text.startswith("-") else text  # never "-0.00" or "-0"
        for side, anchor in ((frame.left - 4, "end"), (w - frame.right + 4, "start")):
            parts.append(f'<text x="{side}" y="{_fmt(py(tick) + 4)}" text-anchor="{anchor}" font-size="11" '
                         f'fill="#667085">{text}</text>')
    for x in (x0, x1):
        parts.append(f'<text x="{_fmt(px(x))}" y="{h - 10}" text-anchor="middle" font-size="11" fill="#667085">'
                     f"{x:g}</text>")
    if x_label:
        parts.append(f'<text x="{frame.left + plot_w / 2}" y="{h - 10}" text-anchor="middle" font-size="11" '
                     f'fill="#667085">{escape(x_label)}</text>')
    if y_label:
        parts.append(f'<text x="{frame.left + 4}" y="{frame.top + 12}" font-size="11" fill="#667085">'
                     f"{escape(y_label)}</text>")
    for level in levels:
        if math.isfinite(level.y):
            parts.append(f'<line x1="{frame.left}" x2="{w - frame.right}" y1="{_fmt(py(level.y))}" '
                         f'y2="{_fmt(py(level.y))}" stroke="{level.colour}" stroke-dasharray="5 4"/>')
            parts.append(f'<text x="{w - frame.right - 4}" y="{_fmt(py(level.y) - 4)}" text-anchor="end" '
                         f'font-size="11" fill="{level.colour}">{escape(level.label)}</text>')
    for i, s in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        pts = [(px(x), py(y)) for x, y in s.points if math.isfinite(y)]
        if len(pts) == 1:
            parts.append(f'<circle cx="{_fmt(pts[0][0])}" cy="{_fmt(pts[0][1])}" r="3" fill="{colour}"/>')
        elif pts:
            path = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in pts)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<rect x="{frame.left}" y="{h + 18 * i + 2}" width="12" height="12" fill="{colour}"/>'
                     f'<text x="{frame.left + 18}" y="{h + 18 * i + 12}" font-size="12" fill="#1d2430">'
                     f"{escape(s.label)}</text>")
    parts.append("</svg>")
    return Markup("".join(parts))


def sparkline(values: Sequence[float], width: int = 120, height: int = 24) -> Markup:
    """A small line of ``values`` (e.g. a bot's rating after each match), no axes; empty markup for < 2 values."""
    finite = _finite(values)
    if len(finite) < 2:
        return Markup("")
    low, high = _span(finite)
    step = (width - 2) / (len(finite) - 1)
    pts = " ".join(f"{_fmt(1 + i * step)},{_fmt(1 + (1 - (v - low) / (high - low)) * (height - 2))}"
                   for i, v in enumerate(finite))
    return Markup(f'<svg class="spark" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
                  f'width="{width}" height="{height}" role="img" aria-label="rating history">'
                  f'<polyline points="{pts}" fill="none" stroke="#2b5797" stroke-width="1.5"/></svg>')


def intervals_chart(rows: Sequence[tuple[str, float, float, float]], *, title: str = "", x_label: str = "Elo",
                    frame: Frame = Frame(width=400, left=8, right=12), mark: int | None = None) -> Markup:
    """Intervals on one rating axis, one row each: ``(label, low, estimate, high)`` (Elo points); rows whose
    numbers are not finite are drawn as their estimate only. Each row's label is on a line of its own above its
    interval (cut to ``INTERVAL_LABEL`` characters), so the chart is narrow enough to be read whole at phone width
    (class "narrow": it does not scroll there) with every name in view. The axis has its two ends and its middle
    in numbers, and ``x_label`` (its unit) on a line of its own below them. Row ``mark`` (e.g. the leader's) has
    its estimate's dot of class "mark", which ``static/charts.js`` scrolls into view when the chart is wider than
    its box."""
    values = _finite([v for _, lo, mid, hi in rows for v in (lo, mid, hi)])
    row_h = 34
    label_h = 14 if x_label else 0
    h = frame.top + row_h * max(1, len(rows)) + frame.bottom + label_h
    w = frame.width
    left = frame.left
    parts = [f'<svg class="chart narrow" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" '
             f'aria-label="{escape(title or "intervals")}">']
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    if not values:
        parts.append(f'<text x="{w / 2}" y="{h / 2}" text-anchor="middle" fill="#667085" font-size="14">'
                     f"no data yet</text></svg>")
        return Markup("".join(parts))
    v0, v1 = _span(values)

    def px(v: float) -> float:
        return left + (v - v0) / (v1 - v0) * (w - left - frame.right)

    for i, (label, low, mid, high) in enumerate(rows):
        top = frame.top + row_h * i
        y = top + 24
        parts.append(f'<text x="{left}" y="{_fmt(top + 12)}" font-size="12" fill="#1d2430">'
                     f"{escape(cut(label, INTERVAL_LABEL))}</text>")
        if math.isfinite(low) and math.isfinite(high):
            parts.append(f'<line x1="{_fmt(px(low))}" x2="{_fmt(px(high))}" y1="{_fmt(y)}" y2="{_fmt(y)}" '
                         f'stroke="#2b5797" stroke-width="3"/>')
        if math.isfinite(mid):
            marked = ' class="mark"' if i == mark else ""
            parts.append(f'<circle{marked} cx="{_fmt(px(mid))}" cy="{_fmt(y)}" r="4" fill="#b42318"/>')
    axis_y = h - label_h - 8
    for v, anchor in ((v0, "start"), ((v0 + v1) / 2, "middle"), (v1, "end")):  # the ends stay inside the box
        parts.append(f'<text x="{_fmt(px(v))}" y="{axis_y}" text-anchor="{anchor}" font-size="11" fill="#667085">'
                     f"{v:.0f}</text>")
    if x_label:
        parts.append(f'<text x="{_fmt(px((v0 + v1) / 2))}" y="{h - 6}" text-anchor="middle" font-size="11" '
                     f'fill="#667085">{escape(x_label)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
