"""Every job on a pull request or branch shows as a check run (`agentbot / fix`, …).

The run goes in_progress when the job starts on a known commit (a PR's head, a pushed
branch), and is concluded from the job's result: success, failure, or neutral (nothing to
do, needs information), with the step summary (the gate table) as its output and a link
to the job page (App) or the workflow run (Action). A job that starts on an issue gets
its check run on the pull request it opened, already concluded. A check run that GitHub
refuses (a personal token cannot create one) is logged and never fails the job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from bot.errors import GitHubError
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.models.github import CheckRunStart, CheckRunUpdate
from bot.ports import GitHubPort
from bot.report import step_summary, subject_line

log = logging.getLogger("agentbot.job")

T = TypeVar("T")

CHECK_NAMES = {
    JobKind.FIX_ISSUE: "fix",
    JobKind.IMPLEMENT: "implement",
    JobKind.COVER: "cover",
    JobKind.TDD: "tdd",
    JobKind.FOLLOW_UP: "follow-up",
}
"""The check run name of each kind on a branch (`agentbot / <name>`); refuel has none."""

CONCLUSIONS = {
    JobStatus.SUCCESS: "success",
    JobStatus.FAILED: "failure",
    JobStatus.NEUTRAL: "neutral",
    JobStatus.NEEDS_INFO: "neutral",
    JobStatus.UNVERIFIED: "neutral",  # never success: the change's tests could not run
    JobStatus.UNPROVEN: "neutral",  # never success: the tests were not shown to catch the bug
}

MAX_SUMMARY = 65_000
"""GitHub caps a check run's output summary at 65535 characters."""


def check_name(kind: JobKind) -> str | None:
    """`agentbot / fix` for a fix job; None for kinds that work on no branch."""
    name = CHECK_NAMES.get(kind)
    return f"agentbot / {name}" if name else None


def head_sha(github: GitHubPort, job: Job) -> str:
    """The commit the job starts on: a pull request's head, or the pushed sha; "" if none."""
    sha = job.params.get("sha")
    if isinstance(sha, str) and sha:
        return sha
    if job.number is not None and github.get_issue(job.repo, job.number).is_pull_request:
        return github.get_pull(job.repo, job.number).head_sha
    return ""


def run_checked(
    github: GitHubPort, job: Job, details_url: str, run: Callable[[], JobResult]
) -> JobResult:
    """Run the job inside its check run (created and concluded through `github`)."""
    name = check_name(job.kind)
    if name is None:
        return run()
    check_id = _start(github, job, name, details_url, lambda: head_sha(github, job))
    try:
        result = run()
    except BaseException as exc:
        # A crash must not leave the check spinning on the pull request.
        if check_id is not None:
            crashed = JobResult(job=job, status=JobStatus.FAILED, error=f"the job crashed: {exc}")
            _finish(github, job.repo, check_id, crashed)
        raise
    if check_id is None and result.pr_number is not None:
        # Opened by the job: one request creates the check run already concluded.
        number = result.pr_number
        sha = _guard(lambda: github.get_pull(job.repo, number).head_sha)
        if sha:
            _guard(
                lambda: github.create_check_run(
                    job.repo, **_concluded(name, sha, details_url, result)
                )
            )
        return result
    if check_id is not None:
        _finish(github, job.repo, check_id, result)
    return result


def _start(
    github: GitHubPort, job: Job, name: str, details_url: str, sha_of: Callable[[], str]
) -> int | None:
    sha = _guard(sha_of)
    if not sha:
        return None
    return _guard(
        lambda: github.create_check_run(job.repo, name=name, head_sha=sha, details_url=details_url)
    )


def _finish(github: GitHubPort, repo: str, check_id: int, result: JobResult) -> None:
    fields = _outcome(result)
    _guard(lambda: github.update_check_run(repo, check_id, **fields))


def _outcome(result: JobResult) -> CheckRunUpdate:
    """The completed state of a job's check run: its conclusion and the step summary."""
    return {
        "status": "completed",
        "conclusion": CONCLUSIONS[result.status],
        "title": subject_line(result.error or result.summary or result.status.value, 120),
        "summary": step_summary(result)[:MAX_SUMMARY],
    }


def _concluded(name: str, sha: str, details_url: str, result: JobResult) -> CheckRunStart:
    """A check run created already completed with the job's outcome."""
    return {"name": name, "head_sha": sha, "details_url": details_url, **_outcome(result)}


def _guard(call: Callable[[], T]) -> T | None:
    """The call's value, or None (logged) when GitHub refuses it: checks are a courtesy."""
    try:
        return call()
    except GitHubError as exc:
        log.warning("check run not updated: %s", exc)
        return None
