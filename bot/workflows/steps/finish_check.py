"""An OK `finish` checked against the workspace before the agent stops (issue #20).

What would only be found after the agent stopped, and fail the job, goes back to the
model while it can still fix it: no change at all, a change over the repository's limits,
scratch files it created (a `reproduce.py`, a log), code changed without a test where a
regression test is required. The diff stat is shown with the first rejection only.
Whatever scratch is left when the agent is done never reaches the pull request
(`remove_scratch`).
"""

from __future__ import annotations

import fnmatch
import logging
from pathlib import Path, PurePosixPath

from bot.config import Limits
from bot.git import Workspace
from bot.models import AgentOutput
from bot.validation.testfiles import is_test
from bot.workflows.steps.limits import worktree_problems

__all__ = ["WorkspaceFinishCheck", "is_code", "is_scratch", "is_test", "remove_scratch"]

log = logging.getLogger("agentbot.job")

SCRATCH = (
    "reproduce*", "repro*", "scratch*", "debug_*", "tmp_*", "temp_*", "*.log", "*.orig",
    "*.rej", "*.bak", "*.swp", "out.txt", "output.txt", "*.pyc",
)  # fmt: skip
"""Names of files an agent makes for itself, not for the change."""

CODE_SUFFIXES = frozenset(
    [
        ".py",
        ".pyx",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".go",
        ".rs",
        ".rb",
        ".java",
        ".kt",
        ".scala",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".php",
        ".swift",
        ".ex",
        ".exs",
        ".erl",
        ".hs",
        ".ml",
        ".lua",
        ".pl",
        ".sh",
    ]
)


def is_code(path: str) -> bool:
    """Whether a path is program code (not docs, config or data)."""
    return PurePosixPath(path).suffix in CODE_SUFFIXES


def is_scratch(path: str) -> bool:
    """Whether an untracked file looks like the agent's own scratch."""
    return any(fnmatch.fnmatch(PurePosixPath(path).name, pat) for pat in SCRATCH)


def untracked(ws: Workspace) -> set[str]:
    """Untracked, not ignored files of the workspace."""
    out = ws.git("ls-files", "--others", "--exclude-standard", "-z")
    return {p for p in out.split("\0") if p}


class WorkspaceFinishCheck:
    """`finish_check` for a code-writing agent (bot.agent): see the module doc."""

    def __init__(self, ws: Workspace, base_sha: str, limits: Limits, *, require_test: bool) -> None:
        self.ws, self.base_sha, self.limits = ws, base_sha, limits
        self.require_test = require_test
        self.before = untracked(ws)
        self.stat_shown = False
        self.asked_for_test = False

    def scratch(self) -> list[str]:
        """Scratch files created since the check was made."""
        return sorted(p for p in untracked(self.ws) - self.before if is_scratch(p))

    def __call__(self, output: AgentOutput) -> str:
        problems = self.problems()
        if not problems:
            return ""
        if not self.stat_shown and self.ws.has_changes():
            self.stat_shown = True
            stat = self.ws.git("diff", "--stat", self.base_sha).strip()
            new = sorted(untracked(self.ws) - self.before)
            if new:
                stat += "\nnew files: " + ", ".join(new)
            problems.append(f"Your change so far (`git diff --stat`):\n{stat or '(nothing)'}")
        return "\n".join(problems)

    def problems(self) -> list[str]:
        """What is wrong with the workspace as an answer, one sentence each."""
        if not self.ws.has_changes():
            return [
                "the workspace has no change. Make the fix with the editor before you finish,"
                " or finish with FAIL or NEEDS_INFO saying why there is nothing to change."
            ]
        found = []
        if scratch := self.scratch():
            found.append(
                f"scratch files you created are still in the tree: {', '.join(scratch)}."
                f" Delete them (`rm {' '.join(scratch)}`); a file that belongs to the change"
                " needs another name."
            )
        if limits := worktree_problems(self.ws, self.base_sha, self.limits):
            found.append(f"the change breaks the repository's limits: {limits}.")
        if self.require_test and not self.asked_for_test:
            changed = self.ws.changed_files(self.base_sha)
            if any(is_code(f) and not is_test(f) for f in changed) and not any(
                is_test(f) for f in changed
            ):
                self.asked_for_test = True
                found.append(
                    "code changed but no test was added or changed. Add a regression test"
                    " that fails without the fix and passes with it; if the change cannot"
                    " be tested, say why in artifacts.notes and finish again."
                )
        return found


def remove_scratch(ws: Workspace, check: WorkspaceFinishCheck) -> list[str]:
    """Delete the scratch files the agent left, so no pull request carries them."""
    left = check.scratch()
    for path in left:
        (Path(ws.path) / path).unlink(missing_ok=True)
    if left:
        log.info("removed the agent's scratch files: %s", ", ".join(left))
    return left
