"""A re-run of the Action for a label event it carried out asks no model and writes nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e import REPO, World, fast_validation_yaml, world
from tests.fakes.gitrepo import clone_branch
from tests.test_cli_run import AGENTBOT, actions_env, labeled_payload
from tests.test_fix_issue import fix_script

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def run(w: World, tmp: Path, job: str, run_id: str, attempt: str) -> int:
    """One `agentbot run` of workflow run `run_id`, attempt `attempt`, in a fresh runner."""
    runner = tmp / job
    runner.mkdir()
    env = actions_env(runner, w.gh.url, w.llm.base_url, "issues", labeled_payload())
    env.update(GITHUB_RUN_ID=run_id, GITHUB_RUN_ATTEMPT=attempt)
    checkout = clone_branch(w.remote, "main", runner / "checkout")
    proc = subprocess.run(
        [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode in (0, 1, 78), proc.stdout + proc.stderr
    return proc.returncode


def test_a_rerun_of_a_carried_out_label_event_does_nothing(tmp_path: Path) -> None:
    with world(tmp_path, fix_script() * 2, repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        assert run(w, tmp_path, "job1", "555", "1") == 0
        asked = len(w.llm.requests)
        assert asked > 0 and len(w.gh.pulls(REPO)) == 1

        # "Re-run all jobs" of the same workflow run: the same event, already carried out.
        w.gh.reset_calls()
        assert run(w, tmp_path, "job2", "555", "2") == 78
        assert len(w.llm.requests) == asked
        assert w.gh.writes() == []

        # Labelling the issue again starts a new workflow run: a new request, carried out.
        assert run(w, tmp_path, "job3", "556", "1") == 0
        assert len(w.llm.requests) > asked


def test_a_rerun_after_a_failure_tries_again(tmp_path: Path) -> None:
    with world(tmp_path, [], repo_yaml=fast_validation_yaml()) as w:
        w.gh.set_permission(REPO, "alice", "write")
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        assert run(w, tmp_path, "job1", "555", "1") == 1  # the model has nothing to say
        assert "agent-failed" in w.gh.labels_on(REPO, 7)

        w.llm.add(*fix_script())
        assert run(w, tmp_path, "job2", "555", "2") == 0
        assert len(w.gh.pulls(REPO)) == 1
