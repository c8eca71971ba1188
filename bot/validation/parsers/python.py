"""Test counts from pytest and unittest output."""

from __future__ import annotations

import re

from bot.models import TestResult
from bot.validation.parsers.common import counts, result

_PYTEST_SUMMARY = re.compile(
    r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)"
    r"(?:, )?)+|no tests ran) in [\d.]+s",
    re.MULTILINE,
)
_PYTEST_PAIR = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", re.MULTILINE)


def parse_pytest(output: str) -> TestResult | None:
    """`N failed, M passed, K skipped, E errors in Xs` (the last such line); errors are failures."""
    found = _PYTEST_SUMMARY.findall(output)
    if not found:
        return None
    c = counts(_PYTEST_PAIR.findall(found[-1]))
    passed = c.get("passed", 0) + c.get("xpassed", 0)
    failed = c.get("failed", 0) + c.get("error", 0) + c.get("errors", 0)
    skipped = c.get("skipped", 0) + c.get("xfailed", 0)
    return result(passed, failed, skipped, _PYTEST_FAILED.findall(output))


_UNITTEST_RAN = re.compile(
    r"^Ran (\d+) tests? in [\d.]+s\n\n(OK|FAILED)(?: \((.*)\))?", re.MULTILINE
)
_UNITTEST_FAILED = re.compile(r"^(?:FAIL|ERROR): (\S+) \(([\w.]+?)\)", re.MULTILINE)


def parse_unittest(output: str) -> TestResult | None:
    """`Ran 4 tests in 0.001s` then `FAILED (failures=1, errors=1, skipped=1)` or `OK (...)`."""
    found = _UNITTEST_RAN.findall(output)
    if not found:
        return None
    ran, _, detail = found[-1]
    # "expected failures=1" has a space in its name: split on the commas, not on words.
    c = {k.strip(): int(v) for k, v in re.findall(r"([^,=]+)=(\d+)", detail)}
    skipped = c.get("skipped", 0) + c.get("expected failures", 0)
    failed = c.get("failures", 0) + c.get("errors", 0) + c.get("unexpected successes", 0)
    # unittest's id is `module.Class.test`; the class part is what it prints in parentheses.
    ids = [
        f"{cls}.{name}" if not cls.endswith(name) else cls
        for name, cls in _UNITTEST_FAILED.findall(output)
    ]
    # Never negative: a summary whose parts exceed its total (interleaved runs) counts none passed.
    return result(max(0, int(ran) - skipped - failed), failed, skipped, ids)
