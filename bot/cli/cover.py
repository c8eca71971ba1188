"""`agentbot cover`: tests for what the checkout's branch changed against a base (DESIGN §8.5)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.cli._common import pushed_branch, run_on_checkout, usage_error
from bot.cli.app import app
from bot.cli.options import (
    CheckoutDryRunOption,
    CheckoutOption,
    GitHubRepoOption,
    JsonOption,
    non_empty,
)
from bot.models import Job, JobKind

Targets = Annotated[
    list[str] | None, typer.Argument(metavar="TARGETS", help="Only these files or methods.")
]


@app.command()
def cover(
    targets: Targets = None,
    repo_dir: CheckoutOption = Path(),
    base: Annotated[
        str | None,
        typer.Option(
            callback=non_empty("a branch name (e.g. --base main)"),
            help="Compare with this branch (default: the default branch).",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Go on past new red-zone methods.")
    ] = False,
    github_repo: GitHubRepoOption = None,
    dry_run: CheckoutDryRunOption = False,
    as_json: JsonOption = False,
) -> None:
    """Write tests for the methods the branch added or changed; push them as one commit.

    The branch must be pushed and the checkout clean: the run starts from the pushed branch.
    """
    if any(not t.strip() for t in targets or []):
        # An empty target would cover nothing it names; checked before the fetch.
        raise usage_error("an empty TARGETS entry: name files or methods, or leave TARGETS out")
    repo_dir = repo_dir.resolve()
    branch, repo = pushed_branch(repo_dir, github_repo)
    if base is not None and base == branch:
        raise usage_error(f"--base {base} is the branch to cover; name the branch it grew from")
    from bot.workflows.cover.story import cover as run  # loads only when it runs

    params: dict[str, object] = {"targets": list(targets or []), "force": force, "base": base or ""}
    job = Job(kind=JobKind.COVER, repo=repo, ref=branch, params=params)
    run_on_checkout(job, run, repo_dir, dry_run=dry_run, as_json=as_json)
