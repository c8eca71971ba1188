"""The shape every /cover test runner shares: run chosen files, read per-test results.

Reports go to a self-ignoring `.agentbot-cover/` folder in the workspace (the only place a
sandboxed run may write) and are removed once read. Commands run in the validation stage
environment: scrubbed of secrets, the repository's own virtualenv or node_modules first.
"""

from __future__ import annotations

import os
import shlex
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot import treefs
from bot.clock import Clock
from bot.cover.coverage import LineCoverage
from bot.cover.results import CaseResult
from bot.validation.environment import StageEnv
from bot.validation.runner import run_command

OUT_DIR = ".agentbot-cover"


@dataclass
class RunResult:
    """One run: each test's result, line coverage when asked for, and what the run printed."""

    tests: list[CaseResult]
    coverage: LineCoverage | None
    output: str
    exit_code: int
    timed_out: bool = False
    problem: str = ""
    """Why no per-test result could be read ("" when they were)."""
    duration: float = 0.0

    def failing(self) -> list[CaseResult]:
        """The tests that failed."""
        return [t for t in self.tests if not t.passed]


@dataclass
class SuiteRunner:
    """A framework's commands; `run` is the same for all of them."""

    repo: Path
    senv: StageEnv
    timeout: float
    clock: Clock
    name: str = ""
    warnings: list[str] = field(default_factory=list)

    def command(self, files: Sequence[str], out: str, coverage_of: Sequence[str]) -> str:
        """The shell command running `files` (all tests when empty), reports into `out`."""
        raise NotImplementedError

    def read(self, out: Path, root: str) -> tuple[list[CaseResult], LineCoverage | None]:
        """The per-test results and coverage the run left in `out`."""
        raise NotImplementedError

    def run(
        self,
        files: Sequence[str] = (),
        *,
        coverage_of: Sequence[str] = (),
        timeout: float | None = None,
    ) -> RunResult:
        """Run `files` (every test when empty); measure coverage of `coverage_of` if given."""
        # Never through a link: an earlier run of the repository's tests may have left one.
        treefs.write_bytes(self.repo, f"{OUT_DIR}/.gitignore", b"*\n")
        out = self.repo / OUT_DIR / uuid.uuid4().hex[:12]
        out.mkdir()
        rel = f"{OUT_DIR}/{out.name}"
        try:
            cmd = self.command(list(files), rel, list(coverage_of))
            done = run_command(
                cmd,
                self.repo,
                env=self.senv.env,
                timeout=timeout or self.timeout,
                clock=self.clock,
                sandbox=self.senv.sandbox,
                writable=self.senv.writable,
                readable=self.senv.readable,
            )
            try:
                _only_regular_files(out)
                tests, cov = self.read(out, str(self.repo))
                problem = "" if tests or done.success else "the run reported no test results"
            except (OSError, ValueError) as exc:
                tests, cov, problem = [], None, f"no readable results ({exc})"
            return RunResult(
                tests=tests,
                coverage=cov if coverage_of else None,
                output=done.output,
                exit_code=done.exit_code,
                timed_out=done.timed_out,
                problem=problem,
                duration=done.duration_seconds,
            )
        finally:
            shutil.rmtree(out, ignore_errors=True)


def _only_regular_files(out: Path) -> None:
    """Delete links and special files the run left among its reports before any is read."""
    if not out.is_dir() or out.is_symlink():
        raise ValueError(f"{out.name} is no longer a folder")
    for folder, dirs, files in os.walk(out):
        for name in dirs + files:
            path = Path(folder, name)
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                path.unlink()


def quoted(files: Sequence[str]) -> str:
    """Paths as shell words."""
    return " ".join(shlex.quote(f) for f in files)
