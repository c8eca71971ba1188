"""jest and vitest: their JSON results (jest's shape) and lcov coverage (istanbul or V8)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.cover.coverage import LineCoverage, parse_lcov
from bot.cover.results import CaseResult, parse_jest_json
from bot.cover.runners.base import SuiteRunner, quoted


@dataclass
class JestRunner(SuiteRunner):
    """jest with its JSON results and istanbul's lcov."""

    def command(self, files: Sequence[str], out: str, coverage_of: Sequence[str]) -> str:
        """`jest --ci --json …`."""
        cmd = f"jest --ci --json --outputFile={out}/results.json --testLocationInResults"
        if coverage_of:
            collect = " ".join(shlex.quote(f"--collectCoverageFrom={f}") for f in coverage_of)
            cmd += (
                f" --coverage --coverageReporters=lcov --coverageDirectory={out}/coverage {collect}"
            )
        return f"{cmd} {quoted(files)}".rstrip()

    def read(self, out: Path, root: str) -> tuple[list[CaseResult], LineCoverage | None]:
        """jest's JSON and lcov."""
        tests = parse_jest_json((out / "results.json").read_text(encoding="utf-8"), root)
        lcov = out / "coverage" / "lcov.info"
        return tests, parse_lcov(lcov.read_text(), root) if lcov.is_file() else None


@dataclass
class VitestRunner(JestRunner):
    """vitest with its JSON reporter (jest's shape) and V8 coverage as lcov."""

    def command(self, files: Sequence[str], out: str, coverage_of: Sequence[str]) -> str:
        """`vitest run --reporter=json …`."""
        cmd = f"vitest run --reporter=json --outputFile={out}/results.json"
        if coverage_of:
            include = " ".join(shlex.quote(f"--coverage.include={f}") for f in coverage_of)
            cmd += (
                " --coverage.enabled=true --coverage.reporter=lcov"
                f" --coverage.reportsDirectory={out}/coverage {include}"
            )
        return f"{cmd} {quoted(files)}".rstrip()
