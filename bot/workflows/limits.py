"""What a change may not do (DESIGN §4 `limits`): too many lines, protected paths, deleted tests."""

from __future__ import annotations

import fnmatch
import re

from bot.config import Limits
from bot.git import Workspace
from bot.report import TEST_PATH

AGENTS_WORK = ".agents-work/"
"""Session artifacts committed on request (seed 004); not part of the change itself."""


def limit_violations(ws: Workspace, base: str, limits: Limits) -> list[str]:
    """Why the change may not be proposed: too large, protected paths, deleted tests."""
    problems: list[str] = []
    changes = [c for c in ws.numstat(base) if not c.path.startswith(AGENTS_WORK)]
    total = sum(c.added + c.deleted for c in changes)
    if total > limits.max_changed_lines:
        problems.append(
            f"the change touches {total} lines, over the limit of {limits.max_changed_lines}"
            " (limits.max_changed_lines)"
        )
    for c in changes:
        for pattern in limits.protected_paths:
            if glob_match(c.path, pattern):
                problems.append(f"`{c.path}` is a protected path ({pattern})")
                break
    if not limits.allow_test_deletion:
        for path in ws.deleted_files(base):
            if TEST_PATH.search(path):
                problems.append(f"the change deletes the test file `{path}`")
    return problems


def glob_match(path: str, pattern: str) -> bool:
    """`**` matches any depth, `*` within one segment."""
    regex = (
        re.escape(pattern)
        .replace(r"\*\*/", "(.*/)?")
        .replace(r"\*\*", ".*")
        .replace(r"\*", "[^/]*")
    )
    return re.fullmatch(regex, path) is not None or fnmatch.fnmatch(path, pattern)
