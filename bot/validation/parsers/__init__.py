"""Test counts and failing test ids from test runners' text output (pure functions).

Each parser reads the summary a runner prints and returns a `TestResult` whose
`passed_count + failed_count == test_count`; skipped, pending, todo and xfail cases are
`skipped_count`, outside the total. Errors outside a test (pytest collection errors,
cargo/go build failures inside a test run) count as failures, so they can never pass
silently. A parser returns None when the output holds no summary it knows. One module
per runner family: python, js, tap, native (go, cargo, nextest), ruby.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.models import TestResult
from bot.validation.parsers.common import says_no_tests, strip_ansi
from bot.validation.parsers.js import parse_jest, parse_mocha, parse_vitest
from bot.validation.parsers.native import parse_cargo, parse_go, parse_nextest
from bot.validation.parsers.python import parse_pytest, parse_unittest
from bot.validation.parsers.ruby import parse_minitest, parse_rspec
from bot.validation.parsers.tap import parse_node, parse_tap, parse_tape

__all__ = [
    "PARSERS", "RUNNERS", "infer_runner", "parse_cargo", "parse_go", "parse_jest",
    "parse_minitest", "parse_mocha", "parse_nextest", "parse_node", "parse_pytest",
    "parse_rspec", "parse_tap", "parse_tape", "parse_test_counts", "parse_unittest",
    "parse_vitest", "says_no_tests", "strip_ansi",
]  # fmt: skip

RUNNERS = (
    "pytest", "unittest", "jest", "vitest", "go", "cargo", "rspec", "mocha", "node", "tape",
    "tap", "nextest", "minitest",
)  # fmt: skip

PARSERS: dict[str, Callable[[str], TestResult | None]] = {
    "pytest": parse_pytest,
    "unittest": parse_unittest,
    "jest": parse_jest,
    "vitest": parse_vitest,
    "go": parse_go,
    "nextest": parse_nextest,  # before cargo: nextest output holds libtest's own lines
    "cargo": parse_cargo,
    "rspec": parse_rspec,
    "mocha": parse_mocha,
    "node": parse_node,
    "tape": parse_tape,
    "minitest": parse_minitest,
    "tap": parse_tap,  # last: a bare TAP plan is the least specific summary
}


def parse_test_counts(runner: str, output: str) -> TestResult | None:
    """Counts from `runner`'s output (`auto` tries each parser); None if no summary is found."""
    text = strip_ansi(output)
    if runner == "auto":
        for each in PARSERS.values():
            res = each(text)
            if res is not None:
                return _consistent(res)
        return None
    parse = PARSERS.get(runner)
    if parse is None:
        raise ValueError(f"unknown test runner {runner!r}; known: {', '.join(RUNNERS)}")
    res = parse(text)
    if res is None:
        # A wrapper (make, tox, coverage, `uv run`) may run another runner than the one its
        # command names: search its output for any runner's summary.
        return parse_test_counts("auto", text)
    return _consistent(res)


def _consistent(res: TestResult) -> TestResult:
    """A run that named a failed test did not pass, whatever summary line came last (code
    under test can print one, from an exit hook, after the runner's own)."""
    if not res.passed or not res.failed_tests:
        return res
    failed = max(res.failed_count, len(res.failed_tests))
    return res.model_copy(
        update={
            "passed": False,
            "failed_count": failed,
            "test_count": res.passed_count + failed,
        }
    )


def infer_runner(command: str, default: str) -> str:
    """The runner a test command names (`pytest -q` -> pytest), else `default`."""
    words = re.findall(r"[\w:.-]+", command)
    for word, runner in (
        ("pytest", "pytest"),
        ("vitest", "vitest"),
        ("jest", "jest"),
        ("mocha", "mocha"),
        ("rspec", "rspec"),
        ("tape", "tape"),
        ("tap", "tap"),
        ("minitest", "minitest"),
        ("py.test", "pytest"),
    ):
        if word in words:
            return runner
    if "unittest" in words:
        return "unittest"
    if re.search(r"\bnode\b.*--test\b", command):
        return "node"
    if re.search(r"\bgo\s+test\b", command):
        return "go"
    # `cargo nextest` stays "cargo": parse_cargo reads nextest's summary when there is
    # one, and the proof drives cargo's own test command for either.
    if re.search(r"\bcargo\s+(?:test|nextest)\b", command):
        return "cargo"
    return default
