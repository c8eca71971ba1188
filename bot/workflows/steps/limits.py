"""What a change may not do (DESIGN §4 `limits`), judged by bot.outbound on what is pushed."""

from __future__ import annotations

from bot.config import Limits
from bot.git import Workspace
from bot.outbound.guard import PushGuard, refuse, worktree_violations

__all__ = ["AGENTS_WORK", "push_guard", "refuse", "worktree_problems"]

AGENTS_WORK = ".agents-work/"
"""Session artifacts committed on request (seed 004): pushed and scanned for secrets, but
not counted against the line limits."""


def push_guard(base: str, limits: Limits, *, per_commit_lines: bool = False) -> PushGuard:
    """The check every push of a job's workspace passes, from the commit `base`."""
    return PushGuard(
        base=base, limits=limits, per_commit_lines=per_commit_lines, uncounted=(AGENTS_WORK,)
    )


def worktree_problems(ws: Workspace, base: str, limits: Limits) -> str:
    """Why the working tree may not be proposed ("" when it may), rule, file and number."""
    found = worktree_violations(ws, base, limits, uncounted=(AGENTS_WORK,))
    return "; ".join(str(v) for v in found)
