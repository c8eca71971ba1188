"""The push path's check: nothing reaches the remote that breaks a limit or holds a secret."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bot.config import Limits
from bot.errors import OutboundRefused
from bot.git import Workspace
from bot.git.changes import snapshot
from bot.outbound.gitview import GitView
from bot.outbound.limits import Judge, Violation
from bot.outbound.scan import Scanner, job_secrets


@dataclass
class PushGuard:
    """Judges `base..head` before every push of a workspace (set as `Workspace.push_guard`).

    `base` is a commit the bot recorded before any agent ran (never a ref the workspace
    could move). The Implementer counts lines per commit (one commit per task); the
    IssueFixer over the whole push.
    """

    base: str
    limits: Limits = field(default_factory=Limits)
    per_commit_lines: bool = False
    secrets: Callable[[], Iterable[str]] = job_secrets
    uncounted: tuple[str, ...] = ()
    """Path prefixes left out of the line counts (still judged by every other rule)."""

    def __call__(self, ws: Workspace, head: str) -> None:
        """Raise OutboundRefused, naming every broken rule, if `head` may not be pushed."""
        refuse(self.violations(ws, head))

    def violations(self, ws: Workspace, head: str, *, base: str | None = None) -> list[Violation]:
        """What is wrong with pushing `head` (empty: fine); `base` narrows to newer commits."""
        judge = Judge(GitView(ws), self.limits, Scanner(self.secrets()), self.uncounted)
        since = self.base if base is None else base
        return judge.commits(since, head, per_commit_lines=self.per_commit_lines)


def worktree_violations(
    ws: Workspace,
    base: str,
    limits: Limits,
    secrets: Iterable[str] | None = None,
    *,
    uncounted: tuple[str, ...] = (),
) -> list[Violation]:
    """What is wrong with the working tree (uncommitted work included) against `base`."""
    scanner = Scanner(job_secrets() if secrets is None else secrets)
    with snapshot(ws) as tree:
        return Judge(GitView(ws), limits, scanner, uncounted).change(base, tree)


def refuse(violations: list[Violation]) -> None:
    """Raise OutboundRefused when there is anything to refuse."""
    if violations:
        raise OutboundRefused([str(v) for v in violations])
