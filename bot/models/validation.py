"""Command and validation results (seed 003 5)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from bot.models.base import Model


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


NO_TESTS = "no tests in this repository"
"""How a test stage says the repository has no test at all (skipped, not unverified)."""

GateName = Literal["setup", "format", "lint", "typecheck", "test", "build"]
GateStatus = Literal["passed", "failed", "skipped", "timed_out", "preexisting", "unverified"]
"""`unverified`: the stage should have run but no test of it could be counted (runner missing,
nothing collected, counts unreadable, nothing ran on the base either): never passed."""
"""`preexisting`: the stage fails the same way on the base commit: not held against the change."""


class Diagnostic(Model):
    """One problem a lint, typecheck or format tool reported, located in a file."""

    path: str
    """Repository-relative path; empty when the tool named no file."""
    line: int = 0
    """1-based line, 0 when the problem is about the whole file (formatting)."""
    rule: str = ""
    message: str = ""
    severity: Literal["error", "warning"] = "error"

    def key(self) -> tuple[str, str, str]:
        """What identifies the problem across commits: file, rule, message (not the line)."""
        return (self.path, self.rule, self.message)

    def render(self) -> str:
        """`path:line: rule message`, the way tools print it."""
        where = f"{self.path}:{self.line}" if self.line else self.path
        text = " ".join(p for p in (self.rule, self.message) if p)
        return f"{where}: {text}" if where else text


class QualityGateResult(Model):
    """One validation stage's outcome."""

    gate_name: GateName
    status: GateStatus
    command_result: CommandResult | None = None
    auto_fixed: bool = False
    issues_found: list[str] = Field(default_factory=list)
    warning: str = ""
    """Why a stage was skipped (tool missing, configured off) or what else to know."""
    command: str = ""
    """The command line the stage ran (or would have run)."""
    source: str = ""
    """Where the command came from: agentbot.yml, pre-commit, tox, nox, Makefile, justfile,
    package.json, CI workflow, default."""
    new_issues: list[str] = Field(default_factory=list)
    """Problems this change introduced (diagnostics or tests): the ones that block."""
    preexisting_count: int = Field(default=0, ge=0)
    """Problems the base commit has too: reported, never blocking."""
    restored_files: list[str] = Field(default_factory=list)
    """Files outside the change the stage modified, restored after it ran."""
    missing_tool: str = ""
    """The program or module the stage calls that setup could not provide: the stage is
    unverified (not passed, not pre-existing); `warning` says how to declare it."""

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
    changed_files: list[str] | None = None
    """The files of the change the stages were scoped to; None when the whole checkout was."""

    @property
    def unverified(self) -> list[QualityGateResult]:
        """Stages that could not be verified: never passed nor failed (an environment problem)."""
        return [g for g in self.gates if g.status == "unverified"]

    @property
    def failing_gate(self) -> QualityGateResult | None:
        """The first stage that failed or timed out, if any."""
        return next((g for g in self.gates if g.status in ("failed", "timed_out")), None)

    def problems(self) -> str:
        """What blocks the gate, one line per new problem, for people and the Fixer."""
        lines = []
        for gate in self.gates:
            if gate.status not in ("failed", "timed_out"):
                continue
            lines.append(f"{gate.gate_name} ({gate.command or 'no command'}): {gate.status}")
            lines += [f"  {issue}" for issue in gate.new_issues or gate.issues_found]
        return "\n".join(lines)
