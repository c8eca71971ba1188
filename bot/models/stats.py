"""What the operator's view stores: money spent by jobs, and where agentbot's PRs ended."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.models.base import Model

PullState = Literal["open", "merged", "closed"]


@dataclass(frozen=True, slots=True)
class SpendRow:
    """Money one job spent on one model call (or more), and when."""

    job_id: str
    repo: str
    kind: str
    at: datetime
    usd: float


class PullOutcome(Model):
    """One agentbot pull request, followed to its end."""

    repo: str
    number: int
    kind: str = ""
    """The job kind that opened it (`fix_issue`, `implement`...), from its job or its branch."""
    job_id: str = ""
    """The delivery id of the job that opened it, when known."""
    head_ref: str = ""
    state: PullState = "open"
    opened_at: datetime | None = None
    merged_at: datetime | None = None
    closed_at: datetime | None = None
    review_rounds: int = 0
    """Reviews people submitted on it (each submitted review is one round)."""
    human_commits: int = 0
    """Commits people pushed to its branch after agentbot's."""

    @property
    def zero_touch(self) -> bool:
        """Merged without a commit by a person."""
        return self.state == "merged" and self.human_commits == 0
