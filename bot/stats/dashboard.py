"""The dashboard page's body: the operator's figures as charts (bot.stats.charts) and tiles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

from bot.stats.charts import bar_chart, empty_chart


@dataclass(frozen=True)
class Spend:
    """Spend of the last days and this month, with the installation's caps."""

    days: Sequence[datetime]
    per_day: Sequence[float]
    month: float
    day_cap: float | None = None
    month_cap: float | None = None


def _usd(v: Any) -> str:
    return "-" if v is None else f"${float(v):,.2f}"


def _tile(name: str, value: str, tile_id: str) -> str:
    return (
        f'<div class="tile" id="{tile_id}"><b>{escape(value)}</b><span>{escape(name)}</span></div>'
    )


def dashboard_body(f: Mapping[str, Any], spend: Spend, states: Mapping[str, int]) -> str:
    """Tiles and charts of the figures (`bot.stats.figures.figures`)."""
    month = _usd(spend.month) + (f" of {_usd(spend.month_cap)}" if spend.month_cap else "")
    tiles = "".join(
        [
            _tile("spent this UTC month", month, "tile-month"),
            _tile("cost per merged PR", _usd(f["cost_per_merged_pr_usd"]), "tile-cost"),
            _tile(
                "merged / closed / open PRs",
                f"{f['merged']} / {f['closed']} / {f['open']}",
                "tile-outcomes",
            ),
            _tile("zero-touch merges", str(f["zero_touch"]), "tile-zero-touch"),
            _tile("queue depth", str(f["queue_depth"]), "tile-queue"),
        ]
    )
    line = ("daily cap", spend.day_cap) if spend.day_cap else None
    days = [d.strftime("%m-%d") for d in spend.days]
    title = f"Spend per UTC day, last {len(spend.days)} days"
    charts = [
        bar_chart("chart-spend", title, days, {"spend": list(spend.per_day)}, unit="$", line=line)
        if any(spend.per_day)
        else empty_chart("chart-spend", title, "nothing spent in these days")
    ]
    by_kind: Mapping[str, Mapping[str, Any]] = f["by_kind"]
    with_prs = [k for k, g in by_kind.items() if g["merged"] + g["closed"] + g["open"]]
    charts.append(
        bar_chart(
            "chart-outcomes",
            "Pull requests per kind",
            with_prs,
            {s: [by_kind[k][s] for k in with_prs] for s in ("merged", "closed", "open")},
        )
    )
    ran = [k for k, g in by_kind.items() if g["jobs"]]
    charts.append(
        bar_chart(
            "chart-rates",
            "Success and unverified rates per kind",
            ran,
            {
                "success": [by_kind[k]["success_rate"] for k in ran],
                "unverified": [by_kind[k]["unverified_rate"] for k in ran],
            },
            unit="%",
        )
    )
    charts.append(
        bar_chart(
            "chart-cost",
            "Cost per merged PR per kind",
            ran,
            {"cost per merged PR": [by_kind[k]["cost_per_merged_pr_usd"] for k in ran]},
            unit="$",
        )
    )
    charts.append(
        bar_chart(
            "chart-queue",
            "Jobs by state",
            list(states),
            {"jobs": [float(n) for n in states.values()]} if any(states.values()) else {},
        )
    )
    p50, p95 = f["duration_p50_seconds"], f["duration_p95_seconds"]
    charts.append(
        bar_chart(
            "chart-durations",
            "Job durations (claim to finish)",
            ["p50", "p95"] if p50 is not None else [],
            {"seconds": [p50, p95]},
            unit="s",
        )
    )
    return f'<div class="tiles">{tiles}</div><div class="charts">{"".join(charts)}</div>'


DASHBOARD_STYLE = """
.tiles{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.tile{border:1px solid #d0d7de;border-radius:6px;padding:.6rem 1rem;min-width:9rem}
.tile b{display:block;font-size:20px}.tile span{color:#656d76}
.charts{display:flex;flex-wrap:wrap;gap:1rem}
.chart{border:1px solid #d0d7de;border-radius:6px;padding:.6rem;margin:0}
figcaption{font-weight:600;margin-bottom:.3rem}.nodata{color:#656d76;width:560px}
.legend .key{margin-right:1rem}.legend i{display:inline-block;width:10px;height:10px;
margin-right:4px}
"""
