"""Inline SVG charts for the report page: no script, no stylesheet, no request to anywhere.

Every label is escaped here, so a workspace id or a signature cannot inject markup.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#3b6fd6", "#e07b39", "#3fa34d", "#c2417a", "#8a63c9", "#2aa3a3", "#b5a22b", "#7f7f7f")
WIDTH = 860
MAX_SERIES = len(PALETTE)  # more series than colours: the smallest are summed into "other"


def _top_series(totals: Mapping[str, float]) -> list[str]:
    names = sorted(totals, key=lambda n: (-totals[n], n))
    return names if len(names) <= MAX_SERIES else [*names[: MAX_SERIES - 1], "other"]


def _legend(names: Sequence[str], y: int) -> str:
    parts, x = [], 0
    for i, name in enumerate(names):
        parts.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>'
                     f'<text x="{x + 14}" y="{y + 9}" font-size="11">{escape(name[:28])}</text>')
        x += 24 + 7 * min(len(name), 28)
    return "".join(parts)


def _frame(height: int, title: str, body: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif"><title>{escape(title)}</title>{body}</svg>')


def stacked_bars(title: str, columns: Sequence[tuple[str, Mapping[str, float]]], height: int = 220) -> str:
    """One bar per column (a day), stacked by series (a platform, a product)."""
    if not columns:
        return f'<p class="empty">{escape(title)}: no data</p>'
    totals: dict[str, float] = {}
    for _, values in columns:
        for name, v in values.items():
            totals[name] = totals.get(name, 0) + v
    names = _top_series(totals)
    shown = set(names) - {"other"}
    top = max(sum(values.values()) for _, values in columns) or 1
    plot_h, left, bottom = height - 60, 40, height - 40
    step = (WIDTH - left - 10) / len(columns)
    bar = max(step * 0.8, 1.0)
    parts = [f'<text x="0" y="12" font-size="11">{escape(str(round(top)))}</text>',
             f'<line x1="{left}" y1="{bottom}" x2="{WIDTH - 10}" y2="{bottom}" stroke="#999"/>']
    for i, (label, values) in enumerate(columns):
        x, y = left + i * step, float(bottom)
        other = sum(v for n, v in values.items() if n not in shown)
        for j, name in enumerate(names):
            v = other if name == "other" else values.get(name, 0)
            if v <= 0:
                continue
            h = plot_h * v / top
            y -= h
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                         f'fill="{PALETTE[j % len(PALETTE)]}"><title>{escape(label)} {escape(name)}: {v:g}</title></rect>')
        if len(columns) <= 31 or i % max(len(columns) // 12, 1) == 0:
            parts.append(f'<text x="{x:.1f}" y="{bottom + 14}" font-size="9">{escape(label[5:])}</text>')
    parts.append(_legend(names, height - 14))
    return _frame(height, title, "".join(parts))


def horizontal_bars(title: str, items: Sequence[tuple[str, float]]) -> str:
    """One labelled bar per item (kinds, confidence levels, signatures)."""
    if not items:
        return f'<p class="empty">{escape(title)}: no data</p>'
    top = max(v for _, v in items) or 1
    row, label_w = 20, 300
    parts = []
    for i, (label, v) in enumerate(items):
        y = i * row
        w = (WIDTH - label_w - 60) * v / top
        parts.append(f'<text x="0" y="{y + 14}" font-size="11">{escape(label[:48])}</text>'
                     f'<rect x="{label_w}" y="{y + 3}" width="{max(w, 1):.1f}" height="{row - 6}" '
                     f'fill="{PALETTE[0]}"><title>{escape(label)}: {v:g}</title></rect>'
                     f'<text x="{label_w + w + 4:.1f}" y="{y + 14}" font-size="11">{v:g}</text>')
    return _frame(row * len(items) + 4, title, "".join(parts))


def lines(title: str, days: Sequence[str], series: Mapping[str, Sequence[float | None]], height: int = 200) -> str:
    """One polyline per series over the days (a gap where a series has no value)."""
    values = [v for vs in series.values() for v in vs if v is not None]
    if not days or not values:
        return f'<p class="empty">{escape(title)}: no data</p>'
    top = max(values) or 1
    left, bottom, plot_h = 40, height - 40, height - 60
    step = (WIDTH - left - 10) / max(len(days) - 1, 1)
    names = list(series)[:MAX_SERIES]
    parts = [f'<text x="0" y="12" font-size="11">{top:g}</text>',
             f'<line x1="{left}" y1="{bottom}" x2="{WIDTH - 10}" y2="{bottom}" stroke="#999"/>']
    for j, name in enumerate(names):
        points = [(left + i * step, bottom - plot_h * v / top) for i, v in enumerate(series[name]) if v is not None]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        colour = PALETTE[j % len(PALETTE)]
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2" fill="{colour}"/>' for x, y in points if len(points) <= 62)
    for i, day in enumerate(days):
        if len(days) <= 31 or i % max(len(days) // 12, 1) == 0:
            parts.append(f'<text x="{left + i * step:.1f}" y="{bottom + 14}" font-size="9">{escape(day[5:])}</text>')
    parts.append(_legend(names, height - 14))
    return _frame(height, title, "".join(parts))
