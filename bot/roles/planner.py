"""Planner (issue #28): reads the issue and the code, proposes a plan, changes nothing."""

from __future__ import annotations

from collections.abc import Sequence

from bot.models import AgentRole
from bot.models.github import Comment, Issue
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.roles.issue_fixer import issue_task
from bot.untrusted import fence

ROLE = Role(
    name=AgentRole.PLANNER,
    template="planner.md",
    tools=WORKSPACE_TOOLS,
    max_turns=20,
    read_only=True,
)


def plan_task(
    repo: str,
    issue: Issue,
    comments: Sequence[Comment],
    *,
    files: str = "",
    notes: str = "",
    previous: str = "",
) -> str:
    """The Planner's first message: the issue as the IssueFixer would see it, the notes of a
    `/plan <notes>` (fenced: a person wrote them), the plan they revise, and the task."""
    task = issue_task(repo, issue, comments, files=files)
    # The IssueFixer's task ends with its own "## Your task"; the Planner's replaces it.
    parts = [task.rsplit("\n\n## Your task", 1)[0]]
    if previous.strip():
        parts.append(f"## The plan being revised\n{fence(previous, label='previous plan')}")
    if notes.strip():
        parts.append(fence(notes, label="notes for this plan from the person who asked"))
    parts.append(
        "## Your task\n"
        f"Plan the fix of issue #{issue.number}: read the code it concerns, then call"
        " `finish` with the plan in `data`. Change no file."
    )
    return "\n\n".join(parts)
