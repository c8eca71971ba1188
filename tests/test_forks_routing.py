"""Routing on a fork's pull request (issue #27): a review asks agentbot only with `/fix`, a
fork's branch named like ours is not ours, and CI on a fork asks nobody; decide() stays pure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.config import RepoConfig
from bot.events import Ignore
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.ports import JobEnv
from bot.workflows.refuel.story import refuel
from tests.e2e import REPO as E2E_REPO
from tests.e2e import world
from tests.test_events_followups import REPO, as_sender, ci, decide, review, review_comment


def from_fork(payload: dict[str, Any], branch: str = "agentbot/fix-issue-1") -> dict[str, Any]:
    head = payload["pull_request"]["head"]
    head["ref"] = branch
    head["repo"] = {**head["repo"], "full_name": "contrib/Hello-World"}
    return payload


def test_a_review_on_a_fork_is_for_its_author_unless_it_starts_with_fix() -> None:
    plain = from_fork(as_sender(review(), "maint"))
    plain["review"]["body"] = "Please rename this."
    got = decide("pull_request_review", plain, RepoConfig())
    assert isinstance(got, Ignore) and "does not start with /fix" in got.reason

    asked = from_fork(as_sender(review(), "maint"))
    asked["review"]["body"] = "/fix rename it\nand keep the tests"
    job = decide("pull_request_review", asked, RepoConfig())
    assert isinstance(job, Job) and job.kind == JobKind.FOLLOW_UP and job.actor == "maint"
    assert job.params["review_body"] == "rename it\nand keep the tests"

    # On a fork, asking is what counts: a plain comment review with `/fix` asks too.
    commented = from_fork(as_sender(review("commented"), "maint"))
    commented["review"]["body"] = "/fix rename it"
    assert isinstance(decide("pull_request_review", commented, RepoConfig()), Job)
    # On our own branch a commented review still starts nothing.
    ours = as_sender(review("commented"), "maint")
    ours["pull_request"]["head"]["repo"]["full_name"] = REPO
    ours["review"]["body"] = "/fix rename it"
    got = decide("pull_request_review", ours, RepoConfig())
    assert isinstance(got, Ignore) and "not changes requested" in got.reason


def test_any_branch_name_on_a_fork_works_when_asked_and_none_is_ours_unasked() -> None:
    for branch in ("feature", "main", "agentbot/fix-issue-1"):
        asked = from_fork(as_sender(review_comment(), "maint"), branch)
        asked["comment"]["body"] = "/fix use a constant"
        assert isinstance(decide("pull_request_review_comment", asked, RepoConfig()), Job)
        unasked = from_fork(as_sender(review_comment(), "maint"), branch)
        unasked["comment"]["body"] = "use a constant"
        assert isinstance(decide("pull_request_review_comment", unasked, RepoConfig()), Ignore)


def test_our_own_branch_needs_no_fix_command() -> None:
    ours = as_sender(review(), "maint")
    ours["pull_request"]["head"]["repo"]["full_name"] = REPO
    ours["review"]["body"] = "Please rename this."
    assert isinstance(decide("pull_request_review", ours, RepoConfig()), Job)


def test_ci_on_a_forks_branch_named_like_ours_asks_nobody() -> None:
    run = ci("workflow_run", branch="agentbot/fix-issue-1")
    run["workflow_run"]["head_repository"] = {"full_name": "contrib/Hello-World"}
    got = decide("workflow_run", run, RepoConfig())
    assert isinstance(got, Ignore) and "fork" in got.reason

    suite = ci("check_suite", branch="agentbot/fix-issue-1")
    for pr in suite["check_suite"]["pull_requests"]:
        pr["head"]["repo"] = {**pr["head"]["repo"], "id": 999, "url": "https://x/contrib"}
    got = decide("check_suite", suite, RepoConfig())
    assert isinstance(got, Ignore) and "fork" in got.reason


def test_a_forks_branch_named_like_ours_does_not_hold_an_issue_back_from_refuel(
    tmp_path: Path,
) -> None:
    fixed: list[int] = []

    def fake_fix(job: Job, env: JobEnv) -> JobResult:
        assert job.number is not None
        fixed.append(job.number)
        return JobResult(job=job, status=JobStatus.SUCCESS, started_at=env.clock.now())

    with world(tmp_path, []) as w:
        for n in (1, 2):
            w.gh.add_issue(E2E_REPO, number=n, title=f"bug {n}", labels=["agent-fix"])
        w.gh.add_pull(E2E_REPO, head="agentbot/fix-issue-1", head_repo="mallory/calc")
        w.gh.add_pull(E2E_REPO, head="agentbot/fix-issue-2", user="agentbot[bot]")
        job = Job(kind=JobKind.REFUEL, repo=E2E_REPO, params={"limit": 5})
        refuel(job, w.env(), run_fix=fake_fix)
    assert fixed == [1]  # #2 has our open pull request; #1 only a fork's look-alike
