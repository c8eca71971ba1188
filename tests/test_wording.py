"""What the bot says on failure is true: no branch claimed unpushed, no blame for a run's budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.models import Job, JobKind, JobStatus
from bot.workflows.fix.story import fix_issue
from bot.workflows.refuel.story import refuel
from tests.e2e import REPO, world
from tests.fakes.anthropic import finish, reply
from tests.fakes.gitrepo import branch_sha
from tests.test_fix_issue import BRANCH, fix_script, job, seed_issue, wrong_fix_script

pytestmark = pytest.mark.slow


def test_a_fix_failing_before_its_commit_claims_no_branch(tmp_path: Path) -> None:
    # The finish check sends an empty change back twice, then takes the answer.
    script = [reply(finish(summary="looked, changed nothing"))] * 3
    with world(tmp_path, script) as w:
        seed_issue(w)
        result = fix_issue(job(), w.env())
        assert result.status == JobStatus.FAILED and result.branch == ""
        body = w.gh.comments_on(REPO, 7)[0].body
        assert "without changing any file" in body
        assert "kept on branch" not in body
        assert branch_sha(w.remote, BRANCH) is None


def test_a_fix_failing_after_its_push_points_at_the_branch(tmp_path: Path) -> None:
    with world(tmp_path, wrong_fix_script()) as w:
        seed_issue(w)
        fix_issue(job(), w.env())
        assert f"kept on branch `{BRANCH}`" in w.gh.comments_on(REPO, 7)[0].body
        assert branch_sha(w.remote, BRANCH) is not None


def test_a_refuel_runs_budget_ending_leaves_the_issue_eligible(tmp_path: Path) -> None:
    """The run's --max-usd (not the repo's per-job budget) cuts the fix short after one turn."""
    with world(tmp_path, fix_script()) as w:
        seed_issue(w)
        run = Job(kind=JobKind.REFUEL, repo=REPO, params={"max_usd": 0.001})
        result = refuel(run, w.env(), run_fix=fix_issue)
        (item,) = [i for i in result.items if i["id"] == "#7"]
        assert item["status"] == "neutral", item
        body = w.gh.comments_on(REPO, 7)[0].body
        assert "refuel run's budget (--max-usd) ran out" in body
        assert "max_usd_per_job" not in body
        assert "agent-failed" not in w.gh.labels_on(REPO, 7)
        assert len(w.llm.requests) == 1
