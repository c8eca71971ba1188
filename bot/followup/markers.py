"""What a follow-up keeps in its pull request's body: the CI fix count, and whose branch it is.

The count lives in the pull request body (a hidden marker), so it travels with the branch
whichever door runs the next job, and a person can reset it by deleting the line.
"""

from __future__ import annotations

import re

from bot.config import RepoConfig
from bot.models.github import PullRequest

CI_MARKER = re.compile(
    r"^[ \t]*<!-- agentbot:ci-fix attempts=(\d+) shas=([0-9a-f,]*) -->[ \t]*(?=\r?$)",
    re.MULTILINE,
)
"""Counts CI fix attempts in the pull request body: on the branch, whoever runs the job. A
whole line, and the last one counts: agentbot writes it last, after any text an agent wrote
(whose notes cannot hold an HTML comment anyway, `threads.unquoted`)."""


def _last(body: str) -> re.Match[str] | None:
    found = list(CI_MARKER.finditer(body or ""))
    return found[-1] if found else None


def ci_attempts(body: str) -> tuple[int, list[str]]:
    """(fix attempts so far, the failing commits they answered) from a pull request body."""
    found = _last(body)
    if found is None:
        return 0, []
    return int(found.group(1)), [s for s in found.group(2).split(",") if s]


def ci_marker(attempts: int, shas: list[str]) -> str:
    """The marker that records `attempts` (kept in the pull request body)."""
    return f"<!-- agentbot:ci-fix attempts={attempts} shas={','.join(shas)} -->"


def is_ours(pr: PullRequest, repo: str, config: RepoConfig) -> bool:
    """True for a pull request from one of agentbot's branches in `repo` (not a fork)."""
    prefix = config.pull_request.branch_prefix
    return bool(prefix.strip()) and pr.head_ref.startswith(prefix) and pr.head_repo == repo


def with_ci_marker(body: str, attempts: int, shas: list[str]) -> str:
    """`body` with its CI marker set to `attempts` (the last one replaced, else appended)."""
    marker = ci_marker(attempts, shas)
    found = _last(body)
    if found is not None:
        return body[: found.start()] + marker + body[found.end() :]
    return f"{(body or '').rstrip()}\n\n{marker}\n"
