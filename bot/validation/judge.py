"""A stage's verdict from its output and, when it failed, the same command on the base commit.

Only what the change introduced blocks: diagnostics the base commit has too (file +
rule + message, lines moved by the diff) and tests that fail there too are reported
as pre-existing; a stage that fails without anything to compare fails "the same way"
when the base exits with the same code, and is then `preexisting`, not `failed`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bot.models import CommandResult, Diagnostic, QualityGateResult, TestResult
from bot.validation.baseline import Baseline
from bot.validation.compare import LineMap, new_problems
from bot.validation.parsers import parse_test_counts, says_no_tests
from bot.validation.stage import StageSpec

BaseRun = Callable[[], Baseline | None]
"""Runs the stage's command on the base commit (None: no base, or it cannot be had)."""
ISSUES_SHOWN = 50


def judge_diagnostics(
    gate: QualityGateResult,
    spec: StageSpec,
    result: CommandResult,
    found: Sequence[Diagnostic],
    base: BaseRun,
    line_maps: Callable[[], Mapping[str, LineMap]],
) -> QualityGateResult:
    """Passed, failed (new problems) or pre-existing, for a format, lint or typecheck run."""
    errors = [d for d in found if d.severity == "error"]
    warnings = [d for d in found if d.severity == "warning"]
    if result.success and not (spec.strict and warnings):
        note = f"{len(warnings)} warning(s)" if warnings else ""
        return gate.model_copy(update={"status": "passed", "warning": _join(gate.warning, note)})
    # What made it fail: its errors, or (strict, or a tool failing on warnings) everything.
    blocking = list(found) if spec.strict or not errors else errors
    baseline = base()
    if baseline is None:
        return _failed(gate, blocking, result, 0, "")
    if not blocking:
        if baseline.exit_code == result.exit_code:
            why = _same_way(baseline, result)
            return gate.model_copy(
                update={"status": "preexisting", "warning": _join(gate.warning, why)}
            )
        return _failed(gate, [], result, 0, "")
    new, pre = new_problems(blocking, baseline.diagnostics, line_maps())
    if new:
        return _failed(gate, new, result, len(pre), "")
    why = f"{len(pre)} problem(s) also on the base commit {baseline.sha[:12]}: not introduced here"
    return gate.model_copy(
        update={
            "status": "passed",
            "preexisting_count": len(pre),
            "warning": _join(gate.warning, why),
        }
    )


def _failed(
    gate: QualityGateResult, new: Sequence[Diagnostic], result: CommandResult, pre: int, note: str
) -> QualityGateResult:
    issues = [d.render() for d in new[:ISSUES_SHOWN]]
    if len(new) > ISSUES_SHOWN:
        issues.append(f"... and {len(new) - ISSUES_SHOWN} more")
    if not issues:
        lines = [ln.strip() for ln in result.output.splitlines() if ln.strip()]
        issues = [lines[-1][:300] if lines else f"exit {result.exit_code}"]
    return gate.model_copy(
        update={
            "status": "failed",
            "new_issues": issues,
            "issues_found": issues,
            "preexisting_count": pre,
            "warning": _join(gate.warning, note),
        }
    )


def judge_tests(
    gate: QualityGateResult, runner: str, result: CommandResult, base: BaseRun
) -> tuple[QualityGateResult, TestResult | None, list[str], list[str]]:
    """The test gate, the counts, and the (new, pre-existing) failing test ids.

    Passed needs a counted run: the runner's summary read, at least one test ran, and no
    failing test the base does not fail too. A run that counted nothing, or failed before
    any test ran the way the base does, or in which no test passed on either side, is
    `unverified` (an environment problem): never passed, never "the same on the base".
    """
    counted = parse_test_counts(runner, result.output)
    tests = (
        counted.model_copy(
            update={
                "passed": result.success and counted.failed_count == 0,
                "duration_seconds": result.duration_seconds,
            }
        )
        if counted is not None
        else None
    )
    failing = tests.failed_tests if tests else []
    zero = tests is not None and tests.test_count == 0 and not failing
    if (zero and result.success) or ((zero or tests is None) and says_no_tests(result.output)):
        skipped = f" ({tests.skipped_count} skipped)" if tests and tests.skipped_count else ""
        why = f"no test ran: the test runner found no test to run{skipped}"
        return _unverified(gate, why), tests, [], []
    if result.success and not failing:
        if tests is None:
            why = f"test counts not recognised ({runner} output): no test was counted"
            return _unverified(gate, why), tests, [], []
        return gate.model_copy(update={"status": "passed"}), tests, [], []
    failed = gate.model_copy(
        update={"status": "failed", "issues_found": failing, "new_issues": failing}
    )
    baseline = base()
    if baseline is None:
        return failed, tests, failing, []
    if not failing:
        # Failed without naming a test (a crash, a collection error): compare how it failed.
        if tests is None and baseline.tests is None and baseline.exit_code == result.exit_code:
            why = f"no test ran: it {_same_way(baseline, result)}, before any test ran"
            return _unverified(gate, why), tests, [], []
        return _failed(failed, [], result, 0, ""), tests, [], []
    if baseline.tests is None:
        note = f"baseline unavailable on {baseline.sha[:12]} (tests not counted): all count as new"
        return failed.model_copy(update={"warning": _join(gate.warning, note)}), tests, failing, []
    new = [t for t in failing if t not in baseline.failing]
    pre = [t for t in failing if t in baseline.failing]
    if not new:
        assert tests is not None  # failing names come from counts
        if tests.passed_count == 0 or baseline.tests.passed_count == 0:
            why = (
                f"no test passed: {len(pre)} failing test(s) fail on the base commit"
                f" {baseline.sha[:12]} too (collection or import errors?): nothing was verified"
            )
            gate = gate.model_copy(update={"preexisting_count": len(pre)})
            return _unverified(gate, why), tests, [], pre
        note = (
            f"{len(pre)} failing test(s) also fail on the base commit {baseline.sha[:12]};"
            " not introduced by this change"
        )
        update = {"status": "passed", "warning": _join(gate.warning, note), "new_issues": [],
                  "preexisting_count": len(pre)}  # fmt: skip
        return gate.model_copy(update=update), tests, [], pre
    update = {"new_issues": new, "preexisting_count": len(pre)}
    return failed.model_copy(update=update), tests, new, pre


def _unverified(gate: QualityGateResult, why: str) -> QualityGateResult:
    """The gate as `unverified`, saying why."""
    note = _join(gate.warning, f"unverified: {why}")
    return gate.model_copy(update={"status": "unverified", "warning": note})


def _same_way(baseline: Baseline, result: CommandResult) -> str:
    return f"fails the same way on the base commit {baseline.sha[:12]} (exit {result.exit_code})"


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
