"""Refuel: eligible issues only, priority order, --limit, the run budget, a summary."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from bot.models import Job, JobKind, JobResult, JobStatus, Usage
from bot.ports import JobEnv
from bot.workflows.fix.story import fix_issue
from bot.workflows.refuel.story import refuel
from tests.e2e import REPO, world
from tests.test_fix_issue import fix_script


def seed_backlog(w: object) -> dict[int, str]:
    """30 labelled issues; returns number -> why it must be skipped ('' = eligible)."""
    gh = w.gh  # type: ignore[attr-defined]
    expect: dict[int, str] = {}
    for n in range(1, 31):
        labels = ["agent-fix"]
        kwargs: dict[str, object] = {}
        why = ""
        if n % 7 == 0:
            kwargs["assignees"] = ["carol"]
            why = "assigned"
        elif n % 11 == 0:
            kwargs["locked"] = True
            why = "locked"
        elif n in (5, 6):
            labels.append("agent-failed")
            why = "agent-failed"
        elif n == 8:
            labels.append("agent-needs-info")
            why = "agent-needs-info"
        elif n == 9:
            why = "open agentbot pull request"
        if n == 25:
            labels.append("priority: high")
        if n == 13:
            labels.append("P0")
        if n == 2:
            labels.append("low")
        gh.add_issue(REPO, number=n, title=f"bug {n}", labels=labels, **kwargs)
        expect[n] = why
    gh.add_pull(REPO, head="agentbot/fix-issue-9", user="agentbot[bot]")
    return expect


def test_selection_order_limit_and_pacing(tmp_path: Path) -> None:
    seen: list[int] = []

    def fake_fix(job: Job, env: JobEnv) -> JobResult:
        # A stand-in fix that writes to GitHub like the real one, so pacing is observable.
        assert job.number is not None
        seen.append(job.number)
        env.github.create_comment(job.repo, job.number, "working on it")
        env.github.add_labels(job.repo, job.number, ["seen"])
        return JobResult(
            job=job, status=JobStatus.SUCCESS, cost_usd=0.5, usage=Usage(input_tokens=1)
        )

    with world(tmp_path, []) as w:
        expect = seed_backlog(w)
        job = Job(kind=JobKind.REFUEL, repo=REPO, params={"limit": 5})
        result = refuel(job, w.env(), run_fix=fake_fix)

        assert seen == [13, 25, 1, 3, 4]  # P0, high, then oldest unlabelled (2 is low)
        items = {i["id"]: i for i in result.items}
        for n, why in expect.items():
            if why:
                assert items[f"#{n}"]["status"] == "skipped"
                assert why.split()[0] in str(items[f"#{n}"]["detail"]), (n, items[f"#{n}"])
        assert items["#2"]["detail"] == "over --limit 5"
        assert "5 processed" in result.summary and result.cost_usd == 2.5

        stamps = [c.at for c in w.gh.writes()]
        assert len(stamps) == 10
        assert all(b - a >= 1.0 for a, b in pairwise(stamps))


def test_budget_stops_the_run(tmp_path: Path) -> None:
    seen: list[int] = []

    def costly_fix(job: Job, env: JobEnv) -> JobResult:
        assert job.number is not None
        seen.append(job.number)
        assert env.config.budget.max_usd_per_job <= 2.5  # capped by what is left
        return JobResult(job=job, status=JobStatus.SUCCESS, cost_usd=1.0)

    with world(tmp_path, []) as w:
        seed_backlog(w)
        job = Job(kind=JobKind.REFUEL, repo=REPO, params={"limit": 20, "max_usd": 2.5})
        result = refuel(job, w.env(), run_fix=costly_fix)
        assert len(seen) == 3  # 1.0 + 1.0 + 1.0 crosses 2.5 after the third
        assert sum(1 for i in result.items if i["detail"] == "refuel budget spent") > 0


@pytest.mark.slow
def test_refuel_runs_the_real_fixer(tmp_path: Path) -> None:
    with world(tmp_path, fix_script()) as w:
        w.gh.add_issue(REPO, number=7, title="add() is wrong", labels=["agent-fix"])
        w.gh.add_issue(REPO, number=8, title="taken", labels=["agent-fix"], assignees=["dan"])
        result = refuel(
            Job(kind=JobKind.REFUEL, repo=REPO, params={"limit": 3}), w.env(), run_fix=fix_issue
        )
        assert result.status == JobStatus.SUCCESS, result.items
        assert [i["status"] for i in result.items] == ["skipped", "success"]
        assert len(w.gh.pulls(REPO)) == 1 and result.turns == 3
