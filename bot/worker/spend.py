"""The App's spend caps over time, counted in the queue's database (bot.stats.caps).

A job is refused when one of its caps is reached as it is claimed, and every model call it
makes is counted as it is made, so a running job stops at a cap like at its own budget, and
jobs running side by side see each other's spend. Jobs dispatched to GitHub Actions spend
there and are neither counted nor refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.clock import Clock
from bot.config import RepoConfig
from bot.errors import LimitsExceeded
from bot.models import Job
from bot.queue import JobQueue
from bot.stats.caps import Cap, CapUse, caps, reached


@dataclass
class SpendCaps:
    """The installation's caps (AGENTBOT_MAX_USD_PER_*) and each repository's, kept in `queue`."""

    queue: JobQueue
    clock: Clock
    per_day: float | None = None
    per_month: float | None = None

    def caps_for(self, repo: str, config: RepoConfig) -> list[Cap]:
        """Every cap a job in `repo` is held to."""
        b = config.budget
        return caps(
            repo,
            repo_day=b.max_usd_per_day,
            repo_month=b.max_usd_per_month,
            day=self.per_day,
            month=self.per_month,
        )

    def refusal(self, job: Job, config: RepoConfig) -> CapUse | None:
        """The cap that is reached now for this job, or None; remembers the repository's caps."""
        b = config.budget
        self.queue.set_repo_caps(job.repo, b.max_usd_per_day, b.max_usd_per_month, self.clock.now())
        return reached(self.caps_for(job.repo, config), self.queue.spent, self.clock.now())

    def meter(self, job: Job, config: RepoConfig) -> QueueMeter:
        """The meter the job's budget reports to."""
        return QueueMeter(self, job, self.caps_for(job.repo, config))


@dataclass
class QueueMeter:
    """One job's spending, counted as it happens and checked against its caps."""

    owner: SpendCaps
    job: Job
    caps: list[Cap]

    def check(self) -> None:
        """Raise LimitsExceeded (limit `usd_per_day` or `usd_per_month`) at a reached cap."""
        use = reached(self.caps, self.owner.queue.spent, self.owner.clock.now())
        if use is not None:
            raise LimitsExceeded(
                use.message(),
                limit=f"usd_per_{use.cap.period}",
                used=use.spent,
                allowed=use.cap.limit,
            )

    def add(self, usd: float) -> None:
        """Count money the job just spent."""
        job = self.job
        self.owner.queue.record_spend(
            job.delivery_id, job.repo, job.number, job.kind.value, usd, self.owner.clock.now()
        )
