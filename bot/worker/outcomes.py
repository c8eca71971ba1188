"""The App's bookkeeping of its pull requests: every delivery is looked at before routing
(bot.stats.outcomes says what it tells), and a job that opened a pull request records it.

Recorded in the worker, not the receiver, so a bookkeeping bug fails a job, never a
delivery; a redelivered event may count a review or a push twice (at-least-once).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from bot.clock import Clock
from bot.models import JobKind, JobResult
from bot.models.stats import PullOutcome
from bot.queue import JobQueue, JobRecord, JobState
from bot.stats.figures import JobFigure, figures
from bot.stats.outcomes import PushSeen, apply, observe
from bot.usecase import DISPATCHED

log = logging.getLogger("agentbot.worker")


def follow(queue: JobQueue, event_name: str, payload: bytes, bot_login: str = "") -> None:
    """Update the stored outcome of the pull request this delivery is about, if it is ours."""
    if event_name not in ("pull_request", "pull_request_review", "push"):
        return
    try:
        data = json.loads(payload)
    except ValueError:
        return
    seen = observe(event_name, data) if isinstance(data, dict) else None
    if seen is None:
        return
    if isinstance(seen, PushSeen):
        pull = next(
            (
                p
                for p in queue.pulls(seen.repo)
                if p.head_ref == seen.head_ref and p.state == "open"
            ),
            None,
        )
    else:
        pull = queue.pull(seen.repo, seen.number)
    updated = apply(pull, seen, bot_login)
    if updated is not None and updated != pull:
        queue.save_pull(updated)
        log.info("pull request %s#%d: %s", updated.repo, updated.number, updated.state)


def opened(queue: JobQueue, result: JobResult, clock: Clock) -> None:
    """Record the pull request a job opened or pushed to, with the job that did it."""
    job = result.job
    if result.pr_number is None or job.kind == JobKind.REFUEL:
        return
    known = queue.pull(job.repo, result.pr_number)
    if known is not None and (known.job_id or job.kind == JobKind.FOLLOW_UP):
        return  # a follow-up's cost is counted on the pull request; it did not open it
    base = known or PullOutcome(
        repo=job.repo,
        number=result.pr_number,
        head_ref=result.branch,
        opened_at=result.finished_at or clock.now(),
    )
    queue.save_pull(base.model_copy(update={"kind": job.kind.value, "job_id": job.delivery_id}))


def job_figure(record: JobRecord) -> JobFigure:
    """What the figures need of a stored job."""
    r = record.result
    ran = r is not None and not r.summary.startswith(DISPATCHED)
    seconds = None
    if ran and record.started_at is not None and record.finished_at is not None:
        seconds = (record.finished_at - record.started_at).total_seconds()
    return JobFigure(
        id=record.id,
        kind=record.kind,
        repo=record.repo,
        number=record.number,
        state=record.state.value,
        status=r.status.value if r is not None and ran else "",
        cost_usd=r.cost_usd if r is not None else 0.0,
        pr_number=r.pr_number if r is not None else None,
        verified=bool(r is not None and r.validation is not None and r.validation.passed),
        seconds=seconds,
    )


STATS_JOBS = 100_000
"""How many of the newest jobs the figures read."""


def load_stats(queue: JobQueue, repo: str | None = None) -> dict[str, Any]:
    """The figures of everything stored in `queue` (or only `repo`'s)."""
    jobs = [job_figure(r) for r in queue.list(STATS_JOBS) if repo is None or r.repo == repo]
    counts = queue.counts()
    depth = counts[JobState.QUEUED] + counts[JobState.FAILED]
    return figures(jobs, queue.pulls(repo), queue_depth=depth)
