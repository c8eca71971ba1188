"""TDD Supervisor (seed 000): picks the next requirement and answers the runner's verdicts."""

from __future__ import annotations

from collections.abc import Sequence

from bot.models import AgentRole
from bot.roles.base import Role
from bot.roles.tdd_brief import CycleBrief, describe

ROLE = Role(name=AgentRole.SUPERVISOR, template="tdd_supervisor.md", tools=(), max_turns=3)


def pick_task(brief: CycleBrief, remaining: Sequence[int]) -> str:
    """Ask for the next requirement (one of `remaining`) or done."""
    left = ", ".join(str(n) for n in remaining)
    return (
        describe(brief) + f"\n\n## Your task\nRequirements not covered yet: {left}. Pick the"
        " next one to test (`data.requirement`), smallest step first, or set `data.done`"
        " when every requirement has a passing test."
    )


def verdict_task(brief: CycleBrief, verdict: str, attempt: int, tries: int) -> str:
    """Ask for advice on a rejected test (overshoot or the wrong reason to fail)."""
    return (
        describe(brief) + f"\n\n## The runner rejected the Tester's test (attempt {attempt} of"
        f" {tries})\n{verdict}\n\n## Your task\nTell the Tester, in `data.hint`, what different"
        " test to write next for this requirement."
    )
