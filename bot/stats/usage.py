"""`agentbot usage`: spend in the current UTC day and month against every cap that is set."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from bot.stats.caps import INSTALLATION, Cap, Period, Spent, period_end, period_start

PERIODS: tuple[Period, Period] = ("day", "month")


def usage_rows(
    *,
    repos: Iterable[str],
    repo_caps: Mapping[str, tuple[float | None, float | None]],
    per_day: float | None,
    per_month: float | None,
    spent: Spent,
    now: datetime,
    only: str | None = None,
) -> list[dict[str, Any]]:
    """One row per scope and period: spent, the cap (None when unset), what is left, reset.

    The installation comes first, then each repository (those with a cap or spend), or only
    `only` when given.
    """
    names = sorted({*repos, *repo_caps} if only is None else {only})
    scopes: list[tuple[str, tuple[float | None, float | None]]] = [
        (INSTALLATION, (per_day, per_month)),
        *((r, repo_caps.get(r, (None, None))) for r in names),
    ]
    rows = []
    for scope, limits in scopes:
        for period, limit in zip(PERIODS, limits, strict=True):
            start = period_start(period, now)
            used = spent(scope or None, start)
            cap = Cap(scope, period, limit) if limit is not None else None
            rows.append(
                {
                    "scope": scope or "installation",
                    "period": period,
                    "spent_usd": round(used, 6),
                    "cap_usd": limit,
                    "left_usd": None if limit is None else round(max(0.0, limit - used), 6),
                    "reached": limit is not None and used >= limit,
                    "since": start.isoformat(),
                    "resets_at": period_end(period, now).isoformat(),
                    "setting": cap.setting if cap is not None else "",
                }
            )
    return rows


def usage_text(rows: list[dict[str, Any]]) -> str:
    """The rows as an aligned plain-text table."""
    lines = [f"{'scope':<32} {'period':<6} {'spent':>10} {'cap':>10} {'left':>10}  resets (UTC)"]
    for r in rows:
        cap = "-" if r["cap_usd"] is None else f"${r['cap_usd']:.2f}"
        left = "-" if r["left_usd"] is None else f"${r['left_usd']:.2f}"
        mark = "  REACHED" if r["reached"] else ""
        lines.append(
            f"{r['scope']:<32} {r['period']:<6} {'$' + format(r['spent_usd'], '.2f'):>10}"
            f" {cap:>10} {left:>10}  {r['resets_at'][:16].replace('T', ' ')}{mark}"
        )
    return "\n".join(lines)
