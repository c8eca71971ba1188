"""Test architect (/cover, seed 002): the test cases of a method, and where they go."""

from __future__ import annotations

from bot.models import AgentRole
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.roles.cover_brief import MethodBrief, bullet_list, describe

ROLE = Role(
    name=AgentRole.TEST_ARCHITECT, template="test_architect.md", tools=WORKSPACE_TOOLS, max_turns=15
)


def build_task(
    brief: MethodBrief, *, behaviors: list[str], edge_cases: list[str], existing: list[str]
) -> str:
    """The architect's first message: the method and its analysis."""
    return "\n\n".join(
        [
            describe(brief, "test plan"),
            "## The analysis\n### Behaviours\n" + bullet_list(behaviors),
            "### Edge cases\n" + bullet_list(edge_cases),
            "### Existing tests that exercise it\n" + bullet_list(existing),
            "## Your task\nPlan the tests this method needs and the test file they go in, then"
            " call `finish` with `data` as your instructions describe. Change no file.",
        ]
    )
