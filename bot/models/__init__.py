"""The shared vocabulary: jobs, agent results, validation results, TDD state (seed 003)."""

from __future__ import annotations

from bot.models.agent import (
    AgentOutput,
    AgentResult,
    AgentRole,
    AgentStatus,
    Artifacts,
    BlockedTask,
    Gates,
    NextStep,
    SessionPhase,
    SessionStatusFile,
)
from bot.models.base import Model, utcnow
from bot.models.jobs import Job, JobKind, JobResult, JobStatus
from bot.models.llm import PROVIDER_URLS, LLMProviderConfig, Usage
from bot.models.tdd import (
    AgentContext,
    CodebaseFile,
    CycleState,
    GitCommitInfo,
    KataConstraint,
    KataDescription,
    SessionState,
    TDDPhase,
)
from bot.models.validation import (
    NO_TESTS,
    CommandResult,
    Diagnostic,
    GateName,
    GateStatus,
    QualityGateResult,
    TestResult,
    ValidationReport,
)

__all__ = [
    "NO_TESTS",
    "PROVIDER_URLS",
    "AgentContext",
    "AgentOutput",
    "AgentResult",
    "AgentRole",
    "AgentStatus",
    "Artifacts",
    "BlockedTask",
    "CodebaseFile",
    "CommandResult",
    "CycleState",
    "Diagnostic",
    "GateName",
    "GateStatus",
    "Gates",
    "GitCommitInfo",
    "Job",
    "JobKind",
    "JobResult",
    "JobStatus",
    "KataConstraint",
    "KataDescription",
    "LLMProviderConfig",
    "Model",
    "NextStep",
    "QualityGateResult",
    "SessionPhase",
    "SessionState",
    "SessionStatusFile",
    "TDDPhase",
    "TestResult",
    "Usage",
    "ValidationReport",
    "utcnow",
]
