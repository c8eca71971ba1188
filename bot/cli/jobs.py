"""`agentbot jobs`: list the jobs in the queue, newest first."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import typer

from bot.cli._common import reading_queue, usage_error
from bot.cli.app import EXIT_OK, app
from bot.cli.options import MAX_COUNT, non_empty
from bot.config import load_settings
from bot.queue import JobRecord, JobState

_STATES = ", ".join(s.value for s in JobState)


def _outcome(job: JobRecord) -> str:
    if job.result is not None:
        return f"{job.result.status.value}: {job.result.summary or job.result.error}"
    return job.error or job.decision


@app.command()
def jobs(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    limit: int = typer.Option(50, min=1, max=MAX_COUNT, help="Newest N jobs."),
    state: str | None = typer.Option(
        None, callback=non_empty(f"one of {_STATES}"), help="Only jobs in this state."
    ),
) -> None:
    """List the jobs in the queue, newest first."""
    settings = load_settings()
    try:
        wanted = JobState(state) if state is not None else None
    except ValueError:
        raise usage_error(f"--state {state!r}: give one of {_STATES}") from None
    # Only read: a queue that is not there is named (exit 2), not made.
    with reading_queue(settings.queue) as queue:
        records = queue.list(limit, wanted)
    if len(records) == limit:  # there may be more: say so rather than look like all of them
        typer.echo(f"the newest {limit} jobs; --limit N shows more", err=True)
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in records], indent=2))
        raise typer.Exit(EXIT_OK)
    from rich.console import Console
    from rich.table import Table

    table = Table("job", "state", "event", "repo", "#", "kind", "cost", "tries", "age", "outcome")
    now = datetime.now(UTC)
    for r in records:
        age = int((now - r.received_at).total_seconds())
        table.add_row(
            r.id,
            r.state.value,
            r.event_name,
            r.repo,
            "" if r.number is None else str(r.number),
            r.kind,
            f"${r.cost_usd:.2f}",
            str(r.attempts),
            f"{age}s" if age < 120 else f"{age // 60}m",
            _outcome(r),
        )
    if not records:
        typer.echo("no jobs")
        return
    Console(width=200, markup=False, highlight=False).print(table)  # outcomes hold [brackets]
