"""pytest under coverage.py, per-test results as JUnit XML."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.cover.coverage import LineCoverage, parse_coverage_py
from bot.cover.results import CaseResult, parse_junit
from bot.cover.runners.base import SuiteRunner, quoted

# A configured `[VAR=value …] python -m pytest [options]`: its interpreter, environment and
# options are kept (a repository's own `-p no:…` or `-o …` still applies).
PYTEST_COMMAND = re.compile(
    r"^\s*(?P<env>(?:[A-Za-z_]\w*=\S*\s+)*)(?P<py>\S*python[\w.]*)\s+-m\s+pytest\b(?P<args>[^;&|]*)$"
)


@dataclass
class PytestRunner(SuiteRunner):
    """pytest under coverage.py, results as JUnit XML."""

    python: str = "python"
    env_prefix: str = ""
    """`VAR=value ` words of the configured test command."""
    options: str = ""
    """The configured pytest options (test paths dropped when files are given)."""

    def command(self, files: Sequence[str], out: str, coverage_of: Sequence[str]) -> str:
        """`python -m coverage run -m pytest …; python -m coverage json …`."""
        py = self.env_prefix + shlex.quote(self.python)
        # With files to run, the configured test paths go (an option's value stays).
        words = shlex.split(self.options)
        options = shlex.join(
            w for w in words if not (files and not w.startswith("-") and (self.repo / w).exists())
        )
        pytest = (
            f"-m pytest -q -p no:cacheprovider {options} -o junit_family=xunit1"
            f" --junitxml={out}/junit.xml {quoted(files)}"
        ).rstrip()
        if not coverage_of:
            return f"{py} {pytest}"
        data = f"--data-file={out}/.coverage"
        include = shlex.quote("--include=" + ",".join(coverage_of))
        return (
            f"{py} -m coverage run {data} {include} {pytest}; code=$?;"
            f" {self.env_prefix}{shlex.quote(self.python)} -m coverage json {data}"
            f" -o {out}/coverage.json >/dev/null 2>&1; exit $code"
        )

    def read(self, out: Path, root: str) -> tuple[list[CaseResult], LineCoverage | None]:
        """JUnit XML and coverage.py JSON."""
        tests = parse_junit((out / "junit.xml").read_text(encoding="utf-8"), root)
        cov_file = out / "coverage.json"
        cov = parse_coverage_py(cov_file.read_text(), root) if cov_file.is_file() else None
        return tests, cov
