"""TDD kata, cycle and session state, and the context a TDD agent is given (seed 003 2-4)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import Field

from bot.models.base import Model, utcnow


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
