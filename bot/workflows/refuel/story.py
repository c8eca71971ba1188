"""DESIGN §8.3: work through the labelled backlog within a limit and a budget."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from bot.config import RepoConfig
from bot.errors import AgentbotError, LimitsExceeded
from bot.models import Job, JobKind, JobResult, JobStatus, Usage
from bot.models.github import Issue, PullRequest
from bot.ports import JobEnv
from bot.workflows.steps.flow import RUN_BUDGET

_PRIORITY = [
    (re.compile(r"\b(p0|critical|urgent|blocker)\b"), 0),
    (re.compile(r"\b(p1|high)\b"), 1),
    (re.compile(r"\b(p2|medium|normal)\b"), 2),
    (re.compile(r"\b(p3|low|minor)\b"), 3),
]
_NO_PRIORITY = 2  # unlabelled issues rank with "medium": explicit high beats them, low follows


def priority(issue: Issue) -> int:
    """0 is most urgent; taken from labels such as `P1`, `priority: high`, `critical`."""
    ranks = [
        rank
        for label in issue.labels
        for pattern, rank in _PRIORITY
        if pattern.search(label.lower().replace("priority", " "))
    ]
    return min(ranks, default=_NO_PRIORITY)


def skip_reason(issue: Issue, cfg: RepoConfig, open_branches: set[str]) -> str:
    """Why refuel must not take this issue, or "" when it may."""
    labels = set(issue.labels)
    if issue.state != "open":
        return "closed"
    if issue.locked:
        return "locked"
    if issue.assignees:
        return f"assigned to {', '.join('@' + a for a in issue.assignees)}"
    if cfg.labels.failed in labels:
        return f"labelled {cfg.labels.failed}"
    if cfg.labels.needs_info in labels:
        return f"labelled {cfg.labels.needs_info}"
    if f"{cfg.pull_request.branch_prefix}fix-issue-{issue.number}" in open_branches:
        return "has an open agentbot pull request"
    return ""


def _cap_reached(env: JobEnv) -> str:
    """Which spend cap over time (the App's, per day or month) is reached, or ""."""
    if env.meter is None:
        return ""
    try:
        env.meter.check()
    except LimitsExceeded as exc:
        return str(exc)
    return ""


def refuel(
    job: Job,
    env: JobEnv,
    *,
    run_fix: Callable[[Job, JobEnv], JobResult],
) -> JobResult:
    """Process eligible issues in priority order, at most `limit`, until the budget is spent.

    `run_fix` is the IssueFixer, passed in by the handler map: a kind never imports another.
    """
    cfg = env.config
    label = str(job.params.get("label") or cfg.labels.fix)
    limit = int(job.params.get("limit") or 10)
    max_usd = float(job.params.get("max_usd") or cfg.budget.max_usd_per_refuel)
    result = JobResult(job=job, status=JobStatus.SUCCESS, started_at=env.clock.now())
    try:
        issues = env.github.list_issues(job.repo, labels=[label], state="open")
        pulls: list[PullRequest] = env.github.list_pulls(job.repo, state="open")
    except AgentbotError as exc:
        return result.model_copy(
            update={"status": JobStatus.FAILED, "error": str(exc), "finished_at": env.clock.now()}
        )
    # A fork's branch named like ours (`agentbot/fix-issue-N`) is not ours: it blocks nothing.
    open_branches = {p.head_ref for p in pulls if not p.from_fork(job.repo)}
    items: list[dict[str, object]] = []
    eligible: list[Issue] = []
    for issue in issues:
        reason = skip_reason(issue, cfg, open_branches)
        if reason:
            items.append({"id": f"#{issue.number}", "status": "skipped", "detail": reason})
        else:
            eligible.append(issue)
    eligible.sort(key=lambda i: (priority(i), i.number))

    spent, usage, turns, failures, done = 0.0, Usage(), 0, 0, 0
    for issue in eligible:
        if done >= limit:
            items.append(
                {"id": f"#{issue.number}", "status": "skipped", "detail": f"over --limit {limit}"}
            )
            continue
        at_cap = _cap_reached(env)
        if at_cap:
            items.append({"id": f"#{issue.number}", "status": "skipped", "detail": at_cap})
            continue
        remaining = max_usd - spent
        if remaining <= 0:
            items.append(
                {"id": f"#{issue.number}", "status": "skipped", "detail": "refuel budget spent"}
            )
            continue
        # Each fix gets its own budget, capped by what is left of the run's.
        budget = cfg.budget.model_copy(
            update={"max_usd_per_job": min(cfg.budget.max_usd_per_job, remaining)}
        )
        sub_env = replace(env, config=cfg.model_copy(update={"budget": budget}))
        # When the run's remainder is the tighter cap, running out is the run's doing.
        capped = {RUN_BUDGET: remaining} if remaining < cfg.budget.max_usd_per_job else {}
        sub = run_fix(
            Job(
                kind=JobKind.FIX_ISSUE,
                repo=job.repo,
                number=issue.number,
                installation_id=job.installation_id,
                params=capped,
            ),
            sub_env,
        )
        done += 1
        spent += sub.cost_usd
        usage = usage + sub.usage
        turns += sub.turns
        failures += sub.status == JobStatus.FAILED
        detail = sub.pr_url or sub.error or sub.summary
        items.append(
            {
                "id": f"#{issue.number}",
                "status": sub.status.value,
                "detail": detail,
                "cost_usd": round(sub.cost_usd, 4),
            }
        )

    summary = (
        f"refuel {job.repo}: {done} processed, {failures} failed,"
        f" {len(items) - done} skipped, ${spent:.2f} of ${max_usd:.2f}"
    )
    env.log.info(summary)
    status = (
        JobStatus.NEUTRAL
        if done == 0
        else JobStatus.FAILED
        if failures == done
        else JobStatus.SUCCESS
    )
    return result.model_copy(
        update={
            "status": status,
            "summary": summary,
            "items": items,
            "usage": usage,
            "cost_usd": spent,
            "turns": turns,
            "finished_at": env.clock.now(),
        }
    )
