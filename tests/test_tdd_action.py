"""A TDD session through `agentbot run` (the Action): stopped by its budget, resumed on a new
runner with a fresh data folder, finished."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import REPO, World, fast_validation_yaml, world
from tests.fakes.gitrepo import clone_branch, commits
from tests.tdd_script import team
from tests.test_cli_run import AGENTBOT, actions_env, labeled_payload
from tests.test_tdd_python import BRANCH, FILES, KATA, straight

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def repo_yaml(extra: str = "") -> str:
    """The fast config, pytest without this venv's plugins."""
    py = sys.executable
    text = fast_validation_yaml(extra)
    return text.replace(f"  test: {py}", f"  test: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {py}")


def run(w: World, tmp: Path, number: int, job: str) -> subprocess.CompletedProcess[str]:
    """One `agentbot run` on the `agent-tdd` label, in its own runner folder."""
    runner = tmp / job
    runner.mkdir()
    payload = labeled_payload("agent-tdd")
    payload["issue"]["number"] = number
    env = actions_env(runner, w.gh.url, w.llm.base_url, "issues", payload)
    checkout = clone_branch(w.remote, "main", runner / "checkout")
    return subprocess.run(
        [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=600
    )


def test_a_budget_stop_then_a_resume_on_a_fresh_runner(tmp_path: Path) -> None:
    _, script = team(straight())
    with world(
        tmp_path, script, files=FILES, repo_yaml=repo_yaml("budget:\n  max_turns: 12\n")
    ) as w:
        w.gh.set_permission(REPO, "alice", "write")
        number = w.gh.add_issue(
            REPO, title="Roman numerals", body=KATA, labels=["agent-tdd"]
        ).number

        stopped = run(w, tmp_path, number, "job1")
        assert stopped.returncode == 1, stopped.stdout + stopped.stderr
        line = next(x for x in stopped.stdout.splitlines() if x.startswith("agentbot tdd:"))
        assert "failed" in line and "budget exhausted" in line
        assert "agent-failed" in w.gh.labels_on(REPO, number)
        [pr] = w.gh.pulls(REPO)
        assert pr.pull is not None and pr.pull.draft

        w.gh.set_file(REPO, ".github/agentbot.yml", repo_yaml())
        resumed = run(w, tmp_path, number, "job2")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert len(w.llm.requests) == 24  # the second runner went on at cycle 3
        assert len(commits(w.remote, BRANCH, base="main")) == 4
        [pr] = w.gh.pulls(REPO)
        assert pr.pull is not None and not pr.pull.draft
        assert "agent-failed" not in w.gh.labels_on(REPO, number)
        assert "24 turns (every run of the session)" in pr.body
        summary = (tmp_path / "job2" / "summary.md").read_text()
        assert "| cycle 4:" in summary and "Validation did not run" not in summary
