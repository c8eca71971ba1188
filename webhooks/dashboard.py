"""The dashboard (`GET /dashboard`), behind the jobs page's password: spend against the
caps, outcomes per kind, rates, cost per merged PR, the queue and job durations, as SVG."""

from __future__ import annotations

from datetime import timedelta
from html import escape

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

from bot.clock import Clock, SystemClock
from bot.errors import QueueError
from bot.queue import JobQueue
from bot.stats.caps import period_start
from bot.stats.dashboard import DASHBOARD_STYLE, Spend, dashboard_body
from bot.stats.figures import spend_by_day
from bot.worker.outcomes import load_stats
from webhooks.pages import STYLE, allowed, ask_password

DAYS = 14
"""Days of spend the dashboard shows."""


def render_dashboard(
    queue: JobQueue,
    *,
    day_cap: float | None = None,
    month_cap: float | None = None,
    clock: Clock | None = None,
) -> str:
    """The whole dashboard page from what `queue` holds now."""
    now = (clock or SystemClock()).now()
    today = period_start("day", now)
    days = [today - timedelta(days=DAYS - 1 - i) for i in range(DAYS)]
    spend = Spend(
        days=days,
        per_day=spend_by_day(queue.spend_rows(days[0]), days),
        month=queue.spent(None, period_start("month", now)),
        day_cap=day_cap,
        month_cap=month_cap,
    )
    states = {s.value: n for s, n in queue.counts().items()}
    body = dashboard_body(load_stats(queue), spend, states)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="refresh" content="60"><title>agentbot dashboard</title>'
        f"<style>{STYLE}{DASHBOARD_STYLE}</style></head><body><h1>agentbot dashboard</h1>"
        f'<nav><a href="/">jobs</a> <a href="/metrics">metrics</a></nav>{body}</body></html>'
    )


def add_dashboard(
    app: FastAPI,
    queue: JobQueue,
    *,
    password: str | None = None,
    day_cap: float | None = None,
    month_cap: float | None = None,
) -> None:
    """Route `GET /dashboard` on `app` (401 without the jobs page's password)."""

    @app.get("/dashboard")
    async def dashboard(request: Request) -> Response:
        """The operator's figures as charts."""
        if not allowed(request, password):
            return ask_password()
        try:
            page = await anyio.to_thread.run_sync(
                lambda: render_dashboard(queue, day_cap=day_cap, month_cap=month_cap)
            )
        except QueueError as exc:
            return HTMLResponse(f"<p>Queue unavailable: {escape(str(exc))}</p>", status_code=503)
        return HTMLResponse(page)
