"""A job past AGENTBOT_JOB_TIMEOUT is stopped: its commands killed, failed with "deadline"."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import RepoConfig
from bot.deadline import SETTING, job_timeout
from bot.errors import AgentbotError, ConfigError
from bot.events import Delivery
from bot.models import Job, JobKind, JobResult, JobStatus
from bot.ports import GitHubPort, Handler, JobEnv
from bot.sandbox.policy import SandboxPolicy
from bot.usecase import UseCase
from tests.fakes.github import FakeGitHub
from tests.test_usecase import REPO, labeled

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_repo(REPO)
        server.add_issue(REPO, number=1, title="Bug")
        server.set_permission(REPO, "wendy", "write")
        yield server


class EndlessModel:
    """A scripted model that would ask for another turn forever."""

    provider, model = "fake", "endless"

    def __init__(self) -> None:
        self.requests = 0

    def complete(self, **kwargs: Any) -> Any:
        self.requests += 1
        return None


def door(gh: FakeGitHub, tmp: Path, handler: Handler, llm: EndlessModel) -> UseCase:
    def make_env(github: GitHubPort, config: RepoConfig) -> JobEnv:
        box = SandboxPolicy(root=tmp / "sandbox", mode="none", app=False).open()
        return JobEnv(
            github=github,
            config=config,
            llm_factory=lambda m: llm,
            data_dir=tmp,
            sandbox=box,
        )

    return UseCase(
        github_for=lambda d: gh.client(),
        handlers={k: handler for k in JobKind},
        make_env=make_env,
        job_timeout=0.5,
    )


def test_a_long_command_is_killed_and_the_job_fails_with_the_deadline(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    seen: dict[str, int] = {}

    def handler(job: Job, env: JobEnv) -> JobResult:
        assert env.sandbox is not None
        proc = env.sandbox.popen(["sleep", "600"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
        seen["returncode"] = proc.wait()
        return JobResult(job=job, status=JobStatus.SUCCESS)

    result = door(gh, tmp_path, handler, EndlessModel()).handle(Delivery(*labeled(1, "wendy")))

    assert isinstance(result, JobResult)
    assert (result.status, result.error) == (JobStatus.FAILED, "deadline")
    assert seen["returncode"] != 0  # killed, not finished
    assert "agent-failed" in gh.issue(REPO, 1).labels
    (comment,) = gh.comments_on(REPO, 1)
    assert SETTING in comment.body and "deadline of 0.5 seconds" in comment.body


def test_the_agent_loop_stops_at_its_next_turn(gh: FakeGitHub, tmp_path: Path) -> None:
    llm = EndlessModel()

    def handler(job: Job, env: JobEnv) -> JobResult:
        model = env.llm_factory("endless")
        while True:  # an agent that never finishes on its own
            model.complete(system="", messages=[], tools=[])
            subprocess.run(["sleep", "0.05"], check=True)

    result = door(gh, tmp_path, handler, llm).handle(Delivery(*labeled(1, "wendy")))

    assert isinstance(result, JobResult)
    assert (result.status, result.error) == (JobStatus.FAILED, "deadline")
    asked = llm.requests
    assert asked >= 1 and len(gh.comments_on(REPO, 1)) == 1


def test_a_workflow_that_says_why_itself_gets_no_second_comment(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    def handler(job: Job, env: JobEnv) -> JobResult:
        model = env.llm_factory("endless")
        try:
            while True:
                model.complete(system="", messages=[], tools=[])
                subprocess.run(["sleep", "0.05"], check=True)
        except AgentbotError as exc:  # as the workflows do: their failure comment says why
            assert job.number is not None
            env.github.create_comment(job.repo, job.number, f"agentbot failed: {exc}")
            return JobResult(job=job, status=JobStatus.FAILED, error=str(exc))

    result = door(gh, tmp_path, handler, EndlessModel()).handle(Delivery(*labeled(1, "wendy")))

    assert isinstance(result, JobResult) and result.error == "deadline"
    (comment,) = gh.comments_on(REPO, 1)
    assert SETTING in comment.body and comment.body.startswith("agentbot failed:")
    assert "agent-failed" in gh.issue(REPO, 1).labels


@pytest.mark.parametrize("raw", ["soon", "0", "-5", "nan", "1e30"])
def test_a_bad_timeout_is_one_line_naming_the_setting(raw: str) -> None:
    with pytest.raises(ConfigError) as err:
        job_timeout({SETTING: raw})
    assert SETTING in str(err.value) and "\n" not in str(err.value)
    assert job_timeout({}) == 3600.0 and job_timeout({SETTING: "90"}) == 90.0
