"""The operator's figures, pure functions of the stored jobs, pull requests and spend.

Decisions written down here:
- Cost per job is what its model calls cost (its result's `cost_usd`).
- Cost per merged PR is every job's cost divided by the merged pull requests, per kind, per
  repository and overall: failed and closed work is part of the price of what was merged.
  A kind or repository with nothing merged has none (null), not zero.
- A job's cost is also shown on the pull request it opened or followed up (`cost_usd` of a
  pull request), so one expensive PR is visible.
- Success rate: jobs that ran and ended `success`, of jobs that ran. Unverified rate: jobs
  that opened or pushed a pull request whose validation did not pass (or none ran), of
  those that did.
- Durations are claim to finish of jobs that ran; p50 and p95 by nearest rank.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.models.stats import PullOutcome, SpendRow

STATES = ("merged", "closed", "open")


@dataclass(frozen=True)
class JobFigure:
    """What the figures need of one stored job."""

    id: str
    kind: str
    repo: str
    number: int | None
    state: str
    status: str = ""
    """The result's status; "" when the job did not run (ignored, queued, failed)."""
    cost_usd: float = 0.0
    pr_number: int | None = None
    verified: bool = False
    """Its validation passed."""
    seconds: float | None = None
    """Claim to finish, for a job that ran."""


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank percentile `q` (0-100) of `values`; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 6) if whole else None


class PullCosts:
    """What the jobs that opened, pushed to or followed up on each pull request cost."""

    def __init__(self, jobs: Iterable[JobFigure]) -> None:
        self.by_id: dict[str, JobFigure] = {}
        self.by_pull: dict[tuple[str, int], list[JobFigure]] = defaultdict(list)
        for j in jobs:
            self.by_id[j.id] = j
            pulls = {j.pr_number} if j.pr_number is not None else set()
            if j.kind == "follow_up" and j.number is not None:
                pulls.add(j.number)
            for n in pulls:
                self.by_pull[(j.repo, n)].append(j)

    def of(self, pull: PullOutcome) -> float:
        """The pull request's cost, each job counted once."""
        jobs = {j.id: j for j in self.by_pull.get((pull.repo, pull.number), [])}
        opener = self.by_id.get(pull.job_id) if pull.job_id else None
        if opener is not None and opener.repo == pull.repo:
            jobs[opener.id] = opener
        return sum(j.cost_usd for j in jobs.values())


def _group(pulls: Sequence[PullOutcome], jobs: Sequence[JobFigure]) -> dict[str, Any]:
    ran = [j for j in jobs if j.status]
    with_pr = [j for j in ran if j.pr_number is not None]
    cost = sum(j.cost_usd for j in jobs)
    merged = sum(p.state == "merged" for p in pulls)
    return {
        **{s: sum(p.state == s for p in pulls) for s in STATES},
        "zero_touch": sum(p.zero_touch for p in pulls),
        "jobs": len(ran),
        "cost_usd": round(cost, 6),
        "cost_per_job_usd": _ratio(cost, len(ran)),
        "cost_per_merged_pr_usd": _ratio(cost, merged),
        "success_rate": _ratio(sum(j.status == "success" for j in ran), len(ran)),
        "unverified_rate": _ratio(sum(not j.verified for j in with_pr), len(with_pr)),
    }


def figures(
    jobs: Sequence[JobFigure], pulls: Sequence[PullOutcome], *, queue_depth: int = 0
) -> dict[str, Any]:
    """Every figure of `agentbot stats --json`, the dashboard and the metrics."""
    kinds = sorted({j.kind for j in jobs if j.kind} | {p.kind for p in pulls if p.kind})
    repos = sorted({j.repo for j in jobs if j.repo} | {p.repo for p in pulls})
    seconds = [j.seconds for j in jobs if j.seconds is not None]
    costs = PullCosts(jobs)
    hours = [
        (p.merged_at - p.opened_at).total_seconds() / 3600
        for p in pulls
        if p.state == "merged" and p.merged_at and p.opened_at
    ]
    return {
        **_group(pulls, jobs),
        "queue_depth": queue_depth,
        "duration_p50_seconds": percentile(seconds, 50),
        "duration_p95_seconds": percentile(seconds, 95),
        "hours_to_merge_p50": percentile(hours, 50),
        "review_rounds": sum(p.review_rounds for p in pulls),
        "by_kind": {
            k: _group([p for p in pulls if p.kind == k], [j for j in jobs if j.kind == k])
            for k in kinds
        },
        "by_repo": {
            r: _group([p for p in pulls if p.repo == r], [j for j in jobs if j.repo == r])
            for r in repos
        },
        "pull_requests": [
            {
                "repo": p.repo,
                "number": p.number,
                "kind": p.kind,
                "state": p.state,
                "hours_to_merge": (
                    round((p.merged_at - p.opened_at).total_seconds() / 3600, 3)
                    if p.merged_at and p.opened_at
                    else None
                ),
                "review_rounds": p.review_rounds,
                "human_commits": p.human_commits,
                "zero_touch": p.zero_touch,
                "cost_usd": round(costs.of(p), 6),
            }
            for p in pulls
        ],
    }


def spend_by_day(rows: Iterable[SpendRow], days: Sequence[datetime]) -> list[float]:
    """USD spent on each UTC day of `days` (each a day's start), everywhere."""
    totals: dict[str, float] = defaultdict(float)
    for r in rows:
        totals[r.at.strftime("%Y-%m-%d")] += r.usd
    return [round(totals.get(d.strftime("%Y-%m-%d"), 0.0), 6) for d in days]
