"""The Action's one log line per job says why a job did not succeed."""

from __future__ import annotations

from bot.cli.run import outcome_line
from bot.models import Job, JobKind, JobResult, JobStatus

URL = "https://github.com/octo/calc/pull/2"


def _result(status: JobStatus, error: str = "") -> JobResult:
    job = Job(kind=JobKind.TDD, repo="octo/calc", number=1, actor="alice")
    return JobResult(job=job, status=status, pr_url=URL, error=error)


def test_a_failed_job_names_its_reason_next_to_its_pull_request() -> None:
    line = outcome_line(_result(JobStatus.FAILED, "budget exhausted: 12 turns\nmore detail"))
    assert line == f"agentbot tdd: failed {URL} budget exhausted: 12 turns"


def test_a_successful_job_names_its_pull_request_only() -> None:
    assert outcome_line(_result(JobStatus.SUCCESS)) == f"agentbot tdd: success {URL}"
