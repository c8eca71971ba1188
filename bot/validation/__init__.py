"""Validation: setup, then format -> lint -> typecheck -> test, language profiles, baseline.

The gate that makes a PR trustworthy: stages really run (a skipped stage is never
counted as passed), tests are counted from the runner's own output, and with a base
commit only the failures a change introduced fail the gate.
"""

from __future__ import annotations

from bot.validation.parsers import RUNNERS, parse_test_counts, says_no_tests
from bot.validation.pipeline import FixCallback, StageCallback, resolve_base, run_validation
from bot.validation.profiles import Profile, detect_profile
from bot.validation.runner import run_command

__all__ = [
    "RUNNERS",
    "FixCallback",
    "Profile",
    "StageCallback",
    "detect_profile",
    "parse_test_counts",
    "resolve_base",
    "run_command",
    "run_validation",
    "says_no_tests",
]
