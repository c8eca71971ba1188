"""The agent output contract and session status file (seed 004), and agent results."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from bot.models.base import Model, utcnow
from bot.models.llm import Usage


class AgentStatus(StrEnum):
    """How an agent's work ended, as it reports it through `finish`."""

    OK = "OK"
    BLOCKED = "BLOCKED"
    NEEDS_INFO = "NEEDS_INFO"
    FAIL = "FAIL"


class Artifacts(Model):
    """What the agent produced (seed 004 `artifacts`)."""

    files_to_create_or_update: list[str] = Field(default_factory=list)
    files_changed: list[str] = Field(default_factory=list)
    tests_added_or_updated: list[str] = Field(default_factory=list)
    commands_to_run: list[str] = Field(default_factory=list)
    manual_steps: list[str] = Field(default_factory=list)
    review_comments: list[str] = Field(default_factory=list)
    findings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class Gates(Model):
    """The agent's own view of the hard gates (seed 004 `gates`), enforced by the workflows.

    `meets_definition_of_done` defaults to true: an OK status already claims the work is
    done, and only an explicit `false` takes that back (the result is then not OK).
    """

    meets_definition_of_done: bool = True
    needs_review: bool = False
    needs_tests: bool = False
    security_concerns: list[str] = Field(default_factory=list)


class NextStep(Model):
    """What the agent recommends next (seed 004 `next`)."""

    recommended_agent: str = ""
    recommended_task_id: str = ""
    reason: str = ""


class AgentOutput(Model):
    """The input of the `finish` tool: every agent's final answer (seed 004)."""

    status: AgentStatus
    summary: str = Field(min_length=1)
    artifacts: Artifacts = Field(default_factory=Artifacts)
    gates: Gates = Field(default_factory=Gates)
    next: NextStep = Field(default_factory=NextStep)
    root_cause: str = ""
    """Why the bug happened (IssueFixer); rendered in the PR body."""
    question: str = ""
    """The question to ask the user when status is NEEDS_INFO."""
    data: dict[str, Any] = Field(default_factory=dict)
    """A role's structured result (seed 002's `data`); its prompt gives the shape."""


class AgentRole(StrEnum):
    """Every role an agent can play."""

    ISSUE_FIXER = "issue_fixer"
    IMPLEMENTER = "implementer"
    FIXER = "fixer"
    TESTER = "tester"
    TDD_IMPLEMENTER = "tdd_implementer"
    REFACTORER = "refactorer"
    SUPERVISOR = "supervisor"
    ANALYST = "analyst"
    TEST_ARCHITECT = "test_architect"
    TEST_WRITER = "test_writer"
    REVIEWER = "reviewer"
    PLANNER = "planner"


class AgentResult(Model):
    """What one agent run produced (seed 003 4.3 plus usage and cost)."""

    role: AgentRole
    success: bool
    message: str
    output: AgentOutput | None = None
    files_modified: list[Path] = Field(default_factory=list)
    tests_passed: bool | None = None
    test_output: str | None = None
    commits_made: list[str] = Field(default_factory=list)
    overshoot_detected: bool = False
    error_details: str | None = None
    duration_seconds: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    turns: int = 0


# --- session status (seed 004 status.json) -----------------------------------------------

SessionPhase = Literal[
    "INTAKE",
    "DESIGN",
    "PLAN",
    "IMPLEMENT_LOOP",
    "INTEGRATE",
    "RELEASE",
    "DONE",
    "ASK_USER",
    "BLOCKED",
]


class BlockedTask(Model):
    """A task that could not go on, and why."""

    id: str
    reason: str


class SessionStatusFile(Model):
    """The `status.json` of a session folder (seed 004), plus the agent's final status."""

    current_state: SessionPhase = "INTAKE"
    session: str
    status: AgentStatus | None = None
    completed_tasks: list[str] = Field(default_factory=list)
    blocked_tasks: list[BlockedTask] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    retry_counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    known_issues: list[str] = Field(default_factory=list)
    last_ci_result: Literal["unknown", "green", "red"] = "unknown"
    last_update: datetime = Field(default_factory=utcnow)
    job_outcome: str | None = None
    """The job's outcome as its PR, check run and log tell it (`success`, `unproven`, …); the
    agent's own `status` may differ (an agent that finished OK in an unproven job)."""
