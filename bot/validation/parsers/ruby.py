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
