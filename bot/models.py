"""The shared vocabulary: jobs, agent results, validation results, TDD state (seed 003)."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


def utcnow() -> datetime:
    """Return the current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


class Model(BaseModel):
    """Base for every model: unknown fields are errors, values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


# --- LLM provider and usage -------------------------------------------------------------

PROVIDER_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "perplexity": "https://api.perplexity.ai",
    "deepseek": "https://api.deepseek.com/v1",
    "iflow": "https://apis.iflow.cn/v1",
}


class LLMProviderConfig(Model):
    """How to reach one LLM provider (seed 003 1.1, plus Anthropic)."""

    provider: Literal["anthropic", "openai", "perplexity", "deepseek", "iflow", "custom"]
    model: str
    api_key: str = Field(default="", repr=False)
    base_url: str | None = None
    temperature: float = Field(default=0.1, ge=0.0, le=2.0)
    timeout: int = Field(default=120, gt=0)
    max_retries: int = Field(default=4, ge=0)
    """Retries of 429/529/5xx/connection errors before the job fails."""

    @model_validator(mode="after")
    def _default_base_url(self) -> LLMProviderConfig:
        if self.base_url is None:
            if self.provider == "custom":
                raise ValueError("provider 'custom' needs an explicit base_url")
            self.base_url = PROVIDER_URLS.get(self.provider)
        return self


class Usage(Model):
    """Token counts of one call or summed over a job."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """All tokens, cached or not."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )


# --- the agent output contract (seed 004) ------------------------------------------------


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
    """The agent's own view of the hard gates (seed 004 `gates`)."""

    meets_definition_of_done: bool = False
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


class AgentRole(StrEnum):
    """Every role an agent can play."""

    ISSUE_FIXER = "issue_fixer"
    IMPLEMENTER = "implementer"
    FIXER = "fixer"
    TESTER = "tester"
    REFACTORER = "refactorer"
    SUPERVISOR = "supervisor"
    ANALYST = "analyst"
    TEST_WRITER = "test_writer"
    REVIEWER = "reviewer"


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


# --- commands and validation (seed 003 5) ------------------------------------------------


class CommandResult(Model):
    """One shell command's outcome."""

    command: list[str]
    exit_code: int
    output: str
    success: bool
    duration_seconds: float
    timed_out: bool = False


class TestResult(Model):
    """Counts parsed from a test runner's output; passed + failed == total."""

    __test__ = False  # not a pytest test class

    passed: bool
    test_count: int = Field(ge=0)
    passed_count: int = Field(ge=0)
    failed_count: int = Field(ge=0)
    skipped_count: int = Field(default=0, ge=0)
    failed_tests: list[str] = Field(default_factory=list)
    output: str = ""
    duration_seconds: float = 0.0
    error_message: str | None = None

    @model_validator(mode="after")
    def _counts_add_up(self) -> TestResult:
        if self.passed_count + self.failed_count != self.test_count:
            raise ValueError(
                f"passed_count {self.passed_count} + failed_count {self.failed_count}"
                f" != test_count {self.test_count}"
            )
        return self


GateName = Literal["setup", "format", "lint", "typecheck", "test", "build"]
GateStatus = Literal["passed", "failed", "skipped", "timed_out"]


class QualityGateResult(Model):
    """One validation stage's outcome."""

    gate_name: GateName
    status: GateStatus
    command_result: CommandResult | None = None
    auto_fixed: bool = False
    issues_found: list[str] = Field(default_factory=list)
    warning: str = ""
    """Why a stage was skipped (tool missing, configured off) or what else to know."""

    @property
    def passed(self) -> bool:
        """True only for a stage that ran and passed; skipped is not passed."""
        return self.status == "passed"


class ValidationReport(Model):
    """The whole pipeline's outcome for one workspace state."""

    profile: str
    gates: list[QualityGateResult] = Field(default_factory=list)
    tests: TestResult | None = None
    new_failures: list[str] = Field(default_factory=list)
    preexisting_failures: list[str] = Field(default_factory=list)
    fix_rounds_used: int = 0
    passed: bool
    duration_seconds: float = 0.0
    warnings: list[str] = Field(default_factory=list)
    """Pipeline-level notes (nothing validated, baseline unavailable); stage notes are on gates."""

    @property
    def failing_gate(self) -> QualityGateResult | None:
        """The first stage that failed or timed out, if any."""
        return next((g for g in self.gates if g.status in ("failed", "timed_out")), None)


# --- TDD (seed 003 2-4) -------------------------------------------------------------------


class KataConstraint(Model):
    """A constraint on the kata's implementation."""

    description: str
    applies_to: Literal["code", "tests", "both"] = "code"


class KataDescription(Model):
    """A parsed kata markdown file."""

    title: str
    description: str
    requirements: list[str] = Field(default_factory=list)
    constraints: list[KataConstraint] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)
    source_path: Path


class TDDPhase(StrEnum):
    """Phase within a TDD cycle."""

    TESTING = "testing"
    IMPLEMENTING = "implementing"
    REFACTORING = "refactoring"
    COMPLETE = "complete"
    FAILED = "failed"


class CycleState(Model):
    """One red-green-refactor cycle."""

    cycle_num: int = Field(ge=1)
    phase: TDDPhase = TDDPhase.TESTING
    started_at: datetime = Field(default_factory=utcnow)
    completed_at: datetime | None = None
    test_file_path: Path | None = None
    implementation_files: list[Path] = Field(default_factory=list)
    commits: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class SessionState(Model):
    """A whole TDD session."""

    kata: KataDescription
    work_dir: Path
    current_cycle: int = Field(default=1, ge=1)
    cycles: list[CycleState] = Field(default_factory=list)
    total_commits: int = 0
    started_at: datetime = Field(default_factory=utcnow)
    completed_at: datetime | None = None


class CodebaseFile(Model):
    """A file shown to an agent."""

    path: Path
    content: str
    language: str | None = None


class GitCommitInfo(Model):
    """A commit shown to an agent."""

    sha: str
    message: str
    author: str
    timestamp: datetime
    files_changed: list[str] = Field(default_factory=list)


class AgentContext(Model):
    """What a TDD agent is told before it runs."""

    kata_description: str
    kata_constraints: list[str] = Field(default_factory=list)
    cycle_number: int
    codebase_files: list[CodebaseFile] = Field(default_factory=list)
    recent_commits: list[GitCommitInfo] = Field(default_factory=list)
    last_test_output: str | None = None
    last_error: str | None = None
    retry_attempt: int = Field(default=0, ge=0)


# --- jobs ---------------------------------------------------------------------------------


class JobKind(StrEnum):
    """What a job does; each kind has one workflow."""

    FIX_ISSUE = "fix_issue"
    IMPLEMENT = "implement"
    REFUEL = "refuel"
    TDD = "tdd"
    COVER = "cover"


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

    @property
    def exit_code(self) -> int:
        """The exit code GitHub Actions reads for this outcome."""
        return {"success": 0, "failed": 1, "neutral": 78, "needs_info": 0}[self.value]


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
    files_changed: list[str] = Field(default_factory=list)
    validation: ValidationReport | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    turns: int = 0
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    items: list[dict[str, Any]] = Field(default_factory=list)
    """Sub-results: tasks of an implement run, issues of a refuel run, cycles of a TDD run."""

    @property
    def duration_seconds(self) -> float:
        """Wall time of the job, 0 while it runs."""
        if self.finished_at is None:
            return 0.0
        return (self.finished_at - self.started_at).total_seconds()


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
