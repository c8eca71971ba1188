"""The repository's whole test suite, run the way validation runs it (the RED/GREEN judge).

Set up once through validation's `prepare` (as /cover does) (the same environment, dependencies and
sandbox the gate uses), the test stage's first runnable command is run whole each time
and its output parsed by validation's parsers.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from bot.clock import Clock
from bot.config import ValidationConfig
from bot.errors import AgentbotError
from bot.sandbox import Sandbox
from bot.tdd.verdict import SuiteRun
from bot.validation import parse_test_counts, run_command
from bot.validation.environment import StageEnv
from bot.validation.parsers import infer_runner
from bot.validation.repo_env import prepare

_SKIP = frozenset({".git", "node_modules", ".venv", "venv", ".tox", "target"})


@dataclass
class Suite:
    """How this workspace's tests run."""

    senv: StageEnv
    command: str
    runner: str
    timeout: float
    clock: Clock

    def purge(self) -> None:
        """Drop the bytecode cached in the workspace's tree (run_command forgets the stage
        cache's copy of it)."""
        purge_bytecode(self.senv.repo)

    def run(self) -> SuiteRun:
        """Run every test once; the output, exit code and parsed counts."""
        self.purge()
        done = run_command(
            self.command,
            self.senv.repo,
            env={**self.senv.env, "PYTHONDONTWRITEBYTECODE": "1"},
            timeout=self.timeout,
            clock=self.clock,
            sandbox=self.senv.sandbox,
            writable=self.senv.writable,
            readable=self.senv.readable,
        )
        try:
            counts = parse_test_counts(self.runner, done.output)
        except ValueError:
            counts = None
        return SuiteRun(done.output, done.exit_code, counts, done.timed_out)


def purge_bytecode(root: Path) -> None:
    """Delete `__pycache__` folders: a file changed within the second it was compiled, to a
    text of the same size, looks unchanged to Python, which would run the stale bytecode."""
    for folder in root.rglob("__pycache__"):
        if not _SKIP.intersection(folder.relative_to(root).parts):
            shutil.rmtree(folder, ignore_errors=True)


def open_suite(
    repo: Path,
    config: ValidationConfig,
    *,
    data_dir: Path,
    clock: Clock,
    sandbox: Sandbox | None,
) -> Suite:
    """Set the workspace up and find its test command; AgentbotError when it has none."""
    senv, command = prepare(repo, config, data_dir=data_dir, clock=clock, sandbox=sandbox)
    if not command:
        raise AgentbotError(
            "TDD needs a test command and this repository's test stage is disabled;"
            " set validation.test in .github/agentbot.yml"
        )
    runner = infer_runner(command, "auto")
    return Suite(senv, command, runner, float(config.timeout_seconds), clock)
