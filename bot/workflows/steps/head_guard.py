"""An agent never commits: what its shell's `git commit` (or `git reset`, `update-ref`…) did to
HEAD is undone after its run, the changes kept in the work tree for the bot's own commit.

Whatever reaches the branch is committed by the workflow, with the messages and trailers it
wrote; a commit the agent made (forged `TDD-Cycle:` trailers, a bot identity) would otherwise be
pushed and trusted by a re-run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from bot.errors import GitError
from bot.git import Workspace

log = logging.getLogger("agentbot.job")

T = TypeVar("T")


def _where(ws: Workspace) -> tuple[str, str]:
    """HEAD's branch ref ("" detached) and sha ("" before the first commit)."""
    branch = ws.run(["symbolic-ref", "--quiet", "HEAD"], check=False).stdout.strip()
    got = ws.run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False)
    return branch, got.stdout.strip() if got.returncode == 0 else ""


def restore_head(ws: Workspace, before: tuple[str, str]) -> bool:
    """Put HEAD back where `before` says (a soft reset: files and index stay); True if it moved."""
    if _where(ws) == before:
        return False
    branch, sha = before
    if branch:
        ws.git("symbolic-ref", "HEAD", branch)
    if sha:
        ws.git("reset", "--soft", sha)
    elif branch:
        ws.git("update-ref", "-d", branch)  # no commit yet: the branch is unborn again
    return True


def guarded(ws: Workspace, what: str, step: Callable[[], T]) -> T:
    """Run `step` (an agent's run) and undo any move of HEAD it made."""
    try:
        before = _where(ws)
    except (GitError, OSError):
        return step()  # not a repository: nothing to guard
    try:
        return step()
    finally:
        # A failed reset raises: better no push than the agent's commits pushed.
        if restore_head(ws, before):
            log.warning("%s moved HEAD (its own commit?): reset to %s", what, before[1][:12])
