"""What every TDD role is told: the kata (untrusted text, fenced), the cycle, how tests run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.models import KataDescription
from bot.untrusted import fence


@dataclass(frozen=True)
class CycleBrief:
    """The kata and where the session stands."""

    kata: KataDescription
    cycle: int
    requirement: int
    """1-based; 0 before the Supervisor picked one."""
    language: str
    test_command: str
    test_files: Sequence[str] = ()
    done: Sequence[str] = ()
    """Lines on the cycles done so far (requirement, test)."""


def requirement_text(brief: CycleBrief) -> str:
    """The requirement this cycle works on."""
    return brief.kata.requirements[brief.requirement - 1] if brief.requirement else ""


def describe(brief: CycleBrief) -> str:
    """The shared part of every TDD role's first message."""
    kata = brief.kata
    reqs = "\n".join(f"{i}. {r}" for i, r in enumerate(kata.requirements, 1))
    text = [f"# {kata.title}", kata.description, "## Requirements", reqs]
    if kata.constraints:
        text += ["## Constraints", "\n".join(f"- {c.description}" for c in kata.constraints)]
    if kata.examples:
        text += ["## Examples", "\n".join(f"- {e}" for e in kata.examples)]
    parts = [
        f"# TDD cycle {brief.cycle}: {kata.title}",
        fence("\n\n".join(t for t in text if t), label="the kata"),
        f"Language: {brief.language}. The whole suite runs with `{brief.test_command}`.",
        "Test files now: " + (", ".join(f"`{f}`" for f in brief.test_files) or "none yet"),
        "Cycles done:\n" + ("\n".join(f"- {d}" for d in brief.done) or "- none yet"),
    ]
    if brief.requirement:
        head = f"## This cycle's requirement ({brief.requirement})"
        parts.append(f"{head}\n{requirement_text(brief)}")
    return "\n\n".join(parts)


def previous(verdict: str, attempt: int) -> str:
    """The runner's verdict on the previous attempt, for a retry."""
    if not verdict:
        return ""
    return f"## Attempt {attempt}: your previous attempt was rejected\n{verdict}"
