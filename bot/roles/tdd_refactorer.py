"""TDD Refactorer (seed 000): one refactoring, tests staying green and unchanged."""

from __future__ import annotations

from bot.models import AgentRole
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.roles.tdd_brief import CycleBrief, describe, previous

ROLE = Role(
    name=AgentRole.REFACTORER, template="tdd_refactorer.md", tools=WORKSPACE_TOOLS, max_turns=20
)


def build_task(brief: CycleBrief, *, attempt: int = 1, verdict: str = "") -> str:
    """The Refactorer's first message: the green code to improve."""
    return "\n\n".join(
        p
        for p in [
            describe(brief),
            previous(verdict, attempt),
            "## Your task\nThe suite is green. Make at most one refactoring of the code (naming,"
            " duplication, structure) that keeps every test passing; do not touch tests. Put"
            " a one-line description in `data.refactoring`, or change nothing and say so.",
        ]
        if p
    )
