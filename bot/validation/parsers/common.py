"""What every test-output parser shares: colour stripping, the no-tests messages, a result."""

from __future__ import annotations

import re

from bot.models import TestResult

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# What runners print when they found no test at all (some exit non-zero on it).
_NO_TESTS = re.compile(
    r"^\s*(?:no tests ran in [\d.]+s"  # pytest (exit 5)
    r"|No tests found, exiting with code \d"  # jest
    r"|No test files found, exiting with code \d"  # vitest
    r"|Error: No test files found"  # mocha
    r"|Error: no test specified"  # the `npm init` default test script
    r"|No examples found\."  # rspec
    r"|Ran 0 tests in [\d.]+s)",  # unittest (exit 5 since Python 3.12)
    re.MULTILINE,
)


def strip_ansi(text: str) -> str:
    """The text without terminal colour codes."""
    return _ANSI.sub("", text)


def says_no_tests(output: str) -> bool:
    """True if the output is a runner saying it found no tests (not a failure to run them)."""
    return bool(_NO_TESTS.search(strip_ansi(output)))


def result(passed: int, failed: int, skipped: int, failed_ids: list[str]) -> TestResult:
    """A TestResult whose passed and failed counts make its total."""
    return TestResult(
        passed=failed == 0,
        test_count=passed + failed,
        passed_count=passed,
        failed_count=failed,
        skipped_count=skipped,
        failed_tests=list(dict.fromkeys(failed_ids)),
    )


def counts(pairs: list[tuple[str, str]]) -> dict[str, int]:
    """(number, word) pairs summed per word."""
    out: dict[str, int] = {}
    for number, word in pairs:
        out[word] = out.get(word, 0) + int(number)
    return out
