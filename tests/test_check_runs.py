"""Every job on a pull request or branch runs inside a check run (`agentbot / <kind>`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import RepoConfig
from bot.events import Delivery
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.ports import GitHubPort, JobEnv
from bot.usecase import UseCase
from tests.fakes.github import FakeGitHub
from tests.test_usecase import REPO, commented, labeled

LINK = "https://github.com/octo/app/actions/runs/42"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_repo(REPO)
        server.add_issue(REPO, number=1, title="Bug")
        server.add_pull(REPO, head="feature", head_sha="f" * 40)  # #2
        server.set_permission(REPO, "wendy", "write")
        yield server


def door(
    gh: FakeGitHub, tmp: Path, status: JobStatus, *, pr: int | None = None, token: str = ""
) -> UseCase:
    def handler(job: Job, env: JobEnv) -> JobResult:
        runs = list(gh.check_runs.values())
        assert all(r.status == "in_progress" for r in runs)  # started before the work
        return JobResult(job=job, status=status, summary="did it", pr_number=pr)

    client = gh.client(token=token) if token else gh.client()

    def make_env(github: GitHubPort, config: RepoConfig) -> JobEnv:
        return JobEnv(github=github, config=config, llm_factory=lambda m: None, data_dir=tmp)  # type: ignore[arg-type,return-value]

    return UseCase(
        github_for=lambda d: client,
        handlers={k: handler for k in JobKind},
        make_env=make_env,
        job_link=lambda job: LINK,
    )


@pytest.mark.parametrize(
    ("status", "conclusion"),
    [
        (JobStatus.SUCCESS, "success"),
        (JobStatus.FAILED, "failure"),
        (JobStatus.NEUTRAL, "neutral"),
        (JobStatus.NEEDS_INFO, "neutral"),
    ],
)
def test_a_job_on_a_pull_request_has_a_check_run_on_its_head(
    gh: FakeGitHub, tmp_path: Path, status: JobStatus, conclusion: str
) -> None:
    result = door(gh, tmp_path, status).handle(Delivery(*commented(2, "wendy", "/cover", pr=True)))

    assert isinstance(result, JobResult)
    (run,) = gh.check_runs.values()
    assert (run.name, run.head_sha) == ("agentbot / cover", "f" * 40)
    assert (run.status, run.conclusion) == ("completed", conclusion)
    assert run.summary is not None and "### Validation" in run.summary
    create = gh.calls_to("POST", rf"/repos/{REPO}/check-runs")[0].json
    assert create["status"] == "in_progress" and create["details_url"] == LINK
    assert len(gh.calls_to("PATCH", rf"/repos/{REPO}/check-runs/\d+")) == 1


def test_a_fix_on_an_issue_gets_its_check_run_on_the_pull_request_it_opened(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    door(gh, tmp_path, JobStatus.SUCCESS, pr=2).handle(Delivery(*labeled(1, "wendy")))

    (run,) = gh.check_runs.values()
    assert (run.name, run.head_sha, run.conclusion) == ("agentbot / fix", "f" * 40, "success")


def test_a_refused_check_run_never_fails_the_job(gh: FakeGitHub, tmp_path: Path) -> None:
    usecase = door(gh, tmp_path, JobStatus.SUCCESS, token="ghp_" + "p" * 36)
    result = usecase.handle(Delivery(*commented(2, "wendy", "/cover", pr=True)))

    assert isinstance(result, JobResult) and result.status == JobStatus.SUCCESS
    assert gh.check_runs == {}
    assert gh.calls_to("POST", rf"/repos/{REPO}/check-runs")[0].status == 403


def test_the_actions_check_run_links_to_the_workflow_run(
    gh: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic import SecretStr

    from bot.cli.run import action_door
    from bot.config import Settings

    for name in ("GITHUB_SERVER_URL", "AGENTBOT_DATA_DIR", "GITHUB_SHA", "GITHUB_REF"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    settings = Settings(
        github_token=SecretStr("ghs_" + "t" * 36),
        github_api_url=gh.url,
        anthropic_api_key=SecretStr("sk-ant-test"),
        data_dir=tmp_path,
    )

    def handler(job: Job, env: JobEnv) -> JobResult:
        return JobResult(job=job, status=JobStatus.SUCCESS)

    door = action_door(
        settings, {JobKind.COVER: handler}, checkout=tmp_path, dry_run=False, inputs={}
    )
    door.handle(Delivery(*commented(2, "wendy", "/cover", pr=True)))

    create = gh.calls_to("POST", rf"/repos/{REPO}/check-runs")[0].json
    assert create["details_url"] == f"https://github.com/{REPO}/actions/runs/4242"


def test_a_crashing_job_still_concludes_its_check_run(gh: FakeGitHub, tmp_path: Path) -> None:
    def crash(job: Job, env: JobEnv) -> JobResult:
        raise RuntimeError("boom")

    usecase = door(gh, tmp_path, JobStatus.SUCCESS)
    usecase.handlers = {k: crash for k in JobKind}
    with pytest.raises(RuntimeError, match="boom"):
        usecase.handle(Delivery(*commented(2, "wendy", "/cover", pr=True)))

    (run,) = gh.check_runs.values()
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert run.title is not None and "crashed: boom" in run.title
