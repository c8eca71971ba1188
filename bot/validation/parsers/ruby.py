"""Test counts from RSpec and minitest output."""

from __future__ import annotations

import re

from bot.models import TestResult
from bot.validation.parsers.common import result

_RSPEC_SUMMARY = re.compile(
    r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?"
    r"(?:, (\d+) errors? occurred outside of examples)?",
    re.MULTILINE,
)
_RSPEC_FAILED = re.compile(r"^rspec \S+ # (.*?)\s*$", re.MULTILINE)


def parse_rspec(output: str) -> TestResult | None:
    """`5 examples, 2 failures, 2 pending`; errors outside examples are failures."""
    found = _RSPEC_SUMMARY.findall(output)
    if not found:
        return None
    examples, failures, pending, errors = (int(x or 0) for x in found[-1])
    passed = examples - failures - pending
    return result(passed, failures + errors, pending, _RSPEC_FAILED.findall(output))


_MINITEST_SUMMARY = re.compile(
    r"^(\d+) runs, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) skips\s*$", re.MULTILINE
)
# `TestCalc#test_adds_wrong [test/x.rb:9]:` (minitest 5) or `test_x(TestCalc) [...]:` (4).
_MINITEST_FAILED = re.compile(
    r"^ *\d+\) (?:Failure|Error):\n(?:(\w+)\(([\w:]+)\)|([\w:]+#\S+?))(?: \[[^\]\n]*\])?:$",
    re.MULTILINE,
)


def parse_minitest(output: str) -> TestResult | None:
    """`5 runs, 3 assertions, 1 failures, 1 errors, 1 skips`; errors are failures."""
    found = _MINITEST_SUMMARY.findall(output)
    if not found:
        return None
    runs, failures, errors, skips = (int(x) for x in found[-1])
    ids = [m[2] or f"{m[1]}#{m[0]}" for m in _MINITEST_FAILED.findall(output)]
    failed = failures + errors
    return result(runs - failed - skips, failed, skips, ids)
