"""Small charts as plain SVG, rendered on the server: no script, no CDN, readable at a glance.

Each chart is a `<figure class="chart" id=...>` whose bars carry their series
(`<g class="series" data-series=...>`) and values (`data-value`), so a test, and a person
with a screen reader (`<title>` on every bar), reads the same numbers the picture shows. A
chart with nothing to show says so instead of drawing anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

WIDTH, HEIGHT = 560, 220
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 40
COLORS = ("#0969da", "#1a7f37", "#cf222e", "#9a6700", "#8250df", "#57606a")


def _fmt(value: float, unit: str) -> str:
    if unit == "$":
        return f"${value:,.2f}"
    if unit == "%":
        return f"{value * 100:.0f}%"
    return f"{value:,.4g}{unit}"


def empty_chart(chart_id: str, title: str, why: str = "no data yet") -> str:
    """A chart's frame saying there is nothing to draw."""
    return (
        f'<figure class="chart empty" id="{escape(chart_id)}"><figcaption>{escape(title)}'
        f'</figcaption><p class="nodata">{escape(why)}</p></figure>'
    )


def bar_chart(
    chart_id: str,
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    unit: str = "",
    line: tuple[str, float] | None = None,
) -> str:
    """Grouped bars, one group per category and one bar per series (None: no bar); `line`
    draws a labelled horizontal limit (a cap)."""
    values = [v for vs in series.values() for v in vs if v is not None]
    if not categories or not values:
        return empty_chart(chart_id, title)
    top = max([*values, line[1] if line else 0.0, 0.0]) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    group_w = plot_w / len(categories)
    bar_w = min(48.0, max(2.0, group_w * 0.8 / max(1, len(series))))
    pad = (group_w - bar_w * len(series)) / 2  # each group centred on its label

    def y(v: float) -> float:
        return TOP + plot_h - v / top * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}"'
        f' height="{HEIGHT}" role="img" aria-label="{escape(title)}">',
        f'<line x1="{LEFT}" y1="{y(0):.1f}" x2="{WIDTH - RIGHT}" y2="{y(0):.1f}"'
        ' stroke="#8c959f"/>',
        f'<text x="{LEFT - 4}" y="{TOP + 10}" text-anchor="end" font-size="10">'
        f"{escape(_fmt(top, unit))}</text>",
        f'<text x="{LEFT - 4}" y="{y(0):.1f}" text-anchor="end" font-size="10">0</text>',
    ]
    for i, name in enumerate(series):
        color = COLORS[i % len(COLORS)]
        bars = []
        for j, v in enumerate(series[name]):
            if v is None:
                continue
            x = LEFT + j * group_w + pad + i * bar_w
            label = f"{categories[j]} {name}: {_fmt(v, unit)}"
            bars.append(
                f'<rect class="bar" data-category="{escape(categories[j])}" data-value="{v:g}"'
                f' x="{x:.1f}" y="{y(v):.1f}" width="{bar_w:.1f}"'
                f' height="{max(0.0, y(0) - y(v)):.1f}" fill="{color}">'
                f"<title>{escape(label)}</title></rect>"
            )
            if len(categories) * len(series) <= 12:  # room to print the value over the bar
                bars.append(
                    f'<text x="{x + bar_w / 2:.1f}" y="{y(v) - 3:.1f}" text-anchor="middle"'
                    f' font-size="10">{escape(_fmt(v, unit))}</text>'
                )
        parts.append(f'<g class="series" data-series="{escape(name)}">{"".join(bars)}</g>')
    step = max(1, len(categories) // 10)  # at most ~10 labels, so they never overlap
    for j, cat in enumerate(categories):
        if j % step == 0:
            x = LEFT + j * group_w + group_w / 2
            parts.append(
                f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle"'
                f' font-size="10">{escape(cat)}</text>'
            )
    if line is not None:
        name, limit = line
        parts.append(
            f'<g class="series limit" data-series="{escape(name)}" data-value="{limit:g}">'
            f'<line x1="{LEFT}" y1="{y(limit):.1f}" x2="{WIDTH - RIGHT}" y2="{y(limit):.1f}"'
            f' stroke="#cf222e" stroke-dasharray="4 3"/><text x="{WIDTH - RIGHT}"'
            f' y="{y(limit) - 3:.1f}" text-anchor="end" font-size="10" fill="#cf222e">'
            f"{escape(name)} {escape(_fmt(limit, unit))}</text></g>"
        )
    parts.append("</svg>")
    legend = "".join(
        f'<span class="key"><i style="background:{COLORS[i % len(COLORS)]}"></i>'
        f"{escape(name)}</span>"
        for i, name in enumerate(series)
    )
    return (
        f'<figure class="chart" id="{escape(chart_id)}"><figcaption>{escape(title)}'
        f'</figcaption>{"".join(parts)}<div class="legend">{legend}</div></figure>'
    )
