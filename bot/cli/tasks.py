"""`agentbot tasks`: parse a Spec Kit tasks.md and print its plan, or its first error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.cli.app import EXIT_OK, EXIT_USAGE, app
from bot.cli.options import GivenPath
from bot.errors import TaskParseError
from bot.input_files import read_input
from bot.tasks_md import TASK_LINE, Phase, Task, TaskPlan, parse_tasks


def _fail(message: str) -> typer.Exit:
    typer.echo(message, err=True)
    return typer.Exit(EXIT_USAGE)


def _read(path: Path) -> str:
    """The file's text, exactly (CRLF kept); input errors exit 2 with `path[:line]: why`."""
    try:
        data = read_input(path)
    except FileNotFoundError:
        raise _fail(f"{path}: no such file") from None
    except IsADirectoryError:
        raise _fail(f"{path}: is a directory, not a tasks.md file") from None
    except OSError as exc:
        raise _fail(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _fail(f"{path}:{line}: not UTF-8 text ({exc.reason})") from None


def _phase_name(phase: Phase) -> str:
    if phase.number is None:
        return phase.title or "(tasks before any ## heading)"
    return f"Phase {phase.number}: {phase.title}"


def _plan_json(path: Path, plan: TaskPlan) -> str:
    phases = [
        {**p.model_dump(), "tasks": [t.id for t in plan.tasks if t.phase == p.index]}
        for p in plan.phases
    ]
    doc = {
        "path": str(path),
        "phases": phases,
        "tasks": [t.model_dump() for t in plan.tasks],
        "batches": [[t.id for t in b] for b in plan.batches()],
        "all_batches": [[t.id for t in b] for b in plan.batches(include_done=True)],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _task_row(number: str, bracket: str, task: Task) -> list[Text]:
    text = Text()
    for tag in (["P"] if task.parallel else []) + task.tags:
        text.append(f"[{tag}] ", style="cyan")
    text.append(task.description, style="dim" if task.done else "")
    mark = Text("✓", style="green") if task.done else Text("○", style="yellow")
    return [Text(number, style="bold"), Text(bracket, style="cyan"), mark, Text(task.id), text]


def _print_plan(console: Console, path: Path, plan: TaskPlan) -> None:
    done = sum(t.done for t in plan.tasks)
    todo = plan.batches()
    console.print(
        Text(
            f"{path}\n{len(plan.phases)} phases, {len(plan.tasks)} tasks:"
            f" {done} done, {len(plan.tasks) - done} to do in {len(todo)} batches",
            style="bold",
        )
    )
    console.print(Text("✓ done  ○ to do  ┌│└ one batch of [P] tasks that may run together"))
    batches = plan.batches(include_done=True)
    for phase in plan.phases:
        tasks = [t for t in plan.tasks if t.phase == phase.index]
        header = Text(f"\n{_phase_name(phase)}", style="bold magenta")
        where = f"line {phase.line}, " if phase.line else ""
        header.append(f"  ({where}{sum(t.done for t in tasks)}/{len(tasks)} done)", style="dim")
        console.print(header)
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right", no_wrap=True, min_width=len(str(len(batches))))
        for _ in range(3):
            grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for number, batch in enumerate(batches, 1):
            if batch[0].phase != phase.index:
                continue
            for i, task in enumerate(batch):
                bracket = " " if len(batch) == 1 else "┌" if i == 0 else "└"
                if 0 < i < len(batch) - 1:
                    bracket = "│"
                grid.add_row(*_task_row(str(number) if i == 0 else "", bracket, task))
        console.print(grid)


@app.command("tasks")
def tasks_command(
    tasks_md: Annotated[
        Path,
        typer.Argument(metavar="TASKS_MD", path_type=GivenPath, help="A Spec Kit tasks.md file."),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Parse TASKS_MD and print its phases and batches; on a format error print path:line (exit 2).

    JSON: phases (with their task ids), tasks, `batches` (ids still to do, in execution
    order) and `all_batches` (the same order with done tasks included).
    """
    text = _read(tasks_md)
    try:
        plan = parse_tasks(text)
    except TaskParseError as exc:
        line = exc.line_number
        message = exc.message.removeprefix(f"line {line}: ")
        raise _fail(f"{tasks_md}:{line}: {message}" if line else f"{tasks_md}: {message}") from None
    if not plan.tasks:  # a file with no task is the wrong file, or not written yet
        raise _fail(f"{tasks_md}: no tasks: a task line looks like `{TASK_LINE}`")
    if as_json:
        typer.echo(_plan_json(tasks_md, plan))
    else:
        _print_plan(Console(highlight=False), tasks_md, plan)
    raise typer.Exit(EXIT_OK)
