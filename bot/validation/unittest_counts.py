"""unittest's summary read (minimal, for the proof, until the parsers module reads it)."""

from __future__ import annotations

import re

from bot.models import TestResult

_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$", re.MULTILINE)
_END = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", re.MULTILINE)
_FAIL = re.compile(r"^(?:FAIL|ERROR): (\w+) \(([\w.]+?)(?:\.\1)?\)", re.MULTILINE)


def parse_unittest(output: str) -> TestResult | None:
    """Counts from `Ran N tests` and the `OK`/`FAILED (failures=1, errors=1)` line after it."""
    ran = list(_RAN.finditer(output))
    if not ran:
        return None
    last = ran[-1]
    end = _END.search(output, last.end())
    if end is None:
        return None
    total = int(last.group(1))
    parts = dict((k.strip(), int(v)) for k, v in re.findall(r"(\w+)=(\d+)", end.group(2) or ""))
    failed = min(total, parts.get("failures", 0) + parts.get("errors", 0))
    skipped = parts.get("skipped", 0)
    ids = list(dict.fromkeys(f"{m.group(2)}.{m.group(1)}" for m in _FAIL.finditer(output)))
    return TestResult(
        passed=end.group(1) == "OK" and failed == 0, test_count=total,
        passed_count=total - failed, failed_count=failed, skipped_count=skipped,
        failed_tests=ids,
    )  # fmt: skip
