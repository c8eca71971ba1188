"""The test gate's verdicts (issue #25): a green is a counted run; nothing ran is unverified.

Outputs are the ones recorded from real runners (tests/data/runner_outputs); the base run
is what `Baseline` holds for the same command on the base commit.
"""

from __future__ import annotations

from pathlib import Path

from bot.models import CommandResult, QualityGateResult, ValidationReport
from bot.validation.baseline import Baseline
from bot.validation.judge import judge_tests
from bot.validation.parsers import parse_test_counts

DATA = Path(__file__).parent / "data" / "runner_outputs"
SHA = "b" * 40


def _gate() -> QualityGateResult:
    return QualityGateResult(gate_name="test", status="skipped", command="pytest -q")


def _run(output: str, code: int) -> CommandResult:
    return CommandResult(
        command=["sh"], exit_code=code, output=output, success=code == 0, duration_seconds=0.1
    )


def _base(name: str | None, code: int) -> Baseline:
    text = (DATA / f"{name}.txt").read_text() if name else "sh: 1: pytest: not found\n"
    return Baseline(sha=SHA, exit_code=code, tests=parse_test_counts("auto", text))


def _judge(name: str, code: int, base: Baseline | None = None) -> QualityGateResult:
    out = (DATA / f"{name}.txt").read_text()
    return judge_tests(_gate(), "auto", _run(out, code), lambda: base)[0]


def test_zero_tests_collected_is_unverified_not_passed() -> None:
    gate = _judge("pytest_q_none", 5)  # `no tests ran`: the 0/0 that used to pass
    assert gate.status == "unverified" and not gate.passed
    assert "no test ran" in gate.warning
    assert _judge("rspec_none", 0).status == "unverified"
    assert _judge("jest_none", 1).status == "unverified"


def test_counts_not_read_from_a_passing_command_is_unverified() -> None:
    gate = judge_tests(_gate(), "auto", _run("all good\n", 0), lambda: None)[0]
    assert gate.status == "unverified"
    assert "test counts not recognised" in gate.warning


def test_collection_errors_on_both_sides_are_unverified_not_preexisting() -> None:
    """`0/1 passed; 1 failing test(s) also fail on the base` used to read as passed."""
    gate, tests, new, pre = judge_tests(
        _gate(),
        "auto",
        _run((DATA / "pytest_q_collect.txt").read_text(), 2),
        lambda: _base("pytest_q_collect", 2),
    )
    assert gate.status == "unverified" and not gate.passed
    assert tests is not None and tests.passed_count == 0
    assert new == [] and pre == ["tests/test_broken.py"]
    assert "nothing was verified" in gate.warning


def test_a_crash_before_any_test_the_same_way_on_the_base_is_unverified() -> None:
    crash = "Traceback (most recent call last):\nImportError: no module named conftest_dep\n"
    base = Baseline(sha=SHA, exit_code=4, tests=None)
    gate = judge_tests(_gate(), "auto", _run(crash, 4), lambda: base)[0]
    assert gate.status == "unverified" and "before any test ran" in gate.warning


def test_a_crash_the_base_does_not_have_still_fails() -> None:
    crash = "Traceback (most recent call last):\nSyntaxError: invalid syntax\n"
    base = _base("pytest_q_pass", 0)
    gate = judge_tests(_gate(), "auto", _run(crash, 2), lambda: base)[0]
    assert gate.status == "failed"


def test_preexisting_failures_beside_passing_tests_still_pass() -> None:
    base = _base("pytest_q_mixed", 1)
    gate, _, new, pre = judge_tests(
        _gate(), "auto", _run((DATA / "pytest_q_mixed.txt").read_text(), 1), lambda: base
    )
    assert gate.status == "passed" and new == [] and len(pre) == 2


def test_a_counted_green_run_passes() -> None:
    for name in ("pytest_q_pass", "jest_pass", "vitest_pass", "mocha_pass", "cargo_pass"):
        assert _judge(name, 0).status == "passed", name


def test_an_unverified_gate_is_listed_and_never_counts_as_passed() -> None:
    gate = _judge("pytest_q_none", 5)
    report = ValidationReport(profile="python", gates=[gate], passed=True)
    assert report.unverified == [gate] and not gate.passed
