"""TDD Implementer (seed 000): the minimal code that makes every test pass."""

from __future__ import annotations

from bot.models import AgentRole
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.roles.tdd_brief import CycleBrief, describe, previous

ROLE = Role(
    name=AgentRole.TDD_IMPLEMENTER,
    template="tdd_implementer.md",
    tools=WORKSPACE_TOOLS,
    max_turns=30,
)


def build_task(brief: CycleBrief, *, red: str, attempt: int = 1, verdict: str = "") -> str:
    """The Implementer's first message: the failing test's output, and a previous failure."""
    return "\n\n".join(
        p
        for p in [
            describe(brief),
            f"## The failing test (the runner's output)\n```\n{red}\n```",
            previous(verdict, attempt),
            "## Your task\nWrite the minimal code that makes every test pass, this new one"
            " included. Do not edit, add or delete tests. Then call `finish`.",
        ]
        if p
    )
