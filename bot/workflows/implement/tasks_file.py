"""Which tasks.md an Implementer job works on, and which of its tasks."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot import treefs
from bot.errors import AgentbotError, TaskParseError
from bot.git import Workspace
from bot.tasks_md import TaskPlan, parse_selection, select
from bot.workflows.steps.flow import Refused


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


DESIGN_DOCS = ("plan.md", "spec.md", "data-model.md", "research.md", "quickstart.md")
"""Spec Kit's design documents next to tasks.md, in the order `/implement` reads them."""
READ_LIMIT = 4_000_000
"""A design document larger than this (bytes) is named, not read."""


def design_docs(ws: Workspace, tasks_path: str) -> list[tuple[str, str]]:
    """`(path, text)` of the feature directory's design documents and `contracts/*` that exist.

    Read without following any link (`bot.treefs`): a linked file or folder is skipped, a
    file over `READ_LIMIT` bytes is named instead of read.
    """
    folder = posixpath.dirname(tasks_path)
    found = [posixpath.join(folder, name) for name in DESIGN_DOCS]
    contracts = posixpath.join(folder, "contracts")
    if treefs.kind(ws.path, contracts) == "dir":
        for top, dirs, files in os.walk(ws.path / contracts):  # links to folders not entered
            dirs.sort()
            base = Path(top).relative_to(ws.path).as_posix()
            found += [posixpath.join(base, name) for name in sorted(files)]
    docs: list[tuple[str, str]] = []
    for rel in found:
        if treefs.kind(ws.path, rel) != "file":
            continue
        try:
            docs.append((rel, treefs.read_text(ws.path, rel, limit=READ_LIMIT)))
        except OSError as exc:  # too big, or swapped for a link since
            docs.append((rel, f"[agentbot: {rel} is not included here: {exc}]"))
    return docs


def _inside(ws: Workspace, path: str) -> None:
    """Refuse a tasks file that resolves outside the workspace (a symlink, `..`)."""
    if not (ws.path / path).resolve().is_relative_to(ws.path.resolve()):
        raise Refused(f"{path} points outside the repository; agentbot will not follow it")


def selection(plan: TaskPlan, params: Mapping[str, Any]) -> set[str] | None:
    """The job's narrowing of the plan (`selection`, or the older `task` / `phase`), or None.

    A selection that cannot be read or names what the file lacks is Refused: the job
    answers with the reason (a reply comment in the App) and touches nothing.
    """
    words = [str(params.get("selection") or "")]
    if params.get("task"):
        words.append(str(params["task"]))
    if params.get("phase"):
        words.append(f"phase {params['phase']}")
    text = " ".join(w for w in words if w.strip())
    try:
        return select(plan, parse_selection(text))
    except TaskParseError as exc:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise Refused(f"cannot select `{shown}`: {exc}") from exc
