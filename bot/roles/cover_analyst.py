"""Analyzer (/cover, seed 002's code-analyzer): a method's behaviours, edge cases, tests."""

from __future__ import annotations

from bot.models import AgentRole
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.roles.cover_brief import MethodBrief, describe

ROLE = Role(
    name=AgentRole.ANALYST, template="cover_analyst.md", tools=WORKSPACE_TOOLS, max_turns=15
)


def build_task(brief: MethodBrief) -> str:
    """The analyzer's first message: the method to analyse."""
    return "\n\n".join(
        [
            describe(brief, "analysis"),
            "## Your task\nAnalyse this method's observable behaviour for the tests to come,"
            " find the existing tests that exercise it, and call `finish` with `data` as your"
            " instructions describe. Change no file.",
        ]
    )
