"""Test writer (/cover, seed 002's test-implementer): writes the planned tests, runs them."""

from __future__ import annotations

from bot.models import AgentRole
from bot.roles.base import WORKSPACE_TOOLS, Role
from bot.roles.cover_brief import MethodBrief, bullet_list, describe

ROLE = Role(
    name=AgentRole.TEST_WRITER, template="test_writer.md", tools=WORKSPACE_TOOLS, max_turns=30
)


def build_task(
    brief: MethodBrief,
    *,
    test_file: str,
    cases: list[str],
    fixtures: list[str],
    behaviors: list[str],
) -> str:
    """The writer's first message: the method, the plan, the file to write to."""
    return "\n\n".join(
        [
            describe(brief, "tests"),
            "## Behaviours to prove\n" + bullet_list(behaviors),
            f"## The plan\nTest file: `{test_file}`\n\n### Test cases\n" + bullet_list(cases),
            "### Fixtures to reuse\n" + bullet_list(fixtures),
            "## Your task\nWrite these tests in the test file (create it if it does not exist,"
            " keep what it already holds), run them until they pass, then call `finish`.",
        ]
    )
