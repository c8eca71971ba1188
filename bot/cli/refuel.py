"""`agentbot refuel OWNER/REPO`: work through the labelled backlog within a budget."""

from __future__ import annotations

from typing import Annotated

import typer

from bot.cli._common import (
    check_repo_name,
    command_env,
    print_result,
    usage_error,
)
from bot.cli.app import app
from bot.cli.options import MAX_COUNT, finite_float
from bot.models import Job, JobKind


@app.command()
def refuel(
    repo: Annotated[str, typer.Argument(metavar="OWNER/REPO", help="The repository.")],
    label: Annotated[str | None, typer.Option(help="Backlog label (default: labels.fix).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=MAX_COUNT, help="Most issues to process.")] = 10,
    max_usd: Annotated[
        float | None,
        finite_float(
            ...,
            "--max-usd",
            low=0.01,
            unit="USD",
            help="Run budget (default: budget.max_usd_per_refuel).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Post nothing; print what would be posted.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Process open issues with the fix label, in priority order, within --limit and --max-usd."""
    check_repo_name(repo)
    if label is not None and not label.strip():  # not "the default": that is leaving it out
        raise usage_error(
            f"--label {label!r}: give a label name (e.g. --label agent-fix), or leave --label"
            " out for the repository's labels.fix"
        )
    from bot.workflows.handlers import HANDLERS  # loads only when it runs

    run = HANDLERS[JobKind.REFUEL]

    params = {"label": label or "", "limit": limit, "max_usd": max_usd or ""}
    with command_env(repo, checkout=None, dry_run=dry_run) as env:
        result = run(Job(kind=JobKind.REFUEL, repo=repo, params=params), env)
    print_result(result, as_json=as_json)
    raise typer.Exit(result.status.exit_code)
