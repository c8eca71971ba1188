"""Jobs: what to run, where, for whom, and what it produced."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from bot.models.base import Model, utcnow
from bot.models.llm import Usage
from bot.models.validation import ValidationReport


class JobKind(StrEnum):
    """What a job does; each kind has one workflow."""

    FIX_ISSUE = "fix_issue"
    IMPLEMENT = "implement"
    REFUEL = "refuel"
    TDD = "tdd"
    COVER = "cover"
    FOLLOW_UP = "follow_up"
    """Review feedback or a failed CI run on one of agentbot's own pull requests."""
    PLAN = "plan"
    """A plan posted for approval (`/plan`), or an approved plan run (`/approve`)."""


class Job(Model):
    """A decided piece of work: what to run, where, for whom."""

    kind: JobKind
    repo: str
    """`owner/name`."""
    number: int | None = None
    """The issue or pull request the job is about."""
    actor: str = ""
    """Who triggered it (label applier, commenter, pusher)."""
    installation_id: int | None = None
    delivery_id: str = ""
    ref: str = ""
    """Branch to work on (implement on a PR head or a pushed branch)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Kind-specific inputs: tasks path, label, limit, max_usd, base ref…"""

    @property
    def key(self) -> str:
        """What at most one running job may hold at a time (`owner/name#N` or `owner/name@ref`)."""
        if self.number is not None:
            return f"{self.repo}#{self.number}"
        return f"{self.repo}@{self.ref or self.kind.value}"


class JobStatus(StrEnum):
    """How a job ended; maps to exit codes 0, 1, 78."""

    SUCCESS = "success"
    FAILED = "failed"
    NEUTRAL = "neutral"
    NEEDS_INFO = "needs_info"
    UNVERIFIED = "unverified"
    """A change was made but its tests could not run: a draft pull request, never a green."""
    UNPROVEN = "unproven"
    """The gate passed but the runner could not show the change's tests fail on the base (or
    the agent, sent back for it, did not finish): a draft pull request, never a green."""

    @property
    def exit_code(self) -> int:
        """The exit code GitHub Actions reads for this outcome."""
        return {
            "success": 0,
            "failed": 1,
            "neutral": 78,
            "needs_info": 0,
            "unverified": 0,
            "unproven": 0,
        }[self.value]


class JobResult(Model):
    """Everything a job produced; the reports are pure functions of this."""

    job: Job
    status: JobStatus
    summary: str = ""
    root_cause: str = ""
    error: str = ""
    pr_url: str = ""
    pr_number: int | None = None
    branch: str = ""
    """The branch the job pushed its work to; empty while nothing is pushed."""
    files_changed: list[str] = Field(default_factory=list)
    validation: ValidationReport | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    turns: int = 0
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    security_concerns: list[str] = Field(default_factory=list)
    """What the agents flagged for a security review (seed 004 gate): the PR stays a draft."""
    items: list[dict[str, Any]] = Field(default_factory=list)
    """Sub-results: tasks of an implement run, issues of a refuel run, cycles of a TDD run."""

    @property
    def duration_seconds(self) -> float:
        """Wall time of the job, 0 while it runs."""
        if self.finished_at is None:
            return 0.0
        return (self.finished_at - self.started_at).total_seconds()
