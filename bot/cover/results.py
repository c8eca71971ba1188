"""Per-test results from the runners' machine-readable reports (pure parsers).

JUnit XML (pytest), the jest JSON shape (jest and vitest), RSpec's JSON formatter and
`go test -json`. A
test's identity is its file and full name (line numbers shift as tests are added); the
line, where a runner gives it, is where the test starts, for dropping it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from bot.cover.coverage import relative


@dataclass(frozen=True)
class CaseResult:
    """One test case's result."""

    file: str
    """Repository-relative."""
    name: str
    """Full name: `Class::test_x`, `describe title test title`, an RSpec full description."""
    passed: bool
    line: int | None = None
    title: str = ""
    """The innermost title (the `it`/`test` string; the function name in pytest)."""

    @property
    def id(self) -> str:
        """`file::name`, stable while the test is unchanged."""
        return f"{self.file}::{self.name}"


def parse_junit(text: str, root: str) -> list[CaseResult]:
    """pytest's `--junitxml` (xunit1 family: with `file` and `line`)."""
    out: list[CaseResult] = []
    for case in ElementTree.fromstring(text).iter("testcase"):  # noqa: S314 (our runner's file)
        if case.find("skipped") is not None:
            continue
        failed = case.find("failure") is not None or case.find("error") is not None
        name = case.get("name", "")
        classname = case.get("classname", "")
        file = case.get("file") or classname.replace(".", "/") + ".py"
        owner = classname.rsplit(".", 1)[-1] if classname else ""
        # A class-held test: `TestShop::test_x`; a module-level one: `test_x`.
        is_class = owner and owner[:1].isupper()
        line = case.get("line")
        out.append(
            CaseResult(
                file=relative(file, root),
                name=f"{owner}::{name}" if is_class else name,
                passed=not failed,
                line=int(line) + 1 if line and line.isdigit() else None,  # junit lines are 0-based
                title=name,
            )
        )
    return out


def parse_jest_json(text: str, root: str) -> list[CaseResult]:
    """jest's `--json` report (vitest's json reporter writes the same shape)."""
    data = json.loads(text)
    out: list[CaseResult] = []
    for suite in data.get("testResults") or []:
        file = relative(str(suite.get("name") or suite.get("testFilePath") or ""), root)
        for case in suite.get("assertionResults") or []:
            status = case.get("status")
            if status in ("pending", "skipped", "todo", "disabled"):
                continue
            location = case.get("location") or {}
            out.append(
                CaseResult(
                    file=file,
                    name=str(case.get("fullName") or case.get("title") or ""),
                    passed=status == "passed",
                    line=location.get("line"),
                    title=str(case.get("title") or ""),
                )
            )
    return out


def parse_rspec_json(text: str, root: str) -> list[CaseResult]:
    """RSpec's `--format json` report."""
    data = json.loads(text)
    out: list[CaseResult] = []
    for example in data.get("examples") or []:
        if example.get("status") == "pending":
            continue
        out.append(
            CaseResult(
                file=relative(str(example.get("file_path") or ""), root),
                name=str(example.get("full_description") or example.get("description") or ""),
                passed=example.get("status") == "passed",
                line=example.get("line_number"),
                title=str(example.get("description") or ""),
            )
        )
    return out


def parse_go_json(text: str, module: str, root: Path) -> list[CaseResult]:
    """`go test -json` events: each top-level test's pass or fail, its file found by name.

    A package that fails without a test event (it does not build) counts as one failed
    test named after the package, so a broken build never passes silently.
    """
    outcomes: dict[tuple[str, str], bool] = {}
    broken: list[str] = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        action, package, test = event.get("Action"), event.get("Package", ""), event.get("Test")
        if test and "/" not in test and action in ("pass", "fail"):
            outcomes[(package, test)] = action == "pass"
        elif not test and action == "fail" and not any(p == package for p, _ in outcomes):
            broken.append(package)
    out: list[CaseResult] = []
    for (package, test), passed in outcomes.items():
        folder = _package_dir(package, module)
        file, at = _go_test_file(root / folder, test)
        out.append(
            CaseResult(
                file=f"{folder}/{file}" if folder else file,
                name=test,
                passed=passed,
                line=at,
                title=test,
            )
        )
    out += [CaseResult(file=_package_dir(p, module), name=p, passed=False) for p in broken]
    return out


def _package_dir(package: str, module: str) -> str:
    if package == module:
        return ""
    return package.removeprefix(module + "/") if package.startswith(module + "/") else package


def _go_test_file(folder: Path, test: str) -> tuple[str, int | None]:
    pattern = re.compile(rf"^func {re.escape(test)}\(", re.M)
    for path in sorted(folder.glob("*_test.go")):
        text = path.read_text(encoding="utf-8", errors="replace")
        found = pattern.search(text)
        if found:
            return path.name, text.count("\n", 0, found.start()) + 1
    return "", None
