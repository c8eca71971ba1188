"""`agentbot fix OWNER/REPO#N`: run the IssueFixer on one issue."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.cli._common import (
    command_env,
    git_out,
    parse_issue_ref,
    print_result,
    usage_error,
)
from bot.cli.app import app
from bot.cli.options import checkout_dir
from bot.models import Job, JobKind


@app.command()
def fix(
    ref: Annotated[str, typer.Argument(metavar="OWNER/REPO#N", help="The issue to fix.")],
    repo_dir: Annotated[
        Path | None,
        checkout_dir("Work in this checkout, not a fresh clone."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Do everything locally; print what would be posted.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Fix one issue: agent, validation, commit, push, pull request."""
    repo, number = parse_issue_ref(ref)
    if repo_dir is not None and git_out(repo_dir, "status", "--porcelain"):
        # The fix resets the checkout to the base branch: never over someone's work.
        raise usage_error(f"{repo_dir} has uncommitted changes: commit or stash them first")
    from bot.workflows.fix.story import fix_issue  # loads only when it runs

    with command_env(repo, checkout=repo_dir, dry_run=dry_run) as env:
        # The person running the CLI holds the token: no permission guard applies to them.
        result = fix_issue(Job(kind=JobKind.FIX_ISSUE, repo=repo, number=number), env)
    print_result(result, as_json=as_json)
    raise typer.Exit(result.status.exit_code)
