"""`agentbot usage`: what the App spent today and this month against every spend cap."""

from __future__ import annotations

import json

import typer

from bot.cli._common import check_repo_name, reading_queue
from bot.cli.app import app
from bot.cli.options import REPO_HINT, non_empty
from bot.clock import SystemClock
from bot.config import load_settings
from bot.stats.caps import period_start
from bot.stats.usage import usage_rows, usage_text


@app.command()
def usage(
    repo: str | None = typer.Option(
        None,
        callback=non_empty(REPO_HINT),
        help="Only this repository (owner/name) and the installation.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Show spend in the current UTC day and month against every cap (the App's queue)."""
    settings = load_settings()
    only = check_repo_name(repo) if repo else None
    now = SystemClock().now()
    with reading_queue(settings.queue) as queue:
        rows = usage_rows(
            repos={r.repo for r in queue.spend_rows(period_start("month", now))},
            repo_caps=queue.repo_caps(),
            per_day=settings.max_usd_per_day,
            per_month=settings.max_usd_per_month,
            spent=queue.spent,
            now=now,
            only=only,
        )
    if as_json:
        typer.echo(json.dumps({"now": now.isoformat(), "caps": rows}, indent=2))
        return
    typer.echo(usage_text(rows))
