"""`agentbot implement TASKS_MD`: work a Spec Kit task list on the checkout's branch."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.cli._common import pushed_branch, run_on_checkout, usage_error
from bot.cli.app import app
from bot.cli.options import (
    MAX_COUNT,
    MAX_NUMBER,
    CheckoutDryRunOption,
    CheckoutOption,
    GitHubRepoOption,
    GivenPath,
    JsonOption,
)
from bot.errors import TaskParseError
from bot.input_files import read_input
from bot.models import Job, JobKind
from bot.tasks_md import TASK_LINE, parse_selection, parse_tasks, select


@app.command()
def implement(
    tasks_md: Annotated[
        Path,
        typer.Argument(metavar="TASKS_MD", path_type=GivenPath, help="The tasks.md to work."),
    ],
    selection: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="SELECTION",
            help="Only these tasks: T010-T015, T012,T014, phase 3 or US2 (default: all).",
        ),
    ] = None,
    repo_dir: CheckoutOption = Path(),
    task: Annotated[
        str | None, typer.Option(help="Only this task (e.g. T012); same as the SELECTION T012.")
    ] = None,
    phase: Annotated[
        int | None,
        typer.Option(
            min=1, max=MAX_COUNT, help="Only this phase number's tasks; same as `phase N`."
        ),
    ] = None,
    pr: Annotated[
        int | None, typer.Option(min=1, max=MAX_NUMBER, help="Update this pull request's body.")
    ] = None,
    github_repo: GitHubRepoOption = None,
    dry_run: CheckoutDryRunOption = False,
    as_json: JsonOption = False,
) -> None:
    """Work the task list: one validated commit per task, its box ticked, pushed per batch.

    It starts from the pushed branch, so the checkout must be clean with nothing unpushed.
    """
    repo_dir = repo_dir.resolve()
    path = tasks_md.resolve()
    try:
        data = read_input(path)
    except FileNotFoundError:
        raise usage_error(f"{tasks_md}: no such file") from None
    except OSError as exc:
        raise usage_error(f"{tasks_md}: cannot read: {exc.strerror or exc}") from None
    try:
        plan = parse_tasks(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise usage_error(f"{tasks_md}:{line}: not UTF-8 text ({exc.reason})") from None
    except TaskParseError as exc:
        raise usage_error(f"{tasks_md}:{exc.line_number or 0}: {exc}") from exc
    if not plan.tasks:  # else the job would start, ask GitHub, and find nothing to do
        raise usage_error(f"{tasks_md}: no tasks: a task line looks like `{TASK_LINE}`")
    given = [*(selection or []), *([task] if task is not None else [])]
    if any(not part.strip() for part in given):
        # An empty selection would read as "all tasks": the opposite of what was meant.
        raise usage_error("an empty SELECTION or --task selects nothing: name tasks, or omit it")
    chosen = " ".join([*given, f"phase {phase}" if phase else ""]).strip()
    try:
        select(plan, parse_selection(chosen))
    except TaskParseError as exc:
        raise usage_error(f"{tasks_md}: cannot select `{chosen}`: {exc}") from exc
    try:
        rel = path.relative_to(repo_dir).as_posix()
    except ValueError:
        raise usage_error(f"{tasks_md} is not inside the checkout {repo_dir}") from None
    branch, repo = pushed_branch(repo_dir, github_repo)
    from bot.workflows.implement.story import implement as run  # loads only when it runs

    params: dict[str, object] = {"tasks_path": rel, "selection": chosen}
    job = Job(kind=JobKind.IMPLEMENT, repo=repo, ref=branch, number=pr, params=params)
    run_on_checkout(job, run, repo_dir, dry_run=dry_run, as_json=as_json)
