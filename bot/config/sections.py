"""The sections of `.github/agentbot.yml` (DESIGN §4): one model per top-level key."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Permission = Literal["read", "triage", "write", "maintain", "admin"]
PERMISSION_RANK: dict[str, int] = {
    "none": 0,
    "read": 1,
    "triage": 2,
    "write": 3,
    "maintain": 4,
    "admin": 5,
}


class Section(BaseModel):
    """A config section: unknown keys are errors, so a typo is named, not ignored."""

    model_config = ConfigDict(extra="forbid")


class Labels(Section):
    """Label names the bot reacts to and sets."""

    fix: str = "agent-fix"
    tdd: str = "agent-tdd"
    plan: str = "agent-plan"
    """Plan first (issue #28): the Planner proposes, a `/approve` runs the fix."""
    failed: str = "agent-failed"
    needs_info: str = "agent-needs-info"
    security_review: str = "agent-security-review"
    """Set on a pull request whose agent raised a security concern (seed 004 gate)."""
    unverified: str = "agent-unverified"
    """Set on a draft whose gate could not be trusted: a stage could not run, or the change
    edits how it is judged."""


LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?")
"""A GitHub login (an App's account ends in `[bot]`)."""

COMMAND_SIGILS = ("/", "@")
"""How every comment command starts, so a comment without one is dismissed unread."""


class Commands(Section):
    """Comment commands (a comment whose body starts with one triggers the job).

    Each starts with `/` or `@` (`/fix`, `@agentbot fix`): prose never starts a job, and a
    plain comment costs no request to GitHub. An empty command is switched off.
    """

    fix: str = "/fix"
    implement: str = "/implement"
    cover: str = "/cover"
    plan: str = "/plan"
    approve: str = "/approve"

    @field_validator("fix", "implement", "cover", "plan", "approve")
    @classmethod
    def _sigil(cls, value: str) -> str:
        if value.strip() and not value.startswith(COMMAND_SIGILS):
            raise ValueError(f"a command starts with / or @ (like /fix), got {value!r}")
        return value


MAX_TURNS = 1000
"""The most turns `max_turns` may allow (a plan's turn estimate has the same bound): past it
the USD and minute budgets stop a job long before, and a typo's zeros would read as no limit."""


class RoleConfig(Section):
    """Per-role overrides."""

    model: str | None = None
    max_turns: int | None = Field(default=None, gt=0, le=MAX_TURNS, strict=True)
    """This role's turns in one agent run, 1 to 1000."""


class Budget(Section):
    """Spending limits; a job stops when one runs out."""

    max_usd_per_job: float = Field(default=3.0, gt=0)
    max_turns: int = Field(default=60, gt=0, le=MAX_TURNS, strict=True)
    """The job's turns across its agents, 1 to 1000."""
    max_minutes: float = Field(default=30, gt=0)
    max_usd_per_refuel: float = Field(default=20.0, gt=0)
    max_usd_per_day: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """This repository's spend per UTC day (App only: counted in the queue's database)."""
    max_usd_per_month: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """This repository's spend per UTC calendar month (App only)."""


class ValidationConfig(Section):
    """Stage commands; an absent stage uses the language default, null skips it."""

    setup: str | None = "default"
    format: str | None = "default"
    lint: str | None = "default"
    typecheck: str | None = "default"
    test: str | None = "default"
    timeout_seconds: int = Field(default=900, gt=0)
    fix_rounds: int = Field(default=3, ge=0)
    require_tests: bool = False
    """A repository with no tests at all is unverified (a draft labelled `agent-unverified`)
    instead of said plainly and opened ready."""


class Limits(Section):
    """What a change may touch, judged on the commits to be pushed (bot.outbound.limits)."""

    max_changed_lines: int = Field(default=200, gt=0)
    """Changed lines outside tests and docs (added + deleted; a long line counts per 200
    characters, a file the diff cannot show per 80 bytes)."""
    max_changed_test_lines: int = Field(default=1000, gt=0)
    """Changed lines in tests and docs, counted the same way."""
    max_file_bytes: int = Field(default=1024 * 1024, gt=0)
    """No file may be added, or grow, past this many bytes."""
    protected_paths: list[str] = Field(default_factory=lambda: [".github/workflows/**"])
    """Globs no change may add, edit, delete or rename (`**` any depth, `*` one segment)."""
    allow_test_deletion: bool = False


class PullRequestConfig(Section):
    """How pull requests are opened."""

    draft: bool = False
    draft_on_failure: bool = False
    reviewers: Literal["initiator", "none"] = "initiator"
    branch_prefix: str = "agentbot/"


class FollowUpConfig(Section):
    """Follow-ups on agentbot's own pull requests (reviews, failed CI)."""

    reviews: bool = True
    """Answer changes requested, inline review comments and `/fix <instructions>`."""
    max_ci_fix_attempts: int = Field(default=2, ge=0)
    """Fix commits per pull request for failed CI before agentbot stops and says so."""


class PlanConfig(Section):
    """Plan first, then approve (docs/plan.md)."""

    required: bool = False
    """`agent-fix`, `/fix` and assignment post a plan first instead of fixing at once."""
    on_deviation: Literal["draft", "fail"] = "draft"
    """A change still beyond the approved plan's files after one send-back: a draft pull
    request naming each file, or a failed job."""
    budget_factor: float = Field(default=1.5, gt=0, allow_inf_nan=False)
    """The approved job's budget is the plan's estimate times this, within `budget`."""


class Execution(Section):
    """Where jobs run and how many tasks run at once."""

    mode: Literal["local", "actions"] = "local"
    workflow: str = "agentbot.yml"
    max_parallel_tasks: int = Field(default=4, gt=0)


class SandboxConfig(Section):
    """What sandboxed commands may reach (DESIGN §13)."""

    network: Literal["none", "setup", "all"] = "setup"
    """`none`: no network for any command; `setup`: only the validation setup stage
    (installing dependencies); `all`: the agent's tools and every stage too."""
