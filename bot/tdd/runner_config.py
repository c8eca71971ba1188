"""The test runner's configuration, guarded like the tests in GREEN and REFACTOR (pure).

One line of it can make a red suite exit 0 (`addopts = "--co"` collects without running,
a `--deselect`, a jest `testPathIgnorePatterns`, a Makefile recipe that runs `true`), so
the Implementer and the Refactorer may not change it. The files are those that define how
a repository is judged (`bot.judge_files`: every file pytest reads its configuration from,
Makefile and justfile, tox and nox, package.json scripts and runner configs); in a file that
also holds other settings only the judging part counts: a dependency added to
`pyproject.toml` is fine, its `[tool.pytest.ini_options]` is not.
"""

from __future__ import annotations

from bot.judge_files import is_judge_file, judge_part


def is_runner_config(path: str) -> bool:
    """Whether `path` configures a test runner or the command that starts it."""
    return is_judge_file(path)


def runner_part(path: str, data: bytes) -> bytes:
    """What of `data` (the file at `path`) the runner reads; the whole file when unreadable."""
    return judge_part(path, data)
