"""unittest's summary, read for the proof (issue #25)."""

from __future__ import annotations

from bot.validation.unittest_counts import parse_unittest

FAILED = """test_a (tests.test_x.T.test_a) ... ok
test_b (tests.test_x.T.test_b) ... FAIL
test_c (tests.test_x.T.test_c) ... ERROR

======================================================================
ERROR: test_c (tests.test_x.T.test_c)
----------------------------------------------------------------------
NameError: name 'mul' is not defined

======================================================================
FAIL: test_b (tests.test_x.T)
----------------------------------------------------------------------
AssertionError: -1 != 5

----------------------------------------------------------------------
Ran 3 tests in 0.002s

FAILED (failures=1, errors=1, skipped=0)
"""


def test_failures_and_errors_are_counted_with_their_ids() -> None:
    got = parse_unittest(FAILED)
    assert got is not None
    assert (got.test_count, got.passed_count, got.failed_count) == (3, 1, 2)
    assert got.failed_tests == ["tests.test_x.T.test_c", "tests.test_x.T.test_b"]
    assert not got.passed


def test_ok_is_a_pass_and_no_summary_is_none() -> None:
    ok = parse_unittest("....\n----\nRan 4 tests in 0.01s\n\nOK (skipped=1)\n")
    assert ok is not None and ok.passed and ok.test_count == 4 and ok.skipped_count == 1
    assert parse_unittest("Traceback (most recent call last):\nImportError: x\n") is None
    assert parse_unittest("Ran 2 tests in 0.1s\n") is None  # cut off before its verdict
