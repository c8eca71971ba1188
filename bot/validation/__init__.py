"""Validation: setup, then format -> lint -> typecheck -> test, judged against the base commit.

The gate that makes a PR trustworthy: the repository's own commands and pinned tools
first, stages that really run (a skipped stage is never counted as passed), tests
counted from the runner's own output, and with a base commit only the problems a
change introduced fail the gate. Nothing a stage does outside the change is kept.
"""

from __future__ import annotations

from bot.validation.parsers import RUNNERS, parse_test_counts, says_no_tests
from bot.validation.pipeline import (
    FixCallback,
    Prepared,
    StageCallback,
    prepare,
    resolve_base,
    run_validation,
)
from bot.validation.profiles import Profile, detect_profile
from bot.validation.runner import run_command

__all__ = [
    "RUNNERS",
    "FixCallback",
    "Prepared",
    "Profile",
    "StageCallback",
    "detect_profile",
    "parse_test_counts",
    "prepare",
    "resolve_base",
    "run_command",
    "run_validation",
    "says_no_tests",
]
