"""Which tasks.md an Implementer job works on, and which of its tasks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.errors import AgentbotError
from bot.git import Workspace
from bot.tasks_md import TaskPlan
from bot.workflows.flow import Refused


def find_tasks(ws: Workspace, named: str) -> str:
    """The tasks file the job names, else the only `tasks.md` the branch tracks."""
    if named:
        if not (ws.path / named).is_file():
            raise AgentbotError(f"tasks file {named!r} not found on the branch")
        _inside(ws, named)
        return named
    found = sorted(p for p in ws.tracked_files() if p == "tasks.md" or p.endswith("/tasks.md"))
    if not found:
        raise AgentbotError("no tasks.md on the branch; name one: `/implement path/to/tasks.md`")
    _inside(ws, found[0])
    if len(found) > 1:
        raise AgentbotError(
            f"several tasks.md files ({', '.join(found)}); name one: `/implement {found[0]}`"
        )
    return found[0]


def _inside(ws: Workspace, path: str) -> None:
    """Refuse a tasks file that resolves outside the workspace (a symlink, `..`)."""
    if not (ws.path / path).resolve().is_relative_to(ws.path.resolve()):
        raise Refused(f"{path} points outside the repository; agentbot will not follow it")


def selection(plan: TaskPlan, params: Mapping[str, Any]) -> set[str] | None:
    """The job's `task` / `phase` narrowing of the plan, or None for every task."""
    task, phase = params.get("task"), params.get("phase")
    if not task and not phase:
        return None
    return plan.select(tasks=[str(task)] if task else [], phases=[int(phase)] if phase else [])
