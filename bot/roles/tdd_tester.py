"""TDD Tester (seed 000): exactly one new failing test for the cycle's requirement."""

from __future__ import annotations

from bot.models import AgentRole
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.roles.tdd_brief import CycleBrief, describe, previous

ROLE = Role(name=AgentRole.TESTER, template="tdd_tester.md", tools=WORKSPACE_TOOLS, max_turns=20)


def build_task(brief: CycleBrief, *, attempt: int = 1, verdict: str = "", hint: str = "") -> str:
    """The Tester's first message: the requirement, and why a previous test was rejected."""
    parts = [describe(brief), previous(verdict, attempt)]
    if hint:
        parts.append(f"## The Supervisor's advice\n{hint}")
    parts.append(
        "## Your task\nWrite exactly one new test for this cycle's requirement. It must fail"
        " now because the behaviour is missing (an assertion, or a name the code does not have"
        " yet), not because the test itself is broken. Change test files only, then call"
        " `finish` with the test's name in `data.test`."
    )
    return "\n\n".join(p for p in parts if p)
