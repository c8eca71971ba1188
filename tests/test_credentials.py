"""A missing LLM credential fails a job before it writes anything to GitHub."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.clock import FakeClock
from bot.config import Settings
from bot.queue import JobState
from bot.queue.sqlite import SqliteQueue
from bot.wiring import missing_credentials
from bot.worker import WorkerDeps, process_delivery
from bot.worker.loop import Worker
from bot.workflows.handlers import HANDLERS
from tests.e2e import REPO as CALC
from tests.e2e import world
from tests.fakes.github import FakeGitHub
from tests.test_cli_run import AGENTBOT, actions_env, labeled_payload
from tests.test_defaults import clean_env
from tests.test_serve import _free_port, _wait_healthy
from tests.test_worker import REPO, labeled


def writes(gh: FakeGitHub) -> list[str]:
    return [f"{c.method} {c.path}" for c in gh.calls if c.method != "GET"]


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({}, "ANTHROPIC_API_KEY"),
        ({"AGENTBOT_PROVIDER": "openai-compatible"}, "AGENTBOT_LLM_BASE_URL"),
        (
            {"AGENTBOT_PROVIDER": "openai-compatible", "AGENTBOT_LLM_BASE_URL": "http://x/v1"},
            "AGENTBOT_LLM_API_KEY",
        ),
        ({"ANTHROPIC_API_KEY": "sk-ant-x"}, None),
    ],
)
def test_missing_credentials_names_the_variable(
    env: dict[str, str], named: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "AGENTBOT_PROVIDER", "AGENTBOT_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    problem = missing_credentials(Settings())
    assert (problem is None) if named is None else (problem is not None and named in problem)


def test_fix_without_the_llm_key_is_one_error_and_no_request(tmp_path: Path) -> None:
    with world(tmp_path, []) as w:
        w.gh.add_issue(CALC, title="add is wrong")
        env = clean_env(
            tmp_path,
            GITHUB_TOKEN="ghs_testtoken123456789",
            GITHUB_API_URL=w.gh.url,
            AGENTBOT_DATA_DIR=str(tmp_path / "data"),
        )
        proc = subprocess.run(
            [AGENTBOT, "fix", f"{CALC}#1"], env=env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("error: ANTHROPIC_API_KEY is not set")
        assert len(proc.stderr.splitlines()) == 1
        assert w.gh.calls == []


def test_run_without_the_llm_key_fails_before_any_write(tmp_path: Path) -> None:
    with world(tmp_path, []) as w:
        w.gh.add_issue(CALC, number=7, title="add is wrong")
        w.gh.set_permission(CALC, "alice", "write")
        env = actions_env(tmp_path, w.gh.url, w.llm.base_url, "issues", labeled_payload())
        del env["ANTHROPIC_API_KEY"]
        proc = subprocess.run(
            [AGENTBOT, "run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "ANTHROPIC_API_KEY is not set" in proc.stderr
        assert writes(w.gh) == []
        assert w.llm.requests == []


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        fake.add_issue(REPO, number=3, title="Bug")
        fake.set_permission(REPO, "alice", "write")
        yield fake


def test_the_app_says_so_in_one_comment_and_the_job_is_dead(gh: FakeGitHub, tmp_path: Path) -> None:
    clock = FakeClock()
    queue = SqliteQueue(tmp_path / "q.db", clock=clock, max_attempts=3)
    client = gh.client()
    deps = WorkerDeps(
        queue=queue,
        github_for=lambda inst, repo: client,
        handlers=HANDLERS,
        data_dir=tmp_path,
        clock=clock,
        missing_credentials=lambda: "ANTHROPIC_API_KEY is not set",
    )
    queue.enqueue("d-1", "issues", labeled(3))
    Worker(queue, process=lambda job: process_delivery(job, deps), clock=clock).run_once()
    rec = queue.get("d-1")
    assert rec is not None and rec.state is JobState.DEAD
    assert rec.error == "ANTHROPIC_API_KEY is not set"
    assert writes(gh) == [f"POST /repos/{REPO}/issues/3/comments"]
    (comment,) = gh.calls_to("POST", r".*/comments")
    assert "ANTHROPIC_API_KEY is not set" in (comment.json or {})["body"]
    queue.close()


def test_serve_warns_at_start_when_the_llm_key_is_missing(tmp_path: Path) -> None:
    port = _free_port()
    env = clean_env(tmp_path, AGENTBOT_DATA_DIR=str(tmp_path / "data"))
    env.pop("ANTHROPIC_API_KEY", None)
    proc = subprocess.Popen(
        [AGENTBOT, "serve", "--port", str(port), "--workers", "1"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_healthy(port, proc)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    warned = [
        json.loads(line)
        for line in err.decode().splitlines()
        if line.startswith("{") and "ANTHROPIC_API_KEY" in line
    ]
    assert [w["level"] for w in warned] == ["WARNING"], err.decode()
    assert "every job will fail, with one comment on its issue" in warned[0]["msg"]
