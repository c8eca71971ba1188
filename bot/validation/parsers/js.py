"""Test counts from jest, vitest and mocha output."""

from __future__ import annotations

import re

from bot.models import TestResult
from bot.validation.parsers.common import counts, result

_JEST_TESTS = re.compile(r"^Tests:\s+(.*\d+ total)\s*$", re.MULTILINE)
_JEST_PAIR = re.compile(r"(\d+) (failed|passed|skipped|todo|total)\b")
_JEST_FAILED = re.compile(r"^  ● (.+?)\s*$", re.MULTILINE)
_JEST_SUITE_FAILED = re.compile(
    r"^FAIL (\S+).*\n(?:\s*\n)*\s*● Test suite failed to run", re.MULTILINE
)


def parse_jest(output: str) -> TestResult | None:
    """`Tests: 2 failed, 1 skipped, 2 passed, 5 total`; a suite that failed to run is a failure."""
    if "No tests found, exiting with code" in output:
        return result(0, 0, 0, [])
    found = _JEST_TESTS.findall(output)
    suites = _JEST_SUITE_FAILED.findall(output)
    if not found and not suites:
        return None
    c = counts(_JEST_PAIR.findall(found[-1])) if found else {}
    ids = [t for t in _JEST_FAILED.findall(output) if t != "Test suite failed to run"]
    failed = c.get("failed", 0) + len(suites)
    return result(c.get("passed", 0), failed, c.get("skipped", 0) + c.get("todo", 0), ids + suites)


_VITEST_TESTS = re.compile(r"^\s*Tests\s+(.*)\(\d+\)\s*$", re.MULTILINE)
_VITEST_FILES = re.compile(r"^\s*Test Files\s+(.*)\(\d+\)\s*$", re.MULTILINE)
_VITEST_PAIR = re.compile(r"(\d+) (failed|passed|skipped|todo)\b")
_VITEST_FAILED = re.compile(r"^ FAIL  (.+?)\s*$", re.MULTILINE)


def parse_vitest(output: str) -> TestResult | None:
    """`Tests  2 failed | 2 passed | 1 skipped (5)`; failed files with no test count as failures."""
    if "No test files found, exiting with code" in output:
        return result(0, 0, 0, [])
    tests, files = _VITEST_TESTS.findall(output), _VITEST_FILES.findall(output)
    if not tests and not files:
        return None
    c = counts(_VITEST_PAIR.findall(tests[-1])) if tests else {}
    ids = _VITEST_FAILED.findall(output)
    failed = c.get("failed", 0)
    if failed == 0 and files and counts(_VITEST_PAIR.findall(files[-1])).get("failed", 0):
        # A file that failed to load has no test lines of its own; it still failed.
        failed = max(1, len(ids))
    return result(c.get("passed", 0), failed, c.get("skipped", 0) + c.get("todo", 0), ids)


_MOCHA_COUNT = re.compile(r"^\s+(\d+) (passing|failing|pending)\b", re.MULTILINE)
_MOCHA_ENTRY = re.compile(r"^  (\d+)\) (.*)$")


def parse_mocha(output: str) -> TestResult | None:
    """`2 passing`, `1 pending`, `2 failing`; ids from the numbered failure list after them."""
    if "Error: No test files found" in output:
        return result(0, 0, 0, [])
    c = counts(_MOCHA_COUNT.findall(output))
    if "passing" not in c:
        return None
    ids: list[str] = []
    lines = output.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(r"^\s+\d+ failing", ln)), len(lines))
    i = start + 1
    while i < len(lines):
        m = _MOCHA_ENTRY.match(lines[i])
        if m:
            # A title spans lines (suite, then test) and ends with ':'.
            parts, text = [], m.group(2)
            while True:
                parts.append(text.strip().rstrip(":"))
                if text.rstrip().endswith(":") or i + 1 >= len(lines):
                    break
                i += 1
                text = lines[i]
            ids.append(" ".join(parts))
        i += 1
    return result(c["passing"], c.get("failing", 0), c.get("pending", 0), ids)
