"""Which files are tests, and whether a repository has any (pure, plus one `git ls-files`)."""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePosixPath

from bot.git import runner as git
from bot.models import NO_TESTS

__all__ = ["NO_TESTS", "has_test_files", "is_test"]

_TEST_DIRS = frozenset({"tests", "test", "testing", "spec", "specs", "__tests__", "t"})
_TEST_NAMES = (
    "test_*", "*_test.*", "*_tests.*", "*.test.*", "*.spec.*", "*_spec.*", "*Test.*", "test.*",
    "tests.*",
)  # fmt: skip
_NOT_TESTS = (".md", ".rst", ".txt", ".json", ".yml", ".yaml", ".toml", ".cfg", ".ini", ".lock")


def is_test(path: str) -> bool:
    """Whether a path is a test file (by folder or by name)."""
    p = PurePosixPath(path)
    return bool(_TEST_DIRS & set(p.parts[:-1])) or any(
        fnmatch.fnmatch(p.name, pat) for pat in _TEST_NAMES
    )


def has_test_files(repo: Path) -> bool:
    """Whether the repository tracks any test file (docs and config under tests/ aside)."""
    proc = git.run(["ls-files", "-z"], cwd=repo, timeout=60.0, check=False)
    if proc.returncode != 0:
        return True  # cannot tell: never call a repository test-less on a guess
    return any(is_test(p) and not p.endswith(_NOT_TESTS) for p in proc.stdout.split("\0") if p)
