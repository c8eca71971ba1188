"""`cargo test` on the chosen integration test files; per-test results from its text output.

Stable cargo has no machine-readable test report and this machine no coverage tool for
Rust, so results come from `test <name> ... ok` lines under each `Running <file>` header,
and coverage is not measured (the table says n/a).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bot.cover.coverage import LineCoverage
from bot.cover.results import CaseResult
from bot.cover.runners.base import SuiteRunner

_RUNNING = re.compile(r"^\s*Running (?:unittests )?(?P<file>\S+)")
_TEST = re.compile(r"^test (?P<name>\S+) \.\.\. (?P<result>ok|FAILED)$")


def parse_cargo_tests(text: str) -> list[CaseResult]:
    """Each `test name ... ok|FAILED` line, with the file of the `Running` section it is in."""
    out: list[CaseResult] = []
    file = ""
    for line in text.splitlines():
        if running := _RUNNING.match(line):
            file = running["file"]
        elif line.lstrip().startswith("Doc-tests"):
            file = ""
        elif (test := _TEST.match(line.rstrip())) and file:
            name = test["name"]
            title = name.rsplit("::", 1)[-1]
            out.append(CaseResult(file=file, name=name, passed=test["result"] == "ok", title=title))
    return out


@dataclass
class RustRunner(SuiteRunner):
    """`cargo test --no-fail-fast [--test name …]`."""

    def command(self, files: Sequence[str], out: str, coverage_of: Sequence[str]) -> str:
        """The test targets of `files` under tests/ (every target when none)."""
        targets = " ".join(
            f"--test {shlex.quote(PurePosixPath(f).stem)}"
            for f in files
            if PurePosixPath(f).parts[:1] == ("tests",)
        )
        log = f"{out}/cargo.txt"
        cmd = f"cargo test --no-fail-fast {targets}".rstrip()
        return f"{cmd} > {log} 2>&1; code=$?; cat {log}; exit $code"

    def read(self, out: Path, root: str) -> tuple[list[CaseResult], LineCoverage | None]:
        """The test lines of cargo's output; no coverage."""
        return parse_cargo_tests((out / "cargo.txt").read_text(encoding="utf-8")), None
