"""A delivery seen before asks no model and writes nothing, through `agentbot run` (the Action)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import REPO, World, fast_validation_yaml, world
from tests.fakes.github.routes_reviews import add_review_comment, thread_of
from tests.fakes.gitrepo import clone_branch, commits
from tests.test_cli_run import AGENTBOT, actions_env
from tests.test_follow_up import BRANCH, DOC, pr_comment_by, review_by, seed_pull

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def run(w: World, tmp: Path, event: str, payload: Mapping[str, Any], job: str) -> int:
    """One `agentbot run` in its own runner folder (a fresh data folder); its exit code."""
    runner = tmp / job
    runner.mkdir()
    env = actions_env(runner, w.gh.url, w.llm.base_url, event, dict(payload))
    checkout = clone_branch(w.remote, "main", runner / "checkout")
    proc = subprocess.run(
        [AGENTBOT, "run"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode in (0, 78), proc.stdout + proc.stderr
    return proc.returncode


def test_a_review_delivered_twice_is_answered_once(tmp_path: Path) -> None:
    with world(tmp_path, DOC, repo_yaml=fast_validation_yaml()) as w:
        seed_pull(w)
        delivery = review_by(w, "rev")
        review = delivery.payload["review"]
        review["body"] = "See the inline comments."
        thread = add_review_comment(
            w.gh, REPO, 1, "Say integers.", user="rev", path="calc.py", review_id=review["id"]
        )

        assert run(w, tmp_path, "pull_request_review", delivery.payload, "job1") == 0
        (answer,) = thread_of(w.gh, thread.id)[1:]
        assert "validation passed" in answer.body
        assert w.gh.resolved_threads == {thread.id}
        asked, pushed = len(w.llm.requests), len(commits(w.remote, BRANCH, base="main"))
        assert asked == len(DOC)

        # GitHub redelivers the review: its thread is resolved, its body is no request.
        w.gh.reset_calls()
        assert run(w, tmp_path, "pull_request_review", delivery.payload, "job2") == 78
        assert len(w.llm.requests) == asked
        assert w.gh.writes() == []
        assert len(commits(w.remote, BRANCH, base="main")) == pushed


def test_a_fix_comment_delivered_twice_is_carried_out_once(tmp_path: Path) -> None:
    with world(tmp_path, DOC, repo_yaml=fast_validation_yaml()) as w:
        seed_pull(w)
        delivery = pr_comment_by("rev", "/fix say integers in the docstring")

        assert run(w, tmp_path, "issue_comment", delivery.payload, "job1") == 0
        asked, pushed = len(w.llm.requests), len(commits(w.remote, BRANCH, base="main"))
        assert asked == len(DOC) and pushed == 3  # the fix, a person's commit, this /fix

        # The same comment again (a redelivery, or a re-run of the workflow): nothing to do.
        w.gh.reset_calls()
        assert run(w, tmp_path, "issue_comment", delivery.payload, "job2") == 78
        assert len(w.llm.requests) == asked
        assert w.gh.writes() == []
        assert len(commits(w.remote, BRANCH, base="main")) == pushed
