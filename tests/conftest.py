"""Suite-wide rules: in CI, a test that would skip for a missing service fails instead."""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

# .ci/run installs chromium, bubblewrap, rspec and Go and starts PostgreSQL; a skip there
# would hide a broken setup.
_SERVICES = (
    "chromium",
    "postgresql",
    "bubblewrap",
    "rspec",
    "go toolchain",
    "needs go",
    "libfaketime",
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    """With AGENTBOT_CI_STRICT=1, turn 'service missing' skips into failures."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("AGENTBOT_CI_STRICT") != "1" or not report.skipped:
        return
    reason = str(report.longrepr).lower()
    if any(service in reason for service in _SERVICES):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where it must run: {report.longrepr}"
